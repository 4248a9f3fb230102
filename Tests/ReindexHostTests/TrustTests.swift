import Foundation
import ReindexTestSupport
import XCTest
import ReindexHost
import ReindexSystem
@testable import ReindexCommandLine
@testable import ReindexStore
import ReindexProtocol

/// What an author's typo or a hostile message must not do: lose items, crash the host, resume
/// stale work silently, or leave a misleading log. Real commands, real fixture extensions.
final class TrustTests: XCTestCase {
    private typealias T = TestSupport
    private var scratch = ""
    private var extensions: String { "\(scratch)/extensions" }
    private var index: String { "\(scratch)/index/index.sqlite" }

    override func setUpWithError() throws {
        scratch = try T.makeScratchDirectory(for: self)
        try FileManager.default.createDirectory(atPath: extensions, withIntermediateDirectories: true)
        try FileManager.default.createDirectory(atPath: "\(scratch)/index", withIntermediateDirectories: true)
        signal(SIGPIPE, SIG_IGN)
    }

    private func reindex(_ arguments: [String], stdin: String? = nil) throws -> T.CommandResult {
        try T.runReindex(["--index", index, "--extensions-path", extensions] + arguments, scratch: scratch, stdin: stdin, timeout: 60)
    }

    private func log(_ bundle: String) -> String { T.read("\(scratch)/index/logs/\(bundle).log") ?? "" }

    private func identifiers(_ bundle: String) throws -> [String] {
        try T.identifiers(try IndexStore.open(path: index), bundle: bundle)
    }

    // MARK: 1. A misspelled method

    func testAMisspelledIndexMethodIsAViolationThatKeepsTheBundlesItems() throws {
        let bundle = "com.example.typo"
        try T.makeBundle(T.BundleSpec(bundle, executable: "method_typo.py"), in: extensions)
        XCTAssertEqual(try reindex(["run", bundle]).status, 0)
        XCTAssertEqual(try identifiers(bundle), ["typo.1", "typo.2", "typo.3"])

        for (method, kind) in [("index/add", "notification"), ("batch/commitAll", "request")] {
            var spec = T.BundleSpec(bundle, executable: "method_typo.py")
            spec.arguments = [method, kind]
            try T.makeBundle(spec, in: extensions)
            let run = try reindex(["run", bundle, "--json"])
            XCTAssertEqual(run.status, 76, "\(method): \(run)")
            XCTAssertTrue(run.stderr.contains("unknown \(kind) '\(method)'"), "\(method): \(run)")
            XCTAssertEqual(try identifiers(bundle), ["typo.1", "typo.2", "typo.3"], "\(method): the bundle lost its items")
            XCTAssertTrue(log(bundle).contains("protocol violation: unknown \(kind) '\(method)'"), log(bundle))
        }
    }

