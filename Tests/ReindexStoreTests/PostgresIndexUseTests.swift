import Foundation
import ReindexHost
@testable import ReindexStore
import ReindexTestSupport
import ReindexProtocol
import XCTest

/// The rating indexes of the PostgreSQL schema (migration 4) are built on the query compiler's
/// own expression; if the two drift apart the planner silently stops using them and a filter or
/// sort on a large index reads every item again. With sequential scans and sorts priced out (a
/// table this small would rightly be read whole), the plan of each query must name its index.
final class PostgresIndexUseTests: XCTestCase {
    func testRatingFiltersAndTheBestFirstSortUseTheirIndexes() throws {
        let server = try PostgresServer.shared()
        let location = try PostgresLocation(server.connectionString, environment: ["REINDEX_PG_SCHEMA": server.freshSchema("plans")])
        let store = try PostgresStore.open(location)
        let writes = try PostgresWrites(store: store, bundleIdentifier: "com.example.plans", scope: .live)
        for n in 0..<50 {
            try writes.put(PostgresStoreTests.item("item.\(n)", title: "Rated item \(n)", extra: "\"rating\":\(Double(n % 10) / 2)"))
        }
        _ = try writes.acknowledge()
        try store.connection.execute("SET enable_seqscan = off; SET enable_sort = off")

        let filter = try store.queryPlan("rating >= 4", options: QueryOptions(limit: 5)).joined(separator: "\n")
        XCTAssertTrue(filter.contains("items_rating"), "a rating filter does not use its index:\n\(filter)")
        XCTAssertEqual(try store.query("rating >= 4", options: QueryOptions(limit: 50)).results.count, 10)

        let best = QueryOptions(limit: 5, sort: [QuerySort(attribute: "rating", descending: true)])
        let sorted = try store.queryPlan("", options: best).joined(separator: "\n")
        XCTAssertTrue(sorted.contains("items_rating_descending"), "the best-first sort does not use its index:\n\(sorted)")
        XCTAssertFalse(sorted.contains("Sort Key"), "the best-first sort sorts every item:\n\(sorted)")
        XCTAssertEqual(try store.query("", options: best).results.first?.attributes["rating"]?.doubleValue, 4.5)
    }
}
