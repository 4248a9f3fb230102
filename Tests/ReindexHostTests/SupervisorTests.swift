import Foundation
import ReindexHost
import ReindexSystem
@testable import ReindexCommandLine
@testable import ReindexStore
import ReindexProtocol
import ReindexTestSupport
import XCTest

/// The supervisor against real extension processes (the fixtures in `Tests/Fixtures/extensions`),
/// driven through `RequestRunner` and through the built `reindex run` command. For every way an
/// extension can misbehave the tests check the failure's kind and exit code, that the message
/// names the bundle and says what happened, that the index is unchanged (or resumable), that the
/// request is queued again (or failed), that no process is left behind and no descriptor leaked.
final class SupervisorTests: XCTestCase, @unchecked Sendable {
    private typealias T = TestSupport
    private var scratch = ""
    private var extensionsDirectory: String { "\(scratch)/extensions" }
    private var indexPath: String { "\(scratch)/index/index.sqlite" }
    private var paths: HostPaths { HostPaths(extensionsPath: extensionsDirectory, index: indexPath, environment: ["HOME": "\(scratch)/home"]) }

    override func setUpWithError() throws {
        scratch = try T.makeScratchDirectory(for: self)
        try FileManager.default.createDirectory(atPath: extensionsDirectory, withIntermediateDirectories: true)
        try FileManager.default.createDirectory(atPath: "\(scratch)/index", withIntermediateDirectories: true)
        signal(SIGPIPE, SIG_IGN)
    }

    private func openStore() throws -> IndexStore { try IndexStore.open(path: indexPath) }
    /// Direct runs so far: each has a log of its own.
    private var runs = 0

    /// What one direct run produced.
    private struct DirectRun {
        var results: [RequestResult]
        var bundle: DiscoveredBundle
        var pid: pid_t
        var probe: SessionProbe
        var logPath: String
        /// The index it ran on, for the failure messages of tests that run on both.
        var index: String
        var log: String { TestSupport.read(logPath) ?? "" }
        var first: RequestResult { results[0] }
        var failure: RequestFailure? { results.first?.failure }
    }

    /// Seeds the bundle's previous items, queues `kind` (or the given requests), runs them through
    /// `RequestRunner` in one session, and checks that the extension was reaped and that no
    /// descriptor leaked.
    private func runDirect(
        _ spec: T.BundleSpec, store: any IndexBackend, kind: RequestKind = .reindexAll, identifiers: [String] = [],
        requests: [QueuedRequest]? = nil, seedPrevious: Bool = true, expectSpawn: Bool = true,
        configure: (inout SessionOptions) -> Void = { _ in },
        file: StaticString = #filePath, line: UInt = #line
    ) throws -> DirectRun {
        let directory = try T.makeBundle(spec, in: extensionsDirectory)
        let bundle = try T.loadBundle(directory, file: file, line: line)
        if seedPrevious {
            try T.seed(store, bundle: bundle.identifier, [T.item("prev.1", title: "Previous Pangolin")])
        }
        let queued = try requests ?? [store.enqueue(
            bundleIdentifier: bundle.identifier, kind: kind, identifiers: identifiers, reason: .forced,
            maxAttempts: bundle.manifest.retry.maxAttempts, notBefore: nil, coalesce: false)]
        // Let SQLite open every file it keeps open before counting descriptors.
        _ = try store.search("warm up")
        let probe = SessionProbe()
        var options = probe.options()
        configure(&options)
        runs += 1
        let logPath = "\(scratch)/logs/\(bundle.key)-\(runs).log"
        let runner = RequestRunner(paths: paths, backoff: Backoff(baseSeconds: 5, maximumSeconds: 3600))

        let descriptorsBefore = T.openDescriptorCount()
        let results = runner.run(bundle: bundle, requests: queued, store: store, options: options, logPath: logPath)
        let descriptorsAfter = T.openDescriptorCount()

        XCTAssertEqual(descriptorsAfter, descriptorsBefore, "descriptors leaked by the run", file: file, line: line)
        guard !results.isEmpty else {
            XCTFail("the run produced no result", file: file, line: line)
            throw NoResult()
        }
        if expectSpawn {
            XCTAssertNotEqual(probe.pid, 0, "the extension was never spawned", file: file, line: line)
        }
        // No child of ours is left un-reaped (the tests start no other children that outlive them).
        var status: Int32 = 0
        let reaped = waitpid(-1, &status, WNOHANG)
        XCTAssertLessThanOrEqual(reaped, 0, "process \(reaped) was left as a zombie child", file: file, line: line)
        if probe.pid != 0 {
            XCTAssertTrue(T.isNotOurZombie(probe.pid), "the extension \(probe.pid) was not reaped", file: file, line: line)
            XCTAssertTrue(T.isNotRunning(probe.pid), "the extension \(probe.pid) is still running", file: file, line: line)
        }
        return DirectRun(results: results, bundle: bundle, pid: probe.pid, probe: probe, logPath: logPath, index: store is PostgresStore ? "PostgreSQL" : "SQLite")
    }

    private struct NoResult: Error {}

    /// The failure of a run, of `kind`, with a message that names the bundle and says `what`.
    @discardableResult
    private func assertFailure(
        _ run: DirectRun, _ kind: RequestFailure.Kind, exitCode: Int32, says what: [String],
        file: StaticString = #filePath, line: UInt = #line
    ) -> RequestFailure? {
        guard let failure = run.results.last?.failure else {
            XCTFail("\(run.index): the run did not fail; results: \(run.results.map(\.counts))", file: file, line: line)
            return nil
        }
        XCTAssertEqual(failure.kind, kind, "\(run.index): \(failure.message)", file: file, line: line)
        XCTAssertEqual(failure.code.exitCode, exitCode, "\(run.index): \(failure.message)", file: file, line: line)
        XCTAssertTrue(failure.message.contains(run.bundle.identifier), "\(run.index): the message does not name the bundle: \(failure.message)", file: file, line: line)
        for phrase in what {
            XCTAssertTrue(failure.message.contains(phrase), "\(run.index): the message does not say '\(phrase)': \(failure.message)", file: file, line: line)
        }
        return failure
    }

