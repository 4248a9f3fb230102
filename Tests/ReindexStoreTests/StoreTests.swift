import Foundation
@testable import ReindexHost
import ReindexSystem
@testable import ReindexStore
import ReindexProtocol
import ReindexTestSupport
import XCTest

/// The index store's guarantees, each written once against `any IndexBackend` and run on both
/// indexes — a real SQLite file in a scratch directory and a fresh schema of the PostgreSQL server
/// the tests start: staged writes and generations, the replacement of `reindexAll`, batches with
/// their client state and resuming, a bundle writing only its own items, the request queue and
/// its backoff, run history, the bundle registry, expiry and purges, search, listings and status,
/// recovery. What only a SQLite file has (damage, its write lock, the direct-indexing API) is in
/// `SQLiteStoreTests`.
final class StoreTests: XCTestCase, @unchecked Sendable {
    private typealias T = TestSupport

    override func setUpWithError() throws {
        signal(SIGPIPE, SIG_IGN)
    }

    // MARK: Staged writes

    func testLiveWritesAreInvisibleToOtherConnectionsUntilCommitted() throws {
        for index in try TestIndex.both(for: self) {
            let n = index.name
            let writer = try index.open()
            let reader = try index.open()
            let writes = try writer.writer("com.example.alpha", .live)

            try writes.put(T.item("a.1", title: "Quokka census"))
            XCTAssertEqual(try reader.search("quokka").count, 0, "\(n): an uncommitted put is visible to another connection")
            XCTAssertEqual(try reader.itemCount(bundle: "com.example.alpha"), 0, n)

            XCTAssertEqual(try writes.commitBatch(), 1, n)
            XCTAssertEqual(try reader.search("quokka").map(\.uniqueIdentifier), ["a.1"], n)

            try writes.put(T.item("a.2", title: "Quokka sightings"))
            try writes.delete(identifiers: ["a.1"])
            XCTAssertEqual(try reader.search("quokka").map(\.uniqueIdentifier), ["a.1"], "\(n): uncommitted put and delete leaked")

            let counts = try writes.acknowledge()
            XCTAssertEqual(counts, WriteCounts(put: 2, deleted: 1, rejected: 0), n)
            XCTAssertEqual(try reader.search("quokka").map(\.uniqueIdentifier), ["a.2"], n)
        }
    }

    func testReindexAllKeepsOldItemsUntilAcknowledgedThenRemovesWhatItDidNotPut() throws {
        for index in try TestIndex.both(for: self) {
            let n = index.name
            let store = try index.open()
            let reader = try index.open()
            try T.seed(store, bundle: "com.example.zoo", [
                T.item("walrus", title: "Walrus"),
                T.item("narwhal", title: "Narwhal", description: "original tusk"),
            ])

            let writes = try store.writer("com.example.zoo", .replacement(generation: 42))
            try writes.put(T.item("narwhal", title: "Narwhal", description: "replacement tusk"))
            try writes.put(T.item("beluga", title: "Beluga"))
            try writes.commitBatch()

            // Committed, durable, and still invisible: searches see exactly the previous items.
            XCTAssertEqual(try T.identifiers(reader, bundle: "com.example.zoo"), ["narwhal", "walrus"], n)
            XCTAssertEqual(try reader.search("beluga").count, 0, n)
            XCTAssertEqual(try reader.search("walrus").count, 1, n)
            XCTAssertEqual(try reader.search("original").map(\.uniqueIdentifier), ["narwhal"], n)
            XCTAssertEqual(try reader.search("replacement").count, 0, n)

            let counts = try writes.acknowledge()
            XCTAssertEqual(counts.put, 2, n)
            XCTAssertEqual(counts.deleted, 1, "\(n): the item the replacement did not put is counted as deleted")
            XCTAssertEqual(counts.removed, 1, n)
            XCTAssertEqual(try T.identifiers(reader, bundle: "com.example.zoo"), ["beluga", "narwhal"], n)
            XCTAssertEqual(try reader.search("walrus").count, 0, n)
            XCTAssertEqual(try reader.search("original").count, 0, n)
            XCTAssertEqual(try reader.search("replacement").map(\.uniqueIdentifier), ["narwhal"], n)
            XCTAssertEqual(try reader.rowCount("SELECT count(*) FROM items WHERE bundle = 'com.example.zoo'"), 2,
                           "\(n): the replaced generation's rows are gone")
            reader.assertHealthy(n)
        }
    }

    func testCommittedBatchesOfAnUnfinishedReplacementSurviveAReopenAndAreKeptByTheResumedAttempt() throws {
        for index in try TestIndex.both(for: self) {
            let n = index.name
            do {
                let store = try index.open()
                try T.seed(store, bundle: "com.example.zoo", [T.item("old", title: "Obsolete Okapi")])
                let writes = try store.writer("com.example.zoo", .replacement(generation: 7))
                try writes.put(T.item("r.1", title: "Resumed Rhea"))
                try writes.commitBatch()
                try writes.put(T.item("r.2", title: "Uncommitted Urial"))
                try writes.flush()
                // The "host" goes away here: no acknowledge, no rollback, the connection just closes.
            }

            let store = try index.open()
            XCTAssertNil((store as? IndexStore)?.openReport.lostReason, n)
            XCTAssertEqual(try T.identifiers(store, bundle: "com.example.zoo"), ["old"], "\(n): the unfinished replacement became visible")
            XCTAssertEqual(try store.search("rhea").count, 0, n)

            let resumed = try store.writer("com.example.zoo", .replacement(generation: 7))
            try resumed.put(T.item("r.3", title: "Resumed Roan"))
            _ = try resumed.acknowledge()

            XCTAssertEqual(try T.identifiers(store, bundle: "com.example.zoo"), ["r.1", "r.3"],
                           "\(n): the committed batch of the first attempt must be kept, the uncommitted put dropped, the old item removed")
            XCTAssertEqual(try store.search("rhea").map(\.uniqueIdentifier), ["r.1"], n)
            XCTAssertEqual(try store.search("urial").count, 0, n)
            store.assertHealthy(n)
        }
    }

