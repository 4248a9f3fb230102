import Foundation
import ReindexHost
@testable import ReindexStore
import ReindexTestSupport
import XCTest

/// The libpq wrapper against the real server the tests start (`PostgresServer`).
final class PostgresConnectionTests: XCTestCase {
    func testConnectsQueriesWithParametersAndReportsErrorsWithTheirState() throws {
        let server = try PostgresServer.shared()
        let connection = try PGConnection(server.connectionString)
        let result = try connection.query("SELECT $1::text || '!', $2::int + 1, $3::text IS NULL", ["héllo", "41", nil])
        XCTAssertEqual(result.text(0, 0), "héllo!")
        XCTAssertEqual(result.int(0, 1), 42)
        XCTAssertTrue(result.bool(0, 2))
        XCTAssertThrowsError(try connection.execute("SELECT * FROM no_such_table")) { error in
            XCTAssertEqual((error as? StoreError)?.sqlState, "42P01")
            XCTAssertNotEqual((error as? StoreError)?.code, .connectionLost)
        }
        // The connection is still usable after an error.
        XCTAssertEqual(try connection.query("SELECT 1").int(0, 0), 1)
    }

    func testATerminatedBackendIsReportedAsALostConnection() throws {
        let server = try PostgresServer.shared()
        let connection = try PGConnection(server.connectionString)
        let pid = connection.backendPID
        XCTAssertEqual(try server.psql("SELECT pg_terminate_backend(\(pid))"), "t")
        XCTAssertThrowsError(try connection.query("SELECT 1")) { error in
            XCTAssertEqual((error as? StoreError)?.code, .connectionLost, "\(error)")
        }
        XCTAssertFalse(connection.isHealthy)
    }

    func testAServerThatIsNotThereIsNamedWithItsHostAndPort() throws {
        XCTAssertThrowsError(try PGConnection("host=127.0.0.1 port=9 user=nobody dbname=none connect_timeout=5")) { error in
            let text = "\(error)"
            XCTAssertTrue(text.contains("127.0.0.1 port 9"), text)
            XCTAssertEqual((error as? StoreError)?.code, .connectionLost)
        }
    }

    func testPasswordsAreMaskedInEveryFormOfConnectionString() {
        XCTAssertEqual(PostgresLocation.masked("postgresql://ada:s3cret@db.example:5433/index?sslmode=require"),
                       "postgresql://ada:***@db.example:5433/index?sslmode=require")
        XCTAssertEqual(PostgresLocation.masked("postgres://ada@db/index?password=s3cret&sslmode=require"),
                       "postgres://ada@db/index?password=***&sslmode=require")
        XCTAssertEqual(PostgresLocation.masked("host=db user=ada password=s3cret dbname=index"),
                       "host=db user=ada password=*** dbname=index")
        XCTAssertEqual(PostgresLocation.masked("postgresql://ada@db/index"), "postgresql://ada@db/index")
    }

    func testTheSchemaComesFromTheEnvironmentOrTheSearchPathOption() throws {
        XCTAssertEqual(try PostgresLocation("postgresql://db/index").schema, "reindex")
        XCTAssertEqual(try PostgresLocation("postgresql://db/index?options=-csearch_path%3Dteam_a").schema, "team_a")
        XCTAssertEqual(try PostgresLocation("host=db options=-csearch_path=team_b").schema, "team_b")
        XCTAssertEqual(try PostgresLocation("postgresql://db/index", environment: ["REINDEX_PG_SCHEMA": "Team_C"]).schema, "team_c")
        XCTAssertThrowsError(try PostgresLocation("postgresql://db/index", environment: ["REINDEX_PG_SCHEMA": "a; DROP"]))
        XCTAssertTrue(PostgresLocation.isConnectionString("postgres://db/x"))
        XCTAssertTrue(PostgresLocation.isConnectionString("host=/tmp dbname=x"))
        XCTAssertFalse(PostgresLocation.isConnectionString("/var/lib/index.sqlite"))
        XCTAssertFalse(PostgresLocation.isConnectionString("index.sqlite"))
    }
}