    /// The request is pending again with one more attempt, its error recorded, due later.
    private func assertRequeued(_ store: any IndexBackend, _ run: DirectRun, attempts: Int = 1, file: StaticString = #filePath, line: UInt = #line) throws {
        let result = try XCTUnwrap(run.results.last, file: file, line: line)
        let request = try XCTUnwrap(try store.request(result.request.id), file: file, line: line)
        XCTAssertEqual(request.state, .pending, run.index, file: file, line: line)
        XCTAssertEqual(result.stateAfter, .pending, run.index, file: file, line: line)
        XCTAssertEqual(request.attempts, attempts, run.index, file: file, line: line)
        XCTAssertEqual(request.lastError, result.failure?.message, run.index, file: file, line: line)
        XCTAssertGreaterThan(request.nextAttempt, result.started, "\(run.index): a retry must back off", file: file, line: line)
        XCTAssertEqual(try store.lastRun(bundle: run.bundle.identifier)?.outcome, result.failure?.kind.rawValue, run.index, file: file, line: line)
    }

    /// The previously indexed item is still there and nothing of the failed request is visible.
    private func assertIndexUnchanged(_ store: any IndexBackend, _ run: DirectRun, file: StaticString = #filePath, line: UInt = #line) throws {
        XCTAssertEqual(try T.identifiers(store, bundle: run.bundle.identifier), ["prev.1"], run.index, file: file, line: line)
        XCTAssertEqual(try store.search("pangolin").map(\.uniqueIdentifier), ["prev.1"], run.index, file: file, line: line)
        store.assertHealthy(run.index, file: file, line: line)
    }

    /// Both indexes, a SQLite file and a schema of the PostgreSQL server the tests start: the
    /// tests that loop over them hold the supervisor to the same guarantees on each.
    private func indexes() throws -> [TestIndex] { try TestIndex.both(for: self) }

    /// Runs `reindex` with this test's index and extensions directory.
    private func reindex(_ arguments: [String], timeout: Double = 60) throws -> T.CommandResult {
        try T.runReindex(["--index", indexPath, "--extensions-path", extensionsDirectory] + arguments, scratch: scratch, timeout: timeout)
    }

    // MARK: Well-behaved

    func testWellBehavedExtensionReplacesItemsCommitsBatchesAndAnswersSeveralRequests() throws {
        for index in try indexes() {
            let n = index.name
            let store = try index.open()
            var spec = T.BundleSpec("com.example.good", executable: "well_behaved.py")
            spec.arguments = ["5", "2"]
            let directory = try T.makeBundle(spec, in: extensionsDirectory)
            let bundle = try T.loadBundle(directory)
            let all = try store.enqueue(bundleIdentifier: bundle.identifier, kind: .reindexAll, identifiers: [], reason: .forced, maxAttempts: 5, notBefore: nil, coalesce: false)
            let items = try store.enqueue(bundleIdentifier: bundle.identifier, kind: .reindexItems, identifiers: ["item.2", "extra.9"], reason: .forced,
                                          maxAttempts: 5, notBefore: nil, coalesce: false)

            let run = try runDirect(spec, store: store, requests: [all, items])
            XCTAssertEqual(run.results.count, 2, n)
            XCTAssertTrue(run.results.allSatisfy(\.acknowledged), "\(n): \(run.results.compactMap(\.failure))")
            XCTAssertEqual(run.results[0].counts, WriteCounts(put: 5, deleted: 1, rejected: 0, removed: 1), n)
            XCTAssertEqual(run.results[1].counts.put, 2, n)
            XCTAssertEqual(run.results.map(\.stateAfter), [.done, .done], n)
            XCTAssertEqual(try store.request(all.id)?.state, .done, n)
            XCTAssertEqual(try store.request(items.id)?.state, .done, n)
            XCTAssertEqual(try store.request(all.id)?.clientState, "bmV4dD01", "\(n): the last committed client state (next=5)")

            XCTAssertEqual(try T.identifiers(store, bundle: bundle.identifier), ["extra.9", "item.1", "item.2", "item.3", "item.4", "item.5"], n)
            XCTAssertEqual(try store.search("pangolin"), [], "\(n): reindexAll must remove what it did not put")
            XCTAssertEqual(try store.search("refreshed").map(\.uniqueIdentifier).sorted(), ["extra.9", "item.2"], n)
            XCTAssertEqual(try store.search("gadget").count, 4, n)
            XCTAssertEqual(try store.lastRun(bundle: bundle.identifier)?.outcome, "acknowledged", n)
            XCTAssertEqual(run.probe.progress.last?.completed, 5, n)
            XCTAssertTrue(run.log.contains("well_behaved: reindexAll reason=forced clientState=None"), "\(n): \(run.log)")
            XCTAssertTrue(run.log.contains("'committed': 2"), "\(n): batch/commit replies carry the operations committed: \(run.log)")
            XCTAssertTrue(run.log.contains("well_behaved: stdin closed, exiting"), "\(n): the extension was not shut down by closing stdin: \(run.log)")
        }
    }

    func testReindexRunCommandSucceeds() throws {
        var spec = T.BundleSpec("com.example.good", executable: "well_behaved.py")
        spec.arguments = ["3"]
        try T.makeBundle(spec, in: extensionsDirectory)
        let result = try reindex(["--json", "run", "com.example.good"])
        XCTAssertEqual(result.status, 0, "\(result)")
        let json = try JSONParser.parse(text: result.stdout.trimmingCharacters(in: .whitespacesAndNewlines))
        XCTAssertEqual(json["outcome"], "acknowledged")
        XCTAssertEqual(json["request"], "reindexAll")
        XCTAssertEqual(json["put"]?.integerValue, 3)
        XCTAssertEqual(try T.identifiers(try openStore(), bundle: "com.example.good"), ["item.1", "item.2", "item.3"])
    }

