import ReindexStore
import ReindexProtocol
import ReindexSystem

/// A directory on the search path that is not a usable bundle, and why.
public struct BundleProblem: Error, Sendable, Equatable {
    public var path: String
    public var reason: String
    /// The identifier, when the manifest was readable enough to have one.
    public var bundleIdentifier: String?
}

/// What discovery found: usable bundles in search-path order, and every problem.
public struct DiscoveryResult: Sendable {
    public var bundles: [DiscoveredBundle]
    public var problems: [BundleProblem]

    /// The bundle with this identifier (case-insensitive).
    public func bundle(_ identifier: String) -> DiscoveredBundle? {
        let key = identifier.lowercased()
        return bundles.first { $0.key == key }
    }
}

/// Finds bundles on the search path and validates them.
public enum Discovery {
    /// Every immediate subdirectory holding a `manifest.json` in each search-path directory, in
    /// order; the first bundle with an identifier wins and later ones are reported as shadowed.
    public static func discover(_ paths: HostPaths) -> DiscoveryResult {
        discover(directories: paths.searchPath.map(\.directory))
    }

    public static func discover(directories: [String]) -> DiscoveryResult {
        var bundles: [DiscoveredBundle] = []
        var problems: [BundleProblem] = []
        var winners: [String: String] = [:]   // key → directory of the winner
        var seenDirectories = Set<String>()
        for directory in directories {
            guard seenDirectories.insert(directory).inserted else { continue }
            guard let names = FileSystem.list(directory) else { continue }
            // A bundle directory named on the search path itself, instead of the directory holding it.
            if names.contains("manifest.json") {
                let manifest = (try? FileSystem.read(FileSystem.join(directory, "manifest.json"), limit: 1 << 20)).flatMap { try? Manifest.parse($0) }
                let absolute = FileSystem.absolute(directory)
                problems.append(BundleProblem(
                    path: absolute,
                    reason: "\(absolute) is on the search path but is itself a bundle (it holds manifest.json); the search path "
                        + "(--extensions-path, REINDEX_EXTENSIONS_PATH) names directories that contain bundles: use --extensions-path \(FileSystem.directoryName(absolute))",
                    bundleIdentifier: manifest?.bundleIdentifier))
            }
            for name in names where !name.hasPrefix(".") {
                let bundleDirectory = FileSystem.join(directory, name)
                let manifestPath = FileSystem.join(bundleDirectory, "manifest.json")
                // Only directories holding a manifest.json (of any kind) are bundles.
                var st = stat()
                guard lstat(manifestPath, &st) == 0 else { continue }
                switch load(directory: bundleDirectory) {
                case .success(let bundle):
                    if let winner = winners[bundle.key] {
                        problems.append(BundleProblem(
                            path: bundleDirectory,
                            reason: "shadowed: \(bundle.identifier) is already provided by \(winner), which comes earlier on the search path",
                            bundleIdentifier: bundle.identifier))
                    } else {
                        winners[bundle.key] = bundleDirectory
                        bundles.append(bundle)
                    }
                case .failure(let problem):
                    problems.append(problem)
                }
            }
        }
        return DiscoveryResult(bundles: bundles, problems: problems)
    }

    /// Loads and checks one bundle directory.
    public static func load(directory: String) -> Result<DiscoveredBundle, BundleProblem> {
        let directory = FileSystem.absolute(directory)
        let manifestPath = FileSystem.join(directory, "manifest.json")
        func problem(_ reason: String, _ identifier: String? = nil) -> Result<DiscoveredBundle, BundleProblem> {
            .failure(BundleProblem(path: directory, reason: reason, bundleIdentifier: identifier))
        }
        guard FileSystem.isDirectory(directory) else { return problem("\(directory): not a directory") }
        guard let st = FileSystem.status(manifestPath) else {
            return problem("\(manifestPath): \(FileSystem.errnoText())")
        }
        guard st.isRegularFile else {
            return problem("\(manifestPath): expected a regular file, got \(st.isDirectory ? "a directory" : "a special file")")
        }
        if let reason = ownershipProblem(st) { return problem("\(manifestPath): \(reason)") }
        let bytes: [UInt8]
        do { bytes = try FileSystem.read(manifestPath, limit: 1 << 20) } catch { return problem(error.message) }
        let manifest: Manifest
        let warnings = Manifest.warnings(bytes)
        do {
            manifest = try Manifest.parse(bytes)
        } catch {
            // A misspelt key is often why a required one is missing: say both.
            let hints = warnings.isEmpty ? "" : " (also: " + warnings.joined(separator: "; ") + ")"
            return problem("\(manifestPath): \(error)\(hints)")
        }
        let executable = FileSystem.absolute(FileSystem.join(directory, manifest.executable))
        guard let exe = FileSystem.status(executable) else {
            return problem("\(manifestPath): executable: \(executable) does not exist", manifest.bundleIdentifier)
        }
        guard exe.isRegularFile else {
            return problem("\(manifestPath): executable: \(executable) is not a regular file", manifest.bundleIdentifier)
        }
        guard FileSystem.isExecutable(executable) else {
            return problem("\(manifestPath): executable: \(executable) is not executable (mode \(exe.permissions))", manifest.bundleIdentifier)
        }
        if let reason = ownershipProblem(exe) {
            return problem("\(executable): \(reason)", manifest.bundleIdentifier)
        }
        let fingerprint = "\(exe.size)-\(Int64(exe.modified * 1000))-\(exe.inode)"
        return .success(DiscoveredBundle(manifest: manifest, directory: directory, executablePath: executable, executableFingerprint: fingerprint,
                                         warnings: warnings.map { "\(manifestPath): \($0)" }))
    }

    /// The StrictModes rule: refuse files that others may write, or that belong to someone other
    /// than root and the current user.
    static func ownershipProblem(_ st: FileSystem.Status) -> String? {
        if st.isWorldWritable {
            return "refused: writable by others (mode \(st.permissions)); run chmod o-w on it"
        }
        let me = UInt32(getuid())
        if st.owner != 0 && st.owner != me {
            return "refused: owned by uid \(st.owner), not by root or the current user (uid \(me))"
        }
        return nil
    }
}
