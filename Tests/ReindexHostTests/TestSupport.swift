import Foundation
import ReindexHost
import ReindexSystem
@testable import ReindexCommandLine
@testable import ReindexStore
import ReindexProtocol
import XCTest
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#elseif canImport(Musl)
import Musl
#endif

/// Shared helpers for the host's integration tests: scratch directories, bundles built from the
/// fixture extensions in `Tests/Fixtures/extensions`, the built `reindex` command run as a real
/// process, and facts about processes and descriptors read from the kernel. Nothing here is a
/// mock: every helper works on real files, real processes and real pipes.
enum TestSupport {
    // MARK: Files

    /// `Tests/Fixtures/extensions`, found from this source file.
    static let fixturesDirectory: String = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Fixtures").appendingPathComponent("extensions").path

    /// A fresh directory under the system's temporary directory, removed when `test` ends.
    static func makeScratchDirectory(for test: XCTestCase, file: StaticString = #filePath, line: UInt = #line) throws -> String {
        let base = (ProcessInfo.processInfo.environment["TMPDIR"].flatMap { $0.isEmpty ? nil : $0 } ?? "/tmp")
        var template = Array("\(base)/reindex-test-XXXXXX".utf8CString)
        let made = template.withUnsafeMutableBufferPointer { buffer -> Bool in mkdtemp(buffer.baseAddress!) != nil }
        guard made else {
            throw XCTSkip("cannot create a scratch directory under \(base): errno \(errno)", file: file, line: line)
        }
        let path = template.withUnsafeBufferPointer { String(cString: $0.baseAddress!) }
        test.addTeardownBlock { try? FileManager.default.removeItem(atPath: path) }
        return path
    }

    /// A directory for a fixture's handshake files (ready, release), which a sandboxed fixture
    /// may write when its spec declares it (`sandboxWrite`): not the scratch directory itself,
    /// which holds the index.
    static func handshakeDirectory(_ scratch: String) throws -> String {
        let directory = "\(scratch)/handshake"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        return directory
    }

    static func write(_ text: String, to path: String, mode: Int = 0o644) throws {
        try Data(text.utf8).write(to: URL(fileURLWithPath: path))
        try FileManager.default.setAttributes([.posixPermissions: mode], ofItemAtPath: path)
    }

    static func read(_ path: String) -> String? {
        FileManager.default.contents(atPath: path).map { String(decoding: $0, as: UTF8.self) }
    }

    // MARK: Bundles

    /// What goes in a test bundle's manifest.
    struct BundleSpec {
        var identifier: String
        /// The fixture file that is the executable (copied, mode 755).
        var executable: String
        /// Other fixture files copied beside it (the Python fixtures share `fixturelib.py`).
        var support: [String] = ["fixturelib.py"]
        var arguments: [String] = []
        var environment: [String: String] = [:]
        var startupSeconds: Double? = nil
        var idleSeconds: Double? = nil
        var requestSeconds: Double? = nil
        var maxAttempts: Int? = nil
        /// The manifest's `limits`: address space in MiB and CPU time in seconds.
        var addressSpaceMiB: Int? = nil
        var cpuSeconds: Int? = nil
        /// The manifest's `sandbox` as written (`false`, or an object); nil: from the two below.
        var sandbox: JSONValue? = nil
        /// Paths the fixture may write besides its private directories (`sandbox.write`).
        var sandboxWrite: [String] = []
        /// Whether the fixture may write its own bundle directory: the fixtures that leave what
        /// they saw there for the test to read (pids, environment dumps) or replace themselves.
        var writesItsDirectory: Bool
        /// The manifest's `priority`.
        var priority: String? = nil
        /// More top-level manifest keys (custom `attributes`, say).
        var extraManifest: [(String, JSONValue)] = []

        init(_ identifier: String, executable: String) {
            self.identifier = identifier
            self.executable = executable
            if executable.hasSuffix(".sh") { support = [] }
            writesItsDirectory = ["env_dump.sh", "grandchild.sh", "fork_and_exit.sh", "replace_self.sh"].contains(executable)
        }
    }

