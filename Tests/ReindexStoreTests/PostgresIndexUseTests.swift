import Foundation
import ReindexHost
@testable import ReindexStore
import ReindexTestSupport
import ReindexProtocol
import XCTest

/// The rating indexes of the PostgreSQL schema (migration 4) are built on the query compiler's
/// own expression; if the two drift apart the planner silently stops using them and a filter or
/// sort on a large index reads every item again. With sequential scans priced out (a table this
/// small would rightly be read whole), and sorts too where a sort is what must not happen, the
/// plan of each query must name its index.
final class PostgresIndexUseTests: XCTestCase {
    /// A fresh index (schema `name`) holding `items` of one bundle, acknowledged.
    private func index(_ name: String, _ items: [ValidatedItem]) throws -> PostgresStore {
        let server = try PostgresServer.shared()
        let location = try PostgresLocation(server.connectionString, environment: ["REINDEX_PG_SCHEMA": server.freshSchema(name)])
        let store = try PostgresStore.open(location)
        let writes = try PostgresWrites(store: store, bundleIdentifier: "com.example.\(name)", scope: .live)
        for item in items { try writes.put(item) }
        _ = try writes.acknowledge()
        return store
    }

    /// The plan of the items `query`'s condition keeps, as the query compiles it: whether its
    /// filter can read its index. (Of a whole page, on a table this small, the planner rightly
    /// reads the bundle's few items through the index of bundle and identifier instead, once it
    /// knows the bundles, `analyzeBundlesIfNew`.)
    private func filterPlan(_ store: PostgresStore, _ query: String) throws -> String {
        let q = try store.prepare(query, options: QueryOptions(limit: 5))
        var compiler = q.compiler()
        let condition = try store.filters(q, &compiler)
        let plan = try store.query("EXPLAIN SELECT i.id FROM items i CROSS JOIN LATERAL (SELECT i.j) x(j) WHERE \(condition)", compiler.parameters)
        return (0..<plan.rowCount).compactMap { plan.text($0, 0) }.joined(separator: "\n")
    }

    func testRatingFiltersAndTheBestFirstSortUseTheirIndexes() throws {
        let store = try index("plans", (0..<50).map { n in
            PostgresStoreTests.item("item.\(n)", title: "Rated item \(n)", extra: "\"rating\":\(Double(n % 10) / 2)")
        })
        // Sorting stays allowed for the filter: a table this small, read whole in page order
        // (migration 8), would otherwise win over any index range and a sort of what it holds.
        try store.connection.execute("SET enable_seqscan = off")

        let filter = try filterPlan(store, "rating >= 4")
        XCTAssertTrue(filter.contains("items_rating"), "a rating filter does not use its index:\n\(filter)")
        XCTAssertEqual(try store.query("rating >= 4", options: QueryOptions(limit: 50)).results.count, 10)

        try store.connection.execute("SET enable_sort = off")

        let best = QueryOptions(limit: 5, sort: [QuerySort(attribute: "rating", descending: true)])
        let sorted = try store.queryPlan("", options: best).joined(separator: "\n")
        XCTAssertTrue(sorted.contains("items_rating_descending"), "the best-first sort does not use its index:\n\(sorted)")
        XCTAssertFalse(sorted.contains("Sort Key"), "the best-first sort sorts every item:\n\(sorted)")
        XCTAssertEqual(try store.query("", options: best).results.first?.attributes["rating"]?.doubleValue, 4.5)
    }