    func testAnInvalidItemIsRejectedAloneAndReported() throws {
        let store = try openStore()
        var spec = T.BundleSpec("com.example.good", executable: "well_behaved.py")
        spec.arguments = ["2", "0", "invalid"]
        let run = try runDirect(spec, store: store)
        XCTAssertTrue(run.first.acknowledged, "\(String(describing: run.failure))")
        XCTAssertEqual(run.first.counts.put, 2)
        XCTAssertEqual(run.first.counts.rejected, 1)
        XCTAssertEqual(run.first.rejections.count, 1)
        let reason = run.first.rejections.first?.description ?? ""
        XCTAssertTrue(reason.contains("bad.1") && reason.contains("title"), "the rejection must name the item and the field: \(reason)")
        XCTAssertEqual(try T.identifiers(store, bundle: "com.example.good"), ["item.1", "item.2"], "the rest of the message must be applied")
        XCTAssertEqual(try store.lastRun(bundle: "com.example.good")?.counts.rejected, 1)
    }

    // MARK: Crashes and early exits

    func testCrashMidStreamRollsBackAndQueuesARetry() throws {
        for index in try indexes() {
            let n = index.name
            let store = try index.open()
            let run = try runDirect(T.BundleSpec("com.example.crash", executable: "crash_mid_stream.sh"), store: store)
            let failure = assertFailure(run, .crashed, exitCode: 75, says: ["crashed", "SIGSEGV", "before acknowledging"])
            XCTAssertTrue(failure?.stderrTail.contains { $0.contains("crash_mid_stream: got a request") } ?? false, "\(n): \(failure?.stderrTail ?? [])")
            XCTAssertEqual(run.first.counts.put, 0, "\(n): nothing of the crashed request counts as put")
            try assertIndexUnchanged(store, run)
            XCTAssertEqual(try store.search("halfway"), [], n)
            try assertRequeued(store, run)
        }
    }

    func testExitWithoutAcknowledgingIsACrash() throws {
        for index in try indexes() {
            let n = index.name
            let store = try index.open()
            let run = try runDirect(T.BundleSpec("com.example.quitter", executable: "exit_without_ack.py"), store: store)
            assertFailure(run, .crashed, exitCode: 75, says: ["exited with status 0", "before acknowledging"])
            try assertIndexUnchanged(store, run)
            XCTAssertEqual(try store.search("albatross"), [], "\(n): what was sent without an acknowledgement became visible")
            try assertRequeued(store, run)
        }
    }

    func testUnstartableExecutableCannotStart() throws {
        let store = try openStore()
        let run = try runDirect(T.BundleSpec("com.example.unstartable", executable: "bad_interpreter.sh"), store: store, expectSpawn: false)
        assertFailure(run, .cannotStart, exitCode: 69,
                      says: ["cannot execute", "its #! line names /nonexistent/interpreter/for/reindex/tests, which does not exist"])
        try assertIndexUnchanged(store, run)
        try assertRequeued(store, run)
    }

    func testExitBeforeInitializeCannotStart() throws {
        let store = try openStore()
        let run = try runDirect(T.BundleSpec("com.example.misconfigured", executable: "exit_before_initialize.sh"), store: store)
        let failure = assertFailure(run, .cannotStart, exitCode: 69, says: ["exited with status 1", "before answering initialize"])
        XCTAssertTrue(failure?.stderrTail.contains { $0.contains("missing configuration file settings.ini") } ?? false, "\(failure?.stderrTail ?? [])")
        try assertIndexUnchanged(store, run)
        try assertRequeued(store, run)
    }

    func testClosingStdoutWithoutExitingIsAProtocolViolation() throws {
        let store = try openStore()
        let run = try runDirect(T.BundleSpec("com.example.mute", executable: "close_stdout.sh"), store: store)
        assertFailure(run, .protocolViolation, exitCode: 76, says: ["closed its stdout", "before acknowledging"])
        try assertIndexUnchanged(store, run)
        try assertRequeued(store, run)
    }

    // MARK: Refusal

    func testRefusalDiscardsUncommittedWorkAndRecordsTheMessage() throws {
        let store = try openStore()
        let run = try runDirect(T.BundleSpec("com.example.refuser", executable: "refuse.py"), store: store)
        assertFailure(run, .refused, exitCode: 75, says: ["refused", "catalogue database unreachable"])
        try assertIndexUnchanged(store, run)
        XCTAssertEqual(try store.search("flamingo"), [])
        try assertRequeued(store, run)
    }

    func testAfterAFailureTheRemainingRequestsStayQueuedUntried() throws {
        let store = try openStore()
        let spec = T.BundleSpec("com.example.refuser", executable: "refuse.py")
        let directory = try T.makeBundle(spec, in: extensionsDirectory)
        let bundle = try T.loadBundle(directory)
        let first = try store.enqueue(bundleIdentifier: bundle.identifier, kind: .reindexItems, identifiers: ["a"], reason: .forced, coalesce: false)
        let second = try store.enqueue(bundleIdentifier: bundle.identifier, kind: .reindexItems, identifiers: ["b"], reason: .forced, coalesce: false)
        let run = try runDirect(spec, store: store, requests: [first, second])
        XCTAssertEqual(run.results.count, 1)
        assertFailure(run, .refused, exitCode: 75, says: ["catalogue database unreachable"])
        XCTAssertEqual(try store.request(first.id)?.attempts, 1)
        let untried = try XCTUnwrap(try store.request(second.id))
        XCTAssertEqual(untried.state, .pending)
        XCTAssertEqual(untried.attempts, 0)
        XCTAssertNil(untried.lastError)
    }

