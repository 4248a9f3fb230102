import ReindexStore
import ReindexProtocol
import ReindexSystem

/// What one sandboxed extension may reach, worked out before it starts. Everything else on the
/// file system is denied.
///
/// - read and execute: the system (`/usr`, `/lib*`, `/bin`, `/sbin`, `/etc`, `/opt`, `/proc`,
///   CPU and cgroup facts in `/sys`, the resolver's `/run/systemd/resolve`), the bundle's own
///   directory, its executable and what that needs to run (interpreters wherever installed,
///   the dynamic loader, run-time library directories; see `InterpreterResolver`), and the
///   manifest's `sandbox.read`;
/// - read and write: `/dev/null`, `/dev/zero`, `/dev/full`, `/dev/random`, `/dev/urandom`, the
///   private data and temporary directories, and the manifest's `sandbox.write`.
///
/// Some places are never reachable, whatever is declared: the index (its file, `-wal`, `-shm`,
/// and damaged copies kept beside it), the index's locks, the logs, every other bundle's
/// directory on the search path, other bundles' data directories and other runs' temporary
/// directories. A grant that would contain one of them is split into grants of everything beside
/// it; a declared path inside one is an error naming the manifest key.
public struct SandboxProfile: Sendable {
    public enum Access: Int32, Sendable {
        /// Read files, list directories, execute.
        case read = 1
        /// Everything: read, write, create, remove, rename.
        case write = 2
        /// Read and write a device file.
        case device = 3

        public var name: String {
            switch self {
            case .read: return "read"
            case .write: return "read-write"
            case .device: return "device"
            }
        }
    }

    /// One path the extension may use, everything beneath it included.
    public struct Grant: Sendable, Equatable {
        public var path: String
        public var access: Access
        /// Where it comes from: `system`, `bundle`, the interpreter it runs, `sandbox.read[0]`, …
        public var why: String
    }

    /// The rules the child enforces, after splitting around protected places.
    public var grants: [Grant]
    /// What the bundle brings beyond the system: its directory, executable and interpreters,
    /// private directories and declared paths (before splitting), for `validate` to show.
    public var requested: [Grant]
    /// Whether TCP is allowed (`sandbox.network`).
    public var network: Bool
    /// Declared paths that do not exist, or that hold protected places, said once.
    public var notes: [String]

