import Foundation
import ReindexHost
import ReindexSystem
@testable import ReindexStore
import ReindexProtocol
import ReindexTestSupport
import XCTest

/// The crash-consistency loop (`Scripts/crash-consistency.py`) at chosen points: a real `reindex
/// run` (the built command) is killed with SIGKILL while its real extension
/// (`crashloop_indexer.py`) waits at a known point, and each test checks what the loop checks
/// after every kill:
/// 1. the index is intact (`PRAGMA integrity_check` on a read-only connection opened after the
///    host died, items and full-text rows match, `reindex check` is healthy);
/// 2. the bundle's visible items — read with SQL, with `reindex items` and with `reindex search`
///    for the generation words — are exactly the old set or exactly the new set (or, for a
///    reindexItems that commits, the old set with its committed batches applied);
/// 3. the interrupted request is still queued (`reindex status --json`), and the next host run
///    finishes that same request, resuming from its last committed client state.
/// Every item carries its generation: the word `g<N>z`, from the bundle's `crashloop-generation`.
/// And no extension may outlive the killed host: each sees end of input and exits.
/// The last test is the full disk without privileges (`Scripts/full-disk.py` uses a real full
/// tmpfs): a run that cannot write the index fails with one clear error and loses nothing
/// committed.
final class CrashConsistencyTests: XCTestCase, @unchecked Sendable {
    private typealias T = TestSupport
    private var scratch = ""
    private var extensionsDirectory: String { "\(scratch)/extensions" }
    private var indexPath: String { "\(scratch)/index/index.sqlite" }
    /// In every bundle's environment, so the extension processes of this test can be found.
    private let token = "crashloop-test-\(UUID().uuidString)"

    private let batched = "com.crashloop.batched"
    private let single = "com.crashloop.single"
    private let itemCount = 2000

    override func setUpWithError() throws {
        scratch = try T.makeScratchDirectory(for: self)
        try FileManager.default.createDirectory(atPath: extensionsDirectory, withIntermediateDirectories: true)
        try FileManager.default.createDirectory(atPath: "\(scratch)/index", withIntermediateDirectories: true)
        signal(SIGPIPE, SIG_IGN)
    }

    override func tearDown() {
        // Whatever a failed test left behind.
        for pid in extensionProcesses() { kill(pid, SIGKILL) }
        super.tearDown()
    }

    // MARK: Bundles and generations

    /// `com.crashloop.batched` commits every 500 items of a reindexAll (client state "next=<k>")
    /// and every 500 identifiers of a reindexItems; `com.crashloop.single` never commits.
    @discardableResult
    private func makeBundle(_ identifier: String, items: Int? = nil) throws -> String {
        var spec = T.BundleSpec(identifier, executable: "crashloop_indexer.py")
        spec.support = []
        spec.arguments = ["--items", String(items ?? itemCount), "--put-size", "200"]
        if identifier == batched { spec.arguments += ["--commit-every", "500", "--items-commit-every", "500"] }
        spec.environment = ["CRASHLOOP_TOKEN": token]
        spec.maxAttempts = 100
        return try T.makeBundle(spec, in: extensionsDirectory)
    }

    private func bundleDirectory(_ identifier: String) -> String { "\(extensionsDirectory)/\(identifier)" }

    private func setGeneration(_ generation: Int, _ identifier: String) throws {
        try T.write("\(generation)\n", to: "\(bundleDirectory(identifier))/crashloop-generation")
    }

    /// Where the extension stops next (see crashloop_indexer.py); nil removes the stop.
    private func pause(_ point: String?, _ identifier: String) throws {
        let path = "\(bundleDirectory(identifier))/crashloop-pause"
        if let point { try T.write(point + "\n", to: path) } else { try? FileManager.default.removeItem(atPath: path) }
    }

    /// Every item of the bundle, in generation `generation`.
    private func fullSet(_ generation: Int, items: Int? = nil) -> [String: Int] {
        var set: [String: Int] = [:]
        for n in 0..<(items ?? itemCount) { set["item.\(n)"] = generation }
        return set
    }

    private var logPath: (String) -> String { { "\(self.scratch)/index/logs/\($0).log" } }

    // MARK: The command

    private func reindex(_ arguments: [String], timeout: Double = 120) throws -> T.CommandResult {
        try T.runReindex(["--index", indexPath, "--extensions-path", extensionsDirectory] + arguments, scratch: scratch, timeout: timeout)
    }