    func testRequestFailsForGoodAfterMaxAttempts() throws {
        let store = try openStore()
        var spec = T.BundleSpec("com.example.refuser", executable: "refuse.py")
        spec.maxAttempts = 2
        let first = try runDirect(spec, store: store)
        XCTAssertEqual(first.first.stateAfter, .pending)
        let second = try runDirect(spec, store: store, requests: [first.first.request], seedPrevious: false)
        XCTAssertEqual(second.first.stateAfter, .failed)
        let request = try XCTUnwrap(try store.request(first.first.request.id))
        XCTAssertEqual(request.state, .failed)
        XCTAssertEqual(request.attempts, 2)
        XCTAssertTrue(request.lastError?.contains("catalogue database unreachable") ?? false, "\(request)")
        XCTAssertEqual(try store.status(bundle: "com.example.refuser").failed, 1)
        try assertIndexUnchanged(store, second)
    }

    func testAFailedReindexAllDropsItsCommittedBatches() throws {
        for index in try indexes() {
            let n = index.name
            let store = try index.open()
            var spec = T.BundleSpec("com.example.resume", executable: "resume.py")
            spec.maxAttempts = 1
            let run = try runDirect(spec, store: store)
            assertFailure(run, .crashed, exitCode: 75, says: ["exited with status 2"])
            XCTAssertEqual(run.first.stateAfter, .failed, n)
            let staged = try store.rowCount("SELECT count(*) FROM items WHERE bundle = 'com.example.resume' AND gen = \(run.first.request.id)")
            XCTAssertEqual(staged, 0, "\(n): the committed batch of a request that failed for good must be discarded")
            try assertIndexUnchanged(store, run)
        }
    }

    // MARK: Timeouts

    func testHangAfterHandshakeHitsTheIdleTimeout() throws {
        let store = try openStore()
        var spec = T.BundleSpec("com.example.sleeper", executable: "hang.py")
        spec.arguments = ["idle"]
        spec.startupSeconds = 2
        spec.idleSeconds = 1
        spec.requestSeconds = 3
        let run = try runDirect(spec, store: store)
        assertFailure(run, .timeout, exitCode: 75, says: ["idleSeconds (1 s)"])
        try assertIndexUnchanged(store, run)
        try assertRequeued(store, run)
    }

    func testSilenceBeforeInitializeHitsTheStartupTimeout() throws {
        let store = try openStore()
        var spec = T.BundleSpec("com.example.sleeper", executable: "hang.py")
        spec.arguments = ["startup"]
        spec.startupSeconds = 1
        spec.idleSeconds = 5
        spec.requestSeconds = 10
        let run = try runDirect(spec, store: store)
        assertFailure(run, .timeout, exitCode: 75, says: ["startupSeconds (1 s)", "initialize"])
        try assertIndexUnchanged(store, run)
        try assertRequeued(store, run)
    }

    func testMessagesResetTheIdleTimeoutButNotTheRequestTimeout() throws {
        let store = try openStore()
        var spec = T.BundleSpec("com.example.busy", executable: "hang.py")
        spec.arguments = ["chatty"]
        spec.startupSeconds = 2
        spec.idleSeconds = 1
        spec.requestSeconds = 2
        let run = try runDirect(spec, store: store)
        assertFailure(run, .timeout, exitCode: 75, says: ["requestSeconds (2 s)"])
        XCTAssertGreaterThan(run.probe.progress.count, 3, "progress messages should have kept the request alive past idleSeconds")
        try assertIndexUnchanged(store, run)
        try assertRequeued(store, run)
    }

    // MARK: Cancellation

    func testCancelledBeforeTheRequestGoesBackToTheQueueWithoutPenalty() throws {
        let store = try openStore()
        var fds: [Int32] = [-1, -1]
        XCTAssertEqual(pipe(&fds), 0)
        defer { close(fds[0]); close(fds[1]) }
        var byte: UInt8 = 1
        XCTAssertEqual(write(fds[1], &byte, 1), 1)
        let run = try runDirect(T.BundleSpec("com.example.good", executable: "well_behaved.py"), store: store) { options in
            options.cancelFD = fds[0]
        }
        assertFailure(run, .cancelled, exitCode: 75, says: ["cancelled"])
        let request = try XCTUnwrap(try store.request(run.first.request.id))
        XCTAssertEqual(request.state, .pending)
        XCTAssertEqual(request.attempts, 0, "a cancelled attempt does not count")
        XCTAssertEqual(run.first.stateAfter, .pending)
        try assertIndexUnchanged(store, run)
    }

    func testAnExtensionThatIgnoresCancelIsStoppedAfterTheGrace() throws {
        let store = try openStore()
        var fds: [Int32] = [-1, -1]
        XCTAssertEqual(pipe(&fds), 0)
        defer { close(fds[0]); close(fds[1]) }
        var spec = T.BundleSpec("com.example.sleeper", executable: "hang.py")
        spec.arguments = ["idle"]
        let writeEnd = fds[1]
        let run = try runDirect(spec, store: store) { options in
            options.cancelFD = fds[0]
            options.cancelGraceSeconds = 0.3
            let previous = options.onStderrLine
            // Cancel once the request is outstanding (the extension says so on stderr).
            options.onStderrLine = { line in
                previous?(line)
                if line.contains("hanging on request") {
                    var byte: UInt8 = 1
                    _ = write(writeEnd, &byte, 1)
                }
            }
        }
        assertFailure(run, .cancelled, exitCode: 75, says: ["did not answer $/cancel"])
        let request = try XCTUnwrap(try store.request(run.first.request.id))
        XCTAssertEqual(request.state, .pending)
        XCTAssertEqual(request.attempts, 0)
        try assertIndexUnchanged(store, run)
    }

    // MARK: Protocol violations

    func testGarbageBeforeInitializeIsAProtocolViolation() throws {
        let store = try openStore()
        let run = try runDirect(T.BundleSpec("com.example.chatter", executable: "garbage_before_initialize.sh"), store: store)
        assertFailure(run, .protocolViolation, exitCode: 76, says: ["protocol violation"])
        try assertIndexUnchanged(store, run)
        try assertRequeued(store, run)
    }

