import Foundation
@testable import ReindexHost
import ReindexSystem
@testable import ReindexCommandLine
@testable import ReindexStore
import ReindexProtocol
import ReindexTestSupport
import XCTest

/// The index store against a real SQLite file in a scratch directory: staged writes, the
/// replacement of `reindexAll`, crash consistency, damaged files, the request queue, search and
/// the direct-indexing API.
final class StoreTests: XCTestCase, @unchecked Sendable {
    private var scratch = ""
    private var databasePath: String { "\(scratch)/index.sqlite" }

    override func setUpWithError() throws {
        scratch = try TestSupport.makeScratchDirectory(for: self)
        signal(SIGPIPE, SIG_IGN)
    }

    private func open() throws -> IndexStore {
        try IndexStore.open(path: databasePath)
    }

    private typealias T = TestSupport

    // MARK: Staged writes

    func testLiveWritesAreInvisibleToOtherConnectionsUntilCommitted() throws {
        let writer = try open()
        let reader = try open()
        let writes = try StagedWrites(store: writer, bundleIdentifier: "com.example.alpha", scope: .live)

        try writes.put(T.item("a.1", title: "Quokka census"))
        XCTAssertEqual(try reader.search("quokka").count, 0, "an uncommitted put is visible to another connection")
        XCTAssertEqual(try reader.itemCount(bundle: "com.example.alpha"), 0)

        XCTAssertEqual(try writes.commitBatch(), 1)
        XCTAssertEqual(try reader.search("quokka").map(\.uniqueIdentifier), ["a.1"])

        try writes.put(T.item("a.2", title: "Quokka sightings"))
        try writes.delete(identifiers: ["a.1"])
        XCTAssertEqual(try reader.search("quokka").map(\.uniqueIdentifier), ["a.1"], "uncommitted put and delete leaked")

        let counts = try writes.acknowledge()
        XCTAssertEqual(counts, WriteCounts(put: 2, deleted: 1, rejected: 0))
        XCTAssertEqual(try reader.search("quokka").map(\.uniqueIdentifier), ["a.2"])
    }

    func testReindexAllKeepsOldItemsUntilAcknowledgedThenRemovesWhatItDidNotPut() throws {
        let store = try open()
        let reader = try open()
        try T.seed(store, bundle: "com.example.zoo", [
            T.item("walrus", title: "Walrus"),
            T.item("narwhal", title: "Narwhal", description: "original tusk"),
        ])

        let writes = try StagedWrites(store: store, bundleIdentifier: "com.example.zoo", scope: .replacement(generation: 42))
        try writes.put(T.item("narwhal", title: "Narwhal", description: "replacement tusk"))
        try writes.put(T.item("beluga", title: "Beluga"))
        try writes.commitBatch()

        // Committed, durable, and still invisible: searches see exactly the previous items.
        XCTAssertEqual(try T.identifiers(reader, bundle: "com.example.zoo"), ["narwhal", "walrus"])
        XCTAssertEqual(try reader.search("beluga").count, 0)
        XCTAssertEqual(try reader.search("walrus").count, 1)
        XCTAssertEqual(try reader.search("original").map(\.uniqueIdentifier), ["narwhal"])
        XCTAssertEqual(try reader.search("replacement").count, 0)

        let counts = try writes.acknowledge()
        XCTAssertEqual(counts.put, 2)
        XCTAssertEqual(counts.deleted, 1, "the item the replacement did not put is counted as deleted")
        XCTAssertEqual(try T.identifiers(reader, bundle: "com.example.zoo"), ["beluga", "narwhal"])
        XCTAssertEqual(try reader.search("walrus").count, 0)
        XCTAssertEqual(try reader.search("original").count, 0)
        XCTAssertEqual(try reader.search("replacement").map(\.uniqueIdentifier), ["narwhal"])
        XCTAssertEqual(try reader.integrityCheck(), [])
    }

    func testALargeUncommittedBatchIsDiscardedInShortStepsAndFinishedByTheNextAttempt() throws {
        let store = try open()
        try T.seed(store, bundle: "com.example.zoo", [T.item("old", title: "Obsolete Okapi")])
        let first = try StagedWrites(store: store, bundleIdentifier: "com.example.zoo", scope: .replacement(generation: 9))
        try first.put(T.item("kept", title: "Committed Kudu"))
        try first.commitBatch()
        // The committed row is replaced by the batch that fails, then thousands more are written.
        try first.put(T.item("kept", title: "Replaced Kudu"))
        for n in 0..<12_000 { try first.put(T.item("u.\(n)", title: "Uncommitted Urial \(n)")) }
        try first.flush()
        // A discard with no time left stops after its first step; the rest stays invisible.
        XCTAssertFalse(try store.discardUncommitted(bundle: "com.example.zoo", request: 9, committedBatch: 1, budget: 0))
        XCTAssertEqual(try T.identifiers(store, bundle: "com.example.zoo"), ["old"])
        XCTAssertGreaterThan(try store.connection.scalar("SELECT count(*) FROM items WHERE gen = 9") ?? 0, 1000)

        let next = try StagedWrites(store: store, bundleIdentifier: "com.example.zoo", scope: .replacement(generation: 9))
        XCTAssertEqual(try store.connection.scalar("SELECT count(*) FROM items WHERE gen = 9"), 1, "only the committed row is left")
        try next.put(T.item("new", title: "Next Nilgai"))
        _ = try next.acknowledge()
        XCTAssertEqual(try T.identifiers(store, bundle: "com.example.zoo"), ["kept", "new"])
        XCTAssertEqual(try store.search("kudu").first?.title, "Committed Kudu", "the committed version is restored")
        XCTAssertEqual(try store.integrityCheck(), [])
    }