    /// Every filter attribute of the attribute table has its index (migrations 4 and 6), which
    /// a comparison on it uses — a date through `reindex_seconds`, the compiler's expression —
    /// and the newest-first sort by contentModificationDate reads its index without sorting.
    func testEveryFilterAttributeUsesItsIndexAndTheNewestFirstSortReadsItsOwn() throws {
        let store = try index("filters", (0..<60).map { n in
            let day = String(format: "%02d", 1 + n % 28)
            let dates = ["startDate", "endDate", "contentCreationDate", "contentModificationDate"]
                .map { "\"\($0)\":\"2026-02-\(day)T10:00:00+02:00\"" }.joined(separator: ",")
            return PostgresStoreTests.item("item.\(n)", title: "Filtered item \(n)",
                                           extra: "\"contentType\":\"type.\(n % 3)\",\"rankingHint\":\(n % 5),\(dates)")
        })
        try store.connection.execute("SET enable_seqscan = off")
        let comparisons: [String: String] = [
            "contentType": #"contentType == "type.1""#, "rating": "rating >= 4", "rankingHint": "rankingHint >= 3",
            "startDate": #"startDate >= "2026-02-20T00:00:00Z""#, "endDate": #"endDate < "2026-02-03T00:00:00Z""#,
            "contentCreationDate": "contentCreationDate >= $time.iso(2026-02-27T00:00:00Z)",
            "contentModificationDate": "InRange(contentModificationDate, $time.iso(2026-02-10T00:00:00Z), $time.iso(2026-02-11T00:00:00Z))",
        ]
        for (attribute, column) in zip(AttributeSchema.filtered, AttributeSchema.filterColumns) {
            let query = try XCTUnwrap(comparisons[attribute], "no query for \(attribute)")
            let plan = try filterPlan(store, query)
            XCTAssertTrue(plan.contains("items_\(column)"), "\(query) does not use items_\(column):\n\(plan)")
        }
        XCTAssertEqual(try store.query(#"contentType == "type.1""#, options: QueryOptions(limit: 100)).results.count, 20)
        XCTAssertEqual(try store.query(#"startDate >= "2026-02-20T00:00:00Z""#, options: QueryOptions(limit: 100)).results.count, 18,
                       "days 20 to 28 (08:00 UTC), two items each")
        try store.connection.execute("SET enable_sort = off")
        let newest = QueryOptions(limit: 5, sort: [QuerySort(attribute: "contentModificationDate", descending: true)])
        let sorted = try store.queryPlan("", options: newest).joined(separator: "\n")
        XCTAssertTrue(sorted.contains("items_modified_date_descending"), "the newest-first sort does not use its index:\n\(sorted)")
        XCTAssertFalse(sorted.contains("Sort Key"), "the newest-first sort sorts every item:\n\(sorted)")
        XCTAssertEqual(try store.query("", options: newest).results.map(\.uniqueIdentifier).prefix(2), ["item.27", "item.55"])
    }

    /// Every search joins an item to its live bundle. The bundles' table holds a few rows, which
    /// autovacuum would analyze only after 50 changes; without its statistics the planner took
    /// that join to keep one item in 200, and a filter without words sorted all its matches
    /// where reading the items in page order stops at the page (at 1M items, 60–170 ms against
    /// about 1). The first acknowledgement of a bundle analyzes the table (migration 18 leaves
    /// later changes to autovacuum).
    func testAFilterWithoutWordsReadsInPageOrderOnceItsBundleIsLive() throws {
        let store = try index("bundlestats", (0..<4_000).map { n in
            let date = n % 2 == 0 ? RFC3339.format(Clock.now() - 86_400) : "2020-01-01T00:00:00Z"
            return PostgresStoreTests.item("item.\(n)", title: "Dated item \(n)", extra: "\"contentModificationDate\":\"\(date)\"")
        })
        // (The items as autovacuum analyzes them after a load.)
        _ = try store.query("ANALYZE items")
        XCTAssertEqual(try store.query("SELECT reltuples FROM pg_class WHERE oid = 'bundles'::regclass").double(0, 0), 1, "the bundles are analyzed")
        let query = "contentModificationDate >= $time.today(-30)"
        let plan = try store.queryPlan(query, options: QueryOptions(limit: 20)).joined(separator: "\n")
        XCTAssertTrue(plan.contains("items_order"), "the filter does not read the items in page order:\n\(plan)")
        XCTAssertFalse(plan.contains("Sort Key"), "the filter sorts its matches:\n\(plan)")
        XCTAssertEqual(try store.query(query, options: QueryOptions(limit: 3)).results.map(\.uniqueIdentifier), ["item.0", "item.10", "item.100"])
    }

    /// A filter no index answers (keywords here; a declared attribute, a domain with another
    /// condition) reads the items in the page's order (migration 8) and stops at the page: no
    /// sort of every match.
    func testAFilterWithoutAnIndexOfItsOwnReadsItemsInPageOrder() throws {
        let store = try index("order", (0..<60).map { n in PostgresStoreTests.item("item.\(n)", title: "Kept item \(n)", keywords: ["k\(n % 3)"]) })
        try store.connection.execute("SET enable_sort = off")
        let plan = try store.queryPlan(#"keywords == "k1""#, options: QueryOptions(limit: 5)).joined(separator: "\n")
        XCTAssertTrue(plan.contains("items_order"), "the filter does not read items in page order:\n\(plan)")
        XCTAssertFalse(plan.contains("Sort Key"), "the filter sorts every match:\n\(plan)")
        XCTAssertEqual(try store.query(#"keywords == "k1""#, options: QueryOptions(limit: 5)).results.map(\.uniqueIdentifier),
                       ["item.1", "item.10", "item.13", "item.16", "item.19"])
    }
    /// A page stops after a few rows: starting parallel workers, or compiling the plan (JIT),
    /// cost more than the page (10 and 12 ms against under 1 ms at 1M items). With both priced
    /// at nothing on the connection, a page's plan still has neither.
    func testAPageRunsWithoutParallelWorkersOrJIT() throws {
        let store = try index("serial", (0..<60).map { n in
            PostgresStoreTests.item("item.\(n)", title: "Serial item \(n)", extra: "\"keywords\":[\"k\(n % 4)\"]")
        })
        for setting in ["parallel_setup_cost = 0", "parallel_tuple_cost = 0", "min_parallel_table_scan_size = 0",
                        "min_parallel_index_scan_size = 0", "jit_above_cost = 0", "jit_inline_above_cost = 0", "jit_optimize_above_cost = 0"] {
            try store.connection.execute("SET \(setting)")
        }
        for query in [#"keywords == "k1""#, "serial", ""] {
            let plan = try store.queryPlan(query, options: QueryOptions(limit: 5)).joined(separator: "\n")
            XCTAssertFalse(plan.contains("Gather"), "\(query): a page starts parallel workers:\n\(plan)")
            XCTAssertFalse(plan.contains("JIT"), "\(query): a page is compiled:\n\(plan)")
        }
        XCTAssertEqual(try store.query(#"keywords == "k1""#, options: QueryOptions(limit: 50)).results.count, 15)
    }
}