    func testGarbageMidRequestDirect() throws {
        let store = try openStore()
        let run = try runDirect(T.BundleSpec("com.example.garbage", executable: "garbage_mid_request.py"), store: store)
        assertFailure(run, .protocolViolation, exitCode: 76, says: ["protocol violation", "not valid JSON"])
        try assertIndexUnchanged(store, run)
        try assertRequeued(store, run)
    }

    func testALineOver16MiBIsAProtocolViolation() throws {
        let store = try openStore()
        let run = try runDirect(T.BundleSpec("com.example.huge", executable: "huge_line.py"), store: store)
        assertFailure(run, .protocolViolation, exitCode: 76, says: ["protocol violation", "longer than \(16 << 20) bytes"])
        try assertIndexUnchanged(store, run)
        XCTAssertEqual(try store.search("manatee"), [])
        try assertRequeued(store, run)
    }

    func testReplyToAnUnknownIdIsAProtocolViolation() throws {
        let store = try openStore()
        let run = try runDirect(T.BundleSpec("com.example.unknown", executable: "unknown_reply.py"), store: store)
        assertFailure(run, .protocolViolation, exitCode: 76, says: ["a reply to request 99, which the host never sent"])
        try assertIndexUnchanged(store, run)
        XCTAssertEqual(try store.search("ibis"), [])
        try assertRequeued(store, run)
    }

    func testASecondReplyToAnAnsweredRequestIsAProtocolViolation() throws {
        let store = try openStore()
        var spec = T.BundleSpec("com.example.twice", executable: "duplicate_reply.py")
        spec.arguments = ["later"]
        let directory = try T.makeBundle(spec, in: extensionsDirectory)
        let bundle = try T.loadBundle(directory)
        let first = try store.enqueue(bundleIdentifier: bundle.identifier, kind: .reindexItems, identifiers: ["a"], reason: .forced, coalesce: false)
        let second = try store.enqueue(bundleIdentifier: bundle.identifier, kind: .reindexItems, identifiers: ["b"], reason: .forced, coalesce: false)
        let run = try runDirect(spec, store: store, requests: [first, second])
        XCTAssertEqual(run.results.count, 2)
        XCTAssertTrue(run.results[0].acknowledged)
        assertFailure(run, .protocolViolation, exitCode: 76, says: ["a second reply to request 1"])
        XCTAssertEqual(try store.request(first.id)?.state, .done)
        XCTAssertEqual(try store.request(second.id)?.state, .pending)
    }

    func testTwoRepliesInOneWriteAreAProtocolViolation() throws {
        let store = try openStore()
        var spec = T.BundleSpec("com.example.twice", executable: "duplicate_reply.py")
        spec.arguments = ["same-write"]
        let directory = try T.makeBundle(spec, in: extensionsDirectory)
        let bundle = try T.loadBundle(directory)
        let first = try store.enqueue(bundleIdentifier: bundle.identifier, kind: .reindexItems, identifiers: ["a"], reason: .forced, coalesce: false)
        let second = try store.enqueue(bundleIdentifier: bundle.identifier, kind: .reindexItems, identifiers: ["b"], reason: .forced, coalesce: false)
        let run = try runDirect(spec, store: store, requests: [first, second])
        if run.results.allSatisfy(\.acknowledged) {
            XCTFail("""
                Regression (was a bug): Sources/ReindexHost/Supervisor/ExtensionSession.swift handleLine(_:offset:): when an extension sends two \
                replies to the outstanding request in one write, the second is not reported; expected a protocol \
                violation (exit 76) before the next request, actual: both requests acknowledged.
                """)
            return
        }
        // The first request stands (it was acknowledged); the session ends at the next request.
        XCTAssertTrue(run.results[0].acknowledged)
        XCTAssertEqual(try store.request(first.id)?.state, .done)
        assertFailure(run, .protocolViolation, exitCode: 76, says: ["a reply to request 1", "after request 1 was acknowledged"])
        XCTAssertEqual(try store.request(second.id)?.state, .pending)
        XCTAssertEqual(try store.search("dodo").map(\.uniqueIdentifier), ["dup.1"], "request 2's put must not be committed")
    }

    func testIndexOperationBeforeAnyRequestIsAProtocolViolation() throws {
        let store = try openStore()
        var spec = T.BundleSpec("com.example.stray", executable: "put_outside_request.py")
        spec.arguments = ["before-request"]
        let run = try runDirect(spec, store: store)
        assertFailure(run, .protocolViolation, exitCode: 76, says: ["'index/put' notification arrived while no request was outstanding"])
        try assertIndexUnchanged(store, run)
        XCTAssertEqual(try store.search("cormorant"), [])
        try assertRequeued(store, run)
    }

    func testIndexOperationAfterTheAcknowledgementIsNotApplied() throws {
        let store = try openStore()
        var spec = T.BundleSpec("com.example.stray", executable: "put_outside_request.py")
        spec.arguments = ["after-ack"]
        let run = try runDirect(spec, store: store, kind: .reindexItems, identifiers: ["inside.1"])
        if try store.search("cormorant").map(\.uniqueIdentifier) == ["stray.1"] {
            XCTFail("""
                Regression (was a bug): Sources/ReindexHost/Supervisor/ExtensionSession.swift handleLine/perform: an index/put that arrives after the \
                acknowledgement, in the same read (ack line then '{"method":"index/put",…stray.1…}'), is applied to the \
                acknowledged request because `current` is still set until pump returns; expected it to be refused as an \
                operation outside an outstanding request (protocol violation) and not indexed, actual: stray.1 is indexed \
                and the request is acknowledged (\(run.first.acknowledged)).
                """)
            return
        }
        XCTAssertEqual(try store.search("cormorant"), [])
        XCTAssertTrue(run.first.acknowledged, "\(String(describing: run.failure))")
        XCTAssertEqual(try store.search("puffin").map(\.uniqueIdentifier), ["inside.1"])
        XCTAssertTrue(run.log.contains("'index/put' notification (stdout byte"), "the stray message is not noted in the log: \(run.log)")
        XCTAssertTrue(run.log.contains("arrived after request 1 was acknowledged"), run.log)
    }