    func testCommittedBatchesOfAnUnfinishedReplacementSurviveAReopenAndAreKeptByTheResumedAttempt() throws {
        do {
            let store = try open()
            try T.seed(store, bundle: "com.example.zoo", [T.item("old", title: "Obsolete Okapi")])
            let writes = try StagedWrites(store: store, bundleIdentifier: "com.example.zoo", scope: .replacement(generation: 7))
            try writes.put(T.item("r.1", title: "Resumed Rhea"))
            try writes.commitBatch()
            try writes.put(T.item("r.2", title: "Uncommitted Urial"))
            XCTAssertEqual(writes.pendingOperations, 1)
            // The "host" goes away here: no acknowledge, no rollback, the connection just closes.
        }

        let store = try open()
        XCTAssertNil(store.openReport.lostReason)
        XCTAssertEqual(try T.identifiers(store, bundle: "com.example.zoo"), ["old"], "the unfinished replacement became visible")
        XCTAssertEqual(try store.search("rhea").count, 0)

        let resumed = try StagedWrites(store: store, bundleIdentifier: "com.example.zoo", scope: .replacement(generation: 7))
        try resumed.put(T.item("r.3", title: "Resumed Roan"))
        _ = try resumed.acknowledge()

        XCTAssertEqual(try T.identifiers(store, bundle: "com.example.zoo"), ["r.1", "r.3"],
                       "the committed batch of the first attempt must be kept, the uncommitted put dropped, the old item removed")
        XCTAssertEqual(try store.search("rhea").map(\.uniqueIdentifier), ["r.1"])
        XCTAssertEqual(try store.search("urial").count, 0)
        XCTAssertEqual(try store.integrityCheck(), [])
    }

    func testPuttingAnExistingIdentifierReplacesTheItemAndItsSearchText() throws {
        let store = try open()
        try T.seed(store, bundle: "com.example.alpha", [T.item("x", title: "Obsolete heading", domain: "old.domain")])
        try T.seed(store, bundle: "com.example.alpha", [T.item("x", title: "Current heading", domain: "new.domain")])
        let writes = try StagedWrites(store: store, bundleIdentifier: "com.example.alpha", scope: .live)
        try writes.put(T.item("y", title: "Draft caption"))
        try writes.put(T.item("y", title: "Final caption"))
        _ = try writes.acknowledge()

        XCTAssertEqual(try T.identifiers(store, bundle: "com.example.alpha"), ["x", "y"])
        XCTAssertEqual(try store.search("obsolete"), [])
        XCTAssertEqual(try store.search("draft"), [])
        XCTAssertEqual(try store.search("heading").map(\.title), ["Current heading"])
        XCTAssertEqual(try store.search("caption").map(\.title), ["Final caption"])
        XCTAssertEqual(try store.items(bundle: "com.example.alpha", domain: "new.domain").map(\.uniqueIdentifier), ["x"])
        XCTAssertEqual(try store.items(bundle: "com.example.alpha", domain: "old.domain"), [])
        XCTAssertEqual(try store.integrityCheck(), [])
    }

    func testRollbackDiscardsOnlyUncommittedWork() throws {
        let store = try open()
        let writes = try StagedWrites(store: store, bundleIdentifier: "com.example.alpha", scope: .live)
        try writes.put(T.item("kept", title: "Committed Capybara"))
        try writes.commitBatch()
        try writes.put(T.item("dropped", title: "Dropped Dugong"))
        try writes.delete(identifiers: ["kept"])
        try writes.deleteAll()
        writes.rollback()

        XCTAssertFalse(store.connection.isInTransaction)
        XCTAssertEqual(writes.pendingOperations, 0)
        XCTAssertEqual(writes.counts.put, 1)
        XCTAssertEqual(writes.counts.deleted, 0)
        XCTAssertEqual(try T.identifiers(store, bundle: "com.example.alpha"), ["kept"])
        XCTAssertEqual(try store.search("dugong").count, 0)
        XCTAssertEqual(try store.search("capybara").count, 1)
        XCTAssertEqual(try store.integrityCheck(), [])
    }

    // MARK: Crashes and damaged files

    func testSIGKILLDuringALargePutLeavesTheIndexConsistent() throws {
        let bundle = "com.example.put"
        let environment = T.commandEnvironment(scratch: scratch)
        let seeded = try T.runReindex(["--index", databasePath, "put", bundle], scratch: scratch, environment: environment, stdin: """
            {"uniqueIdentifier":"seed.1","attributes":{"title":"Lighthouse keeper"}}
            {"uniqueIdentifier":"seed.2","attributes":{"title":"Harbour master"}}

            """)
        XCTAssertEqual(seeded.status, 0, "\(seeded)")

        let command = try T.RunningCommand(arguments: ["--index", databasePath, "put", bundle], environment: environment,
                                           scratch: scratch, feedsStdin: true)
        let padding = String(repeating: "lorem ipsum ", count: 20)
        var lines = ""
        for n in 1...2500 {
            lines += #"{"uniqueIdentifier":"bulk.\#(n)","attributes":{"title":"Bulk lighthouse \#(n)","textContent":"\#(padding)"}}"# + "\n"
        }
        // Far more than a pipe holds: when this write returns the command has read (and staged)
        // most of it, and it is waiting for more.
        XCTAssertGreaterThan(lines.utf8.count, 512 << 10)
        command.stdin!.fileHandleForWriting.write(Data(lines.utf8))

        // While it waits for input it holds no write transaction: another writer gets the lock
        // (waiting at most for one short group commit).
        let probe = try SQLiteConnection(path: databasePath)
        probe.setBusyTimeout(milliseconds: 10_000)
        try probe.execute("BEGIN IMMEDIATE")
        try probe.execute("ROLLBACK")

        kill(command.process.processIdentifier, SIGKILL)
        let result = command.finish(timeout: 30)
        try? command.stdin!.fileHandleForWriting.close()
        XCTAssertTrue(result.signaled, "\(result)")
        XCTAssertEqual(result.status, SIGKILL)

        let store = try open()
        XCTAssertNil(store.openReport.lostReason)
        XCTAssertEqual(try store.integrityCheck(), [])
        XCTAssertEqual(try T.identifiers(store, bundle: bundle), ["seed.1", "seed.2"])
        XCTAssertEqual(try store.search("lighthouse").map(\.uniqueIdentifier), ["seed.1"])
        XCTAssertEqual(try store.search("bulk").count, 0)
        // And the index takes writes again.
        try T.seed(store, bundle: bundle, [T.item("after", title: "After the crash")])
        XCTAssertEqual(try store.itemCount(bundle: bundle), 3)
    }

