import Foundation
import ReindexHost
@testable import ReindexStore
import ReindexTestSupport
import XCTest

/// The one store error: SQLite's result codes and PostgreSQL's SQLSTATEs sorted into the same
/// codes, and each code explained with the exit code of cli.md — the PostgreSQL cases provoked
/// for real on the server the tests start.
final class StoreErrorTests: XCTestCase {
    func testEachCodeMapsToItsExitCode() {
        let expected: [(StoreError.Code, Int32)] = [
            (.busy, 75), (.connectionLost, 75), (.leaseLost, 75),
            (.damaged, 74), (.full, 74), (.unavailable, 74), (.newerSchema, 74), (.invalid, 74),
            (.internal, 70),
        ]
        for (code, exit) in expected {
            for error in [StoreError(code, "m", context: "UPDATE items", sqliteCode: 1), StoreError(code, "m", sqlState: "XX000")] {
                XCTAssertEqual(error.explained(index: "/tmp/index.sqlite").code.exitCode, exit, "\(code) from \(error)")
            }
        }
        // From a query, a statement the index would not run is the query's shape.
        XCTAssertEqual(StoreError(.invalid, "too deep", sqliteCode: 1).explained(index: "i", doing: "search failed", query: true).code.exitCode, 65)
        XCTAssertEqual(StoreError(.busy, "locked", sqlState: "55P03").explained(index: "i", doing: "search failed", query: true).code.exitCode, 75)
        XCTAssertEqual(StoreError(.damaged, "bad page").explained(index: "i", query: true).code.exitCode, 74)
    }

    func testSQLiteResultCodesAndSQLStatesHaveTheSameCodes() {
        let sqlite: [(Int32, StoreError.Code)] = [
            (5, .busy), (6, .busy), (517, .busy), (11, .damaged), (26, .damaged), (13, .full),
            (10, .unavailable), (14, .unavailable), (8, .unavailable), (3, .unavailable),
            (1, .invalid), (18, .invalid), (7, .invalid), (25, .invalid), (21, .internal),
        ]
        for (code, expected) in sqlite {
            XCTAssertEqual(StoreError(sqlite: code, message: "m", context: "c").code, expected, "SQLite result code \(code)")
        }
        let states: [(String?, StoreError.Code)] = [
            ("40001", .busy), ("40P01", .busy), ("55P03", .busy), ("57014", .busy),
            ("08006", .connectionLost), ("08001", .connectionLost), ("53100", .full), ("XX001", .damaged), ("XX002", .damaged),
            ("54001", .invalid), ("22P02", .invalid), ("53200", .invalid), ("42601", .invalid),
            ("42P01", .unavailable), ("42501", .unavailable), (nil, .unavailable),
        ]
        for (state, expected) in states {
            XCTAssertEqual(StoreError(postgres: state, message: "m", context: "c").code, expected, state ?? "no SQLSTATE")
        }
        XCTAssertEqual(StoreError(postgres: nil, message: "gone", context: "", connectionLost: true).code, .connectionLost)
    }

    func testWhatEachCodeSays() {
        let path = "/tmp/index.sqlite"
        XCTAssertTrue(StoreError(sqlite: 11, message: "malformed", context: path).explained(index: path).message
            .contains("is damaged (malformed); run 'reindex reset'"))
        XCTAssertTrue(StoreError(sqlite: 5, message: "database is locked", context: "BEGIN IMMEDIATE").explained(index: path).message
            .contains("is busy: another program held its write lock past the busy timeout; try again later"))
        XCTAssertTrue(StoreError(sqlite: 13, message: "database or disk is full", context: "COMMIT").explained(index: path).message
            .contains("the disk is full"))
        XCTAssertTrue(StoreError(postgres: "53100", message: "could not extend file", context: "INSERT").explained(index: "pg").message
            .contains("cannot write the index at pg: the disk is full"))
        XCTAssertTrue(StoreError(postgres: "XX001", message: "invalid page in block 0", context: "SELECT").explained(index: "pg").message
            .contains("the index at pg is damaged"))
        XCTAssertTrue(StoreError(.newerSchema, "the index was written by a newer reindex (schema 99)", context: path, sqliteCode: 1)
            .explained(index: path).message.contains("newer reindex"))
        // An error of the host's passes through; one of neither is internal.
        XCTAssertEqual(Index.explain(ReindexError(.usage, "u"), index: path).code, .usage)
        struct Other: Error {}
        XCTAssertEqual(Index.explain(Other(), index: path).code, .internal)
    }
}

/// PostgreSQL errors of a real server carry their code and are explained by it: a busy index
/// (75), a lost connection (75), never an I/O error.
final class PostgresStoreErrorTests: XCTestCase {
    private typealias T = TestSupport
    private var server: PostgresServer!
    private var schema = ""

