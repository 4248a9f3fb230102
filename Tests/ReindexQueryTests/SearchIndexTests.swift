import Foundation
import ReindexQuery
import ReindexTestSupport
import XCTest

/// The application API (the ReindexQuery product) end to end: a real extension
/// (Tests/Fixtures/extensions/films.py) builds the index through `reindex run`, and
/// `SearchIndex` reads it page by page.
final class SearchIndexTests: XCTestCase {
    var scratch = ""
    var index: SearchIndex { SearchIndex(path: scratch + "/index.sqlite") }

    override func setUpWithError() throws {
        scratch = try TestSupport.makeScratchDirectory(for: self)
        var spec = TestSupport.BundleSpec("com.example.films", executable: "films.py")
        spec.requestSeconds = 60
        try TestSupport.makeBundle(spec, in: scratch + "/extensions")
        let run = try TestSupport.runReindex(["--index", scratch + "/index.sqlite", "--extensions-path", scratch + "/extensions", "run", "com.example.films"],
                                             scratch: scratch)
        XCTAssertEqual(run.status, 0, run.description)
    }

    func testEveryPageOnceWithCountFieldsAndSort() async throws {
        var pages: [SearchPage] = []
        for try await page in index.search("harbour", options: SearchOptions(pageSize: 25, fields: ["title"], count: true)) {
            pages.append(page)
        }
        XCTAssertEqual(pages.map(\.hits.count), [25, 25, 25, 25, 20])
        XCTAssertEqual(pages.first?.totalCount, 120)
        XCTAssertNil(pages.last?.totalCount)
        let ids = pages.flatMap(\.hits).map(\.uniqueIdentifier)
        XCTAssertEqual(Set(ids).count, 120, "every match exactly once")
        XCTAssertTrue(pages.flatMap(\.hits).allSatisfy { $0.attributes.objectValue?.map(\.0) == ["title"] && $0.score != nil })
        XCTAssertNotNil(pages.first?.hits.first?.snippet)

        var sorted: [SearchHit] = []
        let query = #"rating >= 4 && contentType == "public.movie""#
        for try await page in index.search(query, options: SearchOptions(pageSize: 7, sort: [SortKey("rating", descending: true)])) {
            sorted += page.hits
        }
        let ratings = sorted.compactMap { $0.attributes["rating"]?.doubleValue }
        XCTAssertEqual(ratings.count, sorted.count)
        XCTAssertEqual(ratings, ratings.sorted(by: >))
        let total = try await index.count(query)
        XCTAssertEqual(sorted.count, total)

        // A cursor from one iteration continues in another.
        var iterator = index.search("harbour", options: SearchOptions(pageSize: 50)).makeAsyncIterator()
        let first = try await iterator.next()
        let rest = index.search("harbour", options: SearchOptions(pageSize: 100, cursor: first?.nextCursor))
        var after: [String] = []
        for try await page in rest { after += page.hits.map(\.uniqueIdentifier) }
        XCTAssertEqual(Set((first?.hits ?? []).map(\.uniqueIdentifier) + after).count, 120)
        XCTAssertEqual(after.count, 70)
    }

    func testCancellingTheTaskStopsTheIteration() async throws {
        let pages = index.search("harbour", options: SearchOptions(pageSize: 10))
        let task = Task { () -> (pages: Int, error: Error?) in
            var seen = 0
            do {
                for try await _ in pages {
                    seen += 1
                    if seen == 2 { withUnsafeCurrentTask { $0?.cancel() } }
                }
            } catch {
                return (seen, error)
            }
            return (seen, nil)
        }
        let outcome = await task.value
        XCTAssertEqual(outcome.pages, 2, "no page is read after the cancellation")
        XCTAssertTrue(outcome.error is CancellationError, "\(String(describing: outcome.error))")
    }

    func testBadQueriesAndAMissingIndexAreSearchErrors() async throws {
        do {
            for try await _ in index.search("rating >= ") {}
            XCTFail("a malformed query iterated")
        } catch let error as SearchError {
            XCTAssertEqual(error.code, .invalidQuery)
            XCTAssertTrue(error.message.contains("at 11: expected a value after '>='"), error.message)
        }
        do {
            for try await _ in SearchIndex(path: scratch + "/nothing.sqlite").search("x") {}
            XCTFail("a missing index iterated")
        } catch let error as SearchError {
            XCTAssertEqual(error.code, .noIndex)
        }
        XCTAssertFalse(FileManager.default.fileExists(atPath: scratch + "/nothing.sqlite"), "searching creates no index")
    }
}

/// Hostile input through the library: damaged cursors, cursors of another order and queries
/// past the limits are `SearchError`s with code `.invalidQuery` — never a trap, never a restart.
extension SearchIndexTests {
    func firstPageError(_ query: String, _ options: SearchOptions) async -> SearchError? {
        do {
            for try await _ in index.search(query, options: options) { return nil }
            return nil
        } catch {
            return error as? SearchError
        }
    }

    func testDamagedCursorsAndCursorsOfAnotherOrderThrow() async throws {
        for (cursor, names) in QueryCases.damagedCursors {
            for options in [SearchOptions(cursor: cursor), SearchOptions(sort: [SortKey("rating")], cursor: cursor)] {
                let error = await firstPageError("harbour", options)
                XCTAssertEqual(error?.code, .invalidQuery, "\(cursor): \(String(describing: error))")
                XCTAssertTrue(error?.message.contains(names) == true, "\(names): \(String(describing: error))")
            }
        }
        var relevance = index.search("harbour", options: SearchOptions(pageSize: 5)).makeAsyncIterator()
        let byRelevance = try await relevance.next()?.nextCursor
        var sorted = index.search("harbour", options: SearchOptions(pageSize: 5, sort: [SortKey("rating", descending: true)])).makeAsyncIterator()
        let byRating = try await sorted.next()?.nextCursor
        for (options, names) in [
            (SearchOptions(sort: [SortKey("rating", descending: true)], cursor: byRelevance), "by relevance"),
            (SearchOptions(cursor: byRating), "sorted by rating:desc"),
            (SearchOptions(sort: [SortKey("title")], cursor: byRating), "sorted by title:asc"),
        ] {
            let error = await firstPageError("harbour", options)
            XCTAssertEqual(error?.code, .invalidQuery, "\(String(describing: error))")
            XCTAssertTrue(error?.message.contains(names) == true, "\(names): \(String(describing: error))")
        }
        let count = try await index.count("harbour")
        XCTAssertEqual(count, 120)
    }

    func testQueriesPastTheLimitsThrowWithTheirPosition() async throws {
        for (name, query, position, _) in QueryCases.queriesPastTheLimits {
            let error = await firstPageError(query, SearchOptions())
            XCTAssertEqual(error?.code, .invalidQuery, name)
            XCTAssertTrue(error?.message.hasPrefix("query: at \(position): expected ") == true, "\(name): \(String(describing: error))")
            do {
                _ = try await index.count(query)
                XCTFail("\(name): counted")
            } catch let error as SearchError {
                XCTAssertEqual(error.code, .invalidQuery, name)
            }
        }
    }
}