    func testTruncatedDatabaseIsMovedAsideAndReported() throws {
        do {
            let store = try open()
            try T.seed(store, bundle: "com.example.alpha", (1...300).map {
                T.item("t.\($0)", title: "Truncation test \($0)", description: String(repeating: "filler text ", count: 30))
            })
        }
        let size = try XCTUnwrap(FileManager.default.attributesOfItem(atPath: databasePath)[.size] as? Int)
        XCTAssertGreaterThan(size, 64 << 10)
        let walSize = (try? FileManager.default.attributesOfItem(atPath: databasePath + "-wal"))?[.size] as? Int ?? 0
        XCTAssertEqual(walSize, 0, "closing the store should have checkpointed the WAL into the database file")
        XCTAssertEqual(truncate(databasePath, off_t(size / 2)), 0)

        let store = try open()
        let report = store.openReport
        let reason = try XCTUnwrap(report.lostReason, "a truncated database was not detected")
        XCTAssertTrue(reason.contains("truncated"), reason)
        let aside = try XCTUnwrap(report.movedAsideTo)
        XCTAssertTrue(aside.contains(".corrupt-"), aside)
        XCTAssertTrue(FileManager.default.fileExists(atPath: aside))
        XCTAssertEqual((try FileManager.default.attributesOfItem(atPath: aside)[.size] as? Int), size / 2)
        XCTAssertTrue(report.created)
        // The fresh index is empty, healthy and usable.
        XCTAssertEqual(try store.itemCount(bundle: "com.example.alpha"), 0)
        XCTAssertEqual(try store.integrityCheck(), [])
        try T.seed(store, bundle: "com.example.alpha", [T.item("new", title: "Fresh start")])
        XCTAssertEqual(try store.search("fresh").count, 1)
    }

    func testGarbageFileIsMovedAsideAndReported() throws {
        var bytes = [UInt8]()
        var x: UInt32 = 12345
        for _ in 0..<8192 { x = x &* 1_103_515_245 &+ 12345; bytes.append(UInt8(truncatingIfNeeded: x >> 16)) }
        try Data(bytes).write(to: URL(fileURLWithPath: databasePath))

        let store = try open()
        let reason = try XCTUnwrap(store.openReport.lostReason, "a garbage file was not detected")
        XCTAssertTrue(reason.contains("not a SQLite database"), reason)
        let aside = try XCTUnwrap(store.openReport.movedAsideTo)
        XCTAssertTrue(aside.contains(".corrupt-"), aside)
        XCTAssertEqual(FileManager.default.contents(atPath: aside).map { [UInt8]($0) }, bytes, "the damaged file must be kept as it was")
        let kept = try FileManager.default.contentsOfDirectory(atPath: scratch).filter { $0.contains(".corrupt-") }
        XCTAssertEqual(kept.count, 1, "\(kept)")
        XCTAssertEqual(try store.integrityCheck(), [])
        XCTAssertEqual(try store.requests(state: .pending), [])
    }

    func testEveryDamagedFileIsKeptEvenWhenTwoAreMovedAsideInOneSecond() throws {
        try T.write("first damaged file\n", to: databasePath)
        let first = try XCTUnwrap(try open().openReport.movedAsideTo)
        try T.write("second damaged file\n", to: databasePath)
        let second = try XCTUnwrap(try open().openReport.movedAsideTo)
        let kept = try FileManager.default.contentsOfDirectory(atPath: scratch).filter { $0.contains(".corrupt-") && !$0.hasSuffix("-wal") && !$0.hasSuffix("-shm") }
        if first == second {
            XCTAssertEqual(T.read(second), "second damaged file\n")
            XCTFail("""
                Regression (was a bug): Sources/ReindexStore/Store/IndexStore.swift moveAside(_:label:): the kept name has a one-second \
                timestamp and rename(2) replaces an existing file, so a second damaged index moved aside within the same \
                second (same for 'reindex reset') silently overwrites the first kept copy (\(first)); expected both kept \
                ("kept for inspection"), actual: \(kept.count) file(s) kept.
                """)
            return
        }
        XCTAssertEqual(kept.count, 2, "\(kept)")
        XCTAssertEqual(T.read(first), "first damaged file\n")
        XCTAssertEqual(T.read(second), "second damaged file\n")
    }