    func testInvalidUTF8IsAProtocolViolation() throws {
        let store = try openStore()
        let run = try runDirect(T.BundleSpec("com.example.bytes", executable: "invalid_utf8.py"), store: store)
        assertFailure(run, .protocolViolation, exitCode: 76, says: ["not valid UTF-8"])
        try assertIndexUnchanged(store, run)
        XCTAssertEqual(try store.search("vulture"), [], "the valid item before the bad line must be rolled back too")
        try assertRequeued(store, run)
    }

    // MARK: Versions

    func testVersionMismatchNamesBothListsAndCannotStart() throws {
        let store = try openStore()
        let run = try runDirect(T.BundleSpec("com.example.future", executable: "version_mismatch.py"), store: store)
        assertFailure(run, .versionMismatch, exitCode: 69, says: ["[2,3]", "[1]"])
        try assertIndexUnchanged(store, run)
        try assertRequeued(store, run)
    }

    func testChoosingAVersionTheHostDidNotOfferCannotStart() throws {
        let store = try openStore()
        var spec = T.BundleSpec("com.example.future", executable: "version_mismatch.py")
        spec.arguments = ["chooses-2"]
        let run = try runDirect(spec, store: store)
        assertFailure(run, .versionMismatch, exitCode: 69, says: ["protocol version 2"])
        try assertIndexUnchanged(store, run)
        try assertRequeued(store, run)
    }

    // MARK: Shutdown

    func testAnExtensionThatIgnoresSIGTERMAndEndOfInputIsKilled() throws {
        let store = try openStore()
        let run = try runDirect(T.BundleSpec("com.example.stubborn", executable: "ignore_sigterm.sh"), store: store, kind: .reindexItems,
                                identifiers: ["stubborn.1"]) { options in
            options.exitGraceSeconds = 0.3
            options.termGraceSeconds = 0.3
        }
        XCTAssertTrue(run.first.acknowledged, "\(String(describing: run.failure))")
        XCTAssertEqual(try store.search("mule").map(\.uniqueIdentifier), ["stubborn.1"])
        XCTAssertEqual(try store.request(run.first.request.id)?.state, .done)
        XCTAssertTrue(run.log.contains("sending SIGTERM"), run.log)
        XCTAssertTrue(run.log.contains("sending SIGKILL"), run.log)
        XCTAssertTrue(run.log.contains("the extension was killed by signal \(SIGKILL) (SIGKILL)"), run.log)
    }

    func testAGrandchildHoldingThePipesDoesNotKeepTheRunAlive() throws {
        let store = try openStore()
        let run = try runDirect(T.BundleSpec("com.example.parent", executable: "grandchild.sh"), store: store, kind: .reindexItems,
                                identifiers: ["parent.1"])
        XCTAssertTrue(run.first.acknowledged, "\(String(describing: run.failure))")
        XCTAssertEqual(try store.search("penguin").map(\.uniqueIdentifier), ["parent.1"])
        let pidText = try XCTUnwrap(T.read("\(run.bundle.directory)/grandchild.pid")).trimmingCharacters(in: .whitespacesAndNewlines)
        let grandchild = try XCTUnwrap(pid_t(pidText))
        XCTAssertTrue(T.isNotRunning(grandchild), "the grandchild \(grandchild) outlived the run (state \(String(describing: T.processState(grandchild))))")
        XCTAssertTrue(run.log.contains("grandchild: end of input, exiting"), run.log)
    }

    func testACrashIsNoticedWhileAGrandchildKeepsStdoutOpen() throws {
        let store = try openStore()
        var spec = T.BundleSpec("com.example.parent", executable: "grandchild.sh")
        spec.arguments = ["crash"]
        let run = try runDirect(spec, store: store)
        assertFailure(run, .crashed, exitCode: 75, says: ["SIGSEGV", "before acknowledging"])
        try assertIndexUnchanged(store, run)
        XCTAssertEqual(try store.search("penguin"), [])
        try assertRequeued(store, run)
        let pidText = try XCTUnwrap(T.read("\(run.bundle.directory)/grandchild.pid")).trimmingCharacters(in: .whitespacesAndNewlines)
        let grandchild = try XCTUnwrap(pid_t(pidText))
        XCTAssertTrue(T.isNotRunning(grandchild), "the grandchild \(grandchild) outlived the run")
    }

    // MARK: Client state

    func testAClientStateOver250BytesIsRefusedAndNothingIsCommitted() throws {
        let store = try openStore()
        var spec = T.BundleSpec("com.example.state", executable: "client_state_size.py")
        spec.arguments = ["251"]
        let run = try runDirect(spec, store: store, kind: .reindexItems, identifiers: ["state.1"])
        XCTAssertTrue(run.log.contains("client_state_size: commit refused:"), run.log)
        XCTAssertTrue(run.log.contains("at most 250"), run.log)
        assertFailure(run, .crashed, exitCode: 75, says: ["exited with status 3"])
        XCTAssertEqual(try store.search("starling"), [], "a batch whose commit was refused must not be committed")
        XCTAssertNil(try store.request(run.first.request.id)?.clientState)
        try assertIndexUnchanged(store, run)
        try assertRequeued(store, run)
    }