    func testPuttingAnExistingIdentifierReplacesTheItemAndItsSearchText() throws {
        for index in try TestIndex.both(for: self) {
            let n = index.name
            let store = try index.open()
            try T.seed(store, bundle: "com.example.alpha", [T.item("x", title: "Obsolete heading", domain: "old.domain")])
            try T.seed(store, bundle: "com.example.alpha", [T.item("x", title: "Current heading", domain: "new.domain")])
            let writes = try store.writer("com.example.alpha", .live)
            try writes.put(T.item("y", title: "Draft caption"))
            try writes.put(T.item("y", title: "Final caption"))
            _ = try writes.acknowledge()

            XCTAssertEqual(try T.identifiers(store, bundle: "com.example.alpha"), ["x", "y"], n)
            XCTAssertEqual(try store.search("obsolete"), [], n)
            XCTAssertEqual(try store.search("draft"), [], n)
            XCTAssertEqual(try store.search("heading").map(\.title), ["Current heading"], n)
            XCTAssertEqual(try store.search("caption").map(\.title), ["Final caption"], n)
            XCTAssertEqual(try store.items(bundle: "com.example.alpha", domain: "new.domain").map(\.uniqueIdentifier), ["x"], n)
            XCTAssertEqual(try store.items(bundle: "com.example.alpha", domain: "old.domain"), [], n)
            store.assertHealthy(n)
        }
    }

    func testRollbackDiscardsOnlyUncommittedWork() throws {
        for index in try TestIndex.both(for: self) {
            let n = index.name
            let store = try index.open()
            let writes = try store.writer("com.example.alpha", .live)
            try writes.put(T.item("kept", title: "Committed Capybara"))
            try writes.commitBatch()
            try writes.put(T.item("dropped", title: "Dropped Dugong"))
            try writes.delete(identifiers: ["kept"])
            try writes.deleteAll()
            writes.rollback()

            XCTAssertFalse(store.inTransaction, n)
            XCTAssertFalse(writes.hasOpenGroup, n)
            XCTAssertEqual(writes.counts.put, 1, n)
            XCTAssertEqual(writes.counts.deleted, 0, n)
            XCTAssertEqual(try T.identifiers(store, bundle: "com.example.alpha"), ["kept"], n)
            XCTAssertEqual(try store.search("dugong").count, 0, n)
            XCTAssertEqual(try store.search("capybara").count, 1, n)
            store.assertHealthy(n)
        }
    }