    func testShortGarbageFileIsMovedAside() throws {
        try T.write("this is not a database\n", to: databasePath)
        let store = try open()
        XCTAssertNotNil(store.openReport.lostReason)
        XCTAssertTrue(store.openReport.movedAsideTo?.contains(".corrupt-") ?? false)
        XCTAssertEqual(try store.integrityCheck(), [])
    }

    func testAnIndexFromANewerSchemaIsRefusedAndLeftAlone() throws {
        do { try T.seed(try open(), bundle: "com.example.alpha", [T.item("a", title: "Alpha")]) }
        do {
            let connection = try SQLiteConnection(path: databasePath)
            try connection.execute("PRAGMA user_version = 99")
        }
        XCTAssertThrowsError(try open()) { error in
            XCTAssertTrue("\(error)".contains("newer reindex"), "\(error)")
        }
        XCTAssertTrue(try FileManager.default.contentsOfDirectory(atPath: scratch).allSatisfy { !$0.contains(".corrupt-") },
                      "an index from a newer version must not be moved aside as if it were damaged")
    }

    func testDamagedPagesAreDetectedByOpenOrByTheIntegrityCheck() throws {
        do {
            try T.seed(try open(), bundle: "com.example.alpha", (1...300).map {
                T.item("p.\($0)", title: "Page damage \($0)", description: String(repeating: "filler text ", count: 30))
            })
        }
        let handle = try XCTUnwrap(FileHandle(forUpdatingAtPath: databasePath))
        let size = try handle.seekToEnd()
        try handle.seek(toOffset: size / 2)
        try handle.write(contentsOf: Data(repeating: 0xA5, count: Int(size / 4)))
        try handle.close()

        let store = try open()
        if store.openReport.lostReason != nil {
            XCTAssertTrue(store.openReport.movedAsideTo?.contains(".corrupt-") ?? false)
            return
        }
        // Not noticed at open (only the header and two tables are touched there): the integrity
        // check must report it, as a list of problems ("an empty list means healthy").
        let problems: [String]
        do throws(SQLiteError) {
            problems = try store.integrityCheck()
        } catch {
            XCTAssertTrue(error.isCorruption, "\(error)")
            XCTFail("""
                Regression (was a bug): Sources/ReindexStore/Store/IndexStore.swift integrityCheck(quick:): on an index whose pages are \
                damaged (a good index with its middle quarter overwritten), PRAGMA integrity_check fails with \
                SQLITE_CORRUPT and integrityCheck throws it instead of returning it as a problem; so 'reindex check' \
                exits 70 ("error: PRAGMA integrity_check: database disk image is malformed") instead of 65 with \
                "the index … is damaged; run 'reindex reset'". Expected: [the corruption message], actual: throws \(error).
                """)
            return
        }
        XCTAssertFalse(problems.isEmpty, "damaged pages were noticed neither at open nor by the integrity check")
    }

    func testHealthyDatabaseIsNotReportedLost() throws {
        do { try T.seed(try open(), bundle: "com.example.alpha", [T.item("a", title: "Alpha")]) }
        let store = try open()
        XCTAssertNil(store.openReport.lostReason)
        XCTAssertNil(store.openReport.movedAsideTo)
        XCTAssertFalse(store.openReport.created)
        XCTAssertEqual(try store.itemCount(bundle: "com.example.alpha"), 1)
        XCTAssertTrue(try FileManager.default.contentsOfDirectory(atPath: scratch).allSatisfy { !$0.contains(".corrupt-") })
    }

    // MARK: The request queue

    func testPendingReindexAllAbsorbsReindexItems() throws {
        let store = try open()
        let all = try store.enqueue(bundleIdentifier: "com.example.alpha", kind: .reindexAll, reason: .forced)
        let items = try store.enqueue(bundleIdentifier: "com.example.alpha", kind: .reindexItems, identifiers: ["x"], reason: .forced)
        XCTAssertEqual(items.id, all.id)
        XCTAssertEqual(items.kind, .reindexAll)
        XCTAssertEqual(try store.requests(bundle: "com.example.alpha", state: .pending).map(\.id), [all.id])
    }

    func testReindexAllReplacesPendingReindexItems() throws {
        let store = try open()
        try store.enqueue(bundleIdentifier: "com.example.alpha", kind: .reindexItems, identifiers: ["x"], reason: .forced)
        let all = try store.enqueue(bundleIdentifier: "com.example.alpha", kind: .reindexAll, reason: .bundleChanged)
        let pending = try store.requests(bundle: "com.example.alpha", state: .pending)
        XCTAssertEqual(pending.map(\.id), [all.id])
        XCTAssertEqual(pending.first?.kind, .reindexAll)
    }

    func testPendingReindexItemsMergeIdentifiersWithoutDuplicates() throws {
        let store = try open()
        let first = try store.enqueue(bundleIdentifier: "com.example.alpha", kind: .reindexItems, identifiers: ["a", "b"], reason: .forced)
        let second = try store.enqueue(bundleIdentifier: "COM.Example.Alpha", kind: .reindexItems, identifiers: ["b", "c", "a", "d"], reason: .forced)
        XCTAssertEqual(second.id, first.id)
        XCTAssertEqual(second.identifiers, ["a", "b", "c", "d"])
        let pending = try store.requests(bundle: "com.example.alpha", state: .pending)
        XCTAssertEqual(pending.count, 1)
        XCTAssertEqual(pending.first?.identifiers, ["a", "b", "c", "d"])
        // Another bundle's request is its own.
        let other = try store.enqueue(bundleIdentifier: "com.example.beta", kind: .reindexItems, identifiers: ["a"], reason: .forced)
        XCTAssertNotEqual(other.id, first.id)
        XCTAssertEqual(try store.request(first.id)?.identifiers, ["a", "b", "c", "d"])
    }

