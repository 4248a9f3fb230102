import Foundation
import ReindexQuery
import ReindexTestSupport
import XCTest

/// The application API on a PostgreSQL index: `SearchIndex` takes a connection string where it
/// takes a path, and pages, counts and fails as it does on a SQLite file.
final class PostgresSearchIndexTests: XCTestCase {
    var scratch = ""
    var index = ""

    override func setUpWithError() throws {
        scratch = try TestSupport.makeScratchDirectory(for: self)
        let server = try PostgresServer.shared()
        // The schema chosen in the connection string itself, as an application would.
        index = server.connectionURI + "?options=-csearch_path%3D" + server.freshSchema("api")
        var spec = TestSupport.BundleSpec("com.example.films", executable: "films.py")
        spec.requestSeconds = 60
        try TestSupport.makeBundle(spec, in: scratch + "/extensions")
        let run = try TestSupport.runReindex(["--index", index, "--extensions-path", scratch + "/extensions", "run", "com.example.films"], scratch: scratch)
        XCTAssertEqual(run.status, 0, run.description)
    }

    func testPagesCountsAndErrorsFromAPostgreSQLIndex() async throws {
        let search = SearchIndex(path: index)
        var pages: [SearchPage] = []
        for try await page in search.search("harbour", options: SearchOptions(pageSize: 25, fields: ["title"], count: true)) {
            pages.append(page)
        }
        XCTAssertEqual(pages.map(\.hits.count), [25, 25, 25, 25, 20])
        XCTAssertEqual(pages.first?.totalCount, 120)
        XCTAssertEqual(Set(pages.flatMap(\.hits).map(\.uniqueIdentifier)).count, 120)
        XCTAssertEqual(Set(pages.flatMap(\.hits).flatMap { ($0.attributes.objectValue ?? []).map(\.0) }), ["title"])

        var sorted: [String] = []
        for try await page in search.search("rating >= 5", options: SearchOptions(pageSize: 6, sort: [SortKey("startDate", descending: true)])) {
            sorted += page.hits.map(\.uniqueIdentifier)
        }
        XCTAssertEqual(sorted.first, "film.dune")
        XCTAssertEqual(sorted.count, 21)
        let count = try await search.count(#"title == "dune*"cd"#)
        XCTAssertEqual(count, 2)

        do {
            for try await _ in search.search("rating >= ") {}
            XCTFail("a malformed query throws")
        } catch let error as SearchError {
            XCTAssertEqual(error.code, .invalidQuery)
            XCTAssertTrue(error.message.contains("at 11"), error.message)
        }
        do {
            for try await _ in SearchIndex(path: "postgresql://nobody@127.0.0.1:9/none").search("dune") {}
            XCTFail("an unreachable server throws")
        } catch let error as SearchError {
            XCTAssertEqual(error.code, .io)
            XCTAssertTrue(error.message.contains("127.0.0.1"), error.message)
        }
    }
}