    /// Works out the rules for `bundle`. `environment` is the extension's (its HOME and PATH
    /// decide `~` and `#!/usr/bin/env`); `hostTemporary` the host's temporary directory.
    public init(bundle: DiscoveredBundle, paths: HostPaths, alsoProtect: [HostPaths] = [], environment: [String: String],
                dataDirectory: String, temporaryDirectory: String, hostTemporary: String) throws(ReindexError) {
        let home = environment["HOME"].flatMap { $0.hasPrefix("/") ? FileSystem.absolute($0) : nil } ?? "/"
        let bundleDirectory = FileSystem.realPath(bundle.directory) ?? bundle.directory
        let protected = Protected.places(paths: [paths] + alsoProtect, bundleDirectory: bundleDirectory, dataDirectory: dataDirectory,
                                         temporaryDirectory: temporaryDirectory, hostTemporary: hostTemporary)
        network = bundle.manifest.sandbox.network
        notes = []
        grants = []
        requested = []

        var wanted: [(grant: Grant, source: Source)] = []
        // /proc whole: a thread's own entry is /proc/<tid> (libdispatch reads /proc/<tid>/stat of its
        // workers), which no narrower rule made before the threads exist can name. Other
        // processes' environments, memory and descriptors stay closed by Landlock's ptrace scope.
        for path in ["/usr", "/lib", "/lib32", "/lib64", "/libx32", "/bin", "/sbin", "/etc", "/opt", "/nix/store", "/proc",
                     "/sys/devices/system/cpu", "/sys/fs/cgroup", "/run/systemd/resolve"] {
            wanted.append((Grant(path: path, access: .read, why: "system"), .system))
        }
        for device in ["/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom"] {
            wanted.append((Grant(path: device, access: .device, why: "system"), .system))
        }
        wanted.append((Grant(path: bundleDirectory, access: .read, why: "the bundle"), .own))
        let executable = FileSystem.realPath(bundle.executablePath) ?? bundle.executablePath
        let outside = !FileSystem.isWithin(executable, bundleDirectory)
        if outside { wanted.append((Grant(path: executable, access: .read, why: "the executable"), .derived)) }
        for need in InterpreterResolver.needs(
            of: bundle.executablePath, grantItself: outside, home: home, temporaryDirectory: hostTemporary,
            searchPath: environment["PATH"], workingDirectory: bundle.directory) {
            wanted.append((Grant(path: need.path, access: .read, why: need.why), .derived))
        }
        wanted.append((Grant(path: dataDirectory, access: .write, why: "REINDEX_DATA_DIR"), .own))
        wanted.append((Grant(path: temporaryDirectory, access: .write, why: "TMPDIR"), .own))
        let declared = bundle.manifest.sandbox
        for (key, list, access) in [("read", declared.read, Access.read), ("write", declared.write, Access.write)] {
            for (n, path) in list.enumerated() {
                let expanded = Manifest.Sandbox.isBundleRelative(path) ? FileSystem.join(bundleDirectory, path)
                    : path == "~" ? home : (path.hasPrefix("~/") ? FileSystem.join(home, String(path.dropFirst(2))) : path)
                wanted.append((Grant(path: FileSystem.absolute(expanded), access: access, why: "sandbox.\(key)[\(n)]"), .declared(path)))
            }
        }

        // Where protected places are made while extensions run: a grant holding one would reach
        // what is made there after this start (split grants cover only entries that exist now).
        let roots = Self.growingRoots(paths: [paths] + alsoProtect, hostTemporary: hostTemporary)
        func refuseIfHoldingARoot(_ path: String, _ grant: Grant, _ written: String) throws(ReindexError) {
            guard let root = roots.first(where: { FileSystem.isWithin($0.path, path) }) else { return }
            throw ReindexError(.invalidData, "\(bundle.manifestPath): \(grant.why): \(written) holds \(root.what) (\(root.path)), where the host makes other bundles' private directories while extensions run, which no extension may reach; declare a narrower directory")
        }

        var systemRoots: [String] = []
        for (grant, source) in wanted {
            guard let real = FileSystem.realPath(grant.path) else {
                if case .declared(let written) = source {
                    try refuseIfHoldingARoot(Self.resolvingExistingPart(of: grant.path), grant, written)
                    // Not there now, but refused all the same if it would lie in a protected place.
                    let resolved = Self.resolvingExistingPart(of: grant.path)
                    if let place = protected.first(where: { $0.covers(resolved) }) {
                        throw ReindexError(.invalidData, "\(bundle.manifestPath): \(grant.why): \(written) is inside \(place.what) (\(place.location)), which no extension may reach")
                    }
                    notes.append("\(grant.why): \(written) does not exist; it is not reachable (a rule needs an existing path when the extension starts)")
                }
                continue
            }
            var grant = grant
            grant.path = real
            if case .declared(let written) = source { try refuseIfHoldingARoot(real, grant, written) }
            if source == .system && grant.access == .read { systemRoots.append(real) }
            // An interpreter in /usr (or the like) adds nothing to what the system grant gives.
            let coveredBySystem = source != .system && grant.access == .read && systemRoots.contains { FileSystem.isWithin(real, $0) }
            if source != .system && !(coveredBySystem && source == .derived) { requested.append(grant) }
            if let place = protected.first(where: { $0.covers(real) }) {
                switch source {
                case .system, .own:
                    continue
                case .declared(let written):
                    throw ReindexError(.invalidData, "\(bundle.manifestPath): \(grant.why): \(written) is inside \(place.what) (\(place.location)), which no extension may reach")
                case .derived:
                    throw ReindexError(.invalidData, "\(bundle.manifestPath): executable: \(grant.why): \(real) is inside \(place.what) (\(place.location)), which no extension may reach")
                }
            }
            if coveredBySystem { continue }
            let (pieces, kept) = Protected.split(real, around: protected)
            if !kept.isEmpty, case .declared(let written) = source {
                let what = Array(Set(kept.map(\.what))).sorted().joined(separator: ", ")
                notes.append("\(grant.why): \(written) holds \(what), which stay out of reach; what else is in it is granted entry by entry, so nothing new can be made directly in it")
            }
            for piece in pieces { Self.add(Grant(path: piece, access: grant.access, why: grant.why), to: &grants) }
        }
    }