    func testWithoutCoalescingEveryRequestIsSeparate() throws {
        let store = try open()
        let a = try store.enqueue(bundleIdentifier: "com.example.alpha", kind: .reindexItems, identifiers: ["a"], reason: .forced, coalesce: false)
        let b = try store.enqueue(bundleIdentifier: "com.example.alpha", kind: .reindexItems, identifiers: ["a"], reason: .forced, coalesce: false)
        let c = try store.enqueue(bundleIdentifier: "com.example.alpha", kind: .reindexAll, reason: .forced, coalesce: false)
        XCTAssertEqual(Set([a.id, b.id, c.id]).count, 3)
        let pending = try store.requests(bundle: "com.example.alpha", state: .pending)
        XCTAssertEqual(pending.map(\.id), [a.id, b.id, c.id])
        XCTAssertEqual(pending.map(\.identifiers), [["a"], ["a"], []])
    }

    func testARunningRequestIsNotCoalescedWith() throws {
        let store = try open()
        let running = try store.enqueue(bundleIdentifier: "com.example.alpha", kind: .reindexAll, reason: .forced)
        XCTAssertEqual(try store.markRunning(running.id)?.state, .running)
        let next = try store.enqueue(bundleIdentifier: "com.example.alpha", kind: .reindexItems, identifiers: ["z"], reason: .forced)
        XCTAssertNotEqual(next.id, running.id)
        XCTAssertEqual(try store.request(running.id)?.state, .running)
    }

    func testBackoffGrowsExponentiallyAndIsCapped() {
        let backoff = Backoff(baseSeconds: 5, maximumSeconds: 3600)
        XCTAssertEqual(backoff.delay(afterAttempt: 1), 5)
        XCTAssertEqual(backoff.delay(afterAttempt: 2), 10)
        XCTAssertEqual(backoff.delay(afterAttempt: 3), 20)
        XCTAssertEqual(backoff.delay(afterAttempt: 4), 40)
        XCTAssertEqual(backoff.delay(afterAttempt: 10), 2560)
        XCTAssertEqual(backoff.delay(afterAttempt: 11), 3600)
        XCTAssertEqual(backoff.delay(afterAttempt: 64), 3600)
        XCTAssertEqual(backoff.delay(afterAttempt: 1_000_000), 3600)
        XCTAssertEqual(backoff.delay(afterAttempt: 0), 5)
        let delays = (1...15).map { backoff.delay(afterAttempt: $0) }
        XCTAssertEqual(delays, delays.sorted(), "delays never shrink")
    }

    func testFailedAttemptsBackOffThenFailForGood() throws {
        let store = try open()
        let backoff = Backoff(baseSeconds: 5, maximumSeconds: 3600)
        let queued = try store.enqueue(bundleIdentifier: "com.example.alpha", kind: .reindexItems, identifiers: ["a"], reason: .forced, maxAttempts: 2)
        let now = Clock.now()

        XCTAssertEqual(try store.markRunning(queued.id)?.attempts, 1)
        let first = try XCTUnwrap(try store.markAttemptFailed(queued.id, error: "crashed once", backoff: backoff, now: now))
        XCTAssertEqual(first.state, .pending)
        XCTAssertEqual(first.attempts, 1)
        XCTAssertEqual(first.lastError, "crashed once")
        XCTAssertEqual(first.nextAttempt, now + 5, accuracy: 0.001)
        XCTAssertNil(try store.nextDueRequest(now: now + 1, excludingBundles: []), "a backed-off request is not due yet")
        XCTAssertEqual(try store.nextDueRequest(now: now + 6, excludingBundles: [])?.id, queued.id)
        XCTAssertNil(try store.nextDueRequest(now: now + 6, excludingBundles: ["com.example.alpha"]))
        XCTAssertEqual(try XCTUnwrap(try store.nextDueTime()), now + 5, accuracy: 0.001)
        // A busy bundle's due request does not make the earliest due time (serve would spin).
        let beta = try store.enqueue(bundleIdentifier: "com.example.Beta", kind: .reindexAll, reason: .forced)
        XCTAssertEqual(try XCTUnwrap(try store.nextDueTime()), beta.nextAttempt, accuracy: 0.001)
        XCTAssertEqual(try XCTUnwrap(try store.nextDueTime(excludingBundles: ["com.example.beta"])), now + 5, accuracy: 0.001)
        XCTAssertNil(try store.nextDueTime(excludingBundles: ["com.example.alpha", "com.example.beta"]))
        try store.markDone(beta.id)

        XCTAssertEqual(try store.markRunning(queued.id)?.attempts, 2)
        let second = try XCTUnwrap(try store.markAttemptFailed(queued.id, error: "crashed twice", backoff: backoff, now: now + 10))
        XCTAssertEqual(second.state, .failed)
        XCTAssertEqual(second.lastError, "crashed twice")
        XCTAssertEqual(try store.requests(state: .failed).map(\.id), [queued.id])
        XCTAssertNil(try store.nextDueRequest(now: now + 100_000, excludingBundles: []))
        XCTAssertEqual(try store.status(bundle: "com.example.alpha").failedReasons, ["crashed twice"])
    }

