import Foundation
import ReindexHost
import ReindexSystem
@testable import ReindexStore
import ReindexProtocol
import ReindexTestSupport
import XCTest

/// The sandbox (issue #19) through the built `reindex` command, with real extensions and the
/// real kernel: what a sandboxed extension cannot reach and what it still can, interpreters
/// installed in the home directory, declared paths, priorities, `"sandbox": false`, and a
/// system without Landlock (a seccomp filter makes its system calls fail as on such a kernel).
final class SandboxTests: XCTestCase, @unchecked Sendable {
    private typealias T = TestSupport
    private var scratch = ""
    private var extensionsDirectory: String { "\(scratch)/extensions" }
    private var indexPath: String { "\(scratch)/index/index.sqlite" }
    private var home: String { "\(scratch)/home" }
    private var dataRoot: String { "\(scratch)/xdg-data/reindex/data" }
    /// The host's temporary directory (private ones are made in it).
    private var temporary: String { "\(scratch)/tmp" }

    override func setUpWithError() throws {
        guard case .landlock = SandboxSupport.current else {
            throw XCTSkip("this system has no Landlock (\(SandboxSupport.current)); the sandbox cannot be tested here")
        }
        scratch = try T.makeScratchDirectory(for: self)
        for directory in [extensionsDirectory, "\(scratch)/index", "\(home)/.ssh", temporary, "\(scratch)/outside"] {
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        }
        try T.write("-----BEGIN OPENSSH PRIVATE KEY-----\nnot a real key\n", to: "\(home)/.ssh/id_ed25519", mode: 0o600)
        signal(SIGPIPE, SIG_IGN)
    }

    private func environment(_ extra: [String: String] = [:]) -> [String: String] {
        T.commandEnvironment(scratch: scratch, extra: ["TMPDIR": temporary].merging(extra) { $1 })
    }

    private func reindex(_ arguments: [String], environment: [String: String]? = nil, wrapper: [String] = [], timeout: Double = 60) throws -> T.CommandResult {
        let all = ["--index", indexPath, "--extensions-path", extensionsDirectory] + arguments
        guard !wrapper.isEmpty else {
            return try T.runReindex(all, scratch: scratch, environment: environment ?? self.environment(), timeout: timeout)
        }
        return try T.run(wrapper[0], Array(wrapper.dropFirst()) + [T.reindexBinary] + all, scratch: scratch,
                         environment: environment ?? self.environment(), timeout: timeout)
    }

