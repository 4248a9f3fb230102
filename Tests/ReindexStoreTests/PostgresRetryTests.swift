import Foundation
import ReindexHost
@testable import ReindexStore
import ReindexTestSupport
import ReindexProtocol
import XCTest

/// Serialization failures (SQLSTATE 40001) and deadlocks (40P01), provoked for real on the
/// server the tests start by a second session that holds the conflicting locks: the store runs
/// what failed again and the operation succeeds; a batch that cannot be run again fails as a
/// retryable store failure. The tests wait for conditions (a session waiting for a lock), never
/// for time.
///
/// The server looks for a deadlock once per wait, `deadlock_timeout` after the wait began, and
/// the session whose look finds the cycle is the one it ends. So in the deadlock tests the
/// store's session is always the last to start waiting, when the other session already waits
/// for it: its one look cannot come before the cycle is closed, however slow the machine.
final class PostgresRetryTests: XCTestCase, @unchecked Sendable {
    private var server: PostgresServer!
    private var schema = ""

    override func setUpWithError() throws {
        server = try PostgresServer.shared()
        schema = server.freshSchema("retry")
    }

    private func openStore() throws -> PostgresStore {
        try PostgresStore.open(try PostgresLocation(server.connectionString, environment: ["REINDEX_PG_SCHEMA": schema]))
    }

    /// A second session on the same schema: the one that holds the conflicting locks. Its own
    /// deadlock check waits a minute, so in a deadlock the store's session is the one the server
    /// ends.
    private func otherSession() throws -> PGConnection {
        let other = try PGConnection(server.connectionString)
        try other.execute("SET search_path TO \(PGConnection.quoteIdentifier(schema)); SET deadlock_timeout = '60s'")
        return other
    }

    /// Runs `body` on a thread of its own (`value`, a store or a session, is used by that thread
    /// alone meanwhile).
    private func inBackground<Value>(_ value: Value, _ body: @escaping @Sendable (Value) throws -> String) -> (Thread, SharedValue<String?>) {
        let box = SharedValue(value)
        let outcome = SharedValue<String?>(nil)
        let thread = Thread {
            let result: String
            do { result = try body(box.value) } catch { result = "error: \(error)" }
            outcome.update { $0 = result }
        }
        thread.start()
        return (thread, outcome)
    }

    private func waitUntil(_ what: String, _ condition: () throws -> Bool) throws {
        let end = Date().addingTimeInterval(60)
        while Date() < end {
            if try condition() { return }
            usleep(10_000)
        }
        XCTFail("timed out waiting until \(what)")
        throw PostgresServer.StartFailure(description: "timed out waiting until \(what)")
    }

    /// Whether the server process `pid` is waiting for a lock.
    private func waitsForALock(_ pid: Int32) throws -> Bool {
        try server.psql("SELECT count(*) FROM pg_stat_activity WHERE pid = \(pid) AND wait_event_type = 'Lock'") == "1"
    }

    /// How many times the server has logged `message` (it logs every error it reports).
    private func logged(_ message: String) -> Int {
        (try? String(contentsOfFile: "\(server.directory)/server.log", encoding: .utf8))?.components(separatedBy: message).count ?? 1
    }

    func testAStatementThatFailsToSerializeIsRunAgainAndSucceeds() throws {
        let store = try openStore()
        let request = try store.enqueue(bundleIdentifier: "com.example.one", kind: .reindexAll, reason: .forced)
        // A deployment that makes every transaction SERIALIZABLE (the store asks for nothing
        // stronger than READ COMMITTED, but a role or database may).
        try store.connection.execute("SET default_transaction_isolation = 'serializable'")
        let failuresBefore = logged("could not serialize access due to concurrent update")

        // Another session changes the request's row and holds it; the store's update waits for
        // it, and when that session commits, the update's snapshot is too old: 40001.
        let other = try otherSession()
        try other.begin()
        try other.query("UPDATE requests SET progress = 'held by another session' WHERE id = $1", [String(request.id)])
        let pid = store.connection.backendPID
        let (thread, outcome) = inBackground(store) { store in
            try store.saveClientState(request.id, "c3RhdGU=")
            return "saved"
        }
        try waitUntil("the store's update waits for the row") { try waitsForALock(pid) }
        try other.commit()
        try waitUntil("the store's update has ended") { thread.isFinished }

        XCTAssertEqual(outcome.value, "saved")
        XCTAssertEqual(logged("could not serialize access due to concurrent update"), failuresBefore + 1,
                       "the server reported one serialization failure, which the store ran again")
        let saved = try XCTUnwrap(try store.request(request.id))
        XCTAssertEqual(saved.clientState, "c3RhdGU=")
        XCTAssertEqual(try store.query("SELECT progress FROM requests WHERE id = $1", [String(request.id)]).text(0, 0), "held by another session",
                       "the other session's change stays: the update ran again after it, not over it")
    }

