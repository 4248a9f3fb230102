import Foundation
@testable import ReindexStore
import ReindexProtocol
import ReindexTestSupport
import XCTest

/// The attribute table (`AttributeSchema.table`) is the one place the built-in attributes are
/// described: the databases' columns, the item's text fields, PostgreSQL's weight classes and
/// the scores on both backends follow it.
final class AttributeTableTests: XCTestCase {
    private typealias T = TestSupport

    /// The SQLite schema's columns are the table's: a table that changed without a migration
    /// (or a migration without the table) fails here.
    func testTheSQLiteIndexHasTheTablesFullTextAndFilterColumnsInItsOrder() throws {
        let scratch = try T.makeScratchDirectory(for: self)
        let store = try IndexStore.open(path: "\(scratch)/index.sqlite")
        func columns(_ table: String) throws -> [String] {
            let info = try store.connection.prepare("PRAGMA table_info(\(table))")
            var names: [String] = []
            while try info.step() { names.append(info.text(1) ?? "") }
            return names
        }
        XCTAssertEqual(try columns("items_fts"), AttributeSchema.searched)
        let items = Set(try columns("items"))
        for column in AttributeSchema.filterColumns { XCTAssertTrue(items.contains(column), column) }
        XCTAssertEqual(AttributeSchema.searched, ["title", "displayName", "alternateNames", "contentDescription", "textContent", "keywords", "authors"],
                       "the full-text index's columns are the databases' own order")
    }

    /// Every full-text attribute has its text field on the item, has a slot of PostgreSQL's
    /// document in one of its weight classes, and every Spotlight name and filter column is one attribute's.
    func testEveryFullTextAttributeHasItsFieldAndOneWeightClass() {
        XCTAssertEqual(ValidatedItem.Field.searched.map(\.attributeKey), AttributeSchema.searched)
        for field in ValidatedItem.Field.allCases { XCTAssertEqual(field.attributeKey, field.attributeKey.map { _ in String(describing: field) }) }
        XCTAssertEqual(PostgresDocument.weightClasses.count, AttributeSchema.searched.count + 1, "a slot for each, and the declared attributes'")
        XCTAssertTrue(PostgresDocument.weightClasses.allSatisfy { (UInt8(ascii: "A")...UInt8(ascii: "D")).contains($0) })
        XCTAssertEqual(AttributeSchema.searchWeights.count, AttributeSchema.searched.count)
        XCTAssertEqual(Set(AttributeSchema.filterColumns).count, AttributeSchema.filtered.count)
        XCTAssertEqual(AttributeSchema.spotlightNames["kMDItemDescription"], "contentDescription")
        XCTAssertEqual(AttributeSchema.kinds.count, AttributeSchema.table.count, "each attribute once")
        XCTAssertEqual(FilterValues.count + 1, AttributeSchema.filtered.count, "contentType, then the numbers FilterValues holds")
    }

    /// One word, alone in one attribute of each item: both backends find every attribute's item
    /// and order them by the table's weights — PostgreSQL's field score is generated from the
    /// table as SQLite's BM25F weights are. (Items of equal weight tie; how each backend orders a
    /// tie is QUERIES.md's, "On PostgreSQL".)
    func testEachFullTextAttributeIsSearchedWithItsWeightOnBothBackends() throws {
        let searched = AttributeSchema.table.filter { $0.fullText != nil }
        let items = searched.map { attribute in
            let value: JSONValue = attribute.kind == .stringList ? .array([.string("zephyrine")]) : .string("zephyrine")
            return T.item("in.\(attribute.key)", extra: [(attribute.key, value)])
        }
        let weight = Dictionary(uniqueKeysWithValues: searched.map { ("in.\($0.key)", $0.fullText!.weight) })
        for index in try TestIndex.both(for: self) {
            try T.seed(try index.open(), bundle: "com.example.table", items)
            let queries = try Index.openForQueries(index.argument, environment: index.environment)
            let page = try queries.query("zephyrine", options: QueryOptions(limit: 20))
            let found = page.results.map(\.uniqueIdentifier)
            XCTAssertEqual(Set(found), Set(weight.keys), index.name)
            XCTAssertEqual(found.map { weight[$0] ?? 0 }, searched.map { $0.fullText!.weight }.sorted(by: >), "\(index.name): \(found)")
            for attribute in searched {
                let alone = try queries.query("\(attribute.key) == \"zephyrine\"cdw", options: QueryOptions(limit: 20))
                XCTAssertEqual(alone.results.map(\.uniqueIdentifier), ["in.\(attribute.key)"], "\(index.name): \(attribute.key)")
            }
        }
    }
}
