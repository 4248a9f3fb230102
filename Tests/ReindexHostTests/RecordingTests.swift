import Foundation
import ReindexHost
import ReindexProtocol
import ReindexTestSupport
import XCTest

/// Recorded sessions and their replay through the built command: real extensions (fixtures, the
/// Swift, Python and TypeScript examples), real recordings on disk, a real gdb.
final class RecordingTests: XCTestCase, @unchecked Sendable {
    private typealias T = TestSupport
    private var host: TestHost!
    private var commands: [T.RunningCommand] = []
    private var packageRoot: String { T.packageRoot }

    override func setUpWithError() throws {
        host = try TestHost(test: self)
        try FileManager.default.createDirectory(atPath: "\(host.scratch)/tmp", withIntermediateDirectories: true)
        signal(SIGPIPE, SIG_IGN)
    }

    override func tearDown() {
        for command in commands where command.process.isRunning { kill(command.process.processIdentifier, SIGKILL) }
        for command in commands { command.process.waitUntilExit() }
        commands = []
        super.tearDown()
    }

    /// With `--index` the recordings are beside it, as the logs are.
    private func recordings(_ bundle: String) -> String { "\(host.scratch)/index/recordings/\(bundle)" }
    private func recordingFiles(_ bundle: String) -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: recordings(bundle))) ?? []).filter { $0.hasSuffix(".jsonl") }.sorted()
    }

    private var environment: [String: String] { T.commandEnvironment(scratch: host.scratch, extra: ["TMPDIR": "\(host.scratch)/tmp"]) }

    private func reindex(_ arguments: [String], extra: [String: String] = [:], timeout: Double = 120) throws -> T.CommandResult {
        var environment = self.environment
        for (key, value) in extra { environment[key] = value }
        return try T.run(T.reindexBinary, ["--index", host.indexPath, "--extensions-path", host.extensions] + arguments,
                         scratch: host.scratch, environment: environment, timeout: timeout)
    }

    private func start(_ arguments: [String]) throws -> T.RunningCommand {
        let command = try T.RunningCommand(arguments: ["--index", host.indexPath, "--extensions-path", host.extensions] + arguments,
                                           environment: environment, scratch: host.scratch, feedsStdin: false)
        commands.append(command)
        return command
    }

    private func runs(_ bundle: String, file: StaticString = #filePath, line: UInt = #line) throws -> [JSONValue] {
        let result = try reindex(["--json", "runs", bundle])
        XCTAssertEqual(result.status, 0, "\(result)", file: file, line: line)
        return try XCTUnwrap(result.json?["runs"]?.arrayValue, "\(result)", file: file, line: line)
    }

    private func replay(_ bundle: String, _ requestID: Int64, _ more: [String] = [], file: StaticString = #filePath, line: UInt = #line) throws -> JSONValue {
        let result = try reindex(["--json", "debug", bundle, "--replay", String(requestID)] + more)
        XCTAssertEqual(result.status, 0, "\(result)", file: file, line: line)
        return try XCTUnwrap(result.json, "\(result)", file: file, line: line)
    }

    @discardableResult
    private func crashBundle() throws -> String {
        try T.makeBundle(T.BundleSpec("com.example.crash", executable: "crash_mid_stream.sh"), in: host.extensions)
    }

    // MARK: A failed run: recorded, listed, replayed

    func testAFailedRunIsRecordedListedAndReplayedAndADivergenceIsReported() throws {
        let directory = try crashBundle()
        let run = try reindex(["run", "com.example.crash"])
        XCTAssertEqual(run.status, 75, "\(run)")

        let listed = try runs("com.example.crash")
        XCTAssertEqual(listed.count, 1)
        let entry = try XCTUnwrap(listed.first)
        let requestID = try XCTUnwrap(entry["requestId"]?.integerValue)
        XCTAssertEqual(entry["request"]?.stringValue, "reindexAll")
        XCTAssertEqual(entry["reason"]?.stringValue, "forced")
        XCTAssertEqual(entry["outcome"]?.stringValue, "crashed")
        XCTAssertNotNil(entry["started"]?.stringValue.flatMap(RFC3339.parse), "\(entry)")
        // initialize, its reply, reindexAll, two puts.
        XCTAssertEqual(entry["messages"]?.integerValue, 5)
        let text = try reindex(["runs", "com.example.crash"])
        XCTAssertTrue(text.stdout.contains("crashed"), "\(text)")

        // Unchanged, the extension does what it did.
        let matched = try replay("com.example.crash", requestID)
        XCTAssertEqual(matched["matched"], .bool(true), "\(matched)")
        XCTAssertEqual(matched["bundleIdentifier"]?.stringValue, "com.example.crash")
        XCTAssertEqual(matched["requestId"]?.integerValue, requestID)
        XCTAssertNil(matched["divergence"])
        // The replay wrote nothing to the real index, and is not recorded itself.
        XCTAssertEqual(try host.items("com.example.crash").count, 0)
        XCTAssertEqual(recordingFiles("com.example.crash").count, 1)

        // Changed, it sends another second item: message 3 of the extension's (reply, put, put).
        let script = "\(directory)/crash_mid_stream.sh"
        let changed = try XCTUnwrap(T.read(script)).replacingOccurrences(of: "Halfway Heron", with: "Halfway Crane")
        try T.write(changed, to: script, mode: 0o755)
        let diverged = try replay("com.example.crash", requestID)
        XCTAssertEqual(diverged["matched"], .bool(false), "\(diverged)")
        let divergence = try XCTUnwrap(diverged["divergence"], "\(diverged)")
        XCTAssertEqual(divergence["message"]?.integerValue, 3)
        XCTAssertEqual(divergence["expected"]?["params"]?["items"]?.arrayValue?.first?["attributes"]?["title"]?.stringValue, "Halfway Heron")
        XCTAssertEqual(divergence["got"]?["params"]?["items"]?.arrayValue?.first?["attributes"]?["title"]?.stringValue, "Halfway Crane")
        let human = try reindex(["debug", "com.example.crash", "--replay", String(requestID)])
        XCTAssertEqual(human.status, 0, "\(human)")
        XCTAssertTrue(human.stdout.contains("diverged at the extension's message 3"), "\(human)")
    }

    func testAFailedServeRequestIsRecorded() throws {
        try crashBundle()
        XCTAssertEqual(try reindex(["run", "com.example.crash", "--queue"]).status, 0)
        let serve = try start(["serve", "--rescan", "1", "--retry-base", "60"])
        let recorded = T.wait(upTo: 60) { !(try! runs("com.example.crash")).isEmpty && (try! runs("com.example.crash")).first?["outcome"]?.stringValue == "crashed" }
        kill(serve.process.processIdentifier, SIGTERM)
        _ = serve.finish(timeout: 30)
        XCTAssertTrue(recorded, "serve recorded no session")
        let entry = try XCTUnwrap(try runs("com.example.crash").first)
        let replayed = try replay("com.example.crash", try XCTUnwrap(entry["requestId"]?.integerValue))
        XCTAssertEqual(replayed["matched"], .bool(true), "\(replayed)")
    }

    func testUnknownBundleAndMissingOrDamagedRecordings() throws {
        try crashBundle()
        let unknown = try reindex(["runs", "com.example.nothing"])
        XCTAssertEqual(unknown.status, 66, "\(unknown)")
        XCTAssertTrue(unknown.stderr.hasPrefix("error: "), "\(unknown)")
        XCTAssertEqual(try runs("com.example.crash").count, 0)
        let none = try reindex(["debug", "com.example.crash", "--replay", "41"])
        XCTAssertEqual(none.status, 66, "\(none)")
        XCTAssertTrue(none.stderr.contains("error: com.example.crash: no recorded session of request 41"), "\(none)")

        XCTAssertEqual(try reindex(["run", "com.example.crash"]).status, 75)
        let file = "\(recordings("com.example.crash"))/\(try XCTUnwrap(recordingFiles("com.example.crash").first))"
        let bytes = try XCTUnwrap(FileManager.default.contents(atPath: file))
        try bytes.prefix(bytes.count - 30).write(to: URL(fileURLWithPath: file))
        let requestID = try XCTUnwrap(file.split(separator: "-r").last?.split(separator: ".").first.flatMap { Int($0) })
        let damaged = try reindex(["debug", "com.example.crash", "--replay", String(requestID)])
        XCTAssertEqual(damaged.status, 65, "\(damaged)")
        XCTAssertTrue(damaged.stderr.contains("error: \(file): line"), "\(damaged)")
        XCTAssertTrue(damaged.stderr.contains("truncated"), "\(damaged)")
    }

    // MARK: Bounds, privacy, opting out

    func testRecordingsAreBoundedByCountAndBytesAndPrivate() throws {
        try T.makeBundle(T.BundleSpec("com.example.well", executable: "well_behaved.py"), in: host.extensions)
        for _ in 1...21 { XCTAssertEqual(try reindex(["run", "com.example.well"]).status, 0) }
        let files = recordingFiles("com.example.well")
        XCTAssertEqual(files.count, 20)
        let listed = try runs("com.example.well")
        XCTAssertEqual(listed.count, 20)
        // Newest first, and the first request is the one dropped.
        let ids = listed.compactMap { $0["requestId"]?.integerValue }
        XCTAssertEqual(ids, ids.sorted(by: >))
        XCTAssertFalse(ids.contains(1), "\(ids)")

        XCTAssertEqual(try FileManager.default.attributesOfItem(atPath: recordings("com.example.well"))[.posixPermissions] as? Int, 0o700)
        XCTAssertEqual(try FileManager.default.attributesOfItem(atPath: "\(host.scratch)/index/recordings")[.posixPermissions] as? Int, 0o700)
        for file in files {
            XCTAssertEqual(try FileManager.default.attributesOfItem(atPath: "\(recordings("com.example.well"))/\(file)")[.posixPermissions] as? Int, 0o600)
        }

        // The byte bound: room for about two recordings keeps two.
        let size = try XCTUnwrap(FileManager.default.attributesOfItem(atPath: "\(recordings("com.example.well"))/\(files[0])")[.size] as? Int)
        XCTAssertEqual(try reindex(["run", "com.example.well"], extra: ["REINDEX_RECORDINGS_MAX_BYTES": String(size * 2 + size / 2)]).status, 0)
        XCTAssertEqual(recordingFiles("com.example.well").count, 2)
    }

    func testAManifestThatSaysRecordFalseIsNotRecorded() throws {
        var spec = T.BundleSpec("com.example.private", executable: "well_behaved.py")
        spec.extraManifest = [("record", false)]
        try T.makeBundle(spec, in: host.extensions)
        XCTAssertEqual(try reindex(["run", "com.example.private"]).status, 0)
        XCTAssertEqual(try reindex(["debug", "com.example.private"]).status, 0)
        XCTAssertEqual(recordingFiles("com.example.private"), [])
        XCTAssertEqual(try runs("com.example.private").count, 0)
        // Anything but a boolean is a manifest error with its key.
        spec.extraManifest = [("record", "no")]
        try T.makeBundle(spec, in: host.extensions)
        let refused = try reindex(["run", "com.example.private"])
        XCTAssertEqual(refused.status, 66, "\(refused)")
        XCTAssertTrue(refused.stderr.contains("manifest.json: record: expected true or false, got \"no\""), "\(refused)")
    }

    func testARecordingThatCannotBeWrittenDoesNotFailTheRun() throws {
        try T.makeBundle(T.BundleSpec("com.example.well", executable: "well_behaved.py"), in: host.extensions)
        // The recordings directory is a file: nothing can be made under it.
        try T.write("in the way\n", to: "\(host.scratch)/index/recordings")
        let run = try reindex(["run", "com.example.well"])
        XCTAssertEqual(run.status, 0, "\(run)")
        XCTAssertTrue((T.read(host.logPath("com.example.well")) ?? "").contains("this session is not recorded"),
                      T.read(host.logPath("com.example.well")) ?? "")
    }

    // MARK: $/cancel

    func testACancelIsReplayedAfterTheSameNumberOfMessages() throws {
        var spec = T.BundleSpec("com.example.slow", executable: "serve_recorder.py")
        spec.support = []
        spec.writesItsDirectory = false
        let directory = "\(host.extensions)/com.example.slow"
        spec.environment = ["FIXTURE_SLOW_FILE": "\(directory)/slow", "FIXTURE_SLOW_DELAY": "0.2"]
        try T.makeBundle(spec, in: host.extensions)
        try T.write("yes\n", to: "\(directory)/slow")
        let run = try start(["run", "com.example.slow"])
        XCTAssertTrue(T.wait(upTo: 60) { (T.read(host.logPath("com.example.slow")) ?? "").contains("put slow.3") }, T.read(run.stderrPath) ?? "")
        kill(run.process.processIdentifier, SIGINT)
        let ended = run.finish(timeout: 60)
        XCTAssertEqual(ended.status, 75, "\(ended)")

        let entry = try XCTUnwrap(try runs("com.example.slow").first)
        XCTAssertEqual(entry["outcome"]?.stringValue, "cancelled", "\(entry)")
        let file = try XCTUnwrap(entry["file"]?.stringValue)
        let recorded = try XCTUnwrap(T.read(file)).split(separator: "\n").map(String.init)
        let cancelAt = try XCTUnwrap(recorded.firstIndex { $0.contains("\"$/cancel\"") })
        let extensionMessagesBefore = recorded[..<cancelAt].filter { $0.contains("\"d\":\"ext\"") }.count

        let trace = try reindex(["--json", "debug", "com.example.slow", "--replay", String(try XCTUnwrap(entry["requestId"]?.integerValue)), "--trace"])
        XCTAssertEqual(trace.status, 0, "\(trace)")
        XCTAssertEqual(trace.json?["matched"], .bool(true), "\(trace)")
        // In the replay's trace too, the cancel follows the same number of the extension's messages.
        let lines = trace.stderr.split(separator: "\n").filter { $0.hasPrefix("trace ") }
        let replayedCancel = try XCTUnwrap(lines.firstIndex { $0.contains("$/cancel") }, trace.stderr)
        XCTAssertEqual(lines[..<replayedCancel].filter { $0.contains("ext→host") }.count, extensionMessagesBefore, trace.stderr)
    }

    // MARK: The three SDKs

    func testASessionOfTheSwiftExampleIsReplayed() throws {
        try T.makeExampleBundle(example: "Colleagues", product: "ColleaguesIndexer", in: host.extensions)
        try assertRecordedAndReplayed("com.example.colleagues.indexer")
    }

    func testASessionOfThePythonSDKExampleIsReplayed() throws {
        let directory = "\(host.extensions)/bookshelf"
        try FileManager.default.copyItem(atPath: "\(packageRoot)/Examples/python/bookshelf", toPath: directory)
        try? FileManager.default.removeItem(atPath: "\(directory)/reindex_extension")
        try FileManager.default.copyItem(atPath: "\(packageRoot)/SDKs/python/reindex_extension", toPath: "\(directory)/reindex_extension")
        try assertRecordedAndReplayed("com.example.bookshelf.indexer")
    }

    func testASessionOfTheTypeScriptSDKExampleIsReplayed() throws {
        guard FileManager.default.isExecutableFile(atPath: "/usr/bin/node") || FileManager.default.isExecutableFile(atPath: "/usr/local/bin/node") else {
            throw XCTSkip("node is not installed")
        }
        let directory = "\(host.extensions)/notes"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        for file in ["notes.mjs", "notes.json"] {
            try FileManager.default.copyItem(atPath: "\(packageRoot)/Examples/typescript/notes/\(file)", toPath: "\(directory)/\(file)")
        }
        let sdk = "\(packageRoot)/SDKs/typescript"
        try T.writeManifest(of: directory, from: "\(packageRoot)/Examples/typescript/notes/manifest.json") { members in
            T.set("environment", T.environmentJSON(["REINDEX_TS_SDK": sdk]), in: &members)
            T.set("sandbox", .object([("read", .array([.string(sdk)]))]), in: &members)
        }
        try assertRecordedAndReplayed("com.example.notes.indexer")
    }

    private func assertRecordedAndReplayed(_ bundle: String, file: StaticString = #filePath, line: UInt = #line) throws {
        let run = try reindex(["run", bundle])
        XCTAssertEqual(run.status, 0, "\(run)", file: file, line: line)
        let entry = try XCTUnwrap(try runs(bundle, file: file, line: line).first, file: file, line: line)
        XCTAssertEqual(entry["outcome"]?.stringValue, "acknowledged", file: file, line: line)
        let replayed = try replay(bundle, try XCTUnwrap(entry["requestId"]?.integerValue), file: file, line: line)
        XCTAssertEqual(replayed["matched"], .bool(true), "\(replayed)", file: file, line: line)
        XCTAssertGreaterThan(replayed["messagesCompared"]?.integerValue ?? 0, 2, "\(replayed)", file: file, line: line)
    }

    // MARK: Replay under gdb

    func testAReplayWaitsForGdbWhichStopsAtABreakpointInReindexAll() throws {
        guard let gdb = ["/usr/bin/gdb", "/usr/local/bin/gdb"].first(where: { FileManager.default.isExecutableFile(atPath: $0) }) else {
            throw XCTSkip("gdb is not installed")
        }
        let scope = T.read("/proc/sys/kernel/yama/ptrace_scope")?.trimmingCharacters(in: .whitespacesAndNewlines)
        if scope == "3" || (scope == "2" && geteuid() != 0) { throw XCTSkip("Yama forbids attaching here") }
        try T.makeExampleBundle(example: "Colleagues", product: "ColleaguesIndexer", in: host.extensions)
        let bundle = "com.example.colleagues.indexer"
        XCTAssertEqual(try reindex(["run", bundle]).status, 0)
        let requestID = try XCTUnwrap(try runs(bundle).first?["requestId"]?.integerValue)
        let source = "\(packageRoot)/Examples/Colleagues/Sources/ColleaguesIndexer/ColleaguesIndexer.swift"
        let sourceLines = (T.read(source) ?? "").split(separator: "\n", omittingEmptySubsequences: false)
        let breakpoint = try XCTUnwrap(sourceLines.firstIndex { $0.contains("let employees = try loadEmployees()") }) + 1

        // The three commands of the 3 a.m. failure: runs (above), debug --replay --wait-for-debugger, gdb.
        let command = try start(["--json", "debug", bundle, "--replay", String(requestID), "--wait-for-debugger=60"])
        var pid: pid_t?
        XCTAssertTrue(T.wait(upTo: 60) {
            let text = T.read(command.stderrPath) ?? ""
            guard text.contains("debug: waiting for a debugger"), let range = text.range(of: "extension pid ") else { return false }
            pid = pid_t(text[range.upperBound...].prefix { $0.isNumber })
            return pid != nil
        }, T.read(command.stderrPath) ?? "")
        let target = try XCTUnwrap(pid)
        let output = "\(host.scratch)/gdb.txt"
        let gdbRun = try T.run(gdb, ["-nx", "-p", String(target), "-batch", "-ex", "break ColleaguesIndexer.swift:\(breakpoint)",
                                     "-ex", "continue", "-ex", "bt 1", "-ex", "continue"],
                               scratch: host.scratch, environment: environment, timeout: 120)
        try? (gdbRun.stdout + gdbRun.stderr).write(toFile: output, atomically: true, encoding: .utf8)
        let result = command.finish(timeout: 60)
        let hit = (gdbRun.stdout + gdbRun.stderr).split(separator: "\n").first { $0.contains("hit Breakpoint 1") }
        XCTAssertNotNil(hit, "gdb did not stop at the breakpoint:\n\(gdbRun)")
        XCTAssertTrue(hit?.contains("reindexAll") == true, "\(hit ?? "")")
        XCTAssertEqual(result.status, 0, "\(result)")
        XCTAssertEqual(result.json?["matched"], .bool(true), "\(result)")
    }
}