    func testATransactionChosenAsADeadlockVictimIsRunAgainAndSucceeds() throws {
        let store = try openStore()
        try store.connection.execute("SET deadlock_timeout = '50ms'")
        let request = try store.enqueue(bundleIdentifier: "com.example.one", kind: .reindexAll, reason: .forced, maxAttempts: 1)
        _ = try store.markRunning(request.id)
        let writes = try PostgresWrites(store: store, bundleIdentifier: "com.example.one", scope: .replacement(generation: request.id))
        try writes.put(PostgresStoreTests.item("staged", title: "Staged"))
        try writes.commitBatch()
        let deadlocksBefore = logged("deadlock detected")

        // The store's last failed attempt locks the request, then wants the staged generation's
        // row (to discard the generation). The other session holds that row and wants the
        // request: a deadlock. A third session holds the request first, so that both queue for
        // it (the store first) before the store gets it and moves on to the row the other
        // session holds: the store's wait is the last to begin.
        let holder = try otherSession()
        try holder.begin()
        try holder.query("SELECT 1 FROM requests WHERE id = $1 FOR UPDATE", [String(request.id)])
        let other = try otherSession()
        try other.begin()
        try other.query("UPDATE staged_generations SET committed_batch = committed_batch WHERE bundle = 'com.example.one' AND gen = $1", [String(request.id)])
        let pid = store.connection.backendPID
        let (thread, outcome) = inBackground(store) { store in
            let failed = try store.markAttemptFailed(request.id, error: "refused", backoff: Backoff())
            return failed?.state.rawValue ?? "nil"
        }
        try waitUntil("the store waits for the request") { try waitsForALock(pid) }
        let otherPID = other.backendPID
        let (otherThread, otherOutcome) = inBackground(other) { other in
            try other.query("UPDATE requests SET progress = 'held by another session' WHERE id = $1", [String(request.id)])
            return "updated"
        }
        try waitUntil("the other session waits for the request") { try waitsForALock(otherPID) }
        try holder.commit()
        // The other session's update returns only once the store's transaction has let the
        // request go: as the deadlock's victim, since it waits for the other session.
        try waitUntil("the other session's update has ended") { otherThread.isFinished }
        XCTAssertEqual(otherOutcome.value, "updated")
        XCTAssertEqual(logged("deadlock detected"), deadlocksBefore + 1, "the server detected the deadlock")
        try other.commit()
        try waitUntil("the store's transaction has ended") { thread.isFinished }

        XCTAssertEqual(outcome.value, "failed", "the transaction was run again to its end")
        XCTAssertEqual(try store.request(request.id)?.state, .failed)
        XCTAssertEqual(try store.request(request.id)?.attempts, 1, "the deadlocked run did not count twice")
        XCTAssertEqual(try store.query("SELECT count(*) FROM items WHERE gen = $1", [String(request.id)]).int(0, 0), 0,
                       "the staged generation was discarded")
        XCTAssertEqual(try store.query("SELECT count(*) FROM staged_generations").int(0, 0), 0)
    }

    func testABatchChosenAsADeadlockVictimFailsAsARetryableStoreFailureAndTheRetryCommits() throws {
        let store = try openStore()
        try store.connection.execute("SET deadlock_timeout = '50ms'")
        let request = try store.enqueue(bundleIdentifier: "com.example.one", kind: .reindexAll, reason: .forced)
        _ = try store.markRunning(request.id)
        let writes = try PostgresWrites(store: store, bundleIdentifier: "com.example.one", scope: .replacement(generation: request.id))
        try writes.put(PostgresStoreTests.item("committed", title: "Committed"))
        try writes.commitBatch()
        try writes.put(PostgresStoreTests.item("last", title: "Last batch"))
        try writes.flush()

        // The other session holds the bundle's row, which the acknowledgement updates, and
        // inserts the row the store's open batch inserted, waiting for the store; then the
        // store acknowledges and waits for the other session: the store's wait is the last to
        // begin.
        let other = try otherSession()
        try other.begin()
        try other.query("SELECT 1 FROM bundles WHERE key = 'com.example.one' FOR UPDATE")
        let otherPID = other.backendPID
        let (otherThread, otherOutcome) = inBackground(other) { other in
            try other.query("""
                INSERT INTO items(bundle, gen, uid, attributes, doc) VALUES('com.example.one', $1, 'last', '{}', ''::tsvector)
                """, [String(request.id)])
            return "inserted"
        }
        try waitUntil("the other session waits for the store's open batch") { try waitsForALock(otherPID) }
        let failure = SharedValue<(any Error)?>(nil)
        let box = SharedValue(writes)
        let (thread, outcome) = inBackground(store) { store in
            do {
                _ = try box.value.acknowledge { store in try store.markDone(request.id) }
                return "acknowledged"
            } catch {
                failure.update { $0 = error }
                box.value.rollback()
                return "failed"
            }
        }
        try waitUntil("the acknowledgement has ended") { thread.isFinished }
        try waitUntil("the other session's insert has ended") { otherThread.isFinished }
        XCTAssertEqual(otherOutcome.value, "inserted", "the store's batch, not the other session, was the deadlock's victim")
        other.rollback()

        XCTAssertEqual(outcome.value, "failed")
        let error = try XCTUnwrap(failure.value)
        XCTAssertEqual((error as? StoreError)?.sqlState, "40P01", "\(error)")
        XCTAssertEqual((error as? StoreError)?.code, .busy, "a deadlock is the index being busy, retried without counting against the extension: \(error)")
        XCTAssertEqual(RequestFailure(.storeFailure, "\(error)").code.exitCode, 75)
        XCTAssertEqual(try store.itemCount(bundle: "com.example.one"), 0, "nothing of the failed acknowledgement is visible")
        XCTAssertEqual(try store.request(request.id)?.state, .running, "the request was not marked done")

        // The request's next attempt resumes from the committed batch and gets through.
        let retry = try PostgresWrites(store: store, bundleIdentifier: "com.example.one", scope: .replacement(generation: request.id))
        try retry.put(PostgresStoreTests.item("last", title: "Last batch"))
        _ = try retry.acknowledge { store in try store.markDone(request.id) }
        XCTAssertEqual(try store.items(bundle: "com.example.one").map(\.uniqueIdentifier), ["committed", "last"])
        XCTAssertEqual(try store.request(request.id)?.state, .done)
    }
}
