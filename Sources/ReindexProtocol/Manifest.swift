/// A bundle's `manifest.json`, with the contract's defaults filled in.
public struct Manifest: Sendable, Equatable, Codable {
    public struct Timeouts: Sendable, Equatable, Codable {
        public var startupSeconds: Double
        public var idleSeconds: Double
        public var requestSeconds: Double
        public init(startupSeconds: Double = 10, idleSeconds: Double = 60, requestSeconds: Double = 3600) {
            self.startupSeconds = startupSeconds
            self.idleSeconds = idleSeconds
            self.requestSeconds = requestSeconds
        }
    }

    public struct Retry: Sendable, Equatable, Codable {
        public var maxAttempts: Int
        public init(maxAttempts: Int = 5) { self.maxAttempts = maxAttempts }
    }

    /// Resource limits on the extension process (an extension of the contract; all optional).
    public struct Limits: Sendable, Equatable, Codable {
        /// Address space, in MiB (`RLIMIT_AS`).
        public var addressSpaceMiB: Int?
        /// CPU time, in seconds (`RLIMIT_CPU`).
        public var cpuSeconds: Int?
        public init(addressSpaceMiB: Int? = nil, cpuSeconds: Int? = nil) {
            self.addressSpaceMiB = addressSpaceMiB
            self.cpuSeconds = cpuSeconds
        }
    }

    /// What the extension may reach beyond its own bundle (an addition to the contract). The host
    /// enforces it with Landlock where the kernel has it; see docs/SECURITY.md.
    public struct Sandbox: Sendable, Equatable, Codable {
        /// `"sandbox": false` turns the sandbox off for this bundle.
        public var isEnabled: Bool
        /// Whether the extension may open TCP connections and listen (`network`, default true).
        public var network: Bool
        /// Paths the extension may read (and execute) beyond the defaults: absolute, or starting
        /// with `~/` for the user's home directory, never with a `..` component.
        public var read: [String]
        /// Paths the extension may read and write, the same form as `read`.
        public var write: [String]

        public init(isEnabled: Bool = true, network: Bool = true, read: [String] = [], write: [String] = []) {
            self.isEnabled = isEnabled
            self.network = network
            self.read = read
            self.write = write
        }

        /// `"sandbox": false`.
        public static let off = Sandbox(isEnabled: false)

        /// Whether `path` is a path a manifest may declare: absolute or `~`-relative without a `..`
        /// component, or relative to the bundle's directory when it starts with `./` or `../`
        /// (`../../SDKs/python`, for a bundle that stays inside its source tree); never with NUL.
        public static func isValidPath(_ path: String) -> Bool {
            guard !path.utf8.contains(0) else { return false }
            if isBundleRelative(path) { return true }
            guard path.hasPrefix("/") || path == "~" || path.hasPrefix("~/") else { return false }
            return !path.split(separator: "/").contains("..")
        }

        /// Whether a declared path is relative to the bundle's directory.
        public static func isBundleRelative(_ path: String) -> Bool {
            path.hasPrefix("./") || path.hasPrefix("../")
        }
    }

    /// How much of the machine the extension's process gets while others want it (an addition to
    /// the contract): `background` (nice 19, idle I/O class), `utility` (nice 10; the default) or
    /// `interactive` (the host's own priority).
    public enum Priority: String, Sendable, Equatable, Codable, CaseIterable {
        case background, utility, interactive
    }

    public var manifestVersion: Int
    public var bundleIdentifier: String
    public var displayName: String
    public var version: String
    public var executable: String
    public var arguments: [String]
    public var environment: [String: String]
    public var protocolVersions: [Int]
    public var timeouts: Timeouts
    public var retry: Retry
    public var refreshBeforeExpirySeconds: Double
    public var limits: Limits
    public var sandbox: Sandbox
    public var priority: Priority
    // Custom attributes (queries2): see AttributeDeclaration.swift.
    /// The custom attributes the bundle declares, by name (`"attributes"`); empty when none.
    public var attributes: [String: AttributeDeclaration] = [:]
    /// How the desktop's search opens this bundle's items (`"open"`); nil: an item's
    /// `contentURL`, when it has one.
    public var open: OpenDeclaration? = nil
    /// Whether the host records this bundle's sessions for `reindex runs` and replay
    /// (`"record"`, default true). A bundle whose messages must not be kept on disk says false.
    public var record = true

