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

    /// A reindexAll's groups skip the conflict check when none of their identifiers was sent
    /// before; one sent again, in a later group or after a resume, still replaces the first.
    func testAnIdentifierPutAgainInALaterGroupOrAfterAResumeReplacesTheFirst() throws {
        let server = try PostgresServer.shared()
        let location = try PostgresLocation(server.connectionString, environment: ["REINDEX_PG_SCHEMA": server.freshSchema("again")])
        let store = try PostgresStore.open(location)
        let writes = try PostgresWrites(store: store, bundleIdentifier: "com.example.again", scope: .replacement(generation: 7))
        for n in 0..<(2 * PostgresWrites.groupRows) { try writes.put(PostgresStoreTests.item("item.\(n)", title: "First \(n)")) }
        try writes.put(PostgresStoreTests.item("item.1", title: "Second one"))
        try writes.commitBatch()
        // A retry of the same request resumes after the committed batch, and sends item.2 again.
        let resumed = try PostgresWrites(store: store, bundleIdentifier: "com.example.again", scope: .replacement(generation: 7))
        try resumed.put(PostgresStoreTests.item("item.2", title: "Resumed two"))
        _ = try resumed.acknowledge()
        XCTAssertEqual(try store.itemCount(bundle: "com.example.again"), 2 * PostgresWrites.groupRows)
        XCTAssertEqual(try store.search("second").map(\.uniqueIdentifier), ["item.1"])
        XCTAssertEqual(try store.search("resumed").map(\.uniqueIdentifier), ["item.2"])
        let firsts = try store.search("first", limit: 10_000).map(\.uniqueIdentifier)
        XCTAssertEqual(firsts.count, 2 * PostgresWrites.groupRows - 2)
        XCTAssertFalse(firsts.contains("item.1") || firsts.contains("item.2"))
    }

    /// A group's arrays are built from the items' bytes: quotes, backslashes, braces, commas,
    /// the word NULL, empty text, newlines and NUL (which PostgreSQL text cannot hold, so it is
    /// left out) come back as sent, in every column, and absent fields stay NULL. (jsonb has no
    /// NUL either, so the attributes here hold none.)
    func testEveryColumnOfAGroupKeepsItsTextWhateverItHolds() throws {
        let server = try PostgresServer.shared()
        let location = try PostgresLocation(server.connectionString, environment: ["REINDEX_PG_SCHEMA": server.freshSchema("bytes")])
        let store = try PostgresStore.open(location)
        let awkward = ["say \"hi\"", "back\\slash", "{comma, brace}", "NULL", "", "two\nlines", "tab\there", "zoë", "nul\u{0}byte"]
        let writes = try PostgresWrites(store: store, bundleIdentifier: "com.example.bytes", scope: .live)
        for (n, text) in awkward.enumerated() {
            try writes.put(PostgresStoreTests.item("uid \(n) \(text)", title: "Title\(n) \(text)", domain: n % 2 == 0 ? "domain.\(text)" : nil,
                                                   extra: "\"path\":\(JSONWriter.string(.string(text.replacingOccurrences(of: "\u{0}", with: ""))))"))
        }
        try writes.commitBatch()
        let rows = try store.query("SELECT uid, domain, attributes::text FROM items WHERE bundle = 'com.example.bytes' ORDER BY id")
        XCTAssertEqual(rows.rowCount, awkward.count)
        for (n, text) in awkward.enumerated() {
            let kept = text.replacingOccurrences(of: "\u{0}", with: "")
            XCTAssertEqual(rows.text(n, 0), "uid \(n) \(kept)")
            XCTAssertEqual(rows.text(n, 1), n % 2 == 0 ? "domain.\(kept)" : nil)
            let attributes = try JSONParser.parse(text: rows.text(n, 2) ?? "")
            XCTAssertEqual(attributes["path"]?.stringValue, kept, "the attributes' JSON keeps its escapes")
        }
        XCTAssertEqual(uids(try store.search("brace")), ["uid 2 {comma, brace}"])
        XCTAssertEqual(uids(try store.search("title7")), ["uid 7 zoë"])
    }

    private func uids(_ results: [SearchResult]) -> [String] { results.map(\.uniqueIdentifier).sorted() }
}