    func testAFailedReindexAllDiscardsItsStagedGeneration() throws {
        let store = try open()
        try T.seed(store, bundle: "com.example.alpha", [T.item("live", title: "Living Lemur")])
        let queued = try store.enqueue(bundleIdentifier: "com.example.alpha", kind: .reindexAll, reason: .forced, maxAttempts: 2)
        func stagedRows() throws -> Int64? {
            try store.connection.scalar("SELECT count(*) FROM items WHERE bundle = 'com.example.alpha' AND gen = \(queued.id)")
        }

        _ = try store.markRunning(queued.id)
        let writes = try StagedWrites(store: store, bundleIdentifier: "com.example.alpha", scope: .replacement(generation: queued.id))
        try writes.put(T.item("staged", title: "Staged Serval"))
        try writes.commitBatch { (store) throws(SQLiteError) in try store.saveClientState(queued.id, "c3RhdGU=") }
        XCTAssertEqual(try stagedRows(), 1)

        // An attempt that is retried keeps its committed batch (and client state) for resuming.
        XCTAssertEqual(try store.markAttemptFailed(queued.id, error: "refused", backoff: Backoff())?.state, .pending)
        XCTAssertEqual(try stagedRows(), 1)
        XCTAssertEqual(try store.request(queued.id)?.clientState, "c3RhdGU=")

        // The last attempt failing throws the staged generation away; the live items stay.
        _ = try store.markRunning(queued.id)
        XCTAssertEqual(try store.markAttemptFailed(queued.id, error: "refused again", backoff: Backoff())?.state, .failed)
        XCTAssertEqual(try stagedRows(), 0)
        XCTAssertEqual(try T.identifiers(store, bundle: "com.example.alpha"), ["live"])
        XCTAssertEqual(try store.search("serval").count, 0)
        XCTAssertEqual(try store.integrityCheck(), [])
    }

    func testRecoverAbandonedPutsRunningRequestsBackToPending() throws {
        let store = try open()
        let mine = try store.enqueue(bundleIdentifier: "com.example.alpha", kind: .reindexAll, reason: .forced)
        let theirs = try store.enqueue(bundleIdentifier: "com.example.beta", kind: .reindexAll, reason: .forced)
        _ = try store.markRunning(mine.id)
        _ = try store.markRunning(theirs.id)

        try store.recoverAbandoned(bundle: "COM.EXAMPLE.ALPHA")
        let recovered = try XCTUnwrap(try store.request(mine.id))
        XCTAssertEqual(recovered.state, .pending)
        XCTAssertEqual(recovered.attempts, 1, "the abandoned attempt still counts")
        XCTAssertEqual(recovered.lastError, "the host stopped while the request was running")
        XCTAssertEqual(try store.request(theirs.id)?.state, .running, "another bundle's request was touched")
    }

    func testRecordRunAndLastRun() throws {
        let store = try open()
        XCTAssertNil(try store.lastRun(bundle: "com.example.alpha"))
        let first = RunRecord(requestID: 1, bundleIdentifier: "com.example.alpha", kind: .reindexAll, reason: .forced,
                              started: 100, ended: 101, outcome: "crashed", counts: WriteCounts(put: 1), error: "it crashed")
        let second = RunRecord(requestID: nil, bundleIdentifier: "com.example.Alpha", kind: .reindexItems, reason: .expiring,
                               started: 200, ended: 202.5, outcome: "acknowledged", counts: WriteCounts(put: 3, deleted: 2, rejected: 1), error: nil)
        let other = RunRecord(requestID: 9, bundleIdentifier: "com.example.beta", kind: .reindexAll, reason: .indexLost,
                              started: 300, ended: 301, outcome: "acknowledged", counts: WriteCounts(), error: nil)
        try store.recordRun(first)
        try store.recordRun(second)
        try store.recordRun(other)

        var expected = second
        expected.bundleIdentifier = "com.example.alpha"
        XCTAssertEqual(try store.lastRun(bundle: "COM.EXAMPLE.ALPHA"), expected)
        XCTAssertEqual(try store.lastRun(bundle: "com.example.beta")?.reason, .indexLost)
        XCTAssertEqual(try store.status(bundle: "com.example.alpha").lastRun?.counts, WriteCounts(put: 3, deleted: 2, rejected: 1))
        XCTAssertNil(try store.lastRun(bundle: "com.example.gamma"))
    }

    // MARK: Domains and bundles

    func testDeletingADomainTakesItsSubdomainsButNotASiblingWithTheSamePrefix() throws {
        let store = try open()
        let index = LocalIndex(store: store, bundleIdentifier: "com.example.alpha")
        try T.seed(store, bundle: "com.example.alpha", [
            T.item("exact", title: "Domain exact", domain: "a.b"),
            T.item("child", title: "Domain child", domain: "a.b.c"),
            T.item("grandchild", title: "Domain grandchild", domain: "a.b.c.d"),
            T.item("sibling", title: "Domain sibling", domain: "a.bc"),
            T.item("slash", title: "Domain slash", domain: "a.b/c"),
            T.item("parent", title: "Domain parent", domain: "a"),
            T.item("none", title: "Domain none"),
        ])

        XCTAssertEqual(try store.search("domain", domain: "a.b").map(\.uniqueIdentifier).sorted(), ["child", "exact", "grandchild"])
        XCTAssertEqual(try store.items(bundle: "com.example.alpha", domain: "a.b").map(\.uniqueIdentifier), ["child", "exact", "grandchild"])

        XCTAssertEqual(try index.delete(domainIdentifiers: ["a.b"]), 3)
        XCTAssertEqual(try T.identifiers(store, bundle: "com.example.alpha"), ["none", "parent", "sibling", "slash"])
        XCTAssertEqual(try store.integrityCheck(), [])
    }