    private func start(_ arguments: [String]) throws -> T.RunningCommand {
        try T.RunningCommand(arguments: ["--index", indexPath, "--extensions-path", extensionsDirectory] + arguments,
                             environment: T.commandEnvironment(scratch: scratch), scratch: scratch, feedsStdin: false)
    }

    private func json(_ result: T.CommandResult, file: StaticString = #filePath, line: UInt = #line) throws -> JSONValue {
        XCTAssertEqual(result.status, 0, "\(result)", file: file, line: line)
        return try JSONParser.parse(text: result.stdout)
    }

    private struct GaveUp: Error, CustomStringConvertible {
        var description: String
    }

    /// Runs `body` until it returns true; throws (failing the test) after `timeout` seconds.
    private func waitUntil(_ what: String, timeout: Double = 60, _ body: () throws -> Bool) throws {
        let end = Date().addingTimeInterval(timeout)
        while true {
            if (try? body()) == true { return }
            if Date() >= end { throw GaveUp(description: "gave up waiting \(Int(timeout)) s for \(what)") }
            usleep(10_000)
        }
    }

    /// Whether `host` has the index database open and is asleep (in SQLite's busy handler while
    /// another connection holds the write lock).
    private func hostWaitsForTheIndex(_ host: T.RunningCommand) -> Bool {
        let pid = host.process.processIdentifier
        let index = URL(fileURLWithPath: indexPath).resolvingSymlinksInPath().path
        let descriptors = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/fd")) ?? []
        let hasIndexOpen = descriptors.contains { fd in
            (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/\(pid)/fd/\(fd)")) == index
        }
        return hasIndexOpen && T.processState(pid) == "S"
    }

    /// Kills a running host with SIGKILL and checks that it died of it.
    private func killHost(_ command: T.RunningCommand, file: StaticString = #filePath, line: UInt = #line) {
        XCTAssertTrue(command.process.isRunning, "the host ended before the kill", file: file, line: line)
        kill(command.process.processIdentifier, SIGKILL)
        let result = command.finish(timeout: 30)
        XCTAssertTrue(result.signaled && result.status == SIGKILL, "the host did not die of SIGKILL: \(result)", file: file, line: line)
    }

    /// Runs `reindex run bundle request… --json`, waits until its extension stops at `point` (see
    /// `pause`), and kills the host there.
    private func killRun(_ bundle: String, _ request: [String], whenPausedAt point: String,
                         file: StaticString = #filePath, line: UInt = #line) throws {
        try pause(point, bundle)
        let host = try start(["run", bundle] + request + ["--json"])
        try waitUntil("the extension to stop at \(point)") { (T.read(logPath(bundle)) ?? "").contains("paused at \(point)") }
        killHost(host, file: file, line: line)
    }

    /// Every item's identifier, shuffled, one per line in `ids.txt` of the scratch directory.
    @discardableResult
    private func writeShuffledIdentifiers() throws -> [String] {
        let identifiers = (0..<itemCount).map { "item.\($0)" }.shuffled()
        try T.write(identifiers.joined(separator: "\n") + "\n", to: "\(scratch)/ids.txt")
        return identifiers
    }

    // MARK: Processes

    /// Running processes (not zombies) whose environment holds this test's token.
    /// Live processes carrying this test's `CRASHLOOP_TOKEN`, after waiting up to `seconds`.
    private func extensionProcesses(after seconds: Double = 0) -> [pid_t] {
        let marker = Array("CRASHLOOP_TOKEN=\(token)".utf8)
        return T.processesStillRunning(after: seconds) { pid in
            guard let environ = FileManager.default.contents(atPath: "/proc/\(pid)/environ") else { return false }
            return environ.split(separator: 0).contains { Array($0) == marker }
        }
    }

    /// No extension outlives its killed host: each sees end of input and exits within the
    /// protocol's 5 s shutdown grace (plus a margin for a loaded machine).
    private func assertNoExtensionLeft(file: StaticString = #filePath, line: UInt = #line) {
        let alive = extensionProcesses(after: 8)
        XCTAssertEqual(alive, [], "extension processes outlived the killed host", file: file, line: line)
        for pid in alive { kill(-pid, SIGKILL); kill(pid, SIGKILL) }
    }

    // MARK: Reading the index

    /// A read-only connection, opened after the host died.
    private func readOnly() throws -> SQLiteConnection {
        try SQLiteConnection(path: indexPath, readOnly: true)
    }

    private func rows(_ sql: String, _ bind: [String] = [], columns: Int32) throws -> [[String?]] {
        let connection = try readOnly()
        let statement = try connection.prepare(sql)
        for (n, value) in bind.enumerated() { statement.bind(Int32(n + 1), value) }
        var result: [[String?]] = []
        while try statement.step() { result.append((0..<columns).map { statement.text($0) }) }
        return result
    }

    /// Property 1: the index is intact, as `reindex check` sees it: SQLite's integrity check,
    /// items and full-text rows matching both ways, live generations, and no invisible row that
    /// belongs to no running or resumable writer.
    private func assertIntact(file: StaticString = #filePath, line: UInt = #line) throws {
        let check = try json(try reindex(["check", "--json"]), file: file, line: line)
        XCTAssertEqual(check["healthy"]?.boolValue, true, "reindex check: \(check)", file: file, line: line)
        XCTAssertEqual(check["problems"]?.arrayValue?.count, 0, "reindex check: \(check)", file: file, line: line)
    }

    /// The bundle's live items, identifier → generation, straight from the tables.
    private func visible(_ bundle: String) throws -> [String: Int] {
        var result: [String: Int] = [:]
        for row in try rows("""
            SELECT i.uid, json_extract(i.attributes, '$.keywords[0]') FROM items i
            JOIN bundles b ON b.key = i.bundle AND b.live_gen = i.gen WHERE i.bundle = ?1
            """, [bundle.lowercased()], columns: 2) {
            result[row[0] ?? ""] = Self.generation(of: row[1])
        }
        return result
    }

    /// The rows of a generation that is not (yet) live: what a reindexAll committed in batches.
    private func kept(_ bundle: String, generation: Int64) throws -> [String: Int] {
        var result: [String: Int] = [:]
        for row in try rows("SELECT uid, json_extract(attributes, '$.keywords[0]') FROM items WHERE bundle = ?1 AND gen = ?2",
                            [bundle.lowercased(), String(generation)], columns: 2) {
            result[row[0] ?? ""] = Self.generation(of: row[1])
        }
        return result
    }

    private static func generation(of stamp: String?) -> Int {
        guard let stamp, stamp.hasPrefix("g"), stamp.hasSuffix("z"), let n = Int(stamp.dropFirst().dropLast()) else { return -1 }
        return n
    }

    /// Property 2: what is visible is exactly `expected`, seen the same way through SQL,
    /// `reindex items` and `reindex search` (whose generation words are found exactly when live
    /// items carry them).
    private func assertVisible(_ bundle: String, _ expected: [String: Int], generations: [Int],
                               file: StaticString = #filePath, line: UInt = #line) throws {
        let live = try visible(bundle)
        XCTAssertTrue(live == expected, "visible: \(summary(live)); expected: \(summary(expected))", file: file, line: line)
        let listed = try json(try reindex(["items", bundle, "--json", "--limit", String(max(itemCount, expected.count) * 2)]), file: file, line: line)
        var cli: [String: Int] = [:]
        for result in listed["results"]?.arrayValue ?? [] {
            cli[result["uniqueIdentifier"]?.stringValue ?? ""] = Self.generation(of: result["attributes"]?["keywords"]?.arrayValue?.first?.stringValue)
        }
        XCTAssertTrue(cli == live, "reindex items shows \(summary(cli)), the live rows are \(summary(live))", file: file, line: line)
        for generation in generations {
            let found = try json(try reindex(["search", "g\(generation)z", "--bundle", bundle, "--limit", "3", "--json"]), file: file, line: line)
            let count = found["results"]?.arrayValue?.count ?? 0
            let carried = live.values.contains(generation)
            XCTAssertEqual(count > 0, carried, "search g\(generation)z found \(count); live items carrying it: \(carried)", file: file, line: line)
        }
    }

    private func summary(_ set: [String: Int]) -> String {
        var byGeneration: [Int: Int] = [:]
        for generation in set.values { byGeneration[generation, default: 0] += 1 }
        return "\(set.count) items (" + byGeneration.sorted { $0.key < $1.key }.map { "g\($0.key)z: \($0.value)" }.joined(separator: ", ") + ")"
    }

    /// The bundle's requests: id → (kind, state, attempts, client state).
    private func requests(_ bundle: String) throws -> [Int64: (kind: String, state: String, attempts: Int, clientState: String?)] {
        var result: [Int64: (kind: String, state: String, attempts: Int, clientState: String?)] = [:]
        for row in try rows("SELECT id, kind, state, attempts, client_state FROM requests WHERE bundle = ?1", [bundle.lowercased()], columns: 5) {
            result[Int64(row[0] ?? "") ?? -1] = (row[1] ?? "", row[2] ?? "", Int(row[3] ?? "") ?? -1, row[4])
        }
        return result
    }

    /// Property 3, as `reindex status --json` shows it: how many requests are queued for the bundle.
    private func queued(_ bundle: String, file: StaticString = #filePath, line: UInt = #line) throws -> Int {
        let status = try json(try reindex(["status", "--json"]), file: file, line: line)
        let entry = status["bundles"]?.arrayValue?.first { $0["bundleIdentifier"]?.stringValue?.lowercased() == bundle.lowercased() }
        return Int(entry?["pending"]?.integerValue ?? -1)
    }

    /// Runs `reindex serve` until the request is done and nothing is queued, then stops it.
    private func serveUntilDone(_ bundle: String, request: Int64, file: StaticString = #filePath, line: UInt = #line) throws {
        let serve = try start(["serve", "--rescan", "3600"])
        defer {
            if serve.process.isRunning { kill(serve.process.processIdentifier, SIGTERM) }
            let result = serve.finish(timeout: 60)
            XCTAssertTrue(result.status == 0 && !result.signaled, "serve did not stop cleanly: \(result)", file: file, line: line)
        }
        try waitUntil("serve to finish request \(request)", timeout: 120) {
            guard try requests(bundle)[request]?.state == "done" else { return false }
            return try rows("SELECT id FROM requests WHERE state != 'done'", columns: 1).isEmpty
        }
    }

    /// Both bundles indexed completely in generation 1 (the "old set").
    private func indexOldSets() throws {
        for bundle in [batched, single] {
            try makeBundle(bundle)
            try setGeneration(1, bundle)
            let result = try reindex(["run", bundle, "--json"])
            XCTAssertEqual(result.status, 0, "\(result)")
            XCTAssertEqual(try visible(bundle), fullSet(1))
        }
    }

    // MARK: Kills

    /// A host killed while SQLite's write lock is held by someone else cannot have recorded its
    /// request: nothing is queued, the old set stays, no extension was started.
    func testAKillBeforeTheRequestIsRecordedLeavesTheOldSetAndNothingQueued() throws {
        try indexOldSets()
        try setGeneration(2, batched)
        let requestsBefore = try requests(batched)
        let blocker = try SQLiteConnection(path: indexPath)
        try blocker.execute("BEGIN IMMEDIATE")
        let host = try start(["run", batched, "--all", "--json"])
        // The host has the index open and sleeps in SQLite's busy handler, waiting for the write
        // lock (its busy timeout is a minute).
        try waitUntil("the host to wait for the index's write lock") { hostWaitsForTheIndex(host) }
        killHost(host)
        try blocker.execute("ROLLBACK")

        assertNoExtensionLeft()
        try assertIntact()
        XCTAssertEqual(try requests(batched).keys.sorted(), requestsBefore.keys.sorted(), "a request was recorded")
        try assertVisible(batched, fullSet(1), generations: [1, 2])
        XCTAssertEqual(try queued(batched), 0)
        XCTAssertFalse((T.read(logPath(batched)) ?? "").contains("generation 2"), "an extension was started for the killed run")
    }

    /// Killed after two committed batches of a reindexAll: the old set stays visible, the request
    /// is queued with its client state, the kept generation holds exactly the committed items,
    /// and the next `reindex run` takes the request over and resumes from that state.
    func testAKillAfterCommittedBatchesOfAReindexAllKeepsThemForTheResume() throws {
        try indexOldSets()
        try setGeneration(2, batched)
        try killRun(batched, ["--all"], whenPausedAt: "all-commit-2")

        assertNoExtensionLeft()
        try assertIntact()
        try assertVisible(batched, fullSet(1), generations: [1, 2])
        let open = try requests(batched).filter { $0.value.state != "done" }
        XCTAssertEqual(open.count, 1, "\(open)")
        let (id, request) = try XCTUnwrap(open.first)
        XCTAssertEqual(request.state, "running")
        XCTAssertEqual(request.attempts, 1)
        XCTAssertEqual(request.clientState.flatMap { Base64.decode($0) }.map { String(decoding: $0, as: UTF8.self) }, "next=1000")
        let committed = Dictionary(uniqueKeysWithValues: (0..<1000).map { ("item.\($0)", 2) })
        let keptItems = try kept(batched, generation: id)
        XCTAssertTrue(keptItems == committed, "the kept generation is \(summary(keptItems))")
        XCTAssertEqual(try queued(batched), 1)

        try pause(nil, batched)
        let restart = try json(try reindex(["run", batched, "--resume", "--json"]))
        XCTAssertEqual(restart["requestId"]?.integerValue, id, "the restart did not take the interrupted request over")
        XCTAssertTrue((T.read(logPath(batched)) ?? "").contains("generation 2 start 1000 of \(itemCount)"), "the restart did not resume from next=1000")
        assertNoExtensionLeft()
        try assertIntact()
        try assertVisible(batched, fullSet(2), generations: [1, 2])
        XCTAssertEqual(try requests(batched)[id]?.state, "done")
        XCTAssertEqual(try requests(batched)[id]?.attempts, 2)
        XCTAssertEqual(try queued(batched), 0)
        // The other bundle was never touched.
        XCTAssertEqual(try visible(single), fullSet(1))
    }

    /// Killed after every item of a reindexItems (no commits) but before its acknowledgement:
    /// none of it is visible, the request is queued, and serve finishes that same request.
    func testAKillBeforeAReindexItemsIsAcknowledgedShowsNoneOfIt() throws {
        try indexOldSets()
        try setGeneration(2, single)
        try writeShuffledIdentifiers()
        try killRun(single, ["--ids-from", "\(scratch)/ids.txt"], whenPausedAt: "items-before-ack")

        assertNoExtensionLeft()
        try assertIntact()
        try assertVisible(single, fullSet(1), generations: [1, 2])
        let open = try requests(single).filter { $0.value.state != "done" }
        XCTAssertEqual(open.map(\.value.kind), ["reindexItems"])
        XCTAssertEqual(open.map(\.value.state), ["running"])
        XCTAssertEqual(try queued(single), 1)

        try pause(nil, single)
        let id = try XCTUnwrap(open.first?.key)
        try serveUntilDone(single, request: id)
        assertNoExtensionLeft()
        try assertIntact()
        try assertVisible(single, fullSet(2), generations: [1, 2])
        XCTAssertEqual(try requests(single)[id]?.attempts, 2)
        XCTAssertEqual(try queued(single), 0)
    }

    /// Killed between two batch/commits of a reindexItems: exactly the committed batches are
    /// visible (the protocol makes a reindexItems' commits visible), the rest is the old set,
    /// and the resumed request completes it.
    func testAKillBetweenReindexItemsCommitsShowsExactlyTheCommittedBatches() throws {
        try indexOldSets()
        try setGeneration(2, batched)
        let identifiers = try writeShuffledIdentifiers()
        try killRun(batched, ["--ids-from", "\(scratch)/ids.txt"], whenPausedAt: "items-commit-2")

        assertNoExtensionLeft()
        try assertIntact()
        var expected = fullSet(1)
        for identifier in identifiers.prefix(1000) { expected[identifier] = 2 }
        try assertVisible(batched, expected, generations: [1, 2])
        let open = try requests(batched).filter { $0.value.state != "done" }
        XCTAssertEqual(open.map(\.value.state), ["running"])
        XCTAssertEqual(try queued(batched), 1)

        try pause(nil, batched)
        try serveUntilDone(batched, request: try XCTUnwrap(open.first?.key))
        assertNoExtensionLeft()
        try assertIntact()
        try assertVisible(batched, fullSet(2), generations: [1, 2])
        XCTAssertEqual(try queued(batched), 0)
    }

    /// Killed after the acknowledgement committed (while the host waits for the extension to
    /// exit): the new set is entirely visible and nothing is queued.
    func testAKillAfterTheAcknowledgementShowsTheNewSet() throws {
        try indexOldSets()
        try setGeneration(2, single)
        try T.write("2\n", to: "\(bundleDirectory(single))/crashloop-linger")
        let earlier = Set(try requests(single).keys)
        let host = try start(["run", single, "--all", "--json"])
        try waitUntil("the acknowledgement to be committed") {
            try requests(single).contains { !earlier.contains($0.key) && $0.value.state == "done" }
                && (T.read(logPath(single)) ?? "").contains("lingering")
        }
        killHost(host)

        assertNoExtensionLeft()
        try assertIntact()
        try assertVisible(single, fullSet(2), generations: [1, 2])
        XCTAssertEqual(try queued(single), 0)
        XCTAssertEqual(try visible(batched), fullSet(1))
    }

    // MARK: A full disk

    /// A run that cannot write the index — here because the host runs under a file-size limit
    /// (`ulimit -f`, with SIGXFSZ ignored so the write fails instead of the signal killing the
    /// host), which needs no privileges; `Scripts/full-disk.py` does the same on a full tmpfs —
    /// fails with one clear error line, keeps every committed item visible and the index intact,
    /// leaves the request queued, and the next run without the limit resumes it.
    func testARunThatCannotWriteTheIndexFailsClearlyAndKeepsWhatWasCommitted() throws {
        try makeBundle(batched)
        try setGeneration(1, batched)
        XCTAssertEqual(try reindex(["run", batched, "--json"]).status, 0)
        let used = [indexPath, indexPath + "-wal"].compactMap { try? FileManager.default.attributesOfItem(atPath: $0)[.size] as? Int }.reduce(0, +)
        // Ten times the items; the limit leaves room for a few of them only. (POSIX counts
        // `ulimit -f` in 512-byte blocks; a shell that counts 1024 still stops the run early.)
        let bigger = itemCount * 10
        try makeBundle(batched, items: bigger)
        try setGeneration(2, batched)
        let blocks = (used + 256 * 1024) / 512
        let stdoutPath = "\(scratch)/limited.out", stderrPath = "\(scratch)/limited.err"
        _ = FileManager.default.createFile(atPath: stdoutPath, contents: nil)
        _ = FileManager.default.createFile(atPath: stderrPath, contents: nil)
        let limited = Process()
        limited.executableURL = URL(fileURLWithPath: "/bin/sh")
        limited.arguments = ["-c", "trap '' XFSZ; ulimit -f \(blocks) && exec \"$0\" \"$@\"", T.reindexBinary,
                             "--index", indexPath, "--extensions-path", extensionsDirectory, "run", batched, "--json"]
        limited.environment = T.commandEnvironment(scratch: scratch)
        limited.currentDirectoryURL = URL(fileURLWithPath: scratch)
        limited.standardInput = FileHandle.nullDevice
        limited.standardOutput = try FileHandle(forWritingTo: URL(fileURLWithPath: stdoutPath))
        limited.standardError = try FileHandle(forWritingTo: URL(fileURLWithPath: stderrPath))
        try limited.run()
        limited.waitUntilExit()
        let stderr = T.read(stderrPath) ?? ""
        XCTAssertEqual(limited.terminationReason, .exit, "the host died of a signal: \(stderr)")
        XCTAssertNotEqual(limited.terminationStatus, 0, "the run succeeded under the limit: \(stderr)")
        XCTAssertEqual(limited.terminationStatus, 75, "a failed request exits 75 (a retry is queued): \(stderr)")
        // One error line that names the bundle and the failed write of the index.
        let errorLine = stderr.split(separator: "\n").first.map(String.init) ?? ""
        XCTAssertTrue(errorLine.hasPrefix("error: \(batched): cannot "), errorLine)
        XCTAssertTrue(errorLine.contains("disk I/O error"), errorLine)
        XCTAssertTrue(errorLine.contains("a retry is queued"), errorLine)
        let reply = try JSONParser.parse(text: T.read(stdoutPath) ?? "")
        XCTAssertEqual(reply["outcome"]?.stringValue, "failed")
        XCTAssertEqual(reply["failure"]?.stringValue, "storeFailure")

        assertNoExtensionLeft()
        try assertIntact()
        try assertVisible(batched, fullSet(1), generations: [1, 2])
        XCTAssertEqual(try queued(batched), 1)
        let open = try requests(batched).filter { $0.value.state != "done" }
        let (id, request) = try XCTUnwrap(open.first)
        let resumeFrom = request.clientState.flatMap { Base64.decode($0) }.map { String(decoding: $0, as: UTF8.self) } ?? "next=0"

        // Without the limit the next run takes the request over and resumes from its last commit.
        let after = try json(try reindex(["run", batched, "--resume", "--json"]))
        XCTAssertEqual(after["requestId"]?.integerValue, id)
        XCTAssertTrue((T.read(logPath(batched)) ?? "").contains("generation 2 start \(resumeFrom.dropFirst(5)) of \(bigger)"),
                      "the run did not resume from \(resumeFrom)")
        assertNoExtensionLeft()
        try assertIntact()
        try assertVisible(batched, fullSet(2, items: bigger), generations: [1, 2])
        XCTAssertEqual(try queued(batched), 0)
    }
}
