import Foundation
import ReindexHost
import ReindexSystem
@testable import ReindexStore
import ReindexProtocol
import ReindexTestSupport
import XCTest

/// Custom attributes declared in the manifest, end to end through a real extension
/// (Tests/Fixtures/extensions/catalogue.py): validated on index/put, filtered, sorted and searched.
final class CustomAttributeTests: XCTestCase {
    typealias T = TestSupport
    var scratch = ""
    let bundle = "com.example.catalogue"

    static let declarations: JSONValue = [
        "isbn": ["type": "string"],
        "pages": ["type": "number"],
        "published": ["type": "date"],
        "inPrint": ["type": "bool"],
        "genres": ["type": "strings", "searchable": true],
        "blurb": ["type": "string", "searchableByDefault": true],
    ]

    override func setUpWithError() throws {
        scratch = try T.makeScratchDirectory(for: self)
        try makeBundle(Self.declarations)
    }

    func makeBundle(_ declarations: JSONValue) throws {
        var spec = T.BundleSpec(bundle, executable: "catalogue.py")
        spec.extraManifest = [("attributes", declarations)]
        try T.makeBundle(spec, in: scratch + "/extensions")
    }

    func reindex(_ more: [String], stdin: String? = nil) throws -> T.CommandResult {
        try T.runReindex(["--index", scratch + "/index.sqlite", "--extensions-path", scratch + "/extensions"] + more, scratch: scratch, stdin: stdin)
    }

