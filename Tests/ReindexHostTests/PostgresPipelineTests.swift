import Foundation
import ReindexHost
@testable import ReindexStore
import ReindexTestSupport
import ReindexProtocol
import XCTest

/// The PostgreSQL write path sends each group of puts without waiting for it (the server inserts
/// one group while the host reads the next): a group the server refuses must still fail the
/// batch it belongs to, and leave nothing of it visible.
final class PostgresPipelineTests: XCTestCase {
    func testAGroupTheServerRefusesFailsItsBatchAndNothingOfItIsVisible() throws {
        let server = try PostgresServer.shared()
        let schema = server.freshSchema("pipeline")
        let location = try PostgresLocation(server.connectionString, environment: ["REINDEX_PG_SCHEMA": schema])
        let store = try PostgresStore.open(location)
        let reader = try PostgresStore.open(location)
        // The server refuses one identifier; the host cannot know that before it is told.
        try server.psql("ALTER TABLE \(schema).items ADD CONSTRAINT refused CHECK (uid <> 'item.100')")
        let writes = try PostgresWrites(store: store, bundleIdentifier: "com.example.pipeline", scope: .live)
        // The refused item is in the first group, sent without waiting when it is full; its error
        // is read by the next statement.
        for n in 0..<(PostgresWrites.groupRows + 1000) {
            try writes.put(PostgresStoreTests.item("item.\(n)", title: "Pipelined item \(n)"))
        }
        XCTAssertThrowsError(try writes.commitBatch()) { error in
            XCTAssertTrue("\(error)".contains("refused"), "the error names the constraint: \(error)")
        }
        writes.rollback()
        XCTAssertEqual(try reader.itemCount(bundle: "com.example.pipeline"), 0, "nothing of the failed batch is visible")
        // The connection is usable again, and a batch without the refused item commits whole.
        let again = try PostgresWrites(store: store, bundleIdentifier: "com.example.pipeline", scope: .live)
        for n in 0..<3000 where n != 100 { try again.put(PostgresStoreTests.item("item.\(n)", title: "Pipelined item \(n)")) }
        try again.commitBatch()
        XCTAssertEqual(try reader.itemCount(bundle: "com.example.pipeline"), 2999)
    }
}
