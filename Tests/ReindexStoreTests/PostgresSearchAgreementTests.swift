import Foundation
import ReindexHost
@testable import ReindexStore
import ReindexProtocol
import ReindexTestSupport
import XCTest

/// The same items in a SQLite index and a PostgreSQL index, searched with the same words: both
/// backends must agree on which items match (scores may differ).
final class PostgresSearchAgreementTests: XCTestCase {
    static let corpus: [ValidatedItem] = [
        PostgresStoreTests.item("ada", title: "Ada Park", text: "Staff engineer working on compilers", keywords: ["swift", "llvm"], description: "Engineering"),
        PostgresStoreTests.item("bea", title: "Béatrice Moreau", text: "Leads the café reopening", keywords: ["hospitality"], description: "Opérations"),
        PostgresStoreTests.item("chen", title: "Chen Wei", text: "Writes the search ranking code", keywords: ["search", "ranking"], description: "Search team"),
        PostgresStoreTests.item("dmitri", title: "Dmitri Orlov", text: "Compiler backend, register allocation", keywords: ["compilers"], description: "Engineering"),
        PostgresStoreTests.item("eve", title: "Eve Park-Lindqvist", text: "Security reviews and threat models", keywords: ["security"], description: "Security"),
        PostgresStoreTests.item("fatima", title: "Fatima Zahra", text: "Runs the data centre in Zürich", keywords: ["operations", "zurich"], description: "Infrastructure"),
        PostgresStoreTests.item("gus", title: "Gus", text: "Swiftly answers support tickets", keywords: ["support"], description: "Customer support"),
    ]

    static let queries = [
        "park", "PARK", "engineering", "compil", "compilers", "swift", "swi", "cafe", "CAFÉ", "operations", "opera",
        "zurich", "zürich", "search ranking", "ranking sea", "eve park", "park lindqvist", "security", "nothing-matches", "a",
        "staff engineer", "beatrice", "moreau béatrice", "data centre", "register alloc",
    ]

    func testBothBackendsMatchTheSameItemsForTheSameWords() throws {
        let scratch = try TestSupport.makeScratchDirectory(for: self)
        let sqlite = try IndexStore.open(path: "\(scratch)/index.sqlite")
        let local = try sqlite.makeWriter(bundleIdentifier: "com.example.people", scope: .live, requestID: nil, declarations: [:])
        for item in Self.corpus { try local.put(item) }
        _ = try local.acknowledge { _ in }

        let server = try PostgresServer.shared()
        let postgres = try PostgresStore.open(try PostgresLocation(server.connectionString, environment: ["REINDEX_PG_SCHEMA": server.freshSchema("agree")]))
        let remote = try postgres.makeWriter(bundleIdentifier: "com.example.people", scope: .live, requestID: nil, declarations: [:])
        for item in Self.corpus { try remote.put(item) }
        _ = try remote.acknowledge { _ in }

        var matched = 0
        for query in Self.queries {
            // The same results in the same order, with the same scores (BM25F on both).
            let expected = try sqlite.search(query, bundle: nil, domain: nil, limit: 100, now: Clock.now())
            let found = try postgres.search(query, bundle: nil, domain: nil, limit: 100, now: Clock.now())
            XCTAssertEqual(found.map(\.uniqueIdentifier), expected.map(\.uniqueIdentifier), "'\(query)'")
            XCTAssertEqual(found.map(\.score), expected.map(\.score), "'\(query)'")
            if !expected.isEmpty { matched += 1 }
        }
        XCTAssertGreaterThan(matched, Self.queries.count / 2, "most queries match something, so the agreement means something")
    }
}