    func testBundlesWithTheSameIdentifiersNeverTouchEachOthersItems() throws {
        let store = try open()
        let alpha = LocalIndex(store: store, bundleIdentifier: "com.example.alpha")
        let beta = LocalIndex(store: store, bundleIdentifier: "com.example.beta")
        func betaItems() throws -> [SearchResult] { try store.items(bundle: "com.example.beta") }

        try T.seed(store, bundle: "com.example.alpha", [T.item("shared.1", title: "Alpha copy", domain: "d"), T.item("shared.2", title: "Alpha second", domain: "d.e")])
        try T.seed(store, bundle: "com.example.beta", [T.item("shared.1", title: "Beta copy", domain: "d"), T.item("shared.2", title: "Beta second", domain: "d.e")])
        let before = try betaItems()
        XCTAssertEqual(before.map(\.uniqueIdentifier), ["shared.1", "shared.2"])

        try T.seed(store, bundle: "com.example.alpha", [T.item("shared.1", title: "Alpha replaced", domain: "d")])
        XCTAssertEqual(try betaItems(), before, "a put replaced another bundle's item")
        XCTAssertEqual(try alpha.delete(identifiers: ["shared.1"]), 1)
        XCTAssertEqual(try betaItems(), before, "a delete removed another bundle's item")
        XCTAssertEqual(try alpha.delete(domainIdentifiers: ["d"]), 1)
        XCTAssertEqual(try betaItems(), before, "deleteDomains removed another bundle's items")
        try T.seed(store, bundle: "com.example.alpha", [T.item("shared.3", title: "Alpha third")])
        XCTAssertEqual(try alpha.deleteAll(), 1)
        XCTAssertEqual(try betaItems(), before, "deleteAll removed another bundle's items")

        // A replacement of alpha removes only alpha's items it did not put.
        try T.seed(store, bundle: "com.example.alpha", [T.item("shared.1", title: "Alpha again")])
        let replacement = try StagedWrites(store: store, bundleIdentifier: "com.example.alpha", scope: .replacement(generation: 99))
        try replacement.put(T.item("other", title: "Alpha other"))
        _ = try replacement.acknowledge()
        XCTAssertEqual(try T.identifiers(store, bundle: "com.example.alpha"), ["other"])
        XCTAssertEqual(try betaItems(), before, "a replacement removed another bundle's items")

        XCTAssertEqual(try beta.search("copy").map(\.title), ["Beta copy"])
        XCTAssertEqual(try store.search("copy").map(\.bundleIdentifier), ["com.example.beta"])
        // Bundle identifiers compare case-insensitively.
        XCTAssertEqual(try store.items(bundle: "COM.EXAMPLE.BETA").count, 2)
    }

    // MARK: Search

    private func seedSearchCorpus(_ store: IndexStore) throws {
        try T.seed(store, bundle: "com.example.people", [
            T.item("ada", title: "Ada Park", description: "Engineering · Staff Engineer", domain: "people.eng"),
            T.item("zoe", title: "Zoë Müller", description: "Design lead", domain: "people.design"),
            T.item("quasar.title", title: "Quasar survey", description: "telescope data"),
            T.item("quasar.description", title: "Telescope notes", description: "about a quasar"),
            T.item("expired", title: "Expired voucher", expires: "2001-01-01T00:00:00Z"),
            T.item("future", title: "Future voucher", expires: "2999-01-01T00:00:00Z"),
        ])
        try T.seed(store, bundle: "com.example.places", [
            T.item("park", title: "Central Park", description: "a park in the city", domain: "places.parks"),
        ])
    }

    func testSearchFindsWordsPrefixesAndIgnoresCaseAndDiacritics() throws {
        let store = try open()
        try seedSearchCorpus(store)
        func ids(_ query: String) throws -> [String] { try store.search(query, bundle: "com.example.people").map(\.uniqueIdentifier).sorted() }

        XCTAssertEqual(try ids("park"), ["ada"])
        XCTAssertEqual(try ids("eng*"), ["ada"])
        XCTAssertEqual(try ids("eng"), ["ada"], "a partial word finds by prefix")
        XCTAssertEqual(try ids("staff eng"), ["ada"], "every word must match, each as a prefix")
        XCTAssertEqual(try ids("staff design"), [])
        XCTAssertEqual(try ids("zoe"), ["zoe"])
        XCTAssertEqual(try ids("ZOË"), ["zoe"])
        XCTAssertEqual(try ids("MULLER"), ["zoe"])
        XCTAssertEqual(try ids("müller"), ["zoe"])
        XCTAssertEqual(try ids("mul"), ["zoe"])
        XCTAssertEqual(try ids("\"park\""), ["ada"], "quotes are text, not syntax")
    }

    func testSearchRanksATitleMatchAboveADescriptionMatch() throws {
        let store = try open()
        try seedSearchCorpus(store)
        let results = try store.search("quasar")
        XCTAssertEqual(results.map(\.uniqueIdentifier), ["quasar.title", "quasar.description"])
        XCTAssertGreaterThan(try XCTUnwrap(results.first?.score), try XCTUnwrap(results.last?.score))
        XCTAssertEqual(results.first?.title, "Quasar survey")
    }

    func testSearchExcludesExpiredItems() throws {
        let store = try open()
        try seedSearchCorpus(store)
        XCTAssertEqual(try store.search("voucher").map(\.uniqueIdentifier), ["future"])
        XCTAssertFalse(try store.items(bundle: "com.example.people").map(\.uniqueIdentifier).contains("expired"))
        XCTAssertEqual(try store.itemCount(bundle: "com.example.people"), 5)
        let later = try XCTUnwrap(RFC3339.parse("3000-01-01T00:00:00Z"))
        XCTAssertEqual(try store.search("voucher", now: later), [])
    }