    func testAClientStateOf250BytesIsCommitted() throws {
        let store = try openStore()
        var spec = T.BundleSpec("com.example.state", executable: "client_state_size.py")
        spec.arguments = ["250"]
        let run = try runDirect(spec, store: store, kind: .reindexItems, identifiers: ["state.1"])
        XCTAssertTrue(run.log.contains("client_state_size: commit accepted:"), run.log)
        assertFailure(run, .crashed, exitCode: 75, says: ["exited with status 3"])
        XCTAssertEqual(try store.search("starling").map(\.uniqueIdentifier), ["state.1"], "a committed batch of reindexItems is visible")
        XCTAssertEqual(try store.request(run.first.request.id)?.clientState, Base64.encode(Array(repeating: UInt8(ascii: "s"), count: 250)))
        try assertRequeued(store, run)
    }

    func testAResumedReindexAllReceivesTheCommittedClientStateAndKeepsTheFirstBatch() throws {
        try T.makeBundle(T.BundleSpec("com.example.resume", executable: "resume.py"), in: extensionsDirectory)
        for index in try indexes() {
            let n = index.name
            let environment = T.commandEnvironment(scratch: scratch, extra: index.environment)
            func reindex(_ arguments: [String]) throws -> T.CommandResult {
                try T.runReindex(["--index", index.argument, "--extensions-path", extensionsDirectory] + arguments, scratch: scratch, environment: environment)
            }
            try T.seed(try index.open(), bundle: "com.example.resume", [T.item("old.1", title: "Outdated Ostrich")])

            let first = try reindex(["run", "com.example.resume"])
            XCTAssertEqual(first.status, 75, "\(n): \(first)")
            XCTAssertTrue(first.stderr.hasPrefix("error: com.example.resume: "), "\(n): \(first.stderr)")
            XCTAssertTrue(first.stderr.contains("exited with status 2"), "\(n): \(first.stderr)")
            do {
                let store = try index.open()
                XCTAssertEqual(try T.identifiers(store, bundle: "com.example.resume"), ["old.1"], "\(n): the unfinished reindexAll became visible")
                XCTAssertEqual(try store.search("resumable"), [], n)
                let pending = try store.requests(bundle: "com.example.resume", state: .pending)
                XCTAssertEqual(pending.map(\.attempts), [1], n)
                XCTAssertEqual(pending.first?.clientState, "bmV4dD0z", "\(n): the committed client state (next=3) must be kept")
            }

            // A person resuming says so (a plain forced run starts fresh: TrustTests).
            let second = try reindex(["run", "com.example.resume", "--resume"])
            XCTAssertEqual(second.status, 0, "\(n): \(second)")
            let log = T.read(index.logFile(for: "com.example.resume", commandEnvironment: environment)) ?? ""
            XCTAssertTrue(log.contains("resuming from clientState next=3"), "\(n): the retry did not receive the client state: \(log)")
            let store = try index.open()
            XCTAssertEqual(try T.identifiers(store, bundle: "com.example.resume"), ["resume.1", "resume.2", "resume.3", "resume.4"], n)
            XCTAssertEqual(try store.search("ostrich"), [], n)
            XCTAssertEqual(try store.requests(bundle: "com.example.resume", state: .pending), [], n)
            store.assertHealthy(n)
        }
    }

    func testARequestLeftRunningByAKilledHostIsRecoveredByTheNextRun() throws {
        var spec = T.BundleSpec("com.example.orphan", executable: "hang.py")
        spec.arguments = ["idle"]
        try T.makeBundle(spec, in: extensionsDirectory)
        try T.seed(try openStore(), bundle: "com.example.orphan", [T.item("prev.1", title: "Previous Pangolin")])

        let command = try T.RunningCommand(
            arguments: ["--index", indexPath, "--extensions-path", extensionsDirectory, "run", "com.example.orphan"],
            environment: T.commandEnvironment(scratch: scratch), scratch: scratch, feedsStdin: false)
        let logPath = "\(scratch)/index/logs/com.example.orphan.log"
        var extensionPID: pid_t?
        let deadline = Date().addingTimeInterval(30)
        while extensionPID == nil && Date() < deadline && command.process.isRunning {
            if let log = T.read(logPath), let range = log.range(of: "hanging on request 1 (pid ") {
                extensionPID = pid_t(log[range.upperBound...].prefix { $0.isNumber })
            } else {
                usleep(20_000)
            }
        }
        kill(command.process.processIdentifier, SIGKILL)
        let killed = command.finish(timeout: 30)
        let orphan = try XCTUnwrap(extensionPID, "the extension never started its request: \(killed)")
        // The extension has a process group of its own, so it outlives a host killed with SIGKILL; end it.
        kill(-orphan, SIGKILL)
        XCTAssertTrue(killed.signaled)

        do {
            let store = try openStore()
            XCTAssertNil(store.openReport.lostReason)
            XCTAssertEqual(try store.integrityCheck(), [])
            XCTAssertEqual(try T.identifiers(store, bundle: "com.example.orphan"), ["prev.1"])
            let running = try store.requests(bundle: "com.example.orphan", state: .running)
            XCTAssertEqual(running.map(\.attempts), [1], "the killed host's request should be left running")
        }

        // The extension is fixed; the next run takes the abandoned request over and finishes it.
        var fixed = T.BundleSpec("com.example.orphan", executable: "well_behaved.py")
        fixed.arguments = ["2"]
        try T.makeBundle(fixed, in: extensionsDirectory)
        let result = try reindex(["run", "com.example.orphan"])
        XCTAssertEqual(result.status, 0, "\(result)")
        let store = try openStore()
        XCTAssertEqual(try T.identifiers(store, bundle: "com.example.orphan"), ["item.1", "item.2"])
        XCTAssertEqual(try store.requests(bundle: "com.example.orphan", state: .running), [])
        XCTAssertEqual(try store.requests(bundle: "com.example.orphan", state: .pending), [])
        XCTAssertEqual(try store.requests(state: .done).filter { $0.bundleKey == "com.example.orphan" }.map(\.attempts), [2])
    }

    // MARK: Environment, working directory, log

