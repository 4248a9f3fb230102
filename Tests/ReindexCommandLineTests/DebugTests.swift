import Foundation
import ReindexHost
import ReindexSystem
@testable import ReindexCommandLine
@testable import ReindexStore
import ReindexProtocol
import ReindexTestSupport
import XCTest

/// `reindex debug` as a developer uses it: the built command as a real process, the example
/// extensions (the Swift Colleagues indexer built beside these tests, the Python bookshelf) in a
/// scratch extensions directory, and a real `gdb` attaching to the PID the command prints.
final class DebugTests: XCTestCase, @unchecked Sendable {
    private typealias T = TestSupport
    private var scratch = ""
    private var extensionsDirectory: String { "\(scratch)/extensions" }
    private var indexPath: String { "\(scratch)/index/index.sqlite" }
    /// Extension process groups a test started (through the command) and must not leave behind.
    private var extensionPIDs: [pid_t] = []
    /// `reindex debug` processes a test started; a failed test may leave one waiting.
    private var commands: [T.RunningCommand] = []

    private let colleagues = "com.example.colleagues.indexer"
    /// The Python bookshelf without the SDK: no gate of its own, so it is held before exec.
    private let bookshelf = "com.example.bookshelf-nosdk.indexer"

    static let packageRoot: String = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().path

    override func setUpWithError() throws {
        scratch = try T.makeScratchDirectory(for: self)
        try FileManager.default.createDirectory(atPath: extensionsDirectory, withIntermediateDirectories: true)
        try FileManager.default.createDirectory(atPath: "\(scratch)/index", withIntermediateDirectories: true)
        try FileManager.default.createDirectory(atPath: "\(scratch)/tmp", withIntermediateDirectories: true)
        signal(SIGPIPE, SIG_IGN)
    }

    override func tearDown() {
        // A failed test may leave the command or its extension waiting: end exactly those.
        for command in commands where command.process.isRunning { kill(command.process.processIdentifier, SIGKILL) }
        for pid in extensionPIDs where !T.isNotRunning(pid) { kill(-pid, SIGKILL); kill(pid, SIGKILL) }
        for command in commands { command.process.waitUntilExit() }
        commands = []
        extensionPIDs = []
        super.tearDown()
    }

    // MARK: Bundles

