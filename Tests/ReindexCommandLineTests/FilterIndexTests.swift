import Foundation
import ReindexHost
import ReindexSystem
@testable import ReindexCommandLine
@testable import ReindexStore
import ReindexProtocol
import ReindexTestSupport
import XCTest

/// The filter columns (contentType, rating, rankingHint, dates) through `reindex put` and
/// `reindex search`: comparisons and sorts read the columns, and a sort by an indexed attribute
/// pages through the items with it, then those without, every item once.
final class FilterIndexTests: XCTestCase {
    var scratch = ""

    override func setUpWithError() throws {
        scratch = try TestSupport.makeScratchDirectory(for: self)
        var lines: [String] = []
        for n in 0..<9 {
            var attributes = #""title":"Note \#(n)""#
            if n % 3 != 0 { attributes += #","rating":\#(Double(n % 4)),"startDate":"2026-03-0\#(n + 1)T10:00:00+02:00""# }
            if n % 2 == 0 { attributes += #","contentType":"public.text""# }
            lines.append(#"{"uniqueIdentifier":"n.\#(n)","attributes":{\#(attributes)}}"#)
        }
        let put = try reindex(["put", "com.example.notes"], stdin: lines.joined(separator: "\n") + "\n")
        XCTAssertEqual(put.status, 0, put.description)
    }

    func reindex(_ arguments: [String], stdin: String? = nil) throws -> TestSupport.CommandResult {
        try TestSupport.runReindex(["--index", scratch + "/index.sqlite"] + arguments, scratch: scratch, stdin: stdin)
    }

    func pages(_ query: String, _ extra: [String], limit: Int) throws -> [String] {
        var cursor: String? = nil
        var all: [String] = []
        for _ in 0..<100 {
            let result = try reindex(["--json", "search", query, "--limit", String(limit)] + extra + (cursor.map { ["--after", $0] } ?? []))
            XCTAssertEqual(result.status, 0, result.description)
            let document = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any])
            all += (document["results"] as? [[String: Any]] ?? []).compactMap { $0["uniqueIdentifier"] as? String }
            guard let next = document["nextCursor"] as? String else { return all }
            cursor = next
        }
        XCTFail("paging did not end")
        return all
    }

    /// A page after a cursor that holds nothing says it is the end of the pages, not that the
    /// query finds nothing.
    func testAnEmptyPageAfterACursorSaysNoMoreItems() throws {
        let first = try reindex(["--json", "search", "", "--sort", "rating", "--limit", "6"])
        let document = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(first.stdout.utf8)) as? [String: Any], first.description)
        let cursor = try XCTUnwrap(document["nextCursor"] as? String, first.description)
        let after = try reindex(["search", "rating >= 3", "--sort", "rating", "--after", cursor])
        XCTAssertEqual(after.status, 0, after.description)
        XCTAssertEqual(after.stdout, "No more items match 'rating >= 3' after this cursor.\n", after.description)
        let none = try reindex(["search", "rating >= 9"])
        XCTAssertEqual(none.stdout, "No items match 'rating >= 9'.\n", none.description)
    }

    func testComparisonsAndSortsReadTheColumnsAndPageAcrossItemsWithoutTheAttribute() throws {
        // ratings: n.1 1, n.2 2, n.4 0, n.5 1, n.7 3, n.8 0; n.0 n.3 n.6 have none.
        XCTAssertEqual(try pages("rating >= 2", [], limit: 10), ["n.2", "n.7"])
        XCTAssertEqual(try pages("InRange(rating, 1, 2)", [], limit: 10), ["n.1", "n.2", "n.5"])
        XCTAssertEqual(try pages("rating != 1", [], limit: 10), ["n.0", "n.2", "n.3", "n.4", "n.6", "n.7", "n.8"])
        XCTAssertEqual(try pages(#"contentType == "public.text" && rating < 1"#, [], limit: 10), ["n.4", "n.8"])
        // 2026-03-05T10:00+02:00 is 08:00Z: the column holds seconds, offsets applied.
        XCTAssertEqual(try pages("startDate >= $time.iso(2026-03-05T08:00:00Z)", [], limit: 10), ["n.4", "n.5", "n.7", "n.8"])
        for limit in [1, 2, 4, 20] {
            XCTAssertEqual(try pages("", ["--sort", "rating"], limit: limit), ["n.4", "n.8", "n.1", "n.5", "n.2", "n.7", "n.0", "n.3", "n.6"], "limit \(limit)")
            XCTAssertEqual(try pages("", ["--sort", "rating:desc"], limit: limit), ["n.7", "n.2", "n.1", "n.5", "n.4", "n.8", "n.0", "n.3", "n.6"], "limit \(limit)")
            XCTAssertEqual(try pages("note", ["--sort", "startDate:desc", "--sort", "title"], limit: limit),
                           ["n.8", "n.7", "n.5", "n.4", "n.2", "n.1", "n.0", "n.3", "n.6"], "limit \(limit)")
        }
        // A partial update keeps the columns in step.
        let put = try reindex(["put", "com.example.notes"], stdin: #"{"uniqueIdentifier":"n.7","isUpdate":true,"attributes":{"rating":null}}"# + "\n")
        XCTAssertEqual(put.status, 0, put.description)
        XCTAssertEqual(try pages("rating >= 2", [], limit: 10), ["n.2"])
    }
}