    public init(
        bundleIdentifier: String, executable: String, displayName: String? = nil, version: String = "0",
        arguments: [String] = [], environment: [String: String] = [:], protocolVersions: [Int] = [1],
        timeouts: Timeouts = .init(), retry: Retry = .init(), refreshBeforeExpirySeconds: Double = 86400,
        limits: Limits = .init(), sandbox: Sandbox = .init(), priority: Priority = .utility
    ) {
        self.manifestVersion = 1
        self.bundleIdentifier = bundleIdentifier
        self.displayName = displayName ?? bundleIdentifier
        self.version = version
        self.executable = executable
        self.arguments = arguments
        self.environment = environment
        self.protocolVersions = protocolVersions
        self.timeouts = timeouts
        self.retry = retry
        self.refreshBeforeExpirySeconds = refreshBeforeExpirySeconds
        self.limits = limits
        self.sandbox = sandbox
        self.priority = priority
    }

    /// The longest bundle identifier.
    public static let maximumIdentifierLength = 255

    /// Whether `identifier` is a reverse-DNS bundle identifier: two or more dot-separated labels
    /// of letters, digits and hyphens, at most 255 characters.
    public static func isValidBundleIdentifier(_ identifier: String) -> Bool {
        let utf8 = identifier.utf8
        guard !utf8.isEmpty, utf8.count <= maximumIdentifierLength else { return false }
        var labels = 1
        var labelLength = 0
        for byte in utf8 {
            switch byte {
            case UInt8(ascii: "."):
                guard labelLength > 0 else { return false }
                labels += 1
                labelLength = 0
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
                 UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"):
                labelLength += 1
            default:
                return false
            }
        }
        return labels >= 2 && labelLength > 0
    }

    /// Reads and validates a manifest. Errors name the key path, what was expected and what was
    /// found; the caller adds the file.
    public static func parse(_ bytes: [UInt8]) throws(FieldError) -> Manifest {
        if bytes.isEmpty { throw FieldError(path: "", expected: "the file is empty (expected a JSON object)", got: nil) }
        let value: JSONValue
        do {
            value = try JSONParser.parse(bytes, maximumDepth: 64)
        } catch {
            let (line, column) = position(of: error.offset, in: bytes)
            throw FieldError(path: "", expected: "not valid JSON: \(error.reason) at line \(line), column \(column) (byte \(error.offset))", got: nil)
        }
        return try parse(value)
    }

    /// The 1-based line and column (in characters) of a byte offset, for error messages an
    /// editor can jump to.
    public static func position(of offset: Int, in bytes: [UInt8]) -> (line: Int, column: Int) {
        var line = 1, column = 1
        for byte in bytes.prefix(max(0, offset)) {
            if byte == 0x0A { line += 1; column = 1 }
            else if byte & 0xC0 != 0x80 { column += 1 }   // count characters, not UTF-8 continuation bytes
        }
        return (line, column)
    }

    /// The keys `parse` reads, at the top level and in each nested object. A key it does not know is
    /// ignored (later versions may add keys); one close to a known key draws a warning.
    public static let knownKeys: [String: [String]] = [
        "": ["manifestVersion", "bundleIdentifier", "displayName", "version", "executable", "arguments", "environment",
             "protocolVersions", "timeouts", "retry", "refreshBeforeExpirySeconds", "limits", "sandbox", "priority", "attributes", "open", "record", "$schema"],
        "timeouts": ["startupSeconds", "idleSeconds", "requestSeconds"],
        "sandbox": ["network", "read", "write"],
        "retry": ["maxAttempts"],
        "limits": ["addressSpaceMiB", "cpuSeconds"],
        "open": ["url", "command"],
    ]

    /// Warnings about keys that look like misspellings of known ones (`timeout`, `enviroment`):
    /// each names the key and the suggestion. Unknown keys far from every known key are left alone.
    public static func warnings(_ bytes: [UInt8]) -> [String] {
        guard let value = try? JSONParser.parse(bytes, maximumDepth: 64) else { return [] }
        return warnings(value)
    }

    public static func warnings(_ value: JSONValue) -> [String] {
        var warnings: [String] = []
        for (scope, known) in knownKeys.sorted(by: { $0.key < $1.key }) {
            let object = scope.isEmpty ? value : value[scope]
            guard case .object(let members)? = object else { continue }
            for (key, _) in members where !known.contains(key) {
                guard let suggestion = closest(to: key, in: known) else { continue }
                let path = scope.isEmpty ? key : "\(scope).\(key)"
                warnings.append("unknown key '\(path)' is ignored; did you mean '\(scope.isEmpty ? suggestion : "\(scope).\(suggestion)")'?")
            }
        }
        return warnings
    }