    func testSearchFiltersByBundleAndDomain() throws {
        let store = try open()
        try seedSearchCorpus(store)
        XCTAssertEqual(try store.search("park").map(\.uniqueIdentifier).sorted(), ["ada", "park"])
        XCTAssertEqual(try store.search("park", bundle: "com.example.places").map(\.uniqueIdentifier), ["park"])
        XCTAssertEqual(try store.search("park", bundle: "COM.EXAMPLE.PEOPLE").map(\.uniqueIdentifier), ["ada"])
        XCTAssertEqual(try store.search("park", bundle: "com.example.nobody"), [])
        XCTAssertEqual(try store.search("park", domain: "places").map(\.uniqueIdentifier), ["park"])
        XCTAssertEqual(try store.search("park", domain: "people").map(\.uniqueIdentifier), ["ada"])
        XCTAssertEqual(try store.search("park", domain: "peop"), [], "a domain filter is not a prefix of a label")
        XCTAssertEqual(try store.search("park", bundle: "com.example.people", domain: "places"), [])
        XCTAssertEqual(try store.search("park", limit: 1).count, 1)
        let result = try XCTUnwrap(try store.search("zoe").first)
        XCTAssertEqual(result.bundleIdentifier, "com.example.people")
        XCTAssertEqual(result.domainIdentifier, "people.design")
        XCTAssertEqual(result.attributes["contentDescription"]?.stringValue, "Design lead")
    }

    func testQueriesWithQuotesAndOperatorsDoNotFail() throws {
        let store = try open()
        try seedSearchCorpus(store)
        let queries = [
            "\"", "\"park", "park\"", "\"\"", "'", "park AND", "AND", "OR park", "NOT", "NOT park", "park NOT ada",
            "NEAR(park ada)", "(", ")", "park)", "*", "**", "park*", "title:park", "^park", "-park", "+park", "park -",
            "{park}", "[park]", "a'b", "ada's", "park OR ada", "ü", "🙂", "\u{0}", "\\", "%", "_", "ada@example.com", "",
            "   ", String(repeating: "park ", count: 200),
        ]
        for query in queries {
            XCTAssertNoThrow(try store.search(query), "query \(query.debugDescription) failed")
        }
        XCTAssertEqual(try store.search("NOT park").map(\.uniqueIdentifier), [], "NOT is a word to find, not an operator")
        XCTAssertEqual(try store.search("park)").map(\.uniqueIdentifier).sorted(), ["ada", "park"])
    }

    // MARK: LocalIndex

    func testLocalIndexAPI() throws {
        XCTAssertThrowsError(try LocalIndex(path: databasePath, bundleIdentifier: "not an identifier")) { error in
            XCTAssertEqual((error as? ReindexError)?.code, .usage)
        }
        let index = try LocalIndex(path: databasePath, bundleIdentifier: "com.example.colleagues")
        let counts = try index.put([
            SearchableItem(uniqueIdentifier: "employee.1", domainIdentifier: "staff.eng",
                           attributes: SearchableItemAttributes(title: "Ada Park", contentDescription: "Staff Engineer", keywords: ["compilers"])),
            SearchableItem(uniqueIdentifier: "employee.2", domainIdentifier: "staff.sales",
                           attributes: SearchableItemAttributes(title: "Bo Lind", contentDescription: "Account Executive")),
            SearchableItem(uniqueIdentifier: "employee.3", domainIdentifier: "staff.eng.infra",
                           attributes: SearchableItemAttributes(title: "Cy Moss", contentDescription: "Site Reliability")),
            SearchableItem(uniqueIdentifier: "employee.4", attributes: SearchableItemAttributes(title: "Di Wu", authors: ["Di Wu"])),
        ])
        XCTAssertEqual(counts.put, 4)
        XCTAssertEqual(try index.search("compilers").map(\.uniqueIdentifier), ["employee.1"])
        XCTAssertEqual(try index.search("ada").first?.attributes["keywords"], .array(["compilers"]))

        // Another connection sees each call's result at once.
        let other = try open()
        XCTAssertEqual(try other.itemCount(bundle: "com.example.colleagues"), 4)

        // One invalid item: nothing of the call is written.
        XCTAssertThrowsError(try index.put([
            SearchableItem(uniqueIdentifier: "employee.5", attributes: SearchableItemAttributes(title: "Eve Ng")),
            SearchableItem(uniqueIdentifier: "", attributes: SearchableItemAttributes(title: "Nobody")),
        ])) { error in
            XCTAssertEqual((error as? ReindexError)?.code, .invalidData)
            XCTAssertTrue((error as? ReindexError)?.message.contains("com.example.colleagues") ?? false, "\(error)")
        }
        XCTAssertEqual(try other.itemCount(bundle: "com.example.colleagues"), 4)

        XCTAssertEqual(try index.delete(identifiers: ["employee.2", "no.such.item"]), 1)
        XCTAssertEqual(try index.delete(domainIdentifiers: ["staff.eng"]), 2)
        XCTAssertEqual(try T.identifiers(other, bundle: "com.example.colleagues"), ["employee.4"])
        XCTAssertEqual(try index.deleteAll(), 1)
        XCTAssertEqual(try other.itemCount(bundle: "com.example.colleagues"), 0)
        XCTAssertEqual(try index.search("di"), [])
        XCTAssertEqual(try other.integrityCheck(), [])
    }
}
