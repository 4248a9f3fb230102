import Foundation
import ReindexProtocol
import ReindexSystem
import XCTest
@_exported import PostgresHarness

/// Helpers shared by the package's test targets: scratch directories, the built products (the
/// `reindex` command, the example extensions) run as real processes, and facts about processes
/// and descriptors read from the kernel. Nothing here is a mock: every helper works on real
/// files, real processes and real pipes. The fixture bundles are in `FixtureBundles.swift`, the
/// example bundles and a test's private host in `ExampleBundles.swift`.
public enum TestSupport {
    // MARK: Files

    /// The package's root directory, found from this source file (`Tests/ReindexTestSupport/`).
    public static let packageRoot: String = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().path

    /// `Tests/Fixtures/extensions`.
    public static let fixturesDirectory: String = "\(packageRoot)/Tests/Fixtures/extensions"

    /// A fresh directory under the system's temporary directory; the caller removes it.
    public static func makeScratchDirectory() throws -> String {
        let base = ProcessInfo.processInfo.environment["TMPDIR"].flatMap { $0.isEmpty ? nil : $0 } ?? "/tmp"
        var template = Array("\(base)/reindex-test-XXXXXX".utf8CString)
        let made = template.withUnsafeMutableBufferPointer { buffer -> Bool in
            guard let address = buffer.baseAddress else { return false }
            return mkdtemp(address) != nil
        }
        guard made else { throw ScratchDirectoryError(message: "cannot create a scratch directory under \(base): errno \(errno)") }
        return String(decoding: template.prefix { $0 != 0 }.map { UInt8(truncatingIfNeeded: $0) }, as: UTF8.self)
    }

    /// Why a scratch directory could not be made.
    public struct ScratchDirectoryError: Error, CustomStringConvertible {
        public var message: String
        public var description: String { message }
    }

    /// A fresh directory under the system's temporary directory, removed when `test` ends (a skip
    /// when none can be made).
    public static func makeScratchDirectory(for test: XCTestCase, file: StaticString = #filePath, line: UInt = #line) throws -> String {
        let path: String
        do {
            path = try makeScratchDirectory()
        } catch let error as ScratchDirectoryError {
            throw XCTSkip(error.message, file: file, line: line)
        }
        test.addTeardownBlock { try? FileManager.default.removeItem(atPath: path) }
        return path
    }

    /// A directory for a fixture's handshake files (ready, release), which a sandboxed fixture
    /// may write when its spec declares it (`sandboxWrite`): not the scratch directory itself,
    /// which holds the index.
    public static func handshakeDirectory(_ scratch: String) throws -> String {
        let directory = "\(scratch)/handshake"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        return directory
    }

    public static func write(_ text: String, to path: String, mode: Int = 0o644) throws {
        try Data(text.utf8).write(to: URL(fileURLWithPath: path))
        try FileManager.default.setAttributes([.posixPermissions: mode], ofItemAtPath: path)
    }

    /// The file's text, or nil when it cannot be read.
    public static func read(_ path: String) -> String? {
        FileManager.default.contents(atPath: path).map { String(decoding: $0, as: UTF8.self) }
    }

    // MARK: The built products

    /// This test process's executable (the `.xctest` binary on Linux).
    public static let testExecutable: String = {
        if let path = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe") { return path }
        return Bundle.main.executablePath ?? CommandLine.arguments[0]
    }()

    /// The directory the products (`reindex`, `ColleaguesIndexer`, `ShowTimesIndexer`) were built
    /// into, beside the test bundle.
    public static let productsDirectory: String = {
        let bundleURL = Bundle(for: TestSupportAnchor.self).bundleURL
        let candidates = [
            bundleURL.deletingLastPathComponent().path,
            bundleURL.path,
            URL(fileURLWithPath: testExecutable).deletingLastPathComponent().path,
            URL(fileURLWithPath: CommandLine.arguments.first ?? "").deletingLastPathComponent().path,
        ]
        return candidates.first { FileManager.default.isExecutableFile(atPath: "\($0)/reindex") } ?? candidates[0]
    }()

    /// The `reindex` executable built beside the test bundle.
    public static let reindexBinary: String = "\(productsDirectory)/reindex"

    /// A built product's path, or a skip when it was not built (`swift build --build-tests` builds it).
    public static func product(_ name: String) throws -> String {
        let path = "\(productsDirectory)/\(name)"
        guard FileManager.default.isExecutableFile(atPath: path) else {
            throw XCTSkip("\(name) is not built beside the tests (looked at \(path)); run swift build --build-tests first")
        }
        return path
    }

    // MARK: Running commands