    func testAReplacementRecordsItsDeclarationsWhenAcknowledged() throws {
        let declarations = try AttributeDeclaration.parseAll(JSONParser.parse(text: #"{"team": {"type": "string", "searchableByDefault": true}}"#))
        for index in try TestIndex.both(for: self) {
            let n = index.name
            let store = try index.open()
            let writes = try store.writer("com.example.alpha", .replacement(generation: 3), declarations: declarations)
            try writes.put(T.item("a", title: "Ada", extra: [("team", .string("Compilers"))]))
            try writes.commitBatch()
            XCTAssertEqual(try store.declarations(bundle: "com.example.alpha"), [:], "\(n): declarations of an unacknowledged replacement are in effect")
            _ = try writes.acknowledge()
            XCTAssertEqual(try store.declarations(bundle: "com.example.alpha"), declarations, n)
            // A later live writer sees the declarations in effect.
            XCTAssertEqual(try store.writer("com.example.alpha", .live).declarations, declarations, n)
        }
    }

    // MARK: The request queue

    func testPendingReindexAllAbsorbsReindexItems() throws {
        for index in try TestIndex.both(for: self) {
            let n = index.name
            let store = try index.open()
            let all = try store.enqueue(bundleIdentifier: "com.example.alpha", kind: .reindexAll, reason: .forced)
            let items = try store.enqueue(bundleIdentifier: "com.example.alpha", kind: .reindexItems, identifiers: ["x"], reason: .forced)
            XCTAssertEqual(items.id, all.id, n)
            XCTAssertEqual(items.kind, .reindexAll, n)
            XCTAssertEqual(try store.requests(bundle: "com.example.alpha", state: .pending).map(\.id), [all.id], n)
        }
    }

    func testReindexAllReplacesPendingReindexItems() throws {
        for index in try TestIndex.both(for: self) {
            let n = index.name
            let store = try index.open()
            try store.enqueue(bundleIdentifier: "com.example.alpha", kind: .reindexItems, identifiers: ["x"], reason: .forced)
            let all = try store.enqueue(bundleIdentifier: "com.example.alpha", kind: .reindexAll, reason: .bundleChanged)
            let pending = try store.requests(bundle: "com.example.alpha", state: .pending)
            XCTAssertEqual(pending.map(\.id), [all.id], n)
            XCTAssertEqual(pending.first?.kind, .reindexAll, n)
            XCTAssertEqual(pending.first?.reason, .bundleChanged, n)
        }
    }

    func testPendingReindexItemsMergeIdentifiersWithoutDuplicates() throws {
        for index in try TestIndex.both(for: self) {
            let n = index.name
            let store = try index.open()
            let first = try store.enqueue(bundleIdentifier: "com.example.alpha", kind: .reindexItems, identifiers: ["a", "b"], reason: .forced)
            let second = try store.enqueue(bundleIdentifier: "COM.Example.Alpha", kind: .reindexItems, identifiers: ["b", "c", "a", "d"], reason: .forced)
            XCTAssertEqual(second.id, first.id, n)
            XCTAssertEqual(second.identifiers, ["a", "b", "c", "d"], n)
            let pending = try store.requests(bundle: "com.example.alpha", state: .pending)
            XCTAssertEqual(pending.count, 1, n)
            XCTAssertEqual(pending.first?.identifiers, ["a", "b", "c", "d"], n)
            // Another bundle's request is its own.
            let other = try store.enqueue(bundleIdentifier: "com.example.beta", kind: .reindexItems, identifiers: ["a"], reason: .forced)
            XCTAssertNotEqual(other.id, first.id, n)
            XCTAssertEqual(try store.request(first.id)?.identifiers, ["a", "b", "c", "d"], n)
        }
    }

    func testWithoutCoalescingEveryRequestIsSeparate() throws {
        for index in try TestIndex.both(for: self) {
            let n = index.name
            let store = try index.open()
            let a = try store.enqueue(bundleIdentifier: "com.example.alpha", kind: .reindexItems, identifiers: ["a"], reason: .forced, maxAttempts: 5, notBefore: nil, coalesce: false)
            let b = try store.enqueue(bundleIdentifier: "com.example.alpha", kind: .reindexItems, identifiers: ["a"], reason: .forced, maxAttempts: 5, notBefore: nil, coalesce: false)
            let c = try store.enqueue(bundleIdentifier: "com.example.alpha", kind: .reindexAll, identifiers: [], reason: .forced, maxAttempts: 5, notBefore: nil, coalesce: false)
            XCTAssertEqual(Set([a.id, b.id, c.id]).count, 3, n)
            let pending = try store.requests(bundle: "com.example.alpha", state: .pending)
            XCTAssertEqual(pending.map(\.id), [a.id, b.id, c.id], n)
            XCTAssertEqual(pending.map(\.identifiers), [["a"], ["a"], []], n)
        }
    }

    func testARunningRequestIsNotCoalescedWith() throws {
        for index in try TestIndex.both(for: self) {
            let n = index.name
            let store = try index.open()
            let running = try store.enqueue(bundleIdentifier: "com.example.alpha", kind: .reindexAll, reason: .forced)
            XCTAssertEqual(try store.markRunning(running.id)?.state, .running, n)
            XCTAssertNil(try store.markRunning(running.id), "\(n): a running request is claimed once")
            let next = try store.enqueue(bundleIdentifier: "com.example.alpha", kind: .reindexItems, identifiers: ["z"], reason: .forced)
            XCTAssertNotEqual(next.id, running.id, n)
            XCTAssertEqual(try store.request(running.id)?.state, .running, n)
            XCTAssertEqual(try store.requests(bundle: "com.example.alpha", state: .running).map(\.id), [running.id], n)
        }
    }

    func testBackoffGrowsExponentiallyAndIsCapped() {
        // No index: the backoff is arithmetic.
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
        for index in try TestIndex.both(for: self) {
            let n = index.name
            let store = try index.open()
            let backoff = Backoff(baseSeconds: 5, maximumSeconds: 3600)
            let queued = try store.enqueue(bundleIdentifier: "com.example.alpha", kind: .reindexItems, identifiers: ["a"], reason: .forced, maxAttempts: 2)
            let now = Clock.now()

            XCTAssertEqual(try store.markRunning(queued.id)?.attempts, 1, n)
            let first = try XCTUnwrap(try store.markAttemptFailed(queued.id, error: "crashed once", backoff: backoff, now: now), n)
            XCTAssertEqual(first.state, .pending, n)
            XCTAssertEqual(first.attempts, 1, n)
            XCTAssertEqual(first.lastError, "crashed once", n)
            XCTAssertEqual(first.nextAttempt, now + 5, accuracy: 0.001, n)
            XCTAssertNil(try store.nextDueRequest(now: now + 1, excludingBundles: []), "\(n): a backed-off request is not due yet")
            XCTAssertEqual(try store.nextDueRequest(now: now + 6, excludingBundles: [])?.id, queued.id, n)
            XCTAssertNil(try store.nextDueRequest(now: now + 6, excludingBundles: ["com.example.alpha"]), n)
            XCTAssertEqual(try XCTUnwrap(try store.nextDueTime(), n), now + 5, accuracy: 0.001, n)
            // A busy bundle's due request does not make the earliest due time (serve would spin).
            let beta = try store.enqueue(bundleIdentifier: "com.example.Beta", kind: .reindexAll, reason: .forced)
            XCTAssertEqual(try XCTUnwrap(try store.nextDueTime(), n), beta.nextAttempt, accuracy: 0.001, n)
            XCTAssertEqual(try XCTUnwrap(try store.nextDueTime(excludingBundles: ["com.example.beta"]), n), now + 5, accuracy: 0.001, n)
            XCTAssertNil(try store.nextDueTime(excludingBundles: ["com.example.alpha", "com.example.beta"]), n)
            try store.markDone(beta.id)

            XCTAssertEqual(try store.markRunning(queued.id)?.attempts, 2, n)
            let second = try XCTUnwrap(try store.markAttemptFailed(queued.id, error: "crashed twice", backoff: backoff, now: now + 10), n)
            XCTAssertEqual(second.state, .failed, n)
            XCTAssertEqual(second.lastError, "crashed twice", n)
            XCTAssertEqual(try store.requests(state: .failed).map(\.id), [queued.id], n)
            XCTAssertNil(try store.nextDueRequest(now: now + 100_000, excludingBundles: []), n)
            XCTAssertEqual(try store.status(bundle: "com.example.alpha").failedReasons, ["crashed twice"], n)
        }
    }

    func testRequeueGivesTheAttemptBackAndDoneRequestsLeaveTheQueue() throws {
        for index in try TestIndex.both(for: self) {
            let n = index.name
            let store = try index.open()
            let queued = try store.enqueue(bundleIdentifier: "com.example.alpha", kind: .reindexAll, reason: .forced)
            XCTAssertEqual(try store.markRunning(queued.id)?.attempts, 1, n)
            try store.requeue(queued.id, note: "the host is stopping")
            let requeued = try XCTUnwrap(try store.request(queued.id), n)
            XCTAssertEqual(requeued.state, .pending, n)
            XCTAssertEqual(requeued.attempts, 0, "\(n): a requeued attempt does not count")
            XCTAssertEqual(requeued.lastError, "the host is stopping", n)

            XCTAssertEqual(try store.markRunning(queued.id)?.attempts, 1, n)
            try store.markDone(queued.id)
            XCTAssertEqual(try store.request(queued.id)?.state, .done, n)
            XCTAssertNil(try store.request(queued.id)?.lastError, n)
            XCTAssertEqual(try store.requests(bundle: "com.example.alpha", state: .pending), [], n)
            XCTAssertNil(try store.nextDueRequest(now: Clock.now() + 100_000, excludingBundles: []), n)
            XCTAssertNil(try store.request(queued.id + 1000), n)
        }
    }

    func testAFailedReindexAllKeepsItsCommittedBatchForTheRetryAndDiscardsItWhenItFailsForGood() throws {
        for index in try TestIndex.both(for: self) {
            let n = index.name
            let store = try index.open()
            try T.seed(store, bundle: "com.example.alpha", [T.item("live", title: "Living Lemur")])
            let queued = try store.enqueue(bundleIdentifier: "com.example.alpha", kind: .reindexAll, reason: .forced, maxAttempts: 2)
            func stagedRows() throws -> Int {
                try store.rowCount("SELECT count(*) FROM items WHERE bundle = 'com.example.alpha' AND gen = \(queued.id)")
            }

            _ = try store.markRunning(queued.id)
            let writes = try store.makeWriter(bundleIdentifier: "com.example.alpha", scope: .replacement(generation: queued.id), requestID: queued.id, declarations: [:])
            try writes.put(T.item("staged", title: "Staged Serval"))
            _ = try writes.commitBatch { store in try store.saveClientState(queued.id, "c3RhdGU=") }
            XCTAssertEqual(try stagedRows(), 1, n)
            try writes.put(T.item("uncommitted", title: "Uncommitted Urial"))
            try writes.flush()
            writes.rollback()

            // An attempt that is retried keeps its committed batch (and client state) for resuming.
            XCTAssertEqual(try store.markAttemptFailed(queued.id, error: "refused", backoff: Backoff())?.state, .pending, n)
            XCTAssertEqual(try stagedRows(), 1, n)
            let retry = try XCTUnwrap(try store.markRunning(queued.id), n)
            XCTAssertEqual(retry.clientState, "c3RhdGU=", n)
            XCTAssertEqual(retry.attempts, 2, n)
            XCTAssertEqual(try T.identifiers(store, bundle: "com.example.alpha"), ["live"], "\(n): a failed attempt's batch became visible")

            // The last attempt failing throws the staged generation away; the live items stay.
            XCTAssertEqual(try store.markAttemptFailed(queued.id, error: "refused again", backoff: Backoff())?.state, .failed, n)
            XCTAssertEqual(try stagedRows(), 0, n)
            XCTAssertEqual(try T.identifiers(store, bundle: "com.example.alpha"), ["live"], n)
            XCTAssertEqual(try store.search("serval").count, 0, n)
            store.assertHealthy(n)
        }
    }

    func testAResumedReplacementKeepsTheFirstAttemptsBatchAndAForcedFreshStartDiscardsIt() throws {
        for index in try TestIndex.both(for: self) {
            let n = index.name
            let store = try index.open()
            try T.seed(store, bundle: "com.example.alpha", [T.item("old", title: "Obsolete Okapi")])
            let queued = try store.enqueue(bundleIdentifier: "com.example.alpha", kind: .reindexAll, reason: .forced)
            XCTAssertNil(try store.discardPartialReplacement(queued), "\(n): nothing was committed yet")

            _ = try store.markRunning(queued.id)
            let first = try store.makeWriter(bundleIdentifier: "com.example.alpha", scope: .replacement(generation: queued.id), requestID: queued.id, declarations: [:])
            for k in 1...3 { try first.put(T.item("first.\(k)", title: "First attempt \(k)")) }
            _ = try first.commitBatch { store in try store.saveClientState(queued.id, "bmV4dD0z") }
            first.rollback()
            _ = try store.markAttemptFailed(queued.id, error: "crashed", backoff: Backoff(baseSeconds: 0))

            // A forced run that starts fresh throws the committed batch and its client state away.
            let retried = try XCTUnwrap(try store.request(queued.id), n)
            XCTAssertEqual(try store.discardPartialReplacement(retried), 3, n)
            XCTAssertNil(try store.request(queued.id)?.clientState, n)
            XCTAssertEqual(try store.rowCount("SELECT count(*) FROM items WHERE bundle = 'com.example.alpha' AND gen = \(queued.id)"), 0, n)
            XCTAssertNil(try store.discardPartialReplacement(try XCTUnwrap(try store.request(queued.id), n)), n)

            _ = try store.markRunning(queued.id)
            let fresh = try store.makeWriter(bundleIdentifier: "com.example.alpha", scope: .replacement(generation: queued.id), requestID: queued.id, declarations: [:])
            try fresh.put(T.item("fresh", title: "Fresh Fossa"))
            _ = try fresh.acknowledge { store in try store.markDone(queued.id) }
            XCTAssertEqual(try T.identifiers(store, bundle: "com.example.alpha"), ["fresh"], "\(n): the discarded batch came back")
            XCTAssertEqual(try store.request(queued.id)?.state, .done, n)
        }
    }

    func testRecoverAbandonedPutsRunningRequestsBackToPending() throws {
        for index in try TestIndex.both(for: self) {
            let n = index.name
            let store = try index.open()
            // A fleet recovers only what a worker left under an expired lease: this one runs out at once.
            (store as? PostgresStore)?.leaseSeconds = 0
            let mine = try store.enqueue(bundleIdentifier: "com.example.alpha", kind: .reindexAll, reason: .forced)
            let theirs = try store.enqueue(bundleIdentifier: "com.example.beta", kind: .reindexAll, reason: .forced)
            _ = try store.markRunning(mine.id)
            _ = try store.markRunning(theirs.id)

            try store.recoverAbandoned(bundle: "COM.EXAMPLE.ALPHA")
            let recovered = try XCTUnwrap(try store.request(mine.id), n)
            XCTAssertEqual(recovered.state, .pending, n)
            XCTAssertEqual(recovered.attempts, 1, "\(n): the abandoned attempt still counts")
            XCTAssertTrue(recovered.lastError?.hasSuffix("stopped while the request was running") ?? false, "\(n): \(String(describing: recovered.lastError))")
            XCTAssertEqual(try store.request(theirs.id)?.state, .running, "\(n): another bundle's request was touched")
        }
    }

    func testRecoveryDropsTheRowsOfAReplacedGenerationWhoseDeletionWasInterrupted() throws {
        for index in try TestIndex.both(for: self) {
            let n = index.name
            let store = try index.open()
            (store as? PostgresStore)?.leaseSeconds = 0
            try T.seed(store, bundle: "com.example.alpha", [T.item("live", title: "Living Lemur")])
            let queued = try store.enqueue(bundleIdentifier: "com.example.alpha", kind: .reindexAll, reason: .forced)
            _ = try store.markRunning(queued.id)
            let staged = try store.makeWriter(bundleIdentifier: "com.example.alpha", scope: .replacement(generation: queued.id), requestID: queued.id, declarations: [:])
            try staged.put(T.item("staged", title: "Staged Serval"))
            try staged.commitBatch()
            // The host dies here; the next one recovers the bundle.
            try store.recoverAbandoned(bundle: "com.example.alpha")
            XCTAssertEqual(try store.request(queued.id)?.state, .pending, n)
            XCTAssertEqual(try store.rowCount("SELECT count(*) FROM items WHERE bundle = 'com.example.alpha' AND gen = \(queued.id)"), 1,
                           "\(n): recovery must keep a committed batch a retry resumes from")
            XCTAssertEqual(try T.identifiers(store, bundle: "com.example.alpha"), ["live"], n)
            XCTAssertEqual(try store.search("serval").count, 0, n)
        }
    }

    func testRecordRunAndLastRun() throws {
        for index in try TestIndex.both(for: self) {
            let n = index.name
            let store = try index.open()
            XCTAssertNil(try store.lastRun(bundle: "com.example.alpha"), n)
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
            XCTAssertEqual(try store.lastRun(bundle: "COM.EXAMPLE.ALPHA"), expected, n)
            XCTAssertEqual(try store.lastRun(bundle: "com.example.beta")?.reason, .indexLost, n)
            XCTAssertEqual(try store.status(bundle: "com.example.alpha").lastRun?.counts, WriteCounts(put: 3, deleted: 2, rejected: 1), n)
            XCTAssertNil(try store.lastRun(bundle: "com.example.gamma"), n)
        }
    }

    // MARK: Domains and bundles

    func testDeletingADomainTakesItsSubdomainsButNotASiblingWithTheSamePrefix() throws {
        for index in try TestIndex.both(for: self) {
            let n = index.name
            let store = try index.open()
            try T.seed(store, bundle: "com.example.alpha", [
                T.item("exact", title: "Domain exact", domain: "a.b"),
                T.item("child", title: "Domain child", domain: "a.b.c"),
                T.item("grandchild", title: "Domain grandchild", domain: "a.b.c.d"),
                T.item("sibling", title: "Domain sibling", domain: "a.bc"),
                T.item("slash", title: "Domain slash", domain: "a.b/c"),
                T.item("parent", title: "Domain parent", domain: "a"),
                T.item("none", title: "Domain none"),
            ])

            XCTAssertEqual(try store.search("domain", domain: "a.b").map(\.uniqueIdentifier).sorted(), ["child", "exact", "grandchild"], n)
            XCTAssertEqual(try store.items(bundle: "com.example.alpha", domain: "a.b").map(\.uniqueIdentifier), ["child", "exact", "grandchild"], n)

            let writes = try store.writer("com.example.alpha", .direct)
            try writes.delete(domains: ["a.b"])
            XCTAssertEqual(try writes.acknowledge().deleted, 3, n)
            XCTAssertEqual(try T.identifiers(store, bundle: "com.example.alpha"), ["none", "parent", "sibling", "slash"], n)
            store.assertHealthy(n)
        }
    }

    func testBundlesWithTheSameIdentifiersNeverTouchEachOthersItems() throws {
        for index in try TestIndex.both(for: self) {
            let n = index.name
            let store = try index.open()
            func betaItems() throws -> [SearchResult] { try store.items(bundle: "com.example.beta") }
            func alpha(_ body: (any IndexWriting) throws -> Void) throws -> WriteCounts {
                let writes = try store.writer("com.example.alpha", .direct)
                try body(writes)
                return try writes.acknowledge()
            }

            try T.seed(store, bundle: "com.example.alpha", [T.item("shared.1", title: "Alpha copy", domain: "d"), T.item("shared.2", title: "Alpha second", domain: "d.e")])
            try T.seed(store, bundle: "com.example.beta", [T.item("shared.1", title: "Beta copy", domain: "d"), T.item("shared.2", title: "Beta second", domain: "d.e")])
            let before = try betaItems()
            XCTAssertEqual(before.map(\.uniqueIdentifier), ["shared.1", "shared.2"], n)

            try T.seed(store, bundle: "com.example.alpha", [T.item("shared.1", title: "Alpha replaced", domain: "d")])
            XCTAssertEqual(try betaItems(), before, "\(n): a put replaced another bundle's item")
            XCTAssertEqual(try alpha { try $0.delete(identifiers: ["shared.1"]) }.deleted, 1, n)
            XCTAssertEqual(try betaItems(), before, "\(n): a delete removed another bundle's item")
            XCTAssertEqual(try alpha { try $0.delete(domains: ["d"]) }.deleted, 1, n)
            XCTAssertEqual(try betaItems(), before, "\(n): deleteDomains removed another bundle's items")
            try T.seed(store, bundle: "com.example.alpha", [T.item("shared.3", title: "Alpha third")])
            XCTAssertEqual(try alpha { try $0.deleteAll() }.deleted, 1, n)
            XCTAssertEqual(try betaItems(), before, "\(n): deleteAll removed another bundle's items")

            // A replacement of alpha removes only alpha's items it did not put.
            try T.seed(store, bundle: "com.example.alpha", [T.item("shared.1", title: "Alpha again")])
            let replacement = try store.writer("com.example.alpha", .replacement(generation: 99))
            try replacement.put(T.item("other", title: "Alpha other"))
            _ = try replacement.acknowledge()
            XCTAssertEqual(try T.identifiers(store, bundle: "com.example.alpha"), ["other"], n)
            XCTAssertEqual(try betaItems(), before, "\(n): a replacement removed another bundle's items")

            XCTAssertEqual(try store.search("copy", bundle: "com.example.beta").map(\.title), ["Beta copy"], n)
            XCTAssertEqual(try store.search("copy").map(\.bundleIdentifier), ["com.example.beta"], n)
            // Bundle identifiers compare case-insensitively.
            XCTAssertEqual(try store.items(bundle: "COM.EXAMPLE.BETA").count, 2, n)
        }
    }

    // MARK: The bundle registry and expiry

    func testTheRegistryRemembersWhatWasSeenAndSinceWhenABundleIsMissing() throws {
        for index in try TestIndex.both(for: self) {
            let n = index.name
            let store = try index.open()
            try store.recordSeen(key: "com.example.alpha", identifier: "com.example.Alpha", version: "1.0", fingerprint: "f1", now: 100)
            try store.recordSeen(key: "com.example.beta", identifier: "com.example.beta", version: "2.0", fingerprint: nil, now: 100)
            XCTAssertEqual(try store.bundleRecords(), [
                BundleRecord(key: "com.example.alpha", identifier: "com.example.Alpha", version: "1.0", fingerprint: "f1", missingSince: nil),
                BundleRecord(key: "com.example.beta", identifier: "com.example.beta", version: "2.0", fingerprint: nil, missingSince: nil),
            ], n)

            try store.markMissing("com.example.alpha", now: 200)
            try store.markMissing("com.example.alpha", now: 300)
            XCTAssertEqual(try store.bundleRecords().first?.missingSince, 200, "\(n): the first time it was noticed is kept")
            XCTAssertEqual(try store.status(bundle: "com.example.alpha").missingSince, 200, n)
            XCTAssertNil(try store.bundleRecords().last?.missingSince, n)

            // Back on the search path, at a new version.
            try store.recordSeen(key: "com.example.alpha", identifier: "com.example.Alpha", version: "1.1", fingerprint: "f2", now: 400)
            XCTAssertEqual(try store.bundleRecords().first,
                           BundleRecord(key: "com.example.alpha", identifier: "com.example.Alpha", version: "1.1", fingerprint: "f2", missingSince: nil), n)
            XCTAssertEqual(try store.knownBundles().map(\.key), ["com.example.alpha", "com.example.beta"], n)
        }
    }

    func testRemovingABundleForgetsItsItemsGenerationsAndQueuedRequestsOnly() throws {
        for index in try TestIndex.both(for: self) {
            let n = index.name
            let store = try index.open()
            try store.recordSeen(key: "com.example.alpha", identifier: "com.example.alpha", version: "1", fingerprint: "f", now: 100)
            try T.seed(store, bundle: "com.example.alpha", [T.item("a.1", title: "Gone Gazelle"), T.item("a.2", title: "Gone Gnu")])
            try T.seed(store, bundle: "com.example.beta", [T.item("a.1", title: "Kept Kudu")])
            let staged = try store.enqueue(bundleIdentifier: "com.example.alpha", kind: .reindexAll, reason: .forced)
            _ = try store.markRunning(staged.id)
            let writes = try store.makeWriter(bundleIdentifier: "com.example.alpha", scope: .replacement(generation: staged.id), requestID: staged.id, declarations: [:])
            try writes.put(T.item("a.3", title: "Staged Gerenuk"))
            try writes.commitBatch()
            try store.markDone(staged.id)
            let pending = try store.enqueue(bundleIdentifier: "com.example.alpha", kind: .reindexItems, identifiers: ["a.1"], reason: .forced)
            let theirs = try store.enqueue(bundleIdentifier: "com.example.beta", kind: .reindexItems, identifiers: ["a.1"], reason: .forced)
            try store.markMissing("com.example.alpha", now: 200)

            XCTAssertEqual(try store.removeBundle("com.example.alpha"), 2, "\(n): the count of live items removed")
            XCTAssertEqual(try store.rowCount("SELECT count(*) FROM items WHERE bundle = 'com.example.alpha'"), 0, "\(n): every generation goes")
            XCTAssertNil(try store.request(pending.id), "\(n): its pending request goes")
            XCTAssertEqual(try store.request(staged.id)?.state, .done, "\(n): the history stays")
            XCTAssertEqual(try store.bundleRecords().map(\.key), ["com.example.beta"], n)
            XCTAssertEqual(try store.search("gazelle"), [], n)
            XCTAssertEqual(try store.search("gerenuk"), [], n)
            XCTAssertEqual(try store.items(bundle: "com.example.beta").map(\.title), ["Kept Kudu"], n)
            XCTAssertEqual(try store.request(theirs.id)?.state, .pending, n)
            XCTAssertEqual(try store.removeBundle("com.example.alpha"), 0, n)
        }
    }

    func testExpiringItemsAreAskedForOncePerExpirationAndPurgedWhenPast() throws {
        for index in try TestIndex.both(for: self) {
            let n = index.name
            let store = try index.open()
            try T.seed(store, bundle: "com.example.alpha", [
                T.item("soon", title: "Soon", expires: "2030-01-01T00:00:10Z"),
                T.item("later", title: "Later", expires: "2030-01-01T00:01:00Z"),
                T.item("never", title: "Never"),
            ])
            try T.seed(store, bundle: "com.example.beta", [T.item("soon", title: "Theirs", expires: "2030-01-01T00:00:10Z")])
            let start = try XCTUnwrap(RFC3339.parse("2030-01-01T00:00:00Z"))
            XCTAssertEqual(try store.expiringItems(bundle: "com.example.alpha", after: start, until: start + 30, limit: 100), ["soon"], n)
            XCTAssertEqual(try store.expiringItems(bundle: "com.example.alpha", after: start, until: start + 60, limit: 100), ["soon", "later"], n)
            XCTAssertEqual(try store.expiringItems(bundle: "com.example.alpha", after: start, until: start + 60, limit: 1), ["soon"], n)

            try store.markRefreshAsked(bundle: "com.example.alpha", identifiers: ["soon"])
            XCTAssertEqual(try store.expiringItems(bundle: "com.example.alpha", after: start, until: start + 60, limit: 100), ["later"],
                           "\(n): a refresh asked for is not asked for again")
            XCTAssertEqual(try store.expiringItems(bundle: "com.example.beta", after: start, until: start + 60, limit: 100), ["soon"],
                           "\(n): another bundle's item of the same identifier was marked")
            // Put again with a new expiration, it is due again.
            try T.seed(store, bundle: "com.example.alpha", [T.item("soon", title: "Soon", expires: "2030-01-01T00:00:20Z")])
            XCTAssertEqual(try store.expiringItems(bundle: "com.example.alpha", after: start, until: start + 60, limit: 100), ["soon", "later"], n)

            XCTAssertEqual(try store.purgeExpired(now: start + 30), 2, "\(n): alpha's and beta's item past their expiration")
            XCTAssertEqual(try T.identifiers(store, bundle: "com.example.alpha"), ["later", "never"], n)
            XCTAssertEqual(try store.itemCount(bundle: "com.example.beta"), 0, n)
            XCTAssertEqual(try store.purgeExpired(now: start + 30), 0, n)
            XCTAssertEqual(try store.search("later", now: start + 61), [], "\(n): an expired item is not found before it is purged")
            XCTAssertEqual(try store.itemCount(bundle: "com.example.alpha", now: start + 61), 1, n)
        }
    }

    func testStatusCountsTheQueueAndShowsWhatIsRunning() throws {
        for index in try TestIndex.both(for: self) {
            let n = index.name
            let store = try index.open()
            try T.seed(store, bundle: "com.example.alpha", [T.item("a", title: "Alpha"), T.item("b", title: "Beta")])
            let running = try store.enqueue(bundleIdentifier: "com.example.alpha", kind: .reindexAll, reason: .forced)
            _ = try store.markRunning(running.id)
            try store.saveProgress(running.id, ProgressParams(requestID: .number(1), completed: 3, total: 10, message: "three of ten"))
            try store.enqueue(bundleIdentifier: "com.example.alpha", kind: .reindexItems, identifiers: ["a"], reason: .forced)
            let failing = try store.enqueue(bundleIdentifier: "com.example.alpha", kind: .reindexItems, identifiers: ["x"], reason: .forced, maxAttempts: 1, notBefore: nil, coalesce: false)
            _ = try store.markRunning(failing.id)
            _ = try store.markAttemptFailed(failing.id, error: "the catalogue is down", backoff: Backoff())
            try store.enqueue(bundleIdentifier: "com.example.queued", kind: .reindexAll, reason: .forced)

            let status = try store.status(bundle: "COM.EXAMPLE.ALPHA")
            XCTAssertEqual(status.items, 2, n)
            XCTAssertEqual(status.pending, 1, n)
            XCTAssertEqual(status.running, 1, n)
            XCTAssertEqual(status.failed, 1, n)
            XCTAssertEqual(status.failedReasons, ["the catalogue is down"], n)
            XCTAssertEqual(status.runningRequests.map(\.id), [running.id], n)
            XCTAssertEqual(status.runningRequests.first?.progress?.completed, 3, n)
            XCTAssertEqual(status.runningRequests.first?.progress?.message, "three of ten", n)
            XCTAssertEqual(try store.knownBundles().map(\.identifier), ["com.example.alpha", "com.example.queued"],
                           "\(n): a bundle with only a queued request is known")

            // A later acknowledged run of the same kind makes the failure moot.
            let done = try store.enqueue(bundleIdentifier: "com.example.alpha", kind: .reindexItems, identifiers: ["y"], reason: .forced, maxAttempts: 1, notBefore: nil, coalesce: false)
            try store.recordRun(RunRecord(requestID: done.id, bundleIdentifier: "com.example.alpha", kind: .reindexItems, reason: .forced,
                                          started: Clock.now(), ended: Clock.now() + 1, outcome: "acknowledged", counts: WriteCounts(), error: nil))
            XCTAssertEqual(try store.status(bundle: "com.example.alpha").failed, 0, n)
            XCTAssertEqual(try store.status(bundle: "com.example.alpha").superseded, 1, n)
        }
    }

    // MARK: Search

    private func seedSearchCorpus(_ store: any IndexBackend) throws {
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
        for index in try TestIndex.both(for: self) {
            let n = index.name
            let store = try index.open()
            try seedSearchCorpus(store)
            func ids(_ query: String) throws -> [String] { try store.search(query, bundle: "com.example.people").map(\.uniqueIdentifier).sorted() }

            XCTAssertEqual(try ids("park"), ["ada"], n)
            XCTAssertEqual(try ids("eng*"), ["ada"], n)
            XCTAssertEqual(try ids("eng"), ["ada"], "\(n): a partial word finds by prefix")
            XCTAssertEqual(try ids("staff eng"), ["ada"], "\(n): every word must match, the last as a prefix")
            XCTAssertEqual(try ids("staff design"), [], n)
            XCTAssertEqual(try ids("zoe"), ["zoe"], n)
            XCTAssertEqual(try ids("ZOË"), ["zoe"], n)
            XCTAssertEqual(try ids("MULLER"), ["zoe"], n)
            XCTAssertEqual(try ids("müller"), ["zoe"], n)
            XCTAssertEqual(try ids("mul"), ["zoe"], n)
            XCTAssertEqual(try ids("\"park\""), ["ada"], "\(n): quotes are text, not syntax")
        }
    }

    func testSearchRanksATitleMatchAboveADescriptionMatch() throws {
        for index in try TestIndex.both(for: self) {
            let n = index.name
            let store = try index.open()
            try seedSearchCorpus(store)
            let results = try store.search("quasar")
            XCTAssertEqual(results.map(\.uniqueIdentifier), ["quasar.title", "quasar.description"], n)
            XCTAssertGreaterThan(try XCTUnwrap(results.first?.score, n), try XCTUnwrap(results.last?.score, n), n)
            XCTAssertEqual(results.first?.title, "Quasar survey", n)
        }
    }

    func testSearchExcludesExpiredItems() throws {
        for index in try TestIndex.both(for: self) {
            let n = index.name
            let store = try index.open()
            try seedSearchCorpus(store)
            XCTAssertEqual(try store.search("voucher").map(\.uniqueIdentifier), ["future"], n)
            XCTAssertFalse(try store.items(bundle: "com.example.people").map(\.uniqueIdentifier).contains("expired"), n)
            XCTAssertEqual(try store.itemCount(bundle: "com.example.people"), 5, n)
            let later = try XCTUnwrap(RFC3339.parse("3000-01-01T00:00:00Z"))
            XCTAssertEqual(try store.search("voucher", now: later), [], n)
        }
    }

    func testSearchFiltersByBundleAndDomain() throws {
        for index in try TestIndex.both(for: self) {
            let n = index.name
            let store = try index.open()
            try seedSearchCorpus(store)
            XCTAssertEqual(try store.search("park").map(\.uniqueIdentifier).sorted(), ["ada", "park"], n)
            XCTAssertEqual(try store.search("park", bundle: "com.example.places").map(\.uniqueIdentifier), ["park"], n)
            XCTAssertEqual(try store.search("park", bundle: "COM.EXAMPLE.PEOPLE").map(\.uniqueIdentifier), ["ada"], n)
            XCTAssertEqual(try store.search("park", bundle: "com.example.nobody"), [], n)
            XCTAssertEqual(try store.search("park", domain: "places").map(\.uniqueIdentifier), ["park"], n)
            XCTAssertEqual(try store.search("park", domain: "people").map(\.uniqueIdentifier), ["ada"], n)
            XCTAssertEqual(try store.search("park", domain: "peop"), [], "\(n): a domain filter is not a prefix of a label")
            XCTAssertEqual(try store.search("park", bundle: "com.example.people", domain: "places"), [], n)
            XCTAssertEqual(try store.search("park", limit: 1).count, 1, n)
            let result = try XCTUnwrap(try store.search("zoe").first, n)
            XCTAssertEqual(result.bundleIdentifier, "com.example.people", n)
            XCTAssertEqual(result.domainIdentifier, "people.design", n)
            XCTAssertEqual(result.attributes["contentDescription"]?.stringValue, "Design lead", n)
        }
    }

    func testQueriesWithQuotesAndOperatorsDoNotFail() throws {
        for index in try TestIndex.both(for: self) {
            let n = index.name
            let store = try index.open()
            try seedSearchCorpus(store)
            let queries = [
                "\"", "\"park", "park\"", "\"\"", "'", "park AND", "AND", "OR park", "NOT", "NOT park", "park NOT ada",
                "NEAR(park ada)", "(", ")", "park)", "*", "**", "park*", "title:park", "^park", "-park", "+park", "park -",
                "{park}", "[park]", "a'b", "ada's", "park OR ada", "ü", "🙂", "\u{0}", "\\", "%", "_", "ada@example.com", "",
                "   ", String(repeating: "park ", count: 200),
            ]
            for query in queries {
                XCTAssertNoThrow(try store.search(query), "\(n): query \(query.debugDescription) failed")
            }
            XCTAssertEqual(try store.search("NOT park").map(\.uniqueIdentifier), [], "\(n): NOT is a word to find, not an operator")
            XCTAssertEqual(try store.search("park)").map(\.uniqueIdentifier).sorted(), ["ada", "park"], n)
        }
    }
}