    /// The Colleagues example as a bundle: the executable built beside the tests in `bin/`, its
    /// employees file, and its manifest (with `timeouts` replaced when given).
    @discardableResult
    private func makeColleaguesBundle(timeouts: (startup: Double, idle: Double, request: Double)? = nil) throws -> String {
        let built = URL(fileURLWithPath: T.reindexBinary).deletingLastPathComponent().appendingPathComponent("ColleaguesIndexer").path
        guard FileManager.default.isExecutableFile(atPath: built) else {
            throw XCTSkip("ColleaguesIndexer is not built beside the tests (\(built)); run swift build --build-tests")
        }
        let source = "\(Self.packageRoot)/Examples/Colleagues/Sources/ColleaguesIndexer/Bundle"
        let directory = "\(extensionsDirectory)/colleagues"
        try FileManager.default.createDirectory(atPath: "\(directory)/bin", withIntermediateDirectories: true)
        try FileManager.default.copyItem(atPath: built, toPath: "\(directory)/bin/ColleaguesIndexer")
        try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: "\(directory)/bin/ColleaguesIndexer")
        try FileManager.default.copyItem(atPath: "\(source)/employees.json", toPath: "\(directory)/employees.json")
        guard case .object(var manifest) = try JSONParser.parse(text: T.read("\(source)/manifest.json") ?? "") else {
            throw XCTSkip("the Colleagues manifest template is not a JSON object")
        }
        if let timeouts {
            manifest.removeAll { $0.0 == "timeouts" }
            manifest.append(("timeouts", ["startupSeconds": .double(timeouts.startup), "idleSeconds": .double(timeouts.idle),
                                          "requestSeconds": .double(timeouts.request)]))
        }
        try T.write(JSONWriter.string(.object(manifest)), to: "\(directory)/manifest.json")
        return directory
    }

    /// `Examples/python/bookshelf-nosdk` (or with `sdk`, `Examples/python/bookshelf` with the
    /// Python SDK beside it, as a user installs it), copied as it is.
    @discardableResult
    private func makeBookshelfBundle(sdk: Bool = false) throws -> String {
        let source = "\(Self.packageRoot)/Examples/python/bookshelf\(sdk ? "" : "-nosdk")"
        let directory = "\(extensionsDirectory)/bookshelf"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        for file in ["manifest.json", "bookshelf.py", "books.json"] {
            try FileManager.default.copyItem(atPath: "\(source)/\(file)", toPath: "\(directory)/\(file)")
            try FileManager.default.setAttributes([.posixPermissions: file == "bookshelf.py" ? 0o755 : 0o644], ofItemAtPath: "\(directory)/\(file)")
        }
        if sdk {
            try FileManager.default.copyItem(atPath: "\(Self.packageRoot)/SDKs/python/reindex_extension", toPath: "\(directory)/reindex_extension")
        }
        return directory
    }

    /// The line of `let employees = try loadEmployees()` in ColleaguesIndexer.swift (in reindexAll).
    private func reindexAllBreakpointLine() throws -> Int {
        let file = "\(Self.packageRoot)/Examples/Colleagues/Sources/ColleaguesIndexer/ColleaguesIndexer.swift"
        let lines = (T.read(file) ?? "").split(separator: "\n", omittingEmptySubsequences: false)
        let index = try XCTUnwrap(lines.firstIndex { $0.contains("let employees = try loadEmployees()") }, "the line is not in \(file)")
        return index + 1
    }

    // MARK: Running the command and gdb

    private var environment: [String: String] { T.commandEnvironment(scratch: scratch, extra: ["TMPDIR": "\(scratch)/tmp"]) }

    private func debugArguments(_ arguments: [String]) -> [String] {
        ["--index", indexPath, "--extensions-path", extensionsDirectory] + arguments
    }

    /// Runs `reindex ARGUMENTS` (this test's index and extensions) to completion.
    private func reindex(_ arguments: [String], timeout: Double = 60) throws -> T.CommandResult {
        try T.runReindex(debugArguments(arguments), scratch: scratch, environment: environment, timeout: timeout)
    }

    /// Starts `reindex debug ARGUMENTS --wait-for-debugger…` and returns it with the extension PID
    /// it printed, once stderr says `debug: waiting for a debugger` (at most 30 s: a guard, not a
    /// measurement).
    private func startDebug(_ arguments: [String], file: StaticString = #filePath, line: UInt = #line) throws -> (T.RunningCommand, pid_t) {
        let command = try T.RunningCommand(arguments: debugArguments(["debug"] + arguments), environment: environment,
                                           scratch: scratch, feedsStdin: false)
        commands.append(command)
        let deadline = Date().addingTimeInterval(30)
        while Date() < deadline {
            let text = T.read(command.stderrPath) ?? ""
            if text.contains("debug: waiting for a debugger"), let pid = Self.extensionPID(in: text) {
                extensionPIDs.append(pid)
                return (command, pid)
            }
            if !command.process.isRunning { break }
            usleep(20_000)
        }
        let result = command.finish(timeout: 1)
        XCTFail("reindex debug printed no extension pid: \(result)", file: file, line: line)
        throw NoExtensionPID()
    }

    private struct NoExtensionPID: Error {}

    static func extensionPID(in text: String) -> pid_t? {
        guard let range = text.range(of: "extension pid ") else { return nil }
        let digits = text[range.upperBound...].prefix { $0.isNumber }
        return pid_t(digits)
    }

    /// gdb on PATH, or a skip that says why the test cannot run; also skips when Yama forbids attaching.
    private func gdbPath() throws -> String {
        let path = (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin").split(separator: ":")
            .map { "\($0)/gdb" }.first { FileManager.default.isExecutableFile(atPath: $0) }
        guard let path else { throw XCTSkip("gdb is not on PATH: install gdb to run the debugger end-to-end tests") }
        let scope = T.read("/proc/sys/kernel/yama/ptrace_scope")?.trimmingCharacters(in: .whitespacesAndNewlines)
        if scope == "3" { throw XCTSkip("Yama ptrace_scope is 3: no process may attach a debugger on this machine") }
        if scope == "2" && geteuid() != 0 { throw XCTSkip("Yama ptrace_scope is 2: attaching needs root or CAP_SYS_PTRACE") }
        return path
    }

    /// Runs `gdb -nx -p PID -batch -ex C…` and returns its stdout and stderr together.
    private func gdb(_ path: String, pid: pid_t, _ commands: [String]) throws -> String {
        let output = "\(scratch)/gdb-\(UUID().uuidString).txt"
        _ = FileManager.default.createFile(atPath: output, contents: nil)
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: output))
        defer { try? handle.close() }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: path)
        process.arguments = ["-nx", "-p", String(pid), "-batch"] + commands.flatMap { ["-ex", $0] }
        process.environment = environment
        process.currentDirectoryURL = URL(fileURLWithPath: scratch)
        process.standardInput = FileHandle.nullDevice
        process.standardOutput = handle
        process.standardError = handle
        try process.run()
        let deadline = Date().addingTimeInterval(120)
        while process.isRunning && Date() < deadline { usleep(20_000) }
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
        process.waitUntilExit()
        return T.read(output) ?? ""
    }

    /// The command ended with status 0 and printed the acknowledged summary with `put` items.
    private func assertAcknowledged(_ result: T.CommandResult, request: String = "reindexAll", put: Int,
                                    file: StaticString = #filePath, line: UInt = #line) {
        XCTAssertFalse(result.timedOut, "\(result)", file: file, line: line)
        XCTAssertEqual(result.status, 0, "\(result)", file: file, line: line)
        XCTAssertTrue(result.stdout.contains("\(request) acknowledged: put \(put), deleted 0, rejected 0"), "\(result)", file: file, line: line)
    }

    private func liveItems(_ bundle: String) throws -> [String] {
        try T.identifiers(try IndexStore.open(path: indexPath), bundle: bundle)
    }

    // MARK: (a) gdb, breakpoint in reindexAll

    func testGdbAttachesToTheWaitingExtensionAndStopsInReindexAll() throws {
        let gdb = try gdbPath()
        try makeColleaguesBundle()
        let line = try reindexAllBreakpointLine()
        let (command, pid) = try startDebug([colleagues, "--wait-for-debugger=60"])
        // The printed process name is the executable's name, what attach-by-name tools match
        // (the kernel's short name, which pgrep matches without -f, is cut to 15 bytes).
        XCTAssertTrue(T.read(command.stderrPath)?.contains("extension pid \(pid), process name ColleaguesIndexer") == true)
        let argv0 = (T.read("/proc/\(pid)/cmdline") ?? "").split(separator: "\0").first.map { String($0.split(separator: "/").last ?? "") }
        XCTAssertEqual(argv0, "ColleaguesIndexer")
        XCTAssertEqual(T.read("/proc/\(pid)/comm")?.trimmingCharacters(in: .newlines), String("ColleaguesIndexer".prefix(15)))

        let output = try self.gdb(gdb, pid: pid, ["break ColleaguesIndexer.swift:\(line)", "continue", "bt 1", "continue"])
        let result = command.finish(timeout: 60)

        let hit = output.split(separator: "\n").first { $0.contains("hit Breakpoint 1") }
        XCTAssertNotNil(hit, "gdb did not stop at the breakpoint:\n\(output)")
        XCTAssertTrue(hit?.contains("reindexAll") == true, "the breakpoint was not in reindexAll: \(hit ?? "")")
        XCTAssertTrue(output.contains("ColleaguesIndexer.swift:\(line)"), output)
        XCTAssertTrue(output.contains("let employees = try loadEmployees()"), "gdb did not show the source line:\n\(output)")

        assertAcknowledged(result, put: 26)
        XCTAssertTrue(result.stderr.contains("waits in the SDK's debugger gate"), result.stderr)
        XCTAssertTrue(result.stderr.contains("debug: debugger attached to pid \(pid)"), result.stderr)
        XCTAssertTrue(result.stderr.contains("ext| reindex-extension: debugger attached to pid \(pid); continuing"), result.stderr)
        XCTAssertEqual(try liveItems(colleagues).count, 26)
    }

    // MARK: (a') the same, sandboxed

    func testGdbStopsInASandboxedExtensionWhichStillCannotOpenTheIndex() throws {
        let gdb = try gdbPath()
        guard case .landlock = SandboxSupport.current else { throw XCTSkip("no Landlock here: \(SandboxSupport.current)") }
        try makeColleaguesBundle()
        let line = try reindexAllBreakpointLine()
        let (command, pid) = try startDebug([colleagues, "--wait-for-debugger=60"])
        // It waits inside its sandbox: no_new_privs is set before the wait, and the host says so.
        let status = T.read("/proc/\(pid)/status") ?? ""
        XCTAssertTrue(status.contains("NoNewPrivs:\t1"), status)
        XCTAssertTrue(T.read(command.stderrPath)?.contains("debug: sandboxed (landlock ABI") == true, T.read(command.stderrPath) ?? "")

        // gdb, from outside the sandbox, attaches and stops at the breakpoint; there the extension
        // tries to open the index (and its own employees.json) from inside.
        let open = "((int (*)(const char *, int))open)"
        let output = try self.gdb(gdb, pid: pid, [
            "break ColleaguesIndexer.swift:\(line)", "continue",
            "print \(open)(\"\(indexPath)\", 0)", "print *((int *(*)(void))__errno_location)()",
            "print \(open)(\"employees.json\", 0) >= 0", "continue",
        ])
        let result = command.finish(timeout: 60)
        XCTAssertTrue(output.contains("hit Breakpoint 1"), "gdb did not stop at the breakpoint:\n\(output)")
        let values = output.split(separator: "\n").filter { $0.hasPrefix("$") }.map { String($0.split(separator: "=").last ?? "").trimmingCharacters(in: .whitespaces) }
        XCTAssertEqual(values, ["-1", "\(EACCES)", "1"], "open(index) fails with EACCES inside the sandbox, its own file opens:\n\(output)")
        assertAcknowledged(result, put: 26)
    }

    func testDebugNoSandboxRunsTheExtensionWithoutIt() throws {
        try makeColleaguesBundle()
        let result = try reindex(["debug", colleagues, "--no-sandbox"])
        assertAcknowledged(result, put: 26)
        XCTAssertTrue(result.stderr.contains("warning: \(colleagues): running without the sandbox (--no-sandbox)"), result.stderr)
        XCTAssertTrue(result.stderr.contains("debug: sandbox off (--no-sandbox)"), result.stderr)
        let both = try reindex(["debug", colleagues, "--no-sandbox", "--require-sandbox"])
        XCTAssertEqual(both.status, 64, "\(both)")
    }

    // MARK: (b) no timeout kills a paused extension

    func testAnExtensionPausedAtABreakpointLongerThanEveryTimeoutIsNotKilled() throws {
        let gdb = try gdbPath()
        try makeColleaguesBundle(timeouts: (startup: 1, idle: 1, request: 2))
        let line = try reindexAllBreakpointLine()
        let (command, pid) = try startDebug([colleagues, "--wait-for-debugger=60"])
        // Stopped at the breakpoint, gdb sleeps 4 s: longer than startup, idle and request timeouts.
        let output = try self.gdb(gdb, pid: pid, ["break ColleaguesIndexer.swift:\(line)", "continue", "shell sleep 4", "continue"])
        let result = command.finish(timeout: 60)

        XCTAssertTrue(output.contains("hit Breakpoint 1"), "gdb did not stop at the breakpoint:\n\(output)")
        assertAcknowledged(result, put: 26)
        XCTAssertFalse(result.stderr.contains("error:"), result.stderr)
        XCTAssertFalse(result.stderr.lowercased().contains("timed out"), result.stderr)
        XCTAssertTrue(result.stderr.contains("timeouts are off"), result.stderr)
        XCTAssertEqual(try liveItems(colleagues).count, 26)
    }

    // MARK: (c) a non-SDK extension is held before exec

    func testANonSDKExtensionIsHeldBeforeExecUntilGdbAttaches() throws {
        let gdb = try gdbPath()
        try makeBookshelfBundle()
        let (command, pid) = try startDebug([bookshelf, "--wait-for-debugger=60"])

        // Still the forked host, not yet the Python program: exec has not happened.
        let exe = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/\(pid)/exe")
        let cmdline = (T.read("/proc/\(pid)/cmdline") ?? "").split(separator: "\0").map(String.init)
        let reindexResolved = URL(fileURLWithPath: T.reindexBinary).resolvingSymlinksInPath().path
        XCTAssertTrue(exe == reindexResolved || cmdline.contains("debug"),
                      "the extension already exec'd: exe \(exe ?? "?"), cmdline \(cmdline)")
        XCTAssertFalse(cmdline.contains { $0.hasSuffix("bookshelf.py") }, "\(cmdline)")
        XCTAssertTrue(T.read(command.stderrPath)?.contains("it is held just before exec") == true, T.read(command.stderrPath) ?? "")

        let output = try self.gdb(gdb, pid: pid, ["continue"])
        let result = command.finish(timeout: 60)
        XCTAssertTrue(output.contains("is executing new program"), "gdb did not follow the exec:\n\(output)")
        assertAcknowledged(result, put: 15)
        XCTAssertTrue(result.stderr.contains("debug: debugger attached to pid \(pid)"), result.stderr)
        XCTAssertEqual(try liveItems(bookshelf).count, 15)
    }

    // MARK: Stopping a wait

    /// Whether `pid` has ended (gone, or a zombie nobody has reaped yet), within `seconds`.
    private func ends(_ pid: pid_t, within seconds: Double) -> Bool {
        let deadline = Date().addingTimeInterval(seconds)
        repeat {
            guard let stat = T.read("/proc/\(pid)/stat") else { return true }
            if let close = stat.lastIndex(of: ")"), stat[stat.index(close, offsetBy: 2)] == "Z" { return true }
            usleep(20_000)
        } while Date() < deadline
        return false
    }

    func testASignalEndsTheWaitForADebuggerAndStopsTheExtension() throws {
        try makeColleaguesBundle()
        try makeBookshelfBundle()
        // In the SDK's gate (Swift) and held before exec (a script without the SDK); each signal.
        for (bundle, signal) in [(colleagues, SIGINT), (bookshelf, SIGTERM), (colleagues, SIGHUP), (bookshelf, SIGINT)] {
            let (command, pid) = try startDebug([bundle, "--wait-for-debugger"])
            kill(command.process.processIdentifier, signal)
            let result = command.finish(timeout: 10)
            XCTAssertFalse(result.timedOut, "\(bundle), signal \(signal): the wait was not stopped: \(result)")
            XCTAssertEqual(result.status, 75, "\(bundle), signal \(signal): \(result)")
            XCTAssertTrue(result.stderr.contains("error: \(bundle)"), "\(result)")
            XCTAssertTrue(ends(pid, within: 5), "\(bundle), signal \(signal): the extension \(pid) outlived the wait")
        }
    }

    func testAnExtensionWaitingForADebuggerDiesWithAKilledHost() throws {
        try makeColleaguesBundle()
        try makeBookshelfBundle()
        for bundle in [colleagues, bookshelf] {
            let (command, pid) = try startDebug([bundle, "--wait-for-debugger"])
            kill(command.process.processIdentifier, SIGKILL)
            _ = command.finish(timeout: 10)
            XCTAssertTrue(ends(pid, within: 5), "\(bundle): the extension \(pid) outlived its killed host")
        }
    }

    func testTheHostNamesTheDebuggerThatFitsEachRuntime() throws {
        try makeColleaguesBundle()
        try makeBookshelfBundle(sdk: true)
        let native = try reindex(["debug", colleagues, "--print-attach", "--ids", "employee.1"])
        XCTAssertTrue(native.stderr.contains("gdb or lldb fits this extension"), native.stderr)
        XCTAssertTrue(native.stderr.contains("  gdb -p "), native.stderr)
        let python = try reindex(["debug", "com.example.bookshelf.indexer", "--print-attach", "--ids", "book.1"])
        XCTAssertTrue(python.stderr.contains("debugpy fits this extension"), python.stderr)
        XCTAssertTrue(python.stderr.contains(#""type": "debugpy", "request": "attach", "connect": { "host": "127.0.0.1", "port": 5678 }"#), python.stderr)
    }

    // MARK: (d) nobody attaches

    func testWaitingForADebuggerThatNeverComesGivesUpAndCompletes() throws {
        try makeColleaguesBundle()
        let result = try reindex(["debug", colleagues, "--wait-for-debugger=1"])
        assertAcknowledged(result, put: 26)
        XCTAssertTrue(result.stderr.contains("debug: no debugger attached within 1 s; going on without one"), result.stderr)
        XCTAssertTrue(result.stderr.contains("ext| reindex-extension: no debugger attached within 1 s; continuing without one"), result.stderr)
        XCTAssertEqual(try liveItems(colleagues).count, 26)
    }

    func testAHeldNonSDKExtensionIsStartedWhenNobodyAttaches() throws {
        try makeBookshelfBundle()
        let result = try reindex(["debug", bookshelf, "--wait-for-debugger=1"])
        assertAcknowledged(result, put: 15)
        XCTAssertTrue(result.stderr.contains("it is held just before exec"), result.stderr)
        XCTAssertTrue(result.stderr.contains("debug: no debugger attached within 1 s; going on without one"), result.stderr)
        XCTAssertEqual(try liveItems(bookshelf).count, 15)
    }

    // MARK: (e) --print-attach

    func testPrintAttachPrintsTheNameAndCommandsAndDoesNotWait() throws {
        try makeColleaguesBundle()
        // With --wait-for-debugger=60 too: --print-attach wins, so a wait would end the test by its limit.
        let result = try reindex(["debug", colleagues, "--print-attach", "--wait-for-debugger=60"], timeout: 30)
        assertAcknowledged(result, put: 26)
        let pid = try XCTUnwrap(Self.extensionPID(in: result.stderr), result.stderr)
        XCTAssertTrue(result.stderr.contains("extension pid \(pid), process name ColleaguesIndexer"), result.stderr)
        let lines = result.stderr.split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) }
        XCTAssertTrue(lines.contains("lldb -p \(pid)"), result.stderr)
        XCTAssertTrue(lines.contains("gdb -p \(pid)"), result.stderr)
        XCTAssertTrue(result.stderr.contains(#""request": "attach", "pid": \#(pid)"#), result.stderr)
        XCTAssertFalse(result.stderr.contains("waiting for a debugger"), result.stderr)
        XCTAssertFalse(result.stderr.contains("is waiting for a debugger to attach"), "the SDK's gate was asked to wait: \(result.stderr)")
    }

    // MARK: (f) --trace

    /// One `trace` line: `trace +0.012s host→ext 142 B  {…}`.
    private struct TraceLine {
        var direction: String
        var bytes: Int
        var payload: String
        /// `index/put`, `$/progress`, … for a request or notification; `result #N` for a reply.
        var what: String

        init?(_ line: Substring) {
            let fields = line.split(separator: " ", maxSplits: 4, omittingEmptySubsequences: false)
            guard fields.count == 5, fields[0] == "trace", fields[1].hasPrefix("+"), fields[1].hasSuffix("s"),
                  fields[2] == "host→ext" || fields[2] == "ext→host", let bytes = Int(fields[3]), fields[4].hasPrefix("B  ") else { return nil }
            direction = String(fields[2])
            self.bytes = bytes
            payload = String(fields[4].dropFirst(3))
            if let range = payload.range(of: #""method":""#) {
                what = String(payload[range.upperBound...].prefix { $0 != "\"" })
            } else if let range = payload.range(of: #""id":"#) {
                what = "result #" + payload[range.upperBound...].prefix { $0.isNumber }
            } else {
                what = "?"
            }
        }
    }

    private func traceLines(_ stderr: String) -> [TraceLine] {
        stderr.split(separator: "\n").filter { $0.hasPrefix("trace ") }.compactMap(TraceLine.init)
    }

    func testTracePrintsEveryMessageInBothDirectionsAndShortensLongOnes() throws {
        try makeColleaguesBundle()
        let result = try reindex(["debug", colleagues, "--trace"])
        assertAcknowledged(result, put: 26)
        let traced = traceLines(result.stderr)
        XCTAssertEqual(traced.count, result.stderr.split(separator: "\n").filter { $0.hasPrefix("trace ") }.count, "unreadable trace lines:\n\(result.stderr)")
        XCTAssertEqual(traced.map { "\($0.direction) \($0.what)" }, [
            "host→ext initialize", "ext→host result #0", "host→ext reindexAll",
            "ext→host index/put", "ext→host $/progress", "ext→host result #1",
        ], result.stderr)
        let put = try XCTUnwrap(traced.first { $0.what == "index/put" })
        XCTAssertGreaterThan(put.bytes, 10_000)
        XCTAssertTrue(put.payload.hasSuffix("; --trace=full shows all)"), put.payload)
        XCTAssertLessThan(put.payload.count, 300, "the long message was not shortened")
        for line in traced where !line.payload.hasSuffix("--trace=full shows all)") {
            XCTAssertEqual(line.payload.utf8.count, line.bytes, "a short message must be shown whole: \(line.payload)")
        }
    }

    func testTraceFullShowsWholeMessages() throws {
        try makeColleaguesBundle()
        let result = try reindex(["debug", colleagues, "--trace=full"])
        assertAcknowledged(result, put: 26)
        XCTAssertFalse(result.stderr.contains("--trace=full shows all"), result.stderr)
        let traced = traceLines(result.stderr)
        XCTAssertEqual(traced.count, 6, result.stderr)
        for line in traced {
            XCTAssertEqual(line.payload.utf8.count, line.bytes, "\(line.what) is not shown whole")
            XCTAssertNoThrow(try JSONParser.parse(text: line.payload), line.payload)
        }
        let put = try XCTUnwrap(traced.first { $0.what == "index/put" })
        let items = try JSONParser.parse(text: put.payload)["params"]?["items"]?.arrayValue
        XCTAssertEqual(items?.count, 26)
    }

    func testAShortenedTraceLineCountsTheBytesItLeftOut() throws {
        try makeColleaguesBundle()
        // A long identifier of two-byte characters makes the reindexItems request long.
        let identifier = "employee." + String(repeating: "é", count: 100)
        let result = try reindex(["debug", colleagues, "--trace", "--ids", identifier])
        XCTAssertEqual(result.status, 0, "\(result)")
        let request = try XCTUnwrap(traceLines(result.stderr).first { $0.what == "reindexItems" }, result.stderr)
        let marker = try XCTUnwrap(request.payload.range(of: "… ("), request.payload)
        let shown = request.payload[..<marker.lowerBound]
        let claimed = Int(request.payload[marker.upperBound...].prefix { $0.isNumber })
        let omitted = request.bytes - shown.utf8.count
        guard claimed == omitted else {
            XCTFail("""
                Regression (was a bug): Sources/ReindexCommandLine/CommandLine/TracePrinter.swift TracePrinter.record: a shortened line says \
                "(\(claimed ?? -1) more bytes" but \(omitted) bytes were left out (\(request.bytes) B line, \
                \(shown.utf8.count) bytes shown). It computes line.count - limit, bytes minus characters, so \
                any non-ASCII text in the first 160 characters inflates the count. Input: reindex debug \
                BUNDLE --trace --ids employee.<100 × é>
                """)
            return
        }
    }

    // MARK: (g) --scratch-index

    func testScratchIndexLeavesTheRealIndexUntouched() throws {
        try makeColleaguesBundle()
        let real = try reindex(["run", colleagues, "--ids", "employee.40"])
        XCTAssertEqual(real.status, 0, "\(real)")
        XCTAssertEqual(try liveItems(colleagues), ["employee.40"])
        let before = try IndexStore.open(path: indexPath).lastRun(bundle: colleagues)

        let result = try reindex(["debug", colleagues, "--scratch-index"])
        assertAcknowledged(result, put: 26)
        XCTAssertTrue(result.stderr.contains("using a scratch copy of the index"), result.stderr)

        // The real index: the earlier run's item, nothing of the debug run, the same history.
        XCTAssertEqual(try liveItems(colleagues), ["employee.40"])
        XCTAssertEqual(try IndexStore.open(path: indexPath).lastRun(bundle: colleagues), before)
        let search = try reindex(["search", "staff eng"])
        XCTAssertTrue(search.stdout.contains("No items match"), "\(search)")
        // And the scratch copy is gone.
        let left = try FileManager.default.contentsOfDirectory(atPath: "\(scratch)/tmp").filter { $0.hasPrefix("reindex-debug-") }
        XCTAssertEqual(left, [], "the scratch index was left behind")
    }

    // MARK: docs/DEBUGGING.md

    /// Replaces what differs from run to run (PIDs, times) with placeholders.
    static func normalized(_ line: String) -> String {
        var text = line
        let rules: [(String, String)] = [
            (#"pid \d+"#, "pid <PID>"),
            (#"-p \d+"#, "-p <PID>"),
            (#""pid": \d+"#, #""pid": <PID>"#),
            (#"^trace \+\d+\.\d+s "#, "trace +<T>s "),
            (#" in \d+(\.\d+)? s$"#, " in <T> s"),
            // The sandbox's rules, directories and ABI depend on the machine and the run.
            (#"^debug: sandboxed \(.*$"#, "debug: sandboxed (<SANDBOX>"),
        ]
        for (pattern, template) in rules {
            text = text.replacingOccurrences(of: pattern, with: template, options: .regularExpression)
        }
        return text
    }

    func testTheTraceInDebuggingMdIsWhatTheCommandPrints() throws {
        let doc = T.read("\(Self.packageRoot)/docs/DEBUGGING.md") ?? ""
        let lines = doc.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        let prompt = "$ reindex debug com.example.bookshelf.indexer --trace --ids book.1"
        let start = try XCTUnwrap(lines.firstIndex(of: prompt), "docs/DEBUGGING.md has no line '\(prompt)'")
        let documented = lines[(start + 1)...].prefix { !$0.hasPrefix("```") }.map(Self.normalized)
        XCTAssertGreaterThan(documented.count, 5)

        try makeBookshelfBundle(sdk: true)
        let arguments = prompt.dropFirst("$ reindex ".count).split(separator: " ").map(String.init)
        let result = try reindex(arguments)
        XCTAssertEqual(result.status, 0, "\(result)")
        // On a terminal the summary (stdout) comes last, after everything on stderr.
        let printed = (result.stderr.split(separator: "\n") + result.stdout.split(separator: "\n")).map { Self.normalized(String($0)) }
        guard printed != Array(documented) else { return }
        let first = zip(printed, documented).enumerated().first { $0.element.0 != $0.element.1 }
        let where_ = first.map { "line \($0.offset + 1): documented\n  \($0.element.1)\nprinted\n  \($0.element.0)" }
            ?? "documented \(documented.count) lines, printed \(printed.count)"
        XCTFail("""
            docs/DEBUGGING.md shows a different output than the command prints now (\(where_)).
            Update the block after '\(prompt)' with this output:
            \(result.stderr)\(result.stdout)
            """)
    }
}