    /// Makes `root/<name>` a bundle: the fixture executable and its support files, and a
    /// manifest.json. Returns the bundle directory.
    @discardableResult
    static func makeBundle(_ spec: BundleSpec, in root: String, name: String? = nil) throws -> String {
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
    static func loadBundle(_ directory: String, file: StaticString = #filePath, line: UInt = #line) throws -> DiscoveredBundle {
        switch Discovery.load(directory: directory) {
        case .success(let bundle): return bundle
        case .failure(let problem):
            XCTFail("the fixture bundle is not valid: \(problem.reason)", file: file, line: line)
            throw problem
        }
    }

    // MARK: Items

    /// A validated item with the given attributes.
    static func item(
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

    /// Puts items straight into a bundle's live items (one transaction).
    static func seed(_ store: IndexStore, bundle: String, _ items: [ValidatedItem]) throws {
        try LocalIndex(store: store, bundleIdentifier: bundle).put(validated: items)
    }

    /// The identifiers of a bundle's live items, sorted.
    static func identifiers(_ store: IndexStore, bundle: String) throws -> [String] {
        try store.items(bundle: bundle, limit: 10_000).map(\.uniqueIdentifier).sorted()
    }

    // MARK: The reindex command

    /// The `reindex` executable built beside the test bundle.
    static let reindexBinary: String = {
        let bundleURL = Bundle(for: TestSupportAnchor.self).bundleURL
        let candidates = [
            bundleURL.deletingLastPathComponent().appendingPathComponent("reindex").path,
            bundleURL.appendingPathComponent("reindex").path,
            URL(fileURLWithPath: CommandLine.arguments.first ?? "").deletingLastPathComponent().appendingPathComponent("reindex").path,
        ]
        return candidates.first { FileManager.default.isExecutableFile(atPath: $0) } ?? candidates[0]
    }()

    /// An environment for the command that keeps it inside `scratch`: no user or system
    /// bundles are discovered and nothing is written outside the scratch directory.
    static func commandEnvironment(scratch: String, extra: [String: String] = [:]) -> [String: String] {
        var environment = [
            "PATH": ProcessInfo.processInfo.environment["PATH"] ?? "/usr/local/bin:/usr/bin:/bin",
            "HOME": "\(scratch)/home",
            "XDG_DATA_HOME": "\(scratch)/xdg-data",
            "XDG_STATE_HOME": "\(scratch)/xdg-state",
            "XDG_DATA_DIRS": "\(scratch)/xdg-system",
            "LANG": "C.UTF-8",
        ]
        for (key, value) in extra { environment[key] = value }
        return environment
    }

    /// How a run of the command ended.
    struct CommandResult: CustomStringConvertible {
        var status: Int32
        var signaled: Bool
        var stdout: String
        var stderr: String
        var timedOut: Bool
        var description: String { "status \(status)\(signaled ? " (signal)" : "")\(timedOut ? " (timed out)" : "")\nstdout: \(stdout)\nstderr: \(stderr)" }
    }

    /// A started `reindex` process whose stdout and stderr go to files.
    final class RunningCommand {
        let process: Process
        let stdin: Pipe?
        let stdoutPath: String
        let stderrPath: String

        init(arguments: [String], environment: [String: String], scratch: String, feedsStdin: Bool) throws {
            process = Process()
            process.executableURL = URL(fileURLWithPath: TestSupport.reindexBinary)
            process.arguments = arguments
            process.environment = environment
            process.currentDirectoryURL = URL(fileURLWithPath: scratch)
            let stamp = UUID().uuidString
            stdoutPath = "\(scratch)/command-\(stamp).out"
            stderrPath = "\(scratch)/command-\(stamp).err"
            _ = FileManager.default.createFile(atPath: stdoutPath, contents: nil)
            _ = FileManager.default.createFile(atPath: stderrPath, contents: nil)
            process.standardOutput = try FileHandle(forWritingTo: URL(fileURLWithPath: stdoutPath))
            process.standardError = try FileHandle(forWritingTo: URL(fileURLWithPath: stderrPath))
            if feedsStdin {
                let pipe = Pipe()
                stdin = pipe
                process.standardInput = pipe
            } else {
                stdin = nil
                process.standardInput = FileHandle.nullDevice
            }
            try process.run()
        }

        /// Waits for the process (killing it after `timeout` seconds) and collects its output.
        func finish(timeout: Double) -> CommandResult {
            let deadline = Date().addingTimeInterval(timeout)
            var timedOut = false
            while process.isRunning {
                if Date() >= deadline {
                    timedOut = true
                    kill(process.processIdentifier, SIGKILL)
                    break
                }
                usleep(10_000)
            }
            process.waitUntilExit()
            return CommandResult(
                status: process.terminationStatus, signaled: process.terminationReason == .uncaughtSignal,
                stdout: TestSupport.read(stdoutPath) ?? "", stderr: TestSupport.read(stderrPath) ?? "", timedOut: timedOut)
        }
    }

    /// Runs `reindex ARGUMENTS` to completion with `stdin` as its input.
    static func runReindex(
        _ arguments: [String], scratch: String, environment: [String: String]? = nil, stdin: String? = nil, timeout: Double = 60
    ) throws -> CommandResult {
        let command = try RunningCommand(arguments: arguments, environment: environment ?? commandEnvironment(scratch: scratch),
                                         scratch: scratch, feedsStdin: stdin != nil)
        if let stdin, let pipe = command.stdin {
            pipe.fileHandleForWriting.write(Data(stdin.utf8))
            try pipe.fileHandleForWriting.close()
        }
        return command.finish(timeout: timeout)
    }

    // MARK: Processes and descriptors

    /// How many descriptors this process has open.
    static func openDescriptorCount() -> Int {
        (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd").count) ?? -1
    }

    /// The state letter of a process from /proc (R, S, Z, …), or nil when there is no such process.
    static func processState(_ pid: pid_t) -> Character? {
        guard let stat = read("/proc/\(pid)/stat"), let close = stat.lastIndex(of: ")") else { return nil }
        return stat[stat.index(after: close)...].first { $0 != " " }
    }

    /// Whether `pid` is no longer running: gone, or dead and waiting to be reaped by its (new)
    /// parent. A process that is not our child but a dead orphan stays a zombie on systems whose
    /// init does not reap; that is still not running.
    static func isNotRunning(_ pid: pid_t) -> Bool {
        guard let state = processState(pid) else { return true }
        return state == "Z" || state == "X"
    }

    /// The live processes that `matches`, waiting up to `seconds` for them to go (an empty list as
    /// soon as there are none).
    static func processesStillRunning(after seconds: Double, where matches: (pid_t) -> Bool) -> [pid_t] {
        let deadline = Date().addingTimeInterval(seconds)
        while true {
            let found = ((try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []).compactMap { name -> pid_t? in
                guard let pid = pid_t(name), !isNotRunning(pid), matches(pid) else { return nil }
                return pid
            }
            if found.isEmpty || Date() >= deadline { return found }
            usleep(20_000)
        }
    }

    /// Whether `pid` is not an un-reaped child of this process (never was, or was reaped).
    static func isNotOurZombie(_ pid: pid_t) -> Bool {
        var status: Int32 = 0
        let rc = waitpid(pid, &status, WNOHANG)
        return rc == -1 && errno == ECHILD
    }
}

/// A class to find the test bundle by (`Bundle(for:)`).
final class TestSupportAnchor {}

/// Collects what a session reports through its hooks.
final class SessionProbe {
    var pid: pid_t = 0
    var progress: [ProgressParams] = []
    var stderrLines: [String] = []

    /// Session options with this probe's hooks, small shutdown graces (the fixtures that need the
    /// whole escalation keep the tests short this way) and the given environment.
    func options(environment: [String: String] = ProcessInfo.processInfo.environment, exitGrace: Double = 1, termGrace: Double = 0.5) -> SessionOptions {
        var options = SessionOptions()
        options.environment = environment
        options.exitGraceSeconds = exitGrace
        options.termGraceSeconds = termGrace
        options.onSpawn = { [unowned self] process in self.pid = process.pid }
        options.onProgress = { [unowned self] progress in self.progress.append(progress) }
        options.onStderrLine = { [unowned self] line in self.stderrLines.append(line) }
        return options
    }
}