    func testTheExtensionInheritsOnlyItsStandardDescriptors() throws {
        let store = try openStore()
        // A descriptor of the host without close-on-exec must not reach the extension either.
        let stray = open("/dev/null", O_RDONLY)
        XCTAssertGreaterThanOrEqual(stray, 0)
        defer { close(stray) }
        let run = try runDirect(T.BundleSpec("com.example.descriptors", executable: "descriptors.py"), store: store,
                                kind: .reindexItems, identifiers: ["x"])
        XCTAssertTrue(run.first.acknowledged, "\(String(describing: run.failure))")
        let report = run.probe.stderrLines.first { $0.contains("inherited descriptors:") }
        XCTAssertEqual(report, "descriptors: inherited descriptors: []", run.log)
    }

    func testEnvironmentIsAllowlistedAndTheWorkingDirectoryIsTheBundle() throws {
        let store = try openStore()
        var spec = T.BundleSpec("com.example.environment", executable: "env_dump.sh")
        spec.environment = ["FIXTURE_DUMP": "environment.txt", "FROM_MANIFEST": "manifest value", "TZ": "Europe/Oslo",
                            "REINDEX_BUNDLE_IDENTIFIER": "com.example.spoofed", "REINDEX_DEBUG": "1"]
        let hostPATH = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"
        let host = [
            "PATH": hostPATH, "HOME": "\(scratch)/home", "USER": "tester", "LOGNAME": "tester", "LANG": "C.UTF-8",
            "LC_ALL": "C.UTF-8", "LC_TIME": "C", "TZ": "UTC", "TMPDIR": "\(scratch)/tmp",
            "SECRET_TOKEN": "hunter2", "AWS_SECRET_ACCESS_KEY": "do-not-pass", "REINDEX_INDEX": "/elsewhere", "LD_PRELOAD": "/evil.so",
            "REINDEX_DEBUG": "1", "PYTHONPATH": "/elsewhere",
        ]
        try FileManager.default.createDirectory(atPath: "\(scratch)/tmp", withIntermediateDirectories: true)
        let run = try runDirect(spec, store: store, kind: .reindexItems, identifiers: ["env.1"]) { options in
            options.environment = host
        }
        XCTAssertTrue(run.first.acknowledged, "\(String(describing: run.failure))")

        let dump = try XCTUnwrap(T.read("\(run.bundle.directory)/environment.txt"), "the dump was not written in the bundle directory")
        var seen: [String: String] = [:]
        for line in dump.split(separator: "\n") {
            guard let equals = line.firstIndex(of: "=") else { continue }
            seen[String(line[..<equals])] = String(line[line.index(after: equals)...])
        }
        for secret in ["SECRET_TOKEN", "AWS_SECRET_ACCESS_KEY", "REINDEX_INDEX", "LD_PRELOAD", "REINDEX_DEBUG", "PYTHONPATH", "REINDEX_WAIT_FOR_DEBUGGER"] {
            XCTAssertNil(seen[secret], "\(secret) leaked into the extension's environment")
        }
        XCTAssertFalse(dump.contains("hunter2"))
        XCTAssertEqual(seen["PATH"], hostPATH)
        XCTAssertEqual(seen["HOME"], "\(scratch)/home")
        XCTAssertEqual(seen["USER"], "tester")
        XCTAssertEqual(seen["LOGNAME"], "tester")
        XCTAssertEqual(seen["LANG"], "C.UTF-8")
        XCTAssertEqual(seen["LC_ALL"], "C.UTF-8")
        XCTAssertEqual(seen["LC_TIME"], "C")
        // TMPDIR: a private directory in the host's, gone after the run; REINDEX_DATA_DIR: the
        // bundle's own data directory, which stays.
        let temporary = try XCTUnwrap(seen["TMPDIR"])
        XCTAssertTrue(temporary.hasPrefix("\(scratch)/tmp/reindex-tmp-com.example.environment-"), temporary)
        XCTAssertFalse(FileManager.default.fileExists(atPath: temporary), "the private temporary directory outlived the run")
        XCTAssertEqual(seen["REINDEX_DATA_DIR"], paths.dataDirectory(for: "com.example.environment"))
        XCTAssertTrue(FileSystem.isDirectory(paths.dataDirectory(for: "com.example.environment")))
        XCTAssertEqual(seen["TZ"], "Europe/Oslo", "the manifest's environment comes after the host's")
        XCTAssertEqual(seen["FROM_MANIFEST"], "manifest value")
        XCTAssertEqual(seen["FIXTURE_DUMP"], "environment.txt")
        XCTAssertEqual(seen["REINDEX_BUNDLE_IDENTIFIER"], "com.example.environment", "the protocol's variables come last")
        XCTAssertEqual(seen["REINDEX_PROTOCOL_VERSIONS"], "1")
        XCTAssertEqual(seen["REINDEX_HOST_PID"], String(getpid()))
        let allowed: Set<String> = [
            "PATH", "HOME", "USER", "LOGNAME", "LANG", "LC_ALL", "LC_TIME", "TZ", "TMPDIR", "FIXTURE_DUMP", "FROM_MANIFEST",
            "REINDEX_BUNDLE_IDENTIFIER", "REINDEX_PROTOCOL_VERSIONS", "REINDEX_HOST_PID", "REINDEX_DATA_DIR",
            "PWD", "OLDPWD", "SHLVL", "_",  // set by the shell itself
        ]
        XCTAssertEqual(Set(seen.keys).subtracting(allowed), [], "unexpected variables: \(dump)")

        let cwd = try XCTUnwrap(T.read("\(run.bundle.directory)/cwd.txt")).trimmingCharacters(in: .whitespacesAndNewlines)
        XCTAssertEqual(cwd, URL(fileURLWithPath: run.bundle.directory).resolvingSymlinksInPath().path)

        XCTAssertTrue(run.log.contains("env_dump: wrote the environment to environment.txt; this line goes to the log"), "stderr is not in the log: \(run.log)")
        XCTAssertTrue(run.probe.stderrLines.contains { $0.contains("env_dump: wrote the environment") })
    }
}