    /// An environment for the command that keeps it inside `scratch`: no user or system
    /// bundles are discovered and nothing is written outside the scratch directory.
    public static func commandEnvironment(scratch: String, extra: [String: String] = [:]) -> [String: String] {
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

    /// How a run of a command ended.
    public struct CommandResult: CustomStringConvertible, Sendable {
        public var status: Int32
        public var signaled: Bool
        public var stdout: String
        public var stderr: String
        public var timedOut: Bool
        public var description: String { "status \(status)\(signaled ? " (signal)" : "")\(timedOut ? " (timed out)" : "")\nstdout: \(stdout)\nstderr: \(stderr)" }

        /// stdout parsed as one JSON value (`--json`).
        public var json: JSONValue? { try? JSONParser.parse(text: stdout) }
    }

    /// A started process (by default the `reindex` command) whose stdout and stderr go to files.
    public final class RunningCommand {
        public let process: Process
        public let stdin: Pipe?
        public let stdoutPath: String
        public let stderrPath: String
        private let outputHandles: [FileHandle]

        public init(executable: String = TestSupport.reindexBinary, arguments: [String], environment: [String: String],
                    scratch: String, feedsStdin: Bool) throws {
            process = Process()
            process.executableURL = URL(fileURLWithPath: executable)
            process.arguments = arguments
            process.environment = environment
            process.currentDirectoryURL = URL(fileURLWithPath: scratch)
            let stamp = UUID().uuidString
            stdoutPath = "\(scratch)/command-\(stamp).out"
            stderrPath = "\(scratch)/command-\(stamp).err"
            _ = FileManager.default.createFile(atPath: stdoutPath, contents: nil)
            _ = FileManager.default.createFile(atPath: stderrPath, contents: nil)
            let out = try FileHandle(forWritingTo: URL(fileURLWithPath: stdoutPath))
            let err = try FileHandle(forWritingTo: URL(fileURLWithPath: stderrPath))
            outputHandles = [out, err]
            process.standardOutput = out
            process.standardError = err
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

        /// Waits for the process (killing it after `timeout` seconds, a limit on a hung run, not
        /// an assertion) and collects its output.
        public func finish(timeout: Double) -> CommandResult {
            let deadline = Date().addingTimeInterval(timeout)
            var timedOut = false
            while process.isRunning {
                if Date() >= deadline {
                    timedOut = true
                    kill(process.processIdentifier, SIGKILL)
                    break
                }
                usleep(10_000)  // polling the process's state until the deadline
            }
            process.waitUntilExit()
            for handle in outputHandles { try? handle.close() }
            return CommandResult(
                status: process.terminationStatus, signaled: process.terminationReason == .uncaughtSignal,
                stdout: TestSupport.read(stdoutPath) ?? "", stderr: TestSupport.read(stderrPath) ?? "", timedOut: timedOut)
        }
    }

    /// Runs `executable ARGUMENTS` to completion with `stdin` as its input; stdout and stderr go
    /// through real files in `scratch`.
    public static func run(
        _ executable: String, _ arguments: [String], scratch: String, environment: [String: String],
        stdin: String? = nil, timeout: Double = 60
    ) throws -> CommandResult {
        let command = try RunningCommand(executable: executable, arguments: arguments, environment: environment,
                                         scratch: scratch, feedsStdin: stdin != nil)
        if let stdin, let pipe = command.stdin {
            pipe.fileHandleForWriting.write(Data(stdin.utf8))
            try pipe.fileHandleForWriting.close()
        }
        return command.finish(timeout: timeout)
    }

    /// Runs `reindex ARGUMENTS` to completion with `stdin` as its input.
    public static func runReindex(
        _ arguments: [String], scratch: String, environment: [String: String]? = nil, stdin: String? = nil, timeout: Double = 60
    ) throws -> CommandResult {
        try run(reindexBinary, arguments, scratch: scratch, environment: environment ?? commandEnvironment(scratch: scratch),
                stdin: stdin, timeout: timeout)
    }

    // MARK: Waiting

    /// Whether `condition` holds within `seconds`, checked every 10 ms (true as soon as it does).
    /// The deadline bounds a hung wait; it is not an assertion about time.
    @discardableResult
    public static func wait(upTo seconds: Double, until condition: () throws -> Bool) rethrows -> Bool {
        let deadline = Date().addingTimeInterval(seconds)
        while true {
            if try condition() { return true }
            if Date() >= deadline { return false }
            usleep(10_000)
        }
    }

    // MARK: Processes and descriptors

    /// How many descriptors this process has open.
    public static func openDescriptorCount() -> Int {
        (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd").count) ?? -1
    }

    /// The state letter of a process from /proc (R, S, Z, …), or nil when there is no such process.
    public static func processState(_ pid: pid_t) -> Character? {
        guard let stat = read("/proc/\(pid)/stat"), let close = stat.lastIndex(of: ")") else { return nil }
        return stat[stat.index(after: close)...].first { $0 != " " }
    }

    /// Whether `pid` is no longer running: gone, or dead and waiting to be reaped by its (new)
    /// parent. A process that is not our child but a dead orphan stays a zombie on systems whose
    /// init does not reap; that is still not running.
    public static func isNotRunning(_ pid: pid_t) -> Bool {
        guard let state = processState(pid) else { return true }
        return state == "Z" || state == "X"
    }

    /// The live processes that `matches`, waiting up to `seconds` for them to go (an empty list as
    /// soon as there are none).
    public static func processesStillRunning(after seconds: Double, where matches: (pid_t) -> Bool) -> [pid_t] {
        var found: [pid_t] = []
        wait(upTo: seconds) {
            found = ((try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []).compactMap { name -> pid_t? in
                guard let pid = pid_t(name), !isNotRunning(pid), matches(pid) else { return nil }
                return pid
            }
            return found.isEmpty
        }
        return found
    }

    /// Whether `pid` is not an un-reaped child of this process (never was, or was reaped).
    public static func isNotOurZombie(_ pid: pid_t) -> Bool {
        var status: Int32 = 0
        let rc = waitpid(pid, &status, WNOHANG)
        return rc == -1 && errno == ECHILD
    }
}

/// A class to find the test bundle by (`Bundle(for:)`).
final class TestSupportAnchor {}
