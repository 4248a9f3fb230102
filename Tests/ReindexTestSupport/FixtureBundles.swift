import Foundation
import ReindexHost
import ReindexProtocol
import ReindexStore
import XCTest

/// Bundles made from the fixture extensions in `Tests/Fixtures/extensions`, and items put
/// straight into an index.
extension TestSupport {
    // MARK: Bundles

    /// What goes in a test bundle's manifest.
    public struct BundleSpec: Sendable {
        public var identifier: String
        /// The fixture file that is the executable (copied, mode 755).
        public var executable: String
        /// Other fixture files copied beside it (the Python fixtures share `fixturelib.py`).
        public var support: [String] = ["fixturelib.py"]
        public var arguments: [String] = []
        public var environment: [String: String] = [:]
        public var startupSeconds: Double? = nil
        public var idleSeconds: Double? = nil
        public var requestSeconds: Double? = nil
        public var maxAttempts: Int? = nil
        /// The manifest's `limits`: address space in MiB and CPU time in seconds.
        public var addressSpaceMiB: Int? = nil
        public var cpuSeconds: Int? = nil
        /// The manifest's `sandbox` as written (`false`, or an object); nil: from the two below.
        public var sandbox: JSONValue? = nil
        /// Paths the fixture may write besides its private directories (`sandbox.write`).
        public var sandboxWrite: [String] = []
        /// Whether the fixture may write its own bundle directory: the fixtures that leave what
        /// they saw there for the test to read (pids, environment dumps) or replace themselves.
        public var writesItsDirectory: Bool
        /// The manifest's `priority`.
        public var priority: String? = nil
        /// More top-level manifest keys (custom `attributes`, say).
        public var extraManifest: [(String, JSONValue)] = []

        public init(_ identifier: String, executable: String) {
            self.identifier = identifier
            self.executable = executable
            if executable.hasSuffix(".sh") { support = [] }
            writesItsDirectory = ["env_dump.sh", "grandchild.sh", "fork_and_exit.sh", "replace_self.sh"].contains(executable)
        }
    }

    /// Makes `root/<name>` a bundle: the fixture executable and its support files, and a
    /// manifest.json. Returns the bundle directory.
    @discardableResult
    public static func makeBundle(_ spec: BundleSpec, in root: String, name: String? = nil) throws -> String {
        let directory = "\(root)/\(name ?? spec.identifier)"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o755])
        for file in [spec.executable] + spec.support {
            let target = "\(directory)/\(file)"
            try? FileManager.default.removeItem(atPath: target)
            try FileManager.default.copyItem(atPath: "\(fixturesDirectory)/\(file)", toPath: target)
            try FileManager.default.setAttributes([.posixPermissions: file == spec.executable ? 0o755 : 0o644], ofItemAtPath: target)
        }
        var manifest: [(String, JSONValue)] = [
            ("manifestVersion", 1),
            ("bundleIdentifier", .string(spec.identifier)),
            ("displayName", .string("Fixture \(spec.executable)")),
            ("version", "1.0.0"),
            ("executable", .string(spec.executable)),
            ("arguments", .array(spec.arguments.map(JSONValue.string))),
            ("environment", .object(spec.environment.sorted { $0.key < $1.key }.map { ($0.key, JSONValue.string($0.value)) })),
        ]
        var timeouts: [(String, JSONValue)] = []
        if let v = spec.startupSeconds { timeouts.append(("startupSeconds", .double(v))) }
        if let v = spec.idleSeconds { timeouts.append(("idleSeconds", .double(v))) }
        if let v = spec.requestSeconds { timeouts.append(("requestSeconds", .double(v))) }
        if !timeouts.isEmpty { manifest.append(("timeouts", .object(timeouts))) }
        if let attempts = spec.maxAttempts { manifest.append(("retry", .object([("maxAttempts", .integer(Int64(attempts)))]))) }
        var limits: [(String, JSONValue)] = []
        if let v = spec.addressSpaceMiB { limits.append(("addressSpaceMiB", .integer(Int64(v)))) }
        if let v = spec.cpuSeconds { limits.append(("cpuSeconds", .integer(Int64(v)))) }
        if !limits.isEmpty { manifest.append(("limits", .object(limits))) }
        let writable = (spec.writesItsDirectory ? [directory] : []) + spec.sandboxWrite
        if let sandbox = spec.sandbox {
            manifest.append(("sandbox", sandbox))
        } else if !writable.isEmpty {
            manifest.append(("sandbox", .object([("write", .array(writable.map(JSONValue.string)))])))
        }
        if let priority = spec.priority { manifest.append(("priority", .string(priority))) }
        manifest += spec.extraManifest
        try write(JSONWriter.string(.object(manifest)), to: "\(directory)/manifest.json")
        return directory
    }

    /// The bundle at `directory`, loaded the way discovery loads it.
    public static func loadBundle(_ directory: String, file: StaticString = #filePath, line: UInt = #line) throws -> DiscoveredBundle {
        switch Discovery.load(directory: directory) {
        case .success(let bundle): return bundle
        case .failure(let problem):
            XCTFail("the fixture bundle is not valid: \(problem.reason)", file: file, line: line)
            throw problem
        }
    }

    // MARK: Items

    /// A validated item with the given attributes.
    public static func item(
        _ uid: String, title: String? = nil, description: String? = nil, domain: String? = nil,
        expires: String? = nil, extra: [(String, JSONValue)] = []
    ) -> ValidatedItem {
        var attributes: [(String, JSONValue)] = []
        if let title { attributes.append(("title", .string(title))) }
        if let description { attributes.append(("contentDescription", .string(description))) }
        attributes += extra
        var members: [(String, JSONValue)] = [("uniqueIdentifier", .string(uid))]
        if let domain { members.append(("domainIdentifier", .string(domain))) }
        if let expires { members.append(("expirationDate", .string(expires))) }
        members.append(("attributes", .object(attributes)))
        do {
            return try ItemValidator.validate(.object(members))
        } catch {
            preconditionFailure("test item \(uid) is invalid: \(error)")
        }
    }

    /// Puts items straight into a bundle's live items (one transaction), in either index.
    public static func seed(_ store: any IndexBackend, bundle: String, _ items: [ValidatedItem]) throws {
        let writes = try store.makeWriter(bundleIdentifier: bundle, scope: .direct, requestID: nil, declarations: [:])
        do {
            for item in items { try writes.put(item) }
            _ = try writes.acknowledge(with: { _ in })
        } catch {
            writes.rollback()
            throw error
        }
    }

    /// The identifiers of a bundle's live items, sorted.
    public static func identifiers(_ store: any IndexBackend, bundle: String) throws -> [String] {
        try store.items(bundle: bundle, domain: nil, limit: 10_000, now: Clock.now()).map(\.uniqueIdentifier).sorted()
    }
}
