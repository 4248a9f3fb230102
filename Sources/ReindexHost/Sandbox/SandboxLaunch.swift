import ReindexStore
import CReindexSystem
import ReindexProtocol
import ReindexSystem

/// One extension start's sandbox: its private directories (created here), its environment with
/// `REINDEX_DATA_DIR` and `TMPDIR`, its priority, and — when it runs sandboxed — the Landlock
/// rules the child enforces before `exec`.
public struct SandboxLaunch: Sendable {
    /// The extension's environment, with the private directories set.
    public let environment: [String: String]
    /// `REINDEX_DATA_DIR`: private and persistent.
    public let dataDirectory: String
    /// `TMPDIR`: private to this start, removed when the extension has ended.
    public let temporaryDirectory: String
    /// The rules, or nil when the extension runs unsandboxed.
    public let profile: SandboxProfile?
    /// The Landlock ABI the rules are for.
    public let abi: Int
    /// Why it runs unsandboxed (nil when sandboxed).
    public let unsandboxedReason: String?
    public let priority: Manifest.Priority
    /// PR_SET_NO_NEW_PRIVS: set whenever the sandbox is on, even where Landlock is missing.
    public let noNewPrivileges: Bool

    /// What `--require-sandbox` demands of `bundle` here: an error (exit 69) when it would run
    /// unsandboxed, or not as its manifest asks.
    public static func checkRequired(bundle: DiscoveredBundle, options: SandboxOptions) throws(ReindexError) {
        guard options.required else { return }
        let id = bundle.identifier
        let support = SandboxSupport.current
        let refuse = "\(id): refusing to run unsandboxed (--require-sandbox)"
        if !bundle.manifest.sandbox.isEnabled { throw ReindexError(.cannotStart, "\(refuse): its manifest says \"sandbox\": false") }
        if options.disabled { throw ReindexError(.cannotStart, "\(refuse): --no-sandbox was given") }
        switch support {
        case .unavailable: throw ReindexError(.cannotStart, "\(refuse): sandbox \(support)")
        case .landlock(let abi) where abi < 4 && !bundle.manifest.sandbox.network:
            throw ReindexError(.cannotStart, "\(id): refusing to run (--require-sandbox): its manifest says \"network\": false, which Landlock ABI \(abi) cannot enforce (it needs ABI 4, Linux 6.7)")
        default: break
        }
    }

    /// Prepares a start of `bundle`: checks what `--require-sandbox` demands, creates the private
    /// directories and works out the rules. `environment` is what the extension gets otherwise;
    /// `hostEnvironment` is the host's own (its `TMPDIR` is where the private one goes).
    public init(bundle: DiscoveredBundle, options: SandboxOptions, environment: [String: String],
                hostEnvironment: [String: String], indexPath: String) throws(ReindexError) {
        let id = bundle.identifier
        let support = SandboxSupport.current
        let wanted = bundle.manifest.sandbox.isEnabled && !options.disabled
        try Self.checkRequired(bundle: bundle, options: options)
        let paths = Self.hostPaths(options, hostEnvironment: hostEnvironment, indexPath: indexPath)
        let hostTemporary = Self.temporaryRoot(hostEnvironment)
        dataDirectory = paths.dataDirectory(for: id)
        try Self.makeDataDirectory(dataDirectory, bundle: id)
        temporaryDirectory = try Self.makeTemporaryDirectory(in: hostTemporary, bundle: bundle)
        var environment = environment
        environment["REINDEX_DATA_DIR"] = dataDirectory
        environment["TMPDIR"] = temporaryDirectory
        self.environment = environment
        priority = bundle.manifest.priority
        #if os(Linux)
        noNewPrivileges = wanted
        #else
        noNewPrivileges = false
        #endif
        switch (wanted, support) {
        case (true, .landlock(let abi)):
            do {
                var rules = try SandboxProfile(bundle: bundle, paths: paths, alsoProtect: options.alsoProtect, environment: environment,
                                               dataDirectory: dataDirectory, temporaryDirectory: temporaryDirectory, hostTemporary: hostTemporary)
                if options.allowsNetwork && !rules.network {
                    rules.network = true
                    rules.notes.append("TCP allowed in debug mode, for the debugger")
                }
                profile = rules
            } catch {
                FileSystem.removeTree(temporaryDirectory)
                throw error
            }
            self.abi = abi
            unsandboxedReason = nil
        case (true, .unavailable):
            profile = nil
            abi = 0
            unsandboxedReason = "sandbox \(support)"
        case (false, _):
            profile = nil
            abi = 0
            unsandboxedReason = options.disabled ? "sandbox off (--no-sandbox)" : #"sandbox off ("sandbox": false in the manifest)"#
        }
    }

    /// One line for the extension's log and `reindex debug`.
    public var summary: String {
        let where_ = "data \(dataDirectory), temporary \(temporaryDirectory), priority \(priority.rawValue)"
        guard let profile else { return "\(unsandboxedReason ?? "unsandboxed"); \(where_)" }
        let network = profile.network ? "network allowed" : (abi >= 4 ? "no TCP" : "network not restricted (needs Landlock ABI 4)")
        return "sandboxed (landlock ABI \(abi), \(profile.grants.count) rules, \(network)); \(where_)"
    }

    /// Removes the private temporary directory (after the extension and its group have ended).
    public func removeTemporaryDirectory() {
        FileSystem.removeTree(temporaryDirectory)
    }