    /// The known key nearest to `key`, when it differs only in case or by at most two edits
    /// (one for keys of four characters or fewer).
    static func closest(to key: String, in known: [String]) -> String? {
        let lowered = Array(key.lowercased())
        var best: (String, Int)? = nil
        for candidate in known {
            let distance = editDistance(lowered, Array(candidate.lowercased()))
            let limit = candidate.count <= 4 ? 1 : 2
            if distance <= limit, distance < (best?.1 ?? .max) { best = (candidate, distance) }
        }
        return best?.0
    }

    static func editDistance(_ a: [Character], _ b: [Character]) -> Int {
        if a.isEmpty { return b.count }
        var previous = Array(0...b.count)
        for i in 1...a.count {
            var current = [i] + Array(repeating: 0, count: b.count)
            for j in stride(from: 1, through: b.count, by: 1) {
                current[j] = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1))
            }
            previous = current
        }
        return previous[b.count]
    }

    /// Validates a parsed manifest.
    public static func parse(_ value: JSONValue) throws(FieldError) -> Manifest {
        guard case .object = value else {
            throw FieldError(path: "", expected: "a JSON object at the top level", got: FieldReader.describe(value))
        }
        let r = FieldReader(value)
        guard let manifestVersion = value["manifestVersion"] else {
            throw FieldError(path: "manifestVersion", expected: "is required (1)", got: nil)
        }
        guard manifestVersion.integerValue == 1 else {
            throw FieldError(path: "manifestVersion", expected: "1", got: FieldReader.describe(manifestVersion))
        }
        guard let identifier = try r.string("bundleIdentifier") else {
            throw FieldError(path: "bundleIdentifier", expected: "is required (a reverse-DNS identifier such as com.example.app.indexer)", got: nil)
        }
        guard isValidBundleIdentifier(identifier) else {
            throw FieldError(
                path: "bundleIdentifier",
                expected: "a reverse-DNS identifier (two or more dot-separated labels of A-Z a-z 0-9 -, at most 255 characters)",
                got: JSONValue.string(identifier).preview(limit: 60))
        }
        guard let executable = try r.string("executable") else {
            throw FieldError(path: "executable", expected: "is required (a path to the extension's executable)", got: nil)
        }
        guard !executable.isEmpty else { throw FieldError(path: "executable", expected: "a non-empty path", got: "\"\"") }
        guard !executable.utf8.contains(0) else { throw FieldError(path: "executable", expected: "a path without NUL characters", got: nil) }

        var manifest = Manifest(bundleIdentifier: identifier, executable: executable)
        if let displayName = try r.string("displayName") { manifest.displayName = displayName }
        if let version = try r.string("version") { manifest.version = version }
        if let arguments = try r.stringArray("arguments") { manifest.arguments = arguments }
        if let environment = try r.stringDictionary("environment") {
            for key in environment.keys where key.isEmpty || key.contains("=") || key.utf8.contains(0) {
                throw FieldError(path: "environment", expected: "variable names without '=' or NUL", got: JSONValue.string(key).preview())
            }
            manifest.environment = environment
        }
        if let versions = try r.array("protocolVersions") {
            guard !versions.isEmpty else { throw FieldError(path: "protocolVersions", expected: "a non-empty array of positive whole numbers", got: "[]") }
            manifest.protocolVersions = try versions.enumerated().map { (n, v) throws(FieldError) -> Int in
                guard let i = v.integerValue, i > 0, i < 1_000_000 else {
                    throw FieldError(path: "protocolVersions[\(n)]", expected: "a positive whole number", got: FieldReader.describe(v))
                }
                return Int(i)
            }
        }
        if let t = try r.object("timeouts") {
            if let v = try t.positiveNumber("startupSeconds") { manifest.timeouts.startupSeconds = v }
            if let v = try t.positiveNumber("idleSeconds") { manifest.timeouts.idleSeconds = v }
            if let v = try t.positiveNumber("requestSeconds") { manifest.timeouts.requestSeconds = v }
        }
        if let retry = try r.object("retry") {
            if let v = try retry.positiveInteger("maxAttempts") { manifest.retry.maxAttempts = v }
        }
        if let v = try r.nonNegativeNumber("refreshBeforeExpirySeconds") { manifest.refreshBeforeExpirySeconds = v }
        if let limits = try r.object("limits") {
            manifest.limits.addressSpaceMiB = try limits.positiveInteger("addressSpaceMiB")
            manifest.limits.cpuSeconds = try limits.positiveInteger("cpuSeconds")
        }
        if let sandbox = value["sandbox"], !sandbox.isNull {
            manifest.sandbox = try parseSandbox(sandbox)
        }
        if let priority = try r.string("priority") {
            guard let known = Priority(rawValue: priority) else {
                throw FieldError(path: "priority", expected: "one of \"background\", \"utility\", \"interactive\"", got: JSONValue.string(priority).preview(limit: 40))
            }
            manifest.priority = known
        }
        // Custom attributes (queries2).
        manifest.attributes = try AttributeDeclaration.parseAll(value["attributes"])
        if let open = value["open"], !open.isNull { manifest.open = try OpenDeclaration.parse(open) }
        if let record = try r.bool("record") { manifest.record = record }
        return manifest
    }

    /// `sandbox`: `false`, `true` (the defaults) or `{"network": bool, "read": [PATH], "write": [PATH]}`.
    private static func parseSandbox(_ value: JSONValue) throws(FieldError) -> Sandbox {
        if case .bool(let on) = value { return on ? Sandbox() : .off }
        guard case .object = value else {
            throw FieldError(path: "sandbox", expected: #"false or an object {"network": bool, "read": [path], "write": [path]}"#, got: FieldReader.describe(value))
        }
        let r = FieldReader(value, path: "sandbox")
        var sandbox = Sandbox()
        if let network = try r.bool("network") { sandbox.network = network }
        for key in ["read", "write"] {
            guard let paths = try r.stringArray(key) else { continue }
            for (n, path) in paths.enumerated() where !Sandbox.isValidPath(path) {
                throw FieldError(path: "sandbox.\(key)[\(n)]", expected: "an absolute path or one starting with ~/, without '..', or one relative to the bundle starting with ./ or ../",
                                 got: JSONValue.string(path).preview(limit: 80))
            }
            if key == "read" { sandbox.read = paths } else { sandbox.write = paths }
        }
        return sandbox
    }

    /// The manifest as JSON, every field written out.
    public var json: JSONValue {
        var members: [(String, JSONValue)] = [
            ("manifestVersion", .integer(Int64(manifestVersion))),
            ("bundleIdentifier", .string(bundleIdentifier)),
            ("displayName", .string(displayName)),
            ("version", .string(version)),
            ("executable", .string(executable)),
            ("arguments", .array(arguments.map(JSONValue.string))),
            ("environment", .object(environment.sorted { $0.key < $1.key }.map { ($0.key, JSONValue.string($0.value)) })),
            ("protocolVersions", .array(protocolVersions.map { .integer(Int64($0)) })),
            ("timeouts", .object([
                ("startupSeconds", .double(timeouts.startupSeconds)),
                ("idleSeconds", .double(timeouts.idleSeconds)),
                ("requestSeconds", .double(timeouts.requestSeconds)),
            ])),
            ("retry", .object([("maxAttempts", .integer(Int64(retry.maxAttempts)))])),
            ("refreshBeforeExpirySeconds", .double(refreshBeforeExpirySeconds)),
        ]
        var limitMembers: [(String, JSONValue)] = []
        if let v = limits.addressSpaceMiB { limitMembers.append(("addressSpaceMiB", .integer(Int64(v)))) }
        if let v = limits.cpuSeconds { limitMembers.append(("cpuSeconds", .integer(Int64(v)))) }
        if !limitMembers.isEmpty { members.append(("limits", .object(limitMembers))) }
        if sandbox.isEnabled {
            members.append(("sandbox", .object([
                ("network", .bool(sandbox.network)),
                ("read", .array(sandbox.read.map(JSONValue.string))),
                ("write", .array(sandbox.write.map(JSONValue.string))),
            ])))
        } else {
            members.append(("sandbox", .bool(false)))
        }
        members.append(("priority", .string(priority.rawValue)))
        // Custom attributes (queries2).
        if !attributes.isEmpty { members.append(("attributes", AttributeDeclaration.json(attributes))) }
        if let open { members.append(("open", open.json)) }
        if !record { members.append(("record", .bool(false))) }
        return .object(members)
    }
}