    /// The profile `bundle` would get if it started now, for `validate` and the checks before a
    /// run: the same rules, with the private temporary directory not yet made (it is named
    /// `reindex-tmp-<bundle>-XXXXXX` in the host's temporary directory).
    public static func preview(bundle: DiscoveredBundle, paths: HostPaths, alsoProtect: [HostPaths] = [],
                               hostEnvironment: [String: String]) throws(ReindexError) -> SandboxProfile {
        var environment = ExtensionEnvironment.build(host: hostEnvironment, manifest: bundle.manifest, hostPID: getpid(),
                                                     debug: false, waitForDebuggerSeconds: nil)
        let hostTemporary = SandboxLaunch.temporaryRoot(hostEnvironment)
        let temporary = FileSystem.join(hostTemporary, SandboxLaunch.temporaryPrefix + bundle.key + "-XXXXXX")
        environment["REINDEX_DATA_DIR"] = paths.dataDirectory(for: bundle.identifier)
        environment["TMPDIR"] = temporary
        var profile = try SandboxProfile(bundle: bundle, paths: paths, alsoProtect: alsoProtect, environment: environment,
                                         dataDirectory: paths.dataDirectory(for: bundle.identifier), temporaryDirectory: temporary,
                                         hostTemporary: hostTemporary)
        if !profile.requested.contains(where: { $0.why == "TMPDIR" }) {
            profile.requested.append(Grant(path: temporary, access: .write, why: "TMPDIR (made for each run, removed after it)"))
        }
        if !profile.requested.contains(where: { $0.why == "REINDEX_DATA_DIR" }) {
            profile.requested.append(Grant(path: paths.dataDirectory(for: bundle.identifier), access: .write, why: "REINDEX_DATA_DIR (made at the first run)"))
        }
        return profile
    }

    /// The directories in which protected places appear after an extension has started: the
    /// host's temporary directory (each start's private `TMPDIR`) and the data roots (each
    /// bundle's `REINDEX_DATA_DIR`, made at its first run), canonical as far as they exist.
    static func growingRoots(paths: [HostPaths], hostTemporary: String) -> [(path: String, what: String)] {
        var result = [(path: resolvingExistingPart(of: hostTemporary), what: "the host's temporary directory")]
        for host in paths {
            let data = resolvingExistingPart(of: FileSystem.absolute(host.data))
            if !result.contains(where: { $0.path == data }) { result.append((data, "the data root")) }
        }
        return result
    }

    /// `path` with its longest existing part made canonical (symlinks resolved) and the rest kept.
    static func resolvingExistingPart(of path: String) -> String {
        if let real = FileSystem.realPath(path) { return real }
        let parent = FileSystem.directoryName(path)
        guard parent != path else { return path }
        return FileSystem.join(resolvingExistingPart(of: parent), FileSystem.baseName(path))
    }

    /// Adds a grant, merging one for the same path (the wider access wins).
    private static func add(_ grant: Grant, to grants: inout [Grant]) {
        if let index = grants.firstIndex(where: { $0.path == grant.path }) {
            if grants[index].access != .write && grant.access != .read { grants[index].access = grant.access }
            return
        }
        grants.append(grant)
    }

    /// Where a wanted grant comes from: it decides what happens when it meets a protected place.
    enum Source: Equatable {
        /// The system directories: skipped if (oddly) protected.
        case system
        /// The bundle's directory and private directories: always granted.
        case own
        /// The executable and what it needs: an error when protected.
        case derived
        /// The manifest's `sandbox.read`/`write`, as written: an error when protected.
        case declared(String)
    }
}