    override func setUpWithError() throws {
        server = try PostgresServer.shared()
        schema = server.freshSchema("errors")
        try server.psql("CREATE SCHEMA \(schema); CREATE TABLE \(schema).t (k int PRIMARY KEY, v int); INSERT INTO \(schema).t VALUES (1, 0), (2, 0)")
    }

    private func session() throws -> PGConnection {
        let connection = try PGConnection(server.connectionString)
        try connection.execute("SET search_path TO \(PGConnection.quoteIdentifier(schema))")
        return connection
    }

    func testASerializationFailureIsTheIndexBeingBusy() throws {
        let reader = try session(), writer = try session()
        try reader.begin("ISOLATION LEVEL REPEATABLE READ")
        _ = try reader.query("SELECT v FROM t WHERE k = 1")
        _ = try writer.execute("UPDATE t SET v = 2 WHERE k = 1")
        XCTAssertThrowsError(try reader.execute("UPDATE t SET v = 3 WHERE k = 1")) { error in
            guard let error = error as? StoreError else { return XCTFail("not a StoreError: \(error)") }
            XCTAssertEqual(error.sqlState, "40001")
            XCTAssertEqual(error.code, .busy)
            let explained = Index.explain(error, index: server.connectionURI, doing: "search failed")
            XCTAssertEqual(explained.code.exitCode, 75, explained.message)
            XCTAssertTrue(explained.message.hasPrefix("search failed: the index at postgresql://"), explained.message)
            XCTAssertTrue(explained.message.contains("is busy (could not serialize access"), explained.message)
            XCTAssertFalse(explained.message.contains("I/O error"), explained.message)
        }
        reader.rollback()
    }

    func testALockNotAvailableIsTheIndexBeingBusy() throws {
        let holder = try session(), waiter = try session()
        try holder.begin()
        _ = try holder.query("SELECT v FROM t WHERE k = 2 FOR UPDATE")
        XCTAssertThrowsError(try waiter.query("SELECT v FROM t WHERE k = 2 FOR UPDATE NOWAIT")) { error in
            XCTAssertEqual((error as? StoreError)?.sqlState, "55P03", "\(error)")
            XCTAssertEqual((error as? StoreError)?.code, .busy, "\(error)")
            XCTAssertEqual(Index.explain(error, index: server.connectionString).code.exitCode, 75)
        }
        holder.rollback()
    }

    func testALostConnectionIsExplainedAsOneWorthTryingAgain() throws {
        let store = try PostgresStore.open(try PostgresLocation(server.connectionString, environment: ["REINDEX_PG_SCHEMA": server.freshSchema("lost")]))
        XCTAssertEqual(try server.psql("SELECT pg_terminate_backend(\(store.connection.backendPID))"), "t")
        XCTAssertThrowsError(try store.connection.query("SELECT 1")) { error in
            XCTAssertEqual((error as? StoreError)?.code, .connectionLost, "\(error)")
            let explained = store.explain(error, doing: "status failed")
            XCTAssertEqual(explained.code.exitCode, 75, explained.message)
            XCTAssertTrue(explained.message.hasPrefix("status failed: the connection to PostgreSQL at "), explained.message)
            XCTAssertTrue(explained.message.hasSuffix("; try again"), explained.message)
        }
    }

    /// Through the command line: `reset` waits for a transaction in progress at most its lock
    /// timeout, then the lock it could not get is the index being busy (75), named with the
    /// password masked, and nothing is erased.
    func testResetBlockedByATransactionInProgressExitsBusy() throws {
        let scratch = try T.makeScratchDirectory(for: self)
        let schema = server.freshSchema("reset")
        let store = try PostgresStore.open(try PostgresLocation(server.connectionString, environment: ["REINDEX_PG_SCHEMA": schema]))
        try T.seed(store, bundle: "com.example.kept", [T.item("a", title: "Kept")])
        let holder = try PGConnection(server.connectionString)
        try holder.begin()
        _ = try holder.query("SELECT count(*) FROM \(PGConnection.quoteIdentifier(schema)).items")
        defer { holder.rollback() }
        let index = "postgresql://postgres:s3cret-pw@\(server.socketDirectory.replacingOccurrences(of: "/", with: "%2F")):\(server.port)/postgres"
        let result = try T.runReindex(["--index", index, "reset"], scratch: scratch,
                                      environment: T.commandEnvironment(scratch: scratch, extra: ["REINDEX_PG_SCHEMA": schema]), timeout: 60)
        XCTAssertEqual(result.status, 75, "\(result)")
        XCTAssertTrue(result.stderr.contains("reset failed: the index at postgresql://postgres:***@"), result.stderr)
        XCTAssertTrue(result.stderr.contains("is busy (") && result.stderr.contains("try again later"), result.stderr)
        XCTAssertFalse(result.stderr.contains("s3cret") || result.stderr.contains("I/O error"), result.stderr)
        XCTAssertEqual(try store.itemCount(bundle: "com.example.kept", now: 0), 1, "nothing is erased")
    }
}