    /// `python3 Tests/Fixtures/without_landlock.py`: what follows runs as on a kernel without Landlock.
    private var withoutLandlock: [String] {
        let python = (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin").split(separator: ":")
            .map { "\($0)/python3" }.first { FileManager.default.isExecutableFile(atPath: $0) } ?? "/usr/bin/python3"
        let script = URL(fileURLWithPath: T.fixturesDirectory).deletingLastPathComponent().appendingPathComponent("without_landlock.py").path
        return [python, script]
    }

    /// The titles of a bundle's live items, by identifier.
    private func titles(_ bundle: String) throws -> [String: String] {
        let store = try IndexStore.open(path: indexPath)
        var result: [String: String] = [:]
        for item in try store.items(bundle: bundle, limit: 1000) { result[item.uniqueIdentifier] = item.title ?? "" }
        return result
    }

    /// A listening TCP socket on 127.0.0.1 (closed when the test ends); returns its port.
    private func listeningPort() throws -> Int {
        #if canImport(Glibc)
        let stream = Int32(SOCK_STREAM.rawValue)
        #else
        let stream = SOCK_STREAM
        #endif
        let fd = socket(AF_INET, stream, 0)
        guard fd >= 0 else { throw XCTSkip("cannot create a socket: errno \(errno)") }
        addTeardownBlock { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) == 0 && listen(fd, 16) == 0 && getsockname(fd, $0, &length) == 0 }
        }
        guard bound else { throw XCTSkip("cannot listen on 127.0.0.1: errno \(errno)") }
        return Int(UInt16(bigEndian: address.sin_port))
    }

    // MARK: A hostile extension

    private let hostile = "com.example.hostile"

    /// The hostile fixture in "escape" mode, aimed at this test's index, logs, another bundle,
    /// a directory outside and (when given) a TCP port.
    @discardableResult
    private func makeEscapingBundle(sandbox: JSONValue?, port: Int?, sharedTemporaryFile: String) throws -> String {
        var spec = T.BundleSpec(hostile, executable: "hostile.py")
        spec.arguments = ["escape"]
        spec.environment = ["ESCAPE_INDEX": indexPath, "ESCAPE_LOGS": "\(scratch)/index/logs", "ESCAPE_OTHER": "\(extensionsDirectory)/com.example.other",
                            "ESCAPE_OTHER_EXECUTABLE": "well_behaved.py", "ESCAPE_OUTSIDE": "\(scratch)/outside",
                            "ESCAPE_SHARED_TMP": sharedTemporaryFile]
        if let port { spec.environment["ESCAPE_PORT"] = String(port) }
        spec.sandbox = sandbox
        return try T.makeBundle(spec, in: extensionsDirectory)
    }

    func testAHostileExtensionReachesNeitherTheIndexNorOtherBundlesNorSecretsAndStillIndexes() throws {
        try T.makeBundle(T.BundleSpec("com.example.other", executable: "well_behaved.py"), in: extensionsDirectory)
        // The index exists and is in use (WAL: -wal and -shm beside it) while the extension runs.
        XCTAssertEqual(try reindex(["run", "com.example.other", "--ids", "x.1"]).status, 0)
        let port = try listeningPort()
        let sharedFile = "\(temporary)/reindex-escape-\(UUID().uuidString).txt"
        let directory = try makeEscapingBundle(sandbox: .object([("network", false)]), port: port, sharedTemporaryFile: sharedFile)
        let manifestBefore = T.read("\(directory)/manifest.json")

        for round in 1...2 {
            let result = try reindex(["run", hostile])
            XCTAssertEqual(result.status, 0, "\(result)")
            XCTAssertFalse(result.stderr.contains("warning:"), "a sandboxed run has nothing to warn about: \(result.stderr)")
            let found = try titles(hostile)
            let attempts = found.filter { $0.key.hasPrefix("attempt.") && !["attempt.data.write", "attempt.tmp.write"].contains($0.key) }
            XCTAssertEqual(attempts.count, 22, "every attempt reported: \(found.keys.sorted())")
            for (attempt, outcome) in attempts.sorted(by: { $0.key < $1.key }) {
                if attempt == "attempt.host.environ.read" && geteuid() == 0 {
                    // As root (CAP_SYS_PTRACE) the kernel lets a sandboxed process read another's
                    // /proc environment; docs/SECURITY.md says the sandbox does not hold against root.
                    continue
                }
                XCTAssertTrue(outcome == "EACCES" || outcome == "EPERM", "\(attempt): \(outcome), expected EACCES or EPERM")
            }
            XCTAssertEqual(found["attempt.data.write"], "ok \(round)", "REINDEX_DATA_DIR is writable and keeps its files from run to run")
            XCTAssertEqual(found["attempt.tmp.write"], "ok 1", "TMPDIR is writable and fresh for each run")
        }
        // Nothing of it landed anywhere, and the private temporary directories are gone.
        XCTAssertFalse(FileManager.default.fileExists(atPath: "\(scratch)/outside/escaped.txt"))
        XCTAssertFalse(FileManager.default.fileExists(atPath: sharedFile))
        XCTAssertFalse(FileManager.default.fileExists(atPath: "\(directory)/created-by-the-extension.txt"))
        XCTAssertEqual(T.read("\(directory)/manifest.json"), manifestBefore)
        XCTAssertEqual(T.read("\(dataRoot)/\(hostile)/runs.txt"), "2")
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: temporary).filter { $0.hasPrefix("reindex-tmp-") }, [])
        XCTAssertEqual(try IndexStore.open(path: indexPath).integrityCheck(), [])

        // The same extension with "sandbox": false reaches all of it: the attempts are real.
        try makeEscapingBundle(sandbox: .bool(false), port: port, sharedTemporaryFile: sharedFile)
        addTeardownBlock { try? FileManager.default.removeItem(atPath: sharedFile) }
        let open = try reindex(["run", hostile])
        XCTAssertEqual(open.status, 0, "\(open)")
        XCTAssertTrue(open.stderr.contains("warning: \(hostile): the sandbox is off for this bundle"), open.stderr)
        let unsandboxed = try titles(hostile)
        for attempt in ["index.read", "index.write", "index.wal.read", "logs.read", "other.manifest.read", "other.executable.read",
                        "secret.read", "home.list", "outside.write", "shared-tmp.write", "bundle.create", "host.signal", "network.connect", "network.bind"] {
            XCTAssertEqual(unsandboxed["attempt.\(attempt)"], "allowed", "\(attempt) without the sandbox")
        }
        XCTAssertEqual(unsandboxed["attempt.data.write"], "ok 3")
        XCTAssertTrue(FileManager.default.fileExists(atPath: "\(scratch)/outside/escaped.txt"))
    }

    /// Landlock does not mediate chmod, chown, utimes or extended attributes: without the seccomp
    /// filter a sandboxed extension could make another bundle's manifest writable by others (and
    /// `list` refuse that bundle) or change the index's mode, owner and times.
    func testAnExtensionChangesNeitherTheModeNorTheOwnerNorTheTimesOfWhatItMayNotWrite() throws {
        let other = try T.makeBundle(T.BundleSpec("com.example.other", executable: "well_behaved.py"), in: extensionsDirectory)
        XCTAssertEqual(try reindex(["run", "com.example.other", "--ids", "x.1"]).status, 0)
        var spec = T.BundleSpec(hostile, executable: "hostile.py")
        spec.arguments = ["metadata"]
        spec.environment = ["ESCAPE_INDEX": indexPath, "ESCAPE_OTHER": other]
        try T.makeBundle(spec, in: extensionsDirectory)
        func attributes(_ path: String) -> [String] {
            var st = stat()
            guard lstat(path, &st) == 0 else { return ["missing"] }
            return ["mode \(String(st.st_mode, radix: 8))", "owner \(st.st_uid):\(st.st_gid)", "mtime \(st.st_mtim.tv_sec).\(st.st_mtim.tv_nsec)",
                    "ctime \(st.st_ctim.tv_sec).\(st.st_ctim.tv_nsec)"]
        }
        let watched = [indexPath, "\(other)/manifest.json"]
        let before = watched.map(attributes)

        let result = try reindex(["run", hostile])
        XCTAssertEqual(result.status, 0, "\(result)")
        let found = try titles(hostile)
        for attempt in ["index.chmod", "index.chown", "index.utime", "index.touch", "index.setxattr",
                        "other.manifest.chmod", "other.manifest.chown", "other.manifest.utime"] {
            XCTAssertEqual(found["attempt.\(attempt)"], "EPERM", "\(attempt): \(found)")
        }
        // The host itself writes the index during the run: its mode and owner stay, and its time is not the one the extension set.
        let after = watched.map(attributes)
        XCTAssertEqual(after[0].prefix(2), before[0].prefix(2), "the index's mode or owner changed")
        XCTAssertFalse(after[0][2].hasPrefix("mtime 0."), "the index's time was set")
        XCTAssertEqual(after[1], before[1], "the other bundle's manifest changed")
        // What the filter costs in the extension's own directories (docs/SECURITY.md).
        XCTAssertEqual(found["attempt.data.copyfile"], "allowed", "shutil.copyfile does not chmod")
        XCTAssertEqual(found["attempt.data.create-executable"], "allowed", "a file is created with the mode it asks for")
        XCTAssertEqual(found["attempt.data.copy"], "EPERM", "shutil.copy copies the mode with chmod")
        XCTAssertEqual(found["attempt.data.fchmod"], "EPERM")

        let list = try reindex(["list", "--json"])
        XCTAssertEqual(list.status, 0, "\(list)")
        let bundles = try XCTUnwrap((try JSONSerialization.jsonObject(with: Data(list.stdout.utf8)) as? [String: Any])?["bundles"] as? [[String: Any]])
        XCTAssertTrue(bundles.contains { $0["bundleIdentifier"] as? String == "com.example.other" }, "list refused the other bundle: \(list)")
        XCTAssertEqual(try reindex(["run", "com.example.other", "--ids", "x.2"]).status, 0)
    }

    func testNetworkIsAllowedByDefault() throws {
        let port = try listeningPort()
        try T.makeBundle(T.BundleSpec("com.example.other", executable: "well_behaved.py"), in: extensionsDirectory)
        try makeEscapingBundle(sandbox: nil, port: port, sharedTemporaryFile: "\(temporary)/unused.txt")
        let result = try reindex(["run", hostile])
        XCTAssertEqual(result.status, 0, "\(result)")
        let found = try titles(hostile)
        XCTAssertEqual(found["attempt.network.connect"], "allowed")
        XCTAssertEqual(found["attempt.network.bind"], "allowed")
        XCTAssertEqual(found["attempt.secret.read"], "EACCES", "the file system is still sandboxed")
    }

    // MARK: Processes left behind

    /// A daemon that hides where it came from — started by a subshell that exits, in a session of
    /// its own, its environment cleared (no REINDEX_BUNDLE_IDENTIFIER or REINDEX_HOST_PID left to
    /// recognise it by) — is stopped when the run ends, and `validate --run` names it.
    func testADaemonThatClearsItsEnvironmentDoesNotOutliveTheRun() throws {
        var spec = T.BundleSpec("com.example.daemon", executable: "fork_and_exit.sh")
        spec.arguments = ["daemon"]
        let directory = try T.makeBundle(spec, in: extensionsDirectory)
        func leftover() throws -> pid_t {
            let text = try XCTUnwrap(T.read("\(directory)/leftover.pid"), "the fixture did not record its daemon")
            return try XCTUnwrap(pid_t(text.trimmingCharacters(in: .whitespacesAndNewlines)))
        }
        let result = try reindex(["run", "com.example.daemon"])
        XCTAssertEqual(result.status, 0, "\(result)")
        let daemon = try leftover()
        addTeardownBlock { kill(daemon, SIGKILL) }
        XCTAssertTrue(T.isNotRunning(daemon), "the daemon \(daemon) outlived the run")
        let log = T.read("\(scratch)/index/logs/com.example.daemon.log") ?? ""
        XCTAssertTrue(log.contains("stopped 1 process(es) the extension left running outside its process group: \(daemon)"), log)

        try FileManager.default.removeItem(atPath: "\(directory)/leftover.pid")
        let validate = try reindex(["validate", directory, "--run", "--check", "no-leftover-processes"])
        let again = try leftover()
        addTeardownBlock { kill(again, SIGKILL) }
        XCTAssertEqual(validate.status, 65, "\(validate)")
        XCTAssertTrue(validate.stdout.contains("1 process(es) left behind were stopped by the host"), validate.stdout)
        XCTAssertTrue(T.isNotRunning(again), "the daemon \(again) outlived validate --run")
    }

    // MARK: Interpreters

    /// `tinysh`, an interpreter installed in the home directory as tools like pyenv, uv or
    /// pipx install them: `~/.local/opt/tinysh/bin/tinysh`, a shell script that loads a prelude
    /// from its own installation (`share/tinysh/prelude.sh`) before it runs the script, linked
    /// from `~/.local/bin`, found on PATH by `#!/usr/bin/env tinysh`.
    private func installTinysh() throws {
        let prefix = "\(home)/.local/opt/tinysh"
        try FileManager.default.createDirectory(atPath: "\(prefix)/bin", withIntermediateDirectories: true)
        try FileManager.default.createDirectory(atPath: "\(prefix)/share/tinysh", withIntermediateDirectories: true)
        try FileManager.default.createDirectory(atPath: "\(home)/.local/bin", withIntermediateDirectories: true)
        try FileManager.default.createDirectory(atPath: "\(home)/.local/share/keyrings", withIntermediateDirectories: true)
        try T.write("""
            #!/bin/sh
            # tinysh: runs SCRIPT with the shell after loading the prelude of its installation.
            self=$(readlink -f "$0")
            prefix=$(dirname "$(dirname "$self")")
            . "$prefix/share/tinysh/prelude.sh" || { echo "tinysh: cannot load its prelude from $prefix" >&2; exit 3; }
            script=$1
            shift
            . "$script"

            """, to: "\(prefix)/bin/tinysh", mode: 0o755)
        try T.write("TINYSH_GREETING='Tiny Tern'\n", to: "\(prefix)/share/tinysh/prelude.sh")
        try FileManager.default.createSymbolicLink(atPath: "\(home)/.local/bin/tinysh", withDestinationPath: "../opt/tinysh/bin/tinysh")
        // Beside the interpreter's installation, in the same ~/.local: not reachable.
        try T.write("keyring secret\n", to: "\(home)/.local/share/keyrings/login.keyring", mode: 0o600)
    }

    func testAnInterpreterInstalledInTheHomeDirectoryRunsSandboxed() throws {
        try installTinysh()
        let directory = "\(extensionsDirectory)/tiny"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        try T.write(#"""
            #!/usr/bin/env tinysh
            # A tinysh extension: one item titled with the interpreter's greeting.
            IFS= read -r line || exit 0
            printf '%s\n' '{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":1,"extension":{"name":"tiny","version":"1"},"capabilities":{}}}'
            IFS= read -r line || exit 0
            id=$(printf '%s' "$line" | sed -n 's/.*"id":\([0-9][0-9]*\).*/\1/p')
            keyring=$(cat "$HOME/.local/share/keyrings/login.keyring" 2>/dev/null || echo denied)
            echo "tiny: greeting $TINYSH_GREETING, keyring $keyring" >&2
            printf '{"jsonrpc":"2.0","method":"index/put","params":{"items":[{"uniqueIdentifier":"tiny.1","attributes":{"title":"%s"}},{"uniqueIdentifier":"tiny.keyring","attributes":{"title":"%s"}}]}}\n' "$TINYSH_GREETING" "$keyring"
            printf '{"jsonrpc":"2.0","id":%s,"result":{}}\n' "$id"
            while IFS= read -r line; do :; done

            """#, to: "\(directory)/indexer.tiny", mode: 0o755)
        try T.write(#"{"manifestVersion":1,"bundleIdentifier":"com.example.tiny","executable":"indexer.tiny"}"#, to: "\(directory)/manifest.json")
        let path = "\(home)/.local/bin:" + (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin")
        let result = try reindex(["run", "com.example.tiny"], environment: environment(["PATH": path]))
        XCTAssertEqual(result.status, 0, "\(result)")
        let found = try titles("com.example.tiny")
        XCTAssertEqual(found["tiny.1"], "Tiny Tern", "the interpreter loaded its prelude from its installation")
        XCTAssertEqual(found["tiny.keyring"], "denied", "the rest of ~/.local stays out of reach")

        // validate names the installation it grants (the link target's), not the whole ~/.local.
        let validate = try reindex(["validate", directory], environment: environment(["PATH": path]))
        XCTAssertEqual(validate.status, 0, "\(validate)")
        XCTAssertTrue(validate.stdout.contains("read: \(FileSystem.realPath("\(home)/.local/opt/tinysh") ?? "?")  (the interpreter of"), validate.stdout)
        XCTAssertFalse(validate.stdout.contains("read: \(FileSystem.realPath("\(home)/.local") ?? "?")  ("), validate.stdout)
    }

    /// A run path (`DT_RUNPATH`) is granted only where it holds a library the binary names
    /// (`DT_NEEDED`): not a directory of other `.so` files, which once sufficed.
    func testRunPathsGrantOnlyDirectoriesThatHoldALibraryTheBinaryNames() throws {
        let libraries = "\(scratch)/outside/libs", decoys = "\(scratch)/outside/decoys"
        for path in [libraries, decoys] { try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true) }
        try T.write("int reindex_probe_value(void) { return 7; }\n", to: "\(libraries)/probe.c")
        try T.write("int main(void) { return 0; }\n", to: "\(scratch)/outside/main.c")
        try T.write("not a library", to: "\(decoys)/libdecoy.so", mode: 0o644)
        let library = try T.run("/usr/bin/gcc", ["-shared", "-fPIC", "-o", "\(libraries)/libprobe.so", "\(libraries)/probe.c"], scratch: scratch, environment: environment())
        XCTAssertEqual(library.status, 0, "\(library)")
        let directory = "\(extensionsDirectory)/com.example.runpath"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let linked = try T.run("/usr/bin/gcc", ["-o", "\(directory)/indexer", "\(scratch)/outside/main.c", "-L\(libraries)", "-Wl,--no-as-needed", "-lprobe",
                                                "-Wl,-rpath,\(libraries):\(decoys)", "-Wl,--enable-new-dtags"], scratch: scratch, environment: environment())
        XCTAssertEqual(linked.status, 0, "\(linked)")
        try T.write(#"{"manifestVersion":1,"bundleIdentifier":"com.example.runpath","executable":"indexer"}"#, to: "\(directory)/manifest.json")
        let validate = try reindex(["validate", directory])
        XCTAssertEqual(validate.status, 0, "\(validate)")
        XCTAssertTrue(validate.stdout.contains("read: \(FileSystem.realPath(libraries) ?? "?")  (a library directory of"), validate.stdout)
        XCTAssertFalse(validate.stdout.contains("read: \(FileSystem.realPath(decoys) ?? "?")"), validate.stdout)
    }

    // MARK: Declared paths

    @discardableResult
    private func makeProbe(_ identifier: String, sandbox: JSONValue? = nil, priority: String? = nil, environment: [String: String] = [:]) throws -> String {
        var spec = T.BundleSpec(identifier, executable: "sandbox_probe.sh")
        spec.sandbox = sandbox
        spec.priority = priority
        spec.environment = environment
        return try T.makeBundle(spec, in: extensionsDirectory)
    }

    func testDeclaredReadAndWritePathsAreReachableAndTheirNeighboursAreNot() throws {
        try FileManager.default.createDirectory(atPath: "\(home)/Documents/Recipes", withIntermediateDirectories: true)
        try FileManager.default.createDirectory(atPath: "\(home)/Documents/Taxes", withIntermediateDirectories: true)
        try FileManager.default.createDirectory(atPath: "\(scratch)/exports", withIntermediateDirectories: true)
        try T.write("Pancakes\n", to: "\(home)/Documents/Recipes/pancakes.txt")
        try T.write("Income\n", to: "\(home)/Documents/Taxes/2026.txt")
        try makeProbe("com.example.recipes",
                      sandbox: ["read": ["~/Documents/Recipes"], "write": [.string("\(scratch)/exports")]],
                      environment: ["PROBE_READ": "\(home)/Documents/Recipes/pancakes.txt", "PROBE_WRITE": "\(scratch)/exports/out.txt",
                                    "PROBE_DENIED": "\(home)/Documents/Taxes/2026.txt"])
        let result = try reindex(["run", "com.example.recipes"])
        XCTAssertEqual(result.status, 0, "\(result)")
        let found = try titles("com.example.recipes")
        XCTAssertEqual(found["probe.read"], "Pancakes")
        XCTAssertEqual(found["probe.write"], "ok")
        XCTAssertEqual(T.read("\(scratch)/exports/out.txt"), "written\n")
        XCTAssertEqual(found["probe.denied"], "denied")
        XCTAssertEqual(found["probe.data"], "ok")
    }

    func testADeclaredPathHoldingTheIndexIsGrantedAroundIt() throws {
        // The index's directory, not the scratch directory: that holds the temporary and data roots too, which is an error (below).
        try T.write("shared notes\n", to: "\(scratch)/index/notes.txt")
        let directory = try makeProbe("com.example.wide", sandbox: ["read": [.string("\(scratch)/index")]],
                                      environment: ["PROBE_READ": "\(scratch)/index/notes.txt", "PROBE_DENIED": indexPath])
        XCTAssertEqual(try reindex(["run", "com.example.wide"]).status, 0)
        let found = try titles("com.example.wide")
        XCTAssertEqual(found["probe.read"], "shared notes")
        XCTAssertEqual(found["probe.denied"], "denied", "the index stays out of reach inside a declared directory")
        let validate = try reindex(["validate", directory])
        XCTAssertEqual(validate.status, 0, "\(validate)")
        XCTAssertTrue(validate.stdout.contains("note: sandbox.read[0]: \(scratch)/index holds "), validate.stdout)
        XCTAssertTrue(validate.stdout.contains("the index"), validate.stdout)
    }

    func testADeclaredPathInsideTheIndexOrAnotherBundleIsAnError() throws {
        try T.makeBundle(T.BundleSpec("com.example.other", executable: "well_behaved.py"), in: extensionsDirectory)
        XCTAssertEqual(try reindex(["run", "com.example.other"]).status, 0)
        for (n, (path, what)) in [("\(extensionsDirectory)/com.example.other", "another bundle's directory"),
                                  (indexPath + "-wal", "the index"), ("\(scratch)/index/logs", "the logs")].enumerated() {
            let identifier = "com.example.greedy\(n)"
            let directory = try makeProbe(identifier, sandbox: ["write": ["~/fine", .string(path)]])
            for arguments in [["run", identifier], ["validate", directory]] {
                let result = try reindex(arguments)
                XCTAssertEqual(result.status, 65, "\(arguments): \(result)")
                XCTAssertTrue(result.stderr.contains("error: \(directory)/manifest.json: sandbox.write[1]: \(path) is inside \(what)"), result.stderr)
            }
            XCTAssertFalse(FileManager.default.fileExists(atPath: "\(scratch)/index/logs/\(identifier).log"), "\(identifier) was started")
        }
    }

    /// The private directories made after an extension starts — other runs' TMPDIRs, the data
    /// directories of bundles that have not run yet — appear in the host's temporary directory
    /// and the data root: a declared directory holding either would reach them, so it is an error.
    func testADeclaredPathHoldingTheTemporaryOrTheDataRootIsAnError() throws {
        try FileManager.default.createDirectory(atPath: dataRoot, withIntermediateDirectories: true)
        let cases: [(written: String, root: String, what: String)] = [
            (temporary, temporary, "the host's temporary directory"),
            (dataRoot, dataRoot, "the data root"),
            ("\(scratch)/xdg-data", dataRoot, "the data root"),
            (scratch, temporary, "the host's temporary directory"),
        ]
        for (n, (written, root, what)) in cases.enumerated() {
            let identifier = "com.example.greedy\(n)"
            for key in ["read", "write"] {
                let directory = try makeProbe(identifier, sandbox: .object([(key, .array(["~/fine", .string(written)]))]))
                for arguments in [["run", identifier], ["validate", directory]] {
                    let result = try reindex(arguments)
                    XCTAssertEqual(result.status, 65, "\(written), \(arguments): \(result)")
                    XCTAssertTrue(result.stderr.contains("error: \(directory)/manifest.json: sandbox.\(key)[1]: \(written) holds \(what) (\(root)), where the host makes"),
                                  result.stderr)
                }
            }
            XCTAssertFalse(FileManager.default.fileExists(atPath: "\(scratch)/index/logs/\(identifier).log"), "\(identifier) was started")
        }
        // A directory inside the temporary directory is fine.
        try FileManager.default.createDirectory(atPath: "\(temporary)/shared", withIntermediateDirectories: true)
        try makeProbe("com.example.narrow", sandbox: ["read": [.string("\(temporary)/shared")]])
        XCTAssertEqual(try reindex(["run", "com.example.narrow"]).status, 0)
    }

    /// The data directory is the host's to make: one that is a link, someone else's or open to
    /// others is refused before the extension starts.
    func testADataDirectoryThatIsNotPrivateIsRefused() throws {
        try FileManager.default.createDirectory(atPath: dataRoot, withIntermediateDirectories: true)
        try T.write("planted\n", to: "\(scratch)/outside/planted.txt")
        let probe = "com.example.probe"
        try makeProbe(probe)
        let data = "\(dataRoot)/\(probe)"
        let cases: [(String, () throws -> Void, String)] = [
            ("a symbolic link", { try FileManager.default.createSymbolicLink(atPath: data, withDestinationPath: "\(self.scratch)/outside") },
             "is a symbolic link"),
            ("open to others", { try FileManager.default.createDirectory(atPath: data, withIntermediateDirectories: false, attributes: [.posixPermissions: 0o755]) },
             "can be entered by others (mode 0755); run chmod 700 on it"),
            ("someone else's", {
                try FileManager.default.createDirectory(atPath: data, withIntermediateDirectories: false, attributes: [.posixPermissions: 0o700])
                guard geteuid() == 0 else { throw XCTSkip("only root can make a directory someone else owns") }
                XCTAssertEqual(chown(data, 65534, 65534), 0)
            }, "belongs to user 65534, not to you"),
        ]
        for (what, make, says) in cases {
            try? FileManager.default.removeItem(atPath: data)
            try make()
            let result = try reindex(["run", probe])
            XCTAssertEqual(result.status, 69, "\(what): \(result)")
            XCTAssertTrue(result.stderr.contains("error: \(probe): refusing to run: its data directory \(data) \(says)"), "\(what): \(result.stderr)")
            XCTAssertEqual(try titles(probe), [:], "\(what): the extension ran")
        }
        // Made by the host: private, and the extension runs.
        try FileManager.default.removeItem(atPath: data)
        XCTAssertEqual(try reindex(["run", probe]).status, 0)
        var st = stat()
        XCTAssertEqual(lstat(data, &st), 0)
        XCTAssertEqual(st.st_mode & 0o7777, 0o700)
        XCTAssertEqual(st.st_uid, geteuid())
        XCTAssertEqual(try titles(probe)["probe.data"], "ok")
    }

    // MARK: Priority and privileges

    func testPriorityAndNoNewPrivileges() throws {
        try makeProbe("com.example.background", priority: "background")
        try makeProbe("com.example.utility")
        try makeProbe("com.example.interactive", priority: "interactive")
        try makeProbe("com.example.open", sandbox: .bool(false), priority: "interactive")
        for bundle in ["com.example.background", "com.example.utility", "com.example.interactive", "com.example.open"] {
            let result = try reindex(["run", bundle])
            XCTAssertEqual(result.status, 0, "\(bundle): \(result)")
        }
        #if canImport(Glibc)
        let ownNice = getpriority(__priority_which_t(PRIO_PROCESS.rawValue), 0)
        #else
        let ownNice = getpriority(PRIO_PROCESS, 0)
        #endif
        XCTAssertEqual(try titles("com.example.background")["probe.nice"], "19")
        XCTAssertEqual(try titles("com.example.background")["probe.io"], "idle")
        XCTAssertEqual(try titles("com.example.utility")["probe.nice"], String(max(10, ownNice)))
        XCTAssertEqual(try titles("com.example.interactive")["probe.nice"], String(ownNice))
        XCTAssertEqual(try titles("com.example.utility")["probe.nnp"], "1")
        XCTAssertEqual(try titles("com.example.open")["probe.nnp"], "0", "\"sandbox\": false turns no_new_privs off too")
    }

    // MARK: "sandbox": false

    func testSandboxFalseIsAWarningInListStatusAndValidate() throws {
        let open = try makeProbe("com.example.open", sandbox: .bool(false))
        let closed = try makeProbe("com.example.closed")
        let expected = #"the sandbox is off for this bundle ("sandbox": false in its manifest)"#

        let list = try reindex(["list"])
        XCTAssertTrue(list.stdout.contains("    warning: \(expected)"), list.stdout)
        XCTAssertEqual(list.stdout.components(separatedBy: "warning:").count, 2, "only the open bundle is warned about: \(list.stdout)")
        let listJSON = try reindex(["list", "--json"])
        let bundles = try XCTUnwrap((try JSONSerialization.jsonObject(with: Data(listJSON.stdout.utf8)) as? [String: Any])?["bundles"] as? [[String: Any]])
        let byID = Dictionary(uniqueKeysWithValues: bundles.map { ($0["bundleIdentifier"] as? String ?? "", $0) })
        XCTAssertEqual(byID["com.example.open"]?["sandboxed"] as? Bool, false)
        XCTAssertEqual((byID["com.example.open"]?["warnings"] as? [String])?.first?.hasPrefix(expected), true)
        XCTAssertEqual(byID["com.example.closed"]?["sandboxed"] as? Bool, true)
        XCTAssertEqual((byID["com.example.closed"]?["warnings"] as? [String]) ?? [], [])

        // status only reads an index: make one first.
        XCTAssertEqual(try reindex(["delete", "com.example.open", "--all"]).status, 0)
        let status = try reindex(["status"])
        XCTAssertTrue(status.stdout.contains("Sandbox: landlock ABI "), status.stdout)
        XCTAssertTrue(status.stdout.contains("com.example.open: 0 item(s)\n    warning: \(expected)"), status.stdout)
        let statusJSON = try reindex(["status", "--json"])
        XCTAssertTrue(statusJSON.stdout.contains(#""sandbox":{"available":true,"mechanism":"landlock""#), statusJSON.stdout)

        let validateOpen = try reindex(["validate", open])
        XCTAssertEqual(validateOpen.status, 0, "\(validateOpen)")
        XCTAssertTrue(validateOpen.stderr.contains("warning: com.example.open: \(expected)"), validateOpen.stderr)
        XCTAssertTrue(validateOpen.stdout.contains(#"sandbox: off ("sandbox": false in the manifest)"#), validateOpen.stdout)
        let validateClosed = try reindex(["validate", closed])
        XCTAssertFalse(validateClosed.stderr.contains("warning:"), validateClosed.stderr)
        XCTAssertTrue(validateClosed.stdout.contains("sandbox: landlock ABI "), validateClosed.stdout)

        // --require-sandbox refuses to run it (69), and starts nothing.
        let refused = try reindex(["run", "com.example.open", "--require-sandbox"])
        XCTAssertEqual(refused.status, 69, "\(refused)")
        XCTAssertTrue(refused.stderr.contains(#"refusing to run unsandboxed (--require-sandbox): its manifest says "sandbox": false"#), refused.stderr)
        XCTAssertEqual(try titles("com.example.open"), [:])
        XCTAssertEqual(try reindex(["run", "com.example.closed", "--require-sandbox"]).status, 0)
    }

    // MARK: Temporary directories a killed host left

    func testTheTemporaryDirectoriesOfDeadHostsAreRemovedWithoutFollowingLinks() throws {
        // A pid that no longer exists: a process that ran and was reaped.
        let finished = Process()
        finished.executableURL = URL(fileURLWithPath: "/bin/true")
        try finished.run()
        finished.waitUntilExit()
        let dead = finished.processIdentifier
        try T.write("keep me\n", to: "\(scratch)/precious.txt")
        let leftover = "\(temporary)/reindex-tmp-com.example.gone-p\(dead)-Ab12Cd"
        let alive = "\(temporary)/reindex-tmp-com.example.busy-p\(getpid())-Ef34Gh"
        for directory in [leftover, alive] {
            try FileManager.default.createDirectory(atPath: "\(directory)/nested", withIntermediateDirectories: true)
            try T.write("scratch\n", to: "\(directory)/nested/file.txt")
            try FileManager.default.createSymbolicLink(atPath: "\(directory)/link", withDestinationPath: "\(scratch)/precious.txt")
            try FileManager.default.createSymbolicLink(atPath: "\(directory)/nested/up", withDestinationPath: scratch)
        }
        try makeProbe("com.example.probe")
        XCTAssertEqual(try reindex(["run", "com.example.probe"]).status, 0)
        XCTAssertFalse(FileManager.default.fileExists(atPath: leftover), "the directory of a host that died was left")
        XCTAssertTrue(FileManager.default.fileExists(atPath: "\(alive)/nested/file.txt"), "a live host's directory was removed")
        XCTAssertEqual(T.read("\(scratch)/precious.txt"), "keep me\n", "the removal followed a link")
        XCTAssertTrue(FileManager.default.fileExists(atPath: "\(scratch)/outside"))
    }

    // MARK: Without Landlock

    func testWithoutLandlockExtensionsRunUnsandboxedAfterAWarningUnlessRequired() throws {
        let wrapper = withoutLandlock
        let paths = try reindex(["paths"], wrapper: wrapper)
        XCTAssertEqual(paths.status, 0, "\(paths)")
        XCTAssertTrue(paths.stdout.contains("Sandbox: unavailable (this kernel has no Landlock)"), paths.stdout)
        XCTAssertEqual(try reindex(["delete", "com.example.probe", "--all"]).status, 0, "status only reads an index: make one first")
        let status = try reindex(["status"], wrapper: wrapper)
        XCTAssertTrue(status.stdout.contains("Sandbox: unavailable (this kernel has no Landlock)"), status.stdout)

        try makeProbe("com.example.probe", environment: ["PROBE_DENIED": "\(home)/.ssh/id_ed25519"])
        let run = try reindex(["run", "com.example.probe"], wrapper: wrapper)
        XCTAssertEqual(run.status, 0, "\(run)")
        let warnings = run.stderr.split(separator: "\n").filter { $0.hasPrefix("warning:") }
        XCTAssertEqual(warnings, ["warning: sandbox unavailable (this kernel has no Landlock): com.example.probe runs unsandboxed; --require-sandbox refuses to run it instead"])
        XCTAssertEqual(try titles("com.example.probe")["probe.denied"], "-----BEGIN OPENSSH PRIVATE KEY-----", "it really ran unsandboxed")
        XCTAssertEqual(try titles("com.example.probe")["probe.data"], "ok", "the private directories are there all the same")

        let required = try reindex(["run", "com.example.probe", "--require-sandbox"], wrapper: wrapper)
        XCTAssertEqual(required.status, 69, "\(required)")
        XCTAssertTrue(required.stderr.contains("error: com.example.probe: refusing to run unsandboxed (--require-sandbox): sandbox unavailable (this kernel has no Landlock)"), required.stderr)
        let validate = try reindex(["validate", "\(extensionsDirectory)/com.example.probe", "--run", "--require-sandbox"], wrapper: wrapper)
        XCTAssertEqual(validate.status, 69, "\(validate)")
        let serve = try reindex(["serve", "--require-sandbox"], wrapper: wrapper, timeout: 30)
        XCTAssertEqual(serve.status, 69, "\(serve)")
        XCTAssertTrue(serve.stderr.contains("error: serve --require-sandbox: sandbox unavailable (this kernel has no Landlock)"), serve.stderr)
    }
}