    // MARK: Locations

    /// The host paths the options name, or ones derived from the index with the data directory beside it.
    static func hostPaths(_ options: SandboxOptions, hostEnvironment: [String: String], indexPath: String) -> HostPaths {
        if let paths = options.paths { return paths }
        var paths = HostPaths(extensionsPath: nil, index: indexPath, environment: hostEnvironment)
        paths.data = FileSystem.join(FileSystem.directoryName(paths.index), "data")
        return paths
    }

    /// The host's temporary directory: `TMPDIR` when it is an existing directory, else `/tmp`.
    package static func temporaryRoot(_ environment: [String: String]) -> String {
        let value = environment["TMPDIR"] ?? ""
        return value.hasPrefix("/") && FileSystem.isDirectory(value) ? FileSystem.absolute(value) : "/tmp"
    }

    /// Creates the bundle's data directory (mode 0700) if it is not there, and checks the one that
    /// is: a real directory — not a symbolic link — of this user that no one else may enter. A
    /// directory someone else made or left open is not a private one: the extension would trust
    /// what was planted in it, or leave its state readable, so the run is refused.
    static func makeDataDirectory(_ path: String, bundle id: String) throws(ReindexError) {
        do {
            try FileSystem.makeDirectories(FileSystem.directoryName(path))
        } catch {
            throw ReindexError(.cannotStart, "\(id): cannot create its data directory: \(error.message)", errno: error.errno)
        }
        if mkdir(path, 0o700) == 0 {
            // Created here: the mode is ours to set, whatever the umask took away.
            chmod(path, 0o700)
        } else if errno != EEXIST {
            let code = errno
            throw ReindexError(.cannotStart, "\(id): cannot create its data directory \(path): \(FileSystem.errnoText(code))", errno: code)
        }
        var st = stat()
        guard lstat(path, &st) == 0 else {
            let code = errno
            throw ReindexError(.cannotStart, "\(id): cannot use its data directory \(path): \(FileSystem.errnoText(code))", errno: code)
        }
        let refuse = "\(id): refusing to run: its data directory \(path)"
        switch FileSystem.fileType(st) {
        case UInt32(S_IFDIR): break
        case UInt32(S_IFLNK): throw ReindexError(.cannotStart, "\(refuse) is a symbolic link; remove it and the host makes a private directory")
        default: throw ReindexError(.cannotStart, "\(refuse) is not a directory; remove it and the host makes a private directory")
        }
        guard st.st_uid == geteuid() else {
            throw ReindexError(.cannotStart, "\(refuse) belongs to user \(st.st_uid), not to you (\(geteuid())); remove it and the host makes a private directory")
        }
        let permissions = UInt32(st.st_mode) & 0o7777
        guard permissions & 0o077 == 0 else {
            throw ReindexError(.cannotStart, "\(refuse) can be entered by others (mode 0\(String(permissions, radix: 8))); run chmod 700 on it")
        }
    }

    /// The name prefix of private temporary directories (the sandbox keeps others' out of reach).
    static let temporaryPrefix = "reindex-tmp-"

    /// `mkdtemp(TMP/reindex-tmp-<bundle>-p<host pid>-XXXXXX)`: a new directory only this user
    /// can enter. The first time in a process, the directories of hosts that have died since
    /// (killed before they could remove them) are removed too.
    static func makeTemporaryDirectory(in root: String, bundle: DiscoveredBundle) throws(ReindexError) -> String {
        LeftoverSweep.once(in: root)
        let name = temporaryPrefix + String(bundle.key.prefix(200)) + "-p\(getpid())-XXXXXX"
        var template = Array(FileSystem.join(root, name).utf8CString)
        let made = template.withUnsafeMutableBufferPointer { mkdtemp($0.baseAddress!) != nil }
        guard made else {
            let code = errno
            throw ReindexError(.cannotStart, "\(bundle.identifier): cannot create its temporary directory in \(root): \(FileSystem.errnoText(code))", errno: code)
        }
        return template.withUnsafeBufferPointer { String(cString: $0.baseAddress!) }
    }

    // MARK: The child's settings

    /// Calls `body` with the C view of this launch (valid only during the call).
    func withSpawnSettings<T>(_ body: (_ niceAtLeast: Int32, _ ioIdle: Int32, _ noNewPrivileges: Int32, _ sandbox: UnsafePointer<reindex_sandbox>?) -> T) -> T {
        let nice: Int32
        switch priority {
        case .background: nice = 19
        case .utility: nice = 10
        case .interactive: nice = -1
        }
        let ioIdle: Int32 = priority == .background ? 1 : 0
        let nnp: Int32 = noNewPrivileges ? 1 : 0
        guard let profile else { return body(nice, ioIdle, nnp, nil) }
        let paths = profile.grants.map { strdup($0.path) }
        defer { for path in paths { free(path) } }
        var rules = zip(profile.grants, paths).map { grant, path in
            reindex_sandbox_rule(path: UnsafePointer(path), access: grant.access.rawValue)
        }
        return rules.withUnsafeMutableBufferPointer { buffer in
            var sandbox = reindex_sandbox(abi: Int32(abi), rules: UnsafePointer(buffer.baseAddress), rule_count: Int32(buffer.count),
                                          deny_network: profile.network ? 0 : 1)
            return withUnsafePointer(to: &sandbox) { body(nice, ioIdle, nnp, $0) }
        }
    }
}