    func testAnUnknownMethodOutsideTheIndexNamespacesIsAWarningShownByRun() throws {
        var spec = T.BundleSpec("com.example.chatty", executable: "method_typo.py")
        spec.arguments = ["telemetry/ping"]
        try T.makeBundle(spec, in: extensions)
        let run = try reindex(["run", "com.example.chatty", "--json"])
        XCTAssertEqual(run.status, 0, "\(run)")
        XCTAssertTrue(run.stdout.contains(#""warnings":["ignored an unknown notification 'telemetry\/ping'"]"#) ||
                      run.stdout.contains(#""warnings":["ignored an unknown notification 'telemetry/ping'"]"#), "\(run)")
        XCTAssertTrue(run.stderr.contains("warning: com.example.chatty: ignored an unknown notification 'telemetry/ping'"), "\(run)")
    }

    func testAReindexAllThatPutsNothingDoesNotEmptyTheBundle() throws {
        let bundle = "com.example.emptied"
        try T.seed(try IndexStore.open(path: index), bundle: bundle, [T.item("a", title: "Aardvark"), T.item("b", title: "Bison"), T.item("c", title: "Caracal")])
        var spec = T.BundleSpec(bundle, executable: "method_typo.py")
        spec.arguments = ["telemetry/ping"]
        try T.makeBundle(spec, in: extensions)
        let run = try reindex(["run", bundle])
        XCTAssertEqual(run.status, 76, "\(run)")
        XCTAssertTrue(run.stderr.contains("would remove all 3 items the bundle has; nothing was published and they stay"), "\(run)")
        XCTAssertEqual(try T.identifiers(try IndexStore.open(path: index), bundle: bundle), ["a", "b", "c"])
    }

    // MARK: 2. Extreme progress

    func testNegativeOrExtremeProgressNeverCrashesTheHost() throws {
        for (completed, total) in [("-5", "10"), ("-9223372036854775808", nil), ("9223372036854775807", "1"), ("5", "-1")] {
            var spec = T.BundleSpec("com.example.progress", executable: "bad_progress.py")
            spec.arguments = [completed] + (total.map { [$0] } ?? [])
            try T.makeBundle(spec, in: extensions)
            let run = try reindex(["run", "com.example.progress"])
            XCTAssertFalse(run.signaled, "\(completed)/\(total ?? "-"): \(run)")
            XCTAssertNotEqual(run.status, 70, "\(run)")
            if completed.hasPrefix("-") || total?.hasPrefix("-") == true {
                XCTAssertEqual(run.status, 76, "\(run)")
                XCTAssertTrue(run.stderr.contains("0 or more"), "\(run)")
            } else {
                XCTAssertEqual(run.status, 0, "\(run)")
            }
        }
        // The display itself is total too, on a terminal.
        let display = ProgressDisplay(label: "com.example.progress", terminal: true)
        display.update(ProgressParams(requestID: .number(1), completed: -5, total: 10))
        display.update(ProgressParams(requestID: .number(1), completed: .max, total: 1))
        display.update(ProgressParams(requestID: .number(1), completed: .min))
        display.finish()
    }

    // MARK: 3. Forced runs start fresh

    func testAForcedRunStartsFreshAndSaysWhatItDiscardedUnlessAskedToResume() throws {
        let bundle = "com.example.resume"
        try T.makeBundle(T.BundleSpec(bundle, executable: "resume.py"), in: extensions)
        XCTAssertEqual(try reindex(["run", bundle]).status, 75, "the first attempt commits a batch and exits")

        let fresh = try reindex(["run", bundle])
        XCTAssertEqual(fresh.status, 75, "a fresh start runs the first batch again: \(fresh)")
        XCTAssertTrue(fresh.stderr.contains("discarded a partial reindexAll from request 1: 2 committed item(s)"), "\(fresh)")
        XCTAssertFalse(log(bundle).contains("resuming from clientState"), "a forced run resumed: \(log(bundle))")

        let resumed = try reindex(["run", bundle, "--resume"])
        XCTAssertEqual(resumed.status, 0, "\(resumed)")
        XCTAssertFalse(resumed.stderr.contains("discarded"), "\(resumed)")
        XCTAssertTrue(log(bundle).contains("resuming from clientState next=3"), log(bundle))
        XCTAssertEqual(try identifiers(bundle), ["resume.1", "resume.2", "resume.3", "resume.4"])
        let help = try reindex(["run", "--help"])
        XCTAssertTrue(help.stdout.contains("--resume"), "\(help)")
    }

    // MARK: 5. put reads lines as its help says

    func testPutSkipsAnOverlongLineByNumberAndAppliesTheOthers() throws {
        let huge = String(repeating: "x", count: 20 << 20)
        let input = #"{"uniqueIdentifier":"p1","attributes":{"title":"Before the long line"}}"# + "\n" + huge + "\n"
            + #"{"uniqueIdentifier":"p2","attributes":{"title":"After the long line"}}"# + "\n"
        let put = try reindex(["put", "com.example.notes"], stdin: input)
        XCTAssertEqual(put.status, 65, "\(put)")
        XCTAssertTrue(put.stderr.contains("error: com.example.notes: stdin line 2: longer than"), "\(put)")
        XCTAssertEqual(try identifiers("com.example.notes"), ["p1", "p2"])
    }

    // MARK: 6. SIGHUP

    func testSIGHUPStopsARunLikeSIGTERMAndRequeuesIt() throws {
        var spec = T.BundleSpec("com.example.hangup", executable: "pause_after_puts.py")
        let handshake = try T.handshakeDirectory(scratch)
        let ready = "\(handshake)/ready"
        spec.environment = ["FIXTURE_READY": ready, "FIXTURE_RELEASE": "\(handshake)/never"]
        spec.sandboxWrite = [handshake]
        try T.makeBundle(spec, in: extensions)
        let run = try T.RunningCommand(arguments: ["--index", index, "--extensions-path", extensions, "run", "com.example.hangup"],
                                       environment: T.commandEnvironment(scratch: scratch), scratch: scratch, feedsStdin: false)
        let end = Date().addingTimeInterval(60)
        while !FileManager.default.fileExists(atPath: ready) && Date() < end { usleep(20_000) }
        kill(run.process.processIdentifier, SIGHUP)
        let result = run.finish(timeout: 60)
        XCTAssertFalse(result.signaled, "the host died of SIGHUP: \(result)")
        XCTAssertEqual(result.status, 75, "\(result)")
        let store = try IndexStore.open(path: index)
        XCTAssertEqual(try store.requests(bundle: "com.example.hangup", state: .pending).count, 1, "the request goes back to the queue")
        XCTAssertTrue(log("com.example.hangup").contains("session ended: cancelled"), log("com.example.hangup"))
        let left = T.processesStillRunning(after: 5) { pid in
            (T.read("/proc/\(pid)/cmdline") ?? "").contains("pause_after_puts.py")
        }
        XCTAssertEqual(left, [], "the extension outlived the host")
    }

    // MARK: 7. Honest logs

    func testTheLogSaysWhyTheSessionEndedAndNotThatTheExtensionIgnoredStdin() throws {
        var spec = T.BundleSpec("com.example.typo", executable: "method_typo.py")
        spec.arguments = ["index/add"]
        try T.makeBundle(spec, in: extensions)
        XCTAssertEqual(try reindex(["run", "com.example.typo"]).status, 76)
        let text = log("com.example.typo")
        XCTAssertTrue(text.contains("protocol violation: unknown notification 'index/add'"), text)
        XCTAssertTrue(text.contains("session ended: protocolViolation"), text)
        XCTAssertFalse(text.contains("did not exit after stdin was closed"), text)
    }

    // MARK: 8. status

    func testStatusShowsRunningRequestsWithProgressMootFailuresAndBundlesNotInstalled() throws {
        // A failure, then a success: the failure is moot.
        var refusing = T.BundleSpec("com.example.flaky", executable: "refuse.py")
        refusing.maxAttempts = 1
        try T.makeBundle(refusing, in: extensions)
        XCTAssertEqual(try reindex(["run", "com.example.flaky"]).status, 75)
        try T.makeBundle(T.BundleSpec("com.example.flaky", executable: "well_behaved.py"), in: extensions)
        XCTAssertEqual(try reindex(["run", "com.example.flaky"]).status, 0)
        // A bundle the index knows that is gone from the search path.
        try T.seed(try IndexStore.open(path: index), bundle: "com.example.gone", [T.item("g1", title: "Gone Gazelle")])

        let status = try reindex(["status"])
        XCTAssertEqual(status.status, 0, "\(status)")
        XCTAssertTrue(status.stdout.contains("com.example.flaky: 3 item(s), 1 earlier failure(s) superseded"), "\(status)")
        XCTAssertFalse(status.stdout.contains("failed: "), "\(status)")
        XCTAssertTrue(status.stdout.contains("com.example.gone: 1 item(s) — not installed"), "\(status)")
        let history = try reindex(["status", "--failed"])
        XCTAssertTrue(history.stdout.contains("catalogue database unreachable"), "\(history)")

        // A running request, with its last progress.
        var spec = T.BundleSpec("com.example.busy", executable: "pause_after_puts.py")
        let handshake = try T.handshakeDirectory(scratch)
        let ready = "\(handshake)/busy.ready", release = "\(handshake)/busy.release"
        spec.environment = ["FIXTURE_READY": ready, "FIXTURE_RELEASE": release]
        spec.sandboxWrite = [handshake]
        try T.makeBundle(spec, in: extensions)
        let run = try T.RunningCommand(arguments: ["--index", index, "--extensions-path", extensions, "run", "com.example.busy"],
                                       environment: T.commandEnvironment(scratch: scratch), scratch: scratch, feedsStdin: false)
        defer {
            _ = FileManager.default.createFile(atPath: release, contents: nil)
            _ = run.finish(timeout: 60)
        }
        let end = Date().addingTimeInterval(60)
        while !FileManager.default.fileExists(atPath: ready) && Date() < end { usleep(20_000) }
        // The ready file says the progress left the extension, not that the host has recorded it yet.
        var busy = try reindex(["status", "--json"])
        while !busy.stdout.contains(#""progress":"#) && Date() < end {
            usleep(20_000)
            busy = try reindex(["status", "--json"])
        }
        XCTAssertTrue(busy.stdout.contains(#""running":[{"requestId":"#), "\(busy)")
        XCTAssertTrue(busy.stdout.contains(#""progress":{"completed":5,"total":5}"#), "\(busy)")
        let human = try reindex(["status"])
        XCTAssertTrue(human.stdout.contains("com.example.busy: 0 item(s), 1 running"), "\(human)")
        XCTAssertTrue(human.stdout.contains("running: reindexAll (forced) request"), "\(human)")
    }
}