    func json(_ more: [String], file: StaticString = #filePath, line: UInt = #line) throws -> [String: Any] {
        let result = try reindex(["--json"] + more)
        XCTAssertEqual(result.status, 0, result.description, file: file, line: line)
        return try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any], result.description, file: file, line: line)
    }

    func found(_ query: String, _ extra: [String] = [], sorted: Bool = true, file: StaticString = #filePath, line: UInt = #line) throws -> [String] {
        let document = try json(["search", query, "--limit", "100"] + extra, file: file, line: line)
        let ids = (document["results"] as? [[String: Any]] ?? []).compactMap { $0["uniqueIdentifier"] as? String }
        return sorted ? ids.sorted() : ids
    }

    func testDeclaredAttributesAreValidatedFilteredSortedAndSearched() throws {
        let run = try reindex(["--json", "run", bundle])
        XCTAssertEqual(run.status, 0, run.description)
        let summary = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(run.stdout.utf8)) as? [String: Any])
        XCTAssertEqual(summary["put"] as? Int, 3)
        XCTAssertEqual(summary["rejected"] as? Int, 1)
        XCTAssertTrue(run.stderr.contains("items[3].attributes.pages: expected a number, got \"many\""), run.stderr)

        // Filters by each type.
        XCTAssertEqual(try found("pages >= 300"), ["b.1", "b.3"])
        XCTAssertEqual(try found("InRange(pages, 100, 400)"), ["b.1", "b.2"])
        XCTAssertEqual(try found("published > $time.iso(2020-01-01T00:00:00Z)"), ["b.2"])
        XCTAssertEqual(try found("inPrint == true"), ["b.1"])
        XCTAssertEqual(try found("inPrint != true"), ["b.2", "b.3"])
        XCTAssertEqual(try found(#"genres == "mystery""#), ["b.2"])
        XCTAssertEqual(try found(#"isbn == "978-2""#), ["b.2"])
        XCTAssertEqual(try found(#"isbn == "978-*" && pages < 500"#), ["b.1", "b.2"])
        // Sorted by a declared attribute, items without it last.
        XCTAssertEqual(try found("isbn == \"978-*\"", ["--sort", "pages:desc"], sorted: false), ["b.3", "b.1", "b.2"])
        XCTAssertEqual(try found("isbn == \"978-*\"", ["--sort", "published"], sorted: false), ["b.1", "b.2", "b.3"])
        // A searchable attribute is searched when named; one searchable by default also by words.
        XCTAssertEqual(try found(#"genres == "fiction"w"#), ["b.1"])
        XCTAssertEqual(try found(#"genres == "science fiction"w"#), ["b.1"])
        XCTAssertEqual(try found(#"genres != "fiction"w"#), ["b.2", "b.3"])
        XCTAssertEqual(try found("mystery"), [], "genres is searchable only when named")
        XCTAssertEqual(try found("lighthouse"), ["b.2"], "blurb is searchable by default")
        XCTAssertEqual(try found("lighthouse && pages < 200"), ["b.2"])
        XCTAssertEqual(try json(["search", "pages > 100", "--count"])["count"] as? Int, 3)
        // Not searchable: a clear error. Undeclared: as before (unknown attribute).
        let isbn = try reindex(["search", #"isbn == "978"w"#])
        XCTAssertEqual(isbn.status, 65, isbn.description)
        XCTAssertTrue(isbn.stderr.contains("isbn is declared without \"searchable\": true"), isbn.stderr)
        let shelf = try reindex(["search", #"shelf == "A""#])
        XCTAssertEqual(shelf.status, 65, shelf.description)
        XCTAssertTrue(shelf.stderr.contains("expected a known attribute"), shelf.stderr)
        let shown = try json(["show", bundle, "b.1"])
        XCTAssertEqual((shown["attributes"] as? [String: Any])?["shelf"] as? String, "A", "undeclared keys are kept and returned")

        // reindexItems writes under the declarations in effect.
        XCTAssertEqual(try reindex(["run", bundle, "--ids", "b.4"]).status, 0)
        XCTAssertEqual(try found("tide"), ["b.4"])
        XCTAssertEqual(try found(#"genres == "poetry"w"#), ["b.4"])

        // A partial update of a declared attribute keeps its side full-text row in step.
        let put = try reindex(["put", bundle], stdin: #"{"uniqueIdentifier":"b.4","isUpdate":true,"attributes":{"genres":["drama"],"blurb":null}}"# + "\n")
        XCTAssertEqual(put.status, 0, put.description)
        XCTAssertEqual(try found(#"genres == "poetry"w"#), [])
        XCTAssertEqual(try found(#"genres == "drama"w"#), ["b.4"])
        XCTAssertEqual(try found("tide"), [])
        let wrong = try reindex(["put", bundle], stdin: #"{"uniqueIdentifier":"b.5","attributes":{"pages":"ten"}}"# + "\n")
        XCTAssertEqual(wrong.status, 65, wrong.description)
        XCTAssertTrue(wrong.stderr.contains("item.attributes.pages: expected a number"), wrong.stderr)
        XCTAssertEqual(try json(["check"])["healthy"] as? Bool, true)
    }

    func testAChangedDeclarationTakesEffectAtTheNextReindexAll() throws {
        XCTAssertEqual(try reindex(["run", bundle]).status, 0)
        XCTAssertEqual(try found("lighthouse"), ["b.2"])
        var changed = Self.declarations.objectValue ?? []
        changed.removeAll { $0.0 == "blurb" || $0.0 == "pages" }
        changed.append(("blurb", ["type": "string"]))
        changed.append(("pages", ["type": "string"]))
        try makeBundle(.object(changed))
        // Until a reindexAll, the index answers with what its items were written under.
        XCTAssertEqual(try found("lighthouse"), ["b.2"])
        XCTAssertEqual(try found("pages >= 300"), ["b.1", "b.3"])
        let run = try json(["run", bundle])
        XCTAssertEqual(run["rejected"] as? Int, 3, "pages is a string now: the books' numbers are wrong")
        XCTAssertEqual(try found("lighthouse"), [])
        XCTAssertEqual(try found(#"pages == "many""#), ["b.bad"])
    }

    func testBadDeclarationsAreRefusedWithTheirKeyPath() throws {
        let cases: [(JSONValue, String)] = [
            (["title": ["type": "string"]], "attributes.title: expected a name that is not a built-in attribute"),
            (["pages": ["type": "integer"]], "attributes.pages.type: expected string, number, date, bool or strings, got \"integer\""),
            (["pages": ["type": "number", "searchable": true]], "attributes.pages.searchable: expected false for a number attribute"),
            (["pages": ["searchable": true]], "attributes.pages.type: is required"),
            (["9lives": ["type": "string"]], "attributes.9lives: expected an attribute name"),
            (["blurb": ["type": "string", "searchable": "yes"]], "attributes.blurb.searchable: expected"),
            (.array([]), "attributes: expected an object of attribute declarations"),
        ]
        for (declarations, message) in cases {
            try makeBundle(declarations)
            let list = try json(["list"])
            let problems = (list["problems"] as? [[String: Any]] ?? []).compactMap { $0["reason"] as? String }
            XCTAssertTrue(problems.contains { $0.contains(message) }, "\(declarations): \(problems)")
        }
    }

    func testFiltersAndSortsOnDeclaredAttributesReadTheirIndexAndFollowTheItems() throws {
        XCTAssertEqual(try reindex(["run", bundle]).status, 0)
        let store = try IndexStore.open(path: scratch + "/index.sqlite")
        func plan(_ query: String, sort: [QuerySort] = []) throws -> String {
            try store.queryPlan(query, options: QueryOptions(limit: 20, sort: sort)).joined(separator: "\n")
        }
        // Each type reads `item_attributes` through its (name, value) index, not the item's JSON.
        for query in ["pages >= 300", "InRange(pages, 100, 400)", "published > $time.iso(2020-01-01T00:00:00Z)", "inPrint == true"] {
            let explained = try plan(query)
            XCTAssertTrue(explained.contains("item_attributes_num"), "\(query): \(explained)")
        }
        for query in [#"isbn == "978-2""#, #"genres == "mystery""#, #"isbn > "978-1""#] {
            let explained = try plan(query)
            XCTAssertTrue(explained.contains("item_attributes_text"), "\(query): \(explained)")
        }
        // The first page of a sort by a declared attribute walks its index.
        let sorted = try plan("", sort: [QuerySort(attribute: "pages", descending: true)])
        XCTAssertTrue(sorted.contains("USING INDEX item_attributes_num") || sorted.contains("USING COVERING INDEX item_attributes_num"), sorted)
        XCTAssertEqual(try store.query("", options: QueryOptions(limit: 20, sort: [QuerySort(attribute: "pages", descending: true)])).results.map(\.uniqueIdentifier),
                       ["b.3", "b.1", "b.2"])
        for limit in [1, 2] {
            var options = QueryOptions(limit: limit, sort: [QuerySort(attribute: "pages")])
            var all: [String] = []
            while true {
                let page = try store.query("", options: options)
                all += page.results.map(\.uniqueIdentifier)
                guard let next = page.nextCursor else { break }
                options.after = next
            }
            XCTAssertEqual(all, ["b.2", "b.1", "b.3"], "limit \(limit)")
        }
        XCTAssertEqual(try found(#"isbn > "978-1""#), ["b.2", "b.3"])
        XCTAssertEqual(try found(#"isbn != "978-2""#), ["b.1", "b.3"])
        XCTAssertEqual(try found("pages != 120"), ["b.1", "b.3"])

        // The values move with their item: a reindexItems staging, a partial update, a delete,
        // and a reindexAll that replaces the generation.
        XCTAssertEqual(try reindex(["run", bundle, "--ids", "b.4"]).status, 0)
        XCTAssertEqual(try found("pages < 100"), ["b.4"])
        let update = try reindex(["put", bundle], stdin: #"{"uniqueIdentifier":"b.4","isUpdate":true,"attributes":{"pages":90,"genres":null}}"# + "\n")
        XCTAssertEqual(update.status, 0, update.description)
        XCTAssertEqual(try found("pages == 80"), [])
        XCTAssertEqual(try found("pages == 90"), ["b.4"])
        XCTAssertEqual(try found(#"genres == "poetry""#), [])
        let delete = try reindex(["delete", bundle, "--ids", "b.1"])
        XCTAssertEqual(delete.status, 0, delete.description)
        XCTAssertEqual(try found("pages >= 300"), ["b.3"])
        XCTAssertEqual(try reindex(["run", bundle]).status, 0)
        XCTAssertEqual(try found("pages >= 300"), ["b.1", "b.3"])
        XCTAssertEqual(try found("pages < 100"), [], "b.4 is not in the new generation")
        XCTAssertEqual(try json(["check"])["healthy"] as? Bool, true)
    }
}
