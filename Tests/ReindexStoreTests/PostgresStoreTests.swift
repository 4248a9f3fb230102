import Foundation
import ReindexHost
@testable import ReindexStore
import ReindexTestSupport
import ReindexProtocol
import XCTest

/// The PostgreSQL store against the real server the tests start: the guarantees of
/// protocol-v1.md ("What the host guarantees") and the fleet's queue. Each test has a schema of
/// its own, so each starts from an empty index.
final class PostgresStoreTests: XCTestCase {
    func open(_ server: PostgresServer, schema: String) throws -> PostgresStore {
        try PostgresStore.open(try PostgresLocation(server.connectionString, environment: ["REINDEX_PG_SCHEMA": schema]))
    }

    func makeStores(_ count: Int = 1) throws -> (PostgresServer, [PostgresStore]) {
        let server = try PostgresServer.shared()
        let schema = server.freshSchema()
        return (server, try (0..<count).map { _ in try open(server, schema: schema) })
    }

    static func item(_ uid: String, title: String? = nil, text: String? = nil, keywords: [String]? = nil, domain: String? = nil,
                     description: String? = nil, update: Bool = false, extra: String = "") -> ValidatedItem {
        var members: [String] = []
        if let title { members.append("\"title\":\(JSONWriter.string(.string(title)))") }
        if let text { members.append("\"textContent\":\(JSONWriter.string(.string(text)))") }
        if let description { members.append("\"contentDescription\":\(JSONWriter.string(.string(description)))") }
        if let keywords { members.append("\"keywords\":\(JSONWriter.string(.array(keywords.map(JSONValue.string))))") }
        if !extra.isEmpty { members.append(extra) }
        return ValidatedItem(uniqueIdentifier: uid, domainIdentifier: domain, expiration: nil,
                             searchText: [title, nil, nil, description, text, keywords?.joined(separator: "\n"), nil],
                             attributesJSON: Array("{\(members.joined(separator: ","))}".utf8), isUpdate: update)
    }

    func uids(_ results: [SearchResult]) -> [String] { results.map(\.uniqueIdentifier).sorted() }

    /// A PostgreSQL store and a SQLite file, both empty.
    func makeBothBackends() throws -> (postgres: PostgresStore, sqlite: IndexStore) {
        let (_, stores) = try makeStores()
        let scratch = try TestSupport.makeScratchDirectory(for: self)
        return (stores[0], try IndexStore.open(path: "\(scratch)/index.sqlite"))
    }

    /// Each result's score by identifier.
    func scores(_ store: any IndexQueries, _ query: String, bundle: String? = nil) throws -> [String: Double] {
        var options = QueryOptions(limit: 20)
        options.bundle = bundle
        return Dictionary(uniqueKeysWithValues: try store.query(query, options: options).results.map { ($0.uniqueIdentifier, $0.score ?? 0) })
    }

    /// A word scores BM25F as on SQLite, to the bit: its weighted frequency (title 10,
    /// displayName 8, keywords 5, authors 3, contentDescription 2, textContent 1) saturated and
    /// normalised by the item's length, times its rarity. A searchable declared attribute's
    /// text is not in the score (nor a plain word's match) unless searchable by default, when
    /// it counts as textContent — where a bundle declares one, and where it is the only bundle
    /// searched.
    func testAWordScoresAsOnSQLite() throws {
        let (postgres, sqlite) = try makeBothBackends()
        let items = [
            TestSupport.item("t", title: "Quokka"),
            TestSupport.item("n", extra: [("displayName", .string("quokka"))]),
            TestSupport.item("k", extra: [("keywords", .array([.string("quokka")]))]),
            TestSupport.item("a", extra: [("authors", .array([.string("Quokka Smith")]))]),
            TestSupport.item("d", description: "a quokka"),
            TestSupport.item("x", extra: [("textContent", .string("the quokka"))]),
            TestSupport.item("tt", title: "Quokka quokka"),
            TestSupport.item("long", title: "Quokka of a title in many more words"),
        ]
        let declared = try AttributeDeclaration.parseAll(JSONParser.parse(text: #"{"shelf": {"type": "string", "searchable": true}, "blurb": {"type": "string", "searchableByDefault": true}}"#))
        for store in [postgres as any IndexBackend, sqlite] {
            try TestSupport.seed(store, bundle: "com.example.plain", items)
            let writes = try store.makeWriter(bundleIdentifier: "com.example.shelved", scope: .replacement(generation: 5), requestID: nil, declarations: declared)
            try writes.put(try ItemValidator.validate(JSONParser.parse(text: #"{"uniqueIdentifier": "s", "attributes": {"shelf": "quokka corner", "textContent": "a quokka"}}"#), declarations: declared))
            try writes.put(try ItemValidator.validate(JSONParser.parse(text: #"{"uniqueIdentifier": "s2", "attributes": {"shelf": "quokka corner", "contentDescription": "a quokka", "blurb": "quokka quokka"}}"#), declarations: declared))
            // The word only in the attribute not searched by default: no match, and not in n —
            // also for a query of the other bundle alone.
            try writes.put(try ItemValidator.validate(JSONParser.parse(text: #"{"uniqueIdentifier": "h", "attributes": {"shelf": "quokka", "textContent": "shelved away"}}"#), declarations: declared))
            _ = try writes.acknowledge()
        }
        let all = try scores(postgres, "quokka")
        XCTAssertEqual(all, try scores(sqlite, "quokka"))
        XCTAssertEqual(Set(all.keys), ["t", "n", "k", "a", "d", "x", "tt", "long", "s", "s2"])
        // The attribute's weight orders items of one length; more occurrences count, less and
        // less; a longer item counts them less.
        for (better, worse) in [("t", "n"), ("n", "k"), ("a", "d"), ("d", "x"), ("tt", "long"), ("t", "long"), ("s2", "d")] {
            XCTAssertGreaterThan(all[better] ?? 0, all[worse] ?? 0, "\(better) before \(worse)")
        }
        XCTAssertEqual(try scores(postgres, "quokka", bundle: "com.example.shelved"), try scores(sqlite, "quokka", bundle: "com.example.shelved"))
        XCTAssertEqual(try scores(postgres, "quokka", bundle: "com.example.plain"), try scores(sqlite, "quokka", bundle: "com.example.plain"))
        XCTAssertEqual(try scores(postgres, "corner"), [:], "the searchable attribute's text is not a plain word's")
        for query in ["quok", "quokka smith", "\"quokka smith\"", #"title == "quokka"cdw"#, #"authors == "quok*"cdw"#, "quokka corner"] {
            XCTAssertEqual(try scores(postgres, query), try scores(sqlite, query), query)
        }
    }

    /// A word longer than a `tsvector` lexeme may be (3,000 letters, or 1,500 Greek ones) is
    /// found as on SQLite, with the same score: the document holds it in its stored form, and so
    /// does the query. Before, PostgreSQL left it out of the document and found nothing. An
    /// index written before is mended when it is opened (migration 13).
    func testAWordLongerThanALexemeIsFoundAsOnSQLite() throws {
        let (postgres, sqlite) = try makeBothBackends()
        let long = String(repeating: "x", count: 3_000), longer = String(repeating: "y", count: 2_500) + "z", accented = String(repeating: "α", count: 1_500)
        let items = [
            TestSupport.item("long", title: "\(long) tail"),
            TestSupport.item("longer", description: "a \(longer)"),
            TestSupport.item("accented", extra: [("textContent", .string(accented))]),
            TestSupport.item("short", title: "xx"),
            TestSupport.item("twice", title: long, description: "\(long) \(long)"),
        ]
        for store in [postgres as any IndexBackend, sqlite] { try TestSupport.seed(store, bundle: "com.example.plain", items) }
        let x2500 = String(repeating: "x", count: 2_500)
        let queries = [long, longer, accented, "x", "xxxxx", "yyy", String(repeating: "y", count: 2_000), String(repeating: "x", count: 1_999), "\(long) tail", "\"\(long) tail\"",
                       #"title == "\#(long)"cdw"#, #"contentDescription == "\#(longer)"cdw"#, "\(long) xx",
                       // Prefixes longer than a stored word's head: of words stored as they are, and of longer ones.
                       x2500, String(repeating: "x", count: 2_030), String(repeating: "y", count: 2_100), String(repeating: "α", count: 1_100),
                       "tail \(x2500)", #"* == "\#(x2500)*"cdw"#, #"* == "a \#(String(repeating: "y", count: 2_050))*"cdw"#, #"title == "\#(x2500)*"cdw"#]
        for query in queries {
            XCTAssertEqual(try scores(postgres, query), try scores(sqlite, query), String(query.prefix(40)) + "… (\(query.utf8.count) bytes)")
        }
        XCTAssertEqual(Set(try scores(postgres, long).keys), ["long", "twice"])
        XCTAssertEqual(Set(try scores(postgres, accented).keys), ["accented"])
        XCTAssertEqual(Set(try scores(postgres, "xxxxx").keys), ["long", "twice"])
        XCTAssertEqual(Set(try scores(postgres, "yyy").keys), ["longer"])
        XCTAssertEqual(Set(try scores(postgres, x2500).keys), ["long", "twice"], "a long prefix finds the longer words it begins")
        XCTAssertEqual(Set(try scores(postgres, String(repeating: "α", count: 1_100)).keys), ["accented"])

        // As migration 12 left the documents: without the long words.
        _ = try postgres.query("""
            UPDATE items SET doc = ts_delete(doc, ARRAY(SELECT w FROM unnest(tsvector_to_array(doc)) w WHERE strpos(w, chr(1)) > 0)),
                tf = tf - ARRAY(SELECT k FROM jsonb_object_keys(tf) k WHERE strpos(k, chr(1)) > 0)
            """)
        _ = try postgres.query("UPDATE schema_version SET version = 12")
        XCTAssertEqual(try scores(postgres, long), [:], "the documents of before hold no long word")
        let shortWritten = try postgres.query("SELECT tx::text FROM items WHERE uid = 'short'").text(0, 0)
        let reopened = try open(try PostgresServer.shared(), schema: postgres.location.schema)
        XCTAssertEqual(try reopened.query("SELECT version FROM schema_version").int(0, 0), PostgresSchema.migrations.count)
        for query in queries {
            XCTAssertEqual(try scores(reopened, query), try scores(sqlite, query), "reopened: " + String(query.prefix(40)))
        }
        XCTAssertEqual(try reopened.query("SELECT tx::text FROM items WHERE uid = 'short'").text(0, 0), shortWritten,
                       "an item with no attribute that long is not made again")
        XCTAssertEqual(try reopened.checkInvariants(quick: false).problems, [])
    }

    /// A phrase, or a word of some attributes, in text the document's positions cannot hold (an
    /// attribute past its 2,047th token, a word past its 256th occurrence) is found and counted
    /// as on SQLite: by the item's exact positions. An index of before has them made when this
    /// reindex opens it, and the counts brought up to date after writes read them too.
    func testAPhraseBeyondTheDocumentsPositionsIsFoundAsOnSQLite() throws {
        let (_, stores) = try makeStores(2)
        let postgres = stores[0]
        let sqlite = try IndexStore.open(path: "\(try TestSupport.makeScratchDirectory(for: self))/index.sqlite")
        let filler = (0..<2_100).map { "f\($0)" }.joined(separator: " ")
        let items = [
            TestSupport.item("tail", title: "Notes", extra: [("textContent", .string(filler + " purple otter swims"))]),
            TestSupport.item("zebras", title: "Zebras", extra: [("textContent", .string(String(repeating: "zebra ", count: 300) + "zebra crossing"))]),
            TestSupport.item("after", description: String(repeating: "quokka ", count: 300), extra: [("textContent", .string("a quokka here"))]),
            TestSupport.item("short", title: "Purple otter", description: "zebra crossing ahead"),
            TestSupport.item("plain", title: "Otter", description: "a quokka"),
            TestSupport.item("repeats", extra: [("textContent", .string(String(repeating: "alpha beta ", count: 1_500) + "gamma"))]),
        ]
        for store in [postgres as any IndexBackend, sqlite] { try TestSupport.seed(store, bundle: "com.example.plain", items) }
        let queries = [#"* == "purple otter"cdw"#, "purple otter", "purple-otter", #"* == "f2099 purple otter"cdw"#, #"* == "zebra crossing"cdw"#, #"* == "otter swim*"cdw"#, "otter swi",
                       #"textContent == "quokka"cdw"#, #"textContent == "zebra"cdw"#, #"textContent == "purple otter"cdw"#,
                       #"contentDescription == "quokka quokka"cdw"#, #"title == "purple otter"cdw"#, #"textContent == "zebra crossing"cdw"#,
                       #"* == "beta alpha"cdw"#, #"* == "alpha beta gamma"cdw"#, #"* == "beta gam*"cdw"#, #"textContent == "alpha alpha"cdw"#]
        for query in queries {
            XCTAssertEqual(try scores(postgres, query), try scores(sqlite, query), query)
        }
        XCTAssertEqual(Set(try scores(postgres, #"* == "purple otter"cdw"#).keys), ["tail", "short"])
        XCTAssertEqual(Set(try scores(postgres, #"textContent == "quokka"cdw"#).keys), ["after"])
        XCTAssertEqual(try postgres.query("SELECT string_agg(uid, ' ' ORDER BY uid) FROM items WHERE places IS NOT NULL").text(0, 0), "after repeats tail zebras",
                       "only the documents that left positions out keep them all")

        // As an index of before left them: no exact positions. This reindex makes them.
        _ = try postgres.query("UPDATE items SET places = CASE WHEN uid = 'plain' THEN '{}'::jsonb END")
        XCTAssertEqual(try postgres.checkInvariants(quick: false).problems.filter { $0.contains("exact positions") }.map { $0.prefix(11) }, ["5 item(s) w"],
                       "the four without theirs, and one with positions it has no need of")
        _ = try postgres.query("UPDATE items SET places = NULL")
        XCTAssertEqual(Set(try scores(postgres, #"* == "purple otter"cdw"#).keys), ["short"], "the document's positions miss the tail")
        _ = try postgres.query("UPDATE schema_version SET version = 14")
        let reopened = try open(try PostgresServer.shared(), schema: postgres.location.schema)
        XCTAssertEqual(try reopened.query("SELECT version FROM schema_version").int(0, 0), PostgresSchema.migrations.count)
        for query in queries {
            XCTAssertEqual(try scores(reopened, query), try scores(sqlite, query), "reopened: " + query)
        }
        XCTAssertEqual(try reopened.checkInvariants(quick: false).problems, [])

        // A phrase's count kept, then the item at its tail taken away: brought up to date from
        // the item gone's exact positions, not counted again.
        _ = try scores(reopened, #"* == "otter swims"cdw"#)
        for store in [reopened as any IndexBackend, sqlite] {
            let writes = try store.makeWriter(bundleIdentifier: "com.example.plain", scope: .direct, requestID: nil, declarations: [:])
            try writes.delete(identifiers: ["tail"])
            _ = try writes.acknowledge(with: { _ in })
            try TestSupport.seed(store, bundle: "com.example.plain", [TestSupport.item("new", title: "Otter swims")])
        }
        let other = stores[1]
        XCTAssertEqual(try scores(other, #"* == "otter swims"cdw"#), try scores(sqlite, #"* == "otter swims"cdw"#))
        XCTAssertEqual(Set(try scores(other, #"* == "otter swims"cdw"#).keys), ["new"])
        XCTAssertEqual(other.rankLists.counted, 0, "brought up to date, not counted")
        XCTAssertGreaterThan(other.rankLists.deltas, 0)
    }

    /// An item of more distinct words than a document holds (a `tsvector` takes 1 MiB) is found
    /// by every one of them, as on SQLite: its document keeps the words met first and a mark,
    /// and the words past it are looked for in its exact positions. An index of before, whose
    /// document has no mark, has it made when this reindex opens it; a count kept is brought
    /// up to date from the item gone.
    func testAWordPastTheDocumentsMegabyteIsFoundAsOnSQLite() throws {
        let (_, stores) = try makeStores(2)
        let postgres = stores[0]
        let sqlite = try IndexStore.open(path: "\(try TestSupport.makeScratchDirectory(for: self))/index.sqlite")
        // 120,000 distinct words: about 1.4 MB of document, where 1 MiB fits.
        let words = (0..<120_000).map { "v" + String($0, radix: 36) }.joined(separator: " ")
        let items = [
            TestSupport.item("huge", title: "Wordlist", extra: [("textContent", .string(words + " purple otter quokka")),
                                                               ("keywords", .array([.string("wombat")]))]),
            TestSupport.item("small", title: "Quokka", description: "a purple otter and a wombat"),
            TestSupport.item("other", title: "V2kz notes", description: "v2 and v1"),
        ]
        for store in [postgres as any IndexBackend, sqlite] { try TestSupport.seed(store, bundle: "com.example.plain", items) }
        let queries = ["quokka", "quokk", "wombat", #"keywords == "wombat"cdw"#, #"textContent == "quokka"cdw"#, #"* == "purple otter"cdw"#,
                       "purple-otter", "v2kla", "v2kl", "v2kl*", "v1 v2kla", "v2kla quokka", #"textContent == "v2kl*"cdw"#, "v1a", "wordlist", "v2"]
        for query in queries {
            XCTAssertEqual(try scores(postgres, query), try scores(sqlite, query), query)
        }
        XCTAssertEqual(Set(try scores(postgres, "quokka").keys), ["huge", "small"])
        XCTAssertEqual(Set(try scores(postgres, "v2kla").keys), ["huge"], "a word past the document's megabyte")
        let mark = PostgresQueryCompiler.lexeme(PostgresDocument.overflowMark)
        XCTAssertEqual(try postgres.query("SELECT string_agg(uid, ' ') FROM items WHERE doc @@ $1::tsquery", [mark]).text(0, 0), "huge")
        // Every search asks whether any item is so marked: an index of those items alone answers.
        let plan = try postgres.query("EXPLAIN SELECT \(PostgresStore.overflowed)")
        XCTAssertTrue((0..<plan.rowCount).contains { plan.text($0, 0)?.contains("items_overflowed") == true },
                      (0..<plan.rowCount).compactMap { plan.text($0, 0) }.joined(separator: "\n"))
        XCTAssertEqual(try postgres.checkInvariants(quick: false).problems, [])

        // As an index of before left it: no mark. The words past the megabyte are not found.
        _ = try postgres.query("UPDATE items SET doc = ts_delete(doc, $1) WHERE uid = 'huge'", [PostgresDocument.overflowMark])
        XCTAssertEqual(try postgres.checkInvariants(quick: false).problems.filter { $0.contains("exact positions") }.map { $0.prefix(11) }, ["1 item(s) w"])
        XCTAssertEqual(Set(try scores(stores[1], "v2kla").keys), [])
        _ = try postgres.query("UPDATE schema_version SET version = 15")
        let reopened = try open(try PostgresServer.shared(), schema: postgres.location.schema)
        XCTAssertEqual(try reopened.query("SELECT version FROM schema_version").int(0, 0), PostgresSchema.migrations.count)
        for query in queries {
            XCTAssertEqual(try scores(reopened, query), try scores(sqlite, query), "reopened: " + query)
        }
        XCTAssertEqual(try reopened.checkInvariants(quick: false).problems, [])

        // A count kept, then the item taken away: brought up to date from the item gone.
        _ = try scores(reopened, "quokka")
        for store in [reopened as any IndexBackend, sqlite] {
            let writes = try store.makeWriter(bundleIdentifier: "com.example.plain", scope: .direct, requestID: nil, declarations: [:])
            try writes.delete(identifiers: ["huge"])
            _ = try writes.acknowledge(with: { _ in })
        }
        let other = try open(try PostgresServer.shared(), schema: postgres.location.schema)
        XCTAssertEqual(try scores(other, "quokka"), try scores(sqlite, "quokka"))
        XCTAssertEqual(Set(try scores(other, "quokka").keys), ["small"])
        XCTAssertEqual(other.rankLists.counted, 0, "brought up to date, not counted")
        XCTAssertGreaterThan(other.rankLists.deltas, 0)
    }

    /// A word that more items hold as typed than a page takes is searched without counting the
    /// items that hold it only as a prefix, the dearest count there is: its page is of the first
    /// pass. A page that does reach the prefix pass (another bundle's items, a later page) counts
    /// it then and is read again, the same page as SQLite's.
    func testACommonWordsPageOfTheFirstPassDoesNotCountItsPrefix() throws {
        let (postgres, sqlite) = try makeBothBackends()
        let many = (0..<30).map { TestSupport.item("w\($0)", title: "Quokka \($0)", description: $0 % 3 == 0 ? "a quokka" : nil) }
        let few = [TestSupport.item("f1", title: "Quokka"), TestSupport.item("p1", title: "Quokkas"), TestSupport.item("p2", description: "quokkaland quokkas")]
        for store in [postgres as any IndexBackend, sqlite] {
            try TestSupport.seed(store, bundle: "com.example.many", many + [TestSupport.item("p0", title: "Quokkas")])
            try TestSupport.seed(store, bundle: "com.example.few", few)
        }
        func page(_ store: any IndexQueries, bundle: String? = nil, limit: Int = 20, cursor: String? = nil) throws -> QueryPage {
            var options = QueryOptions(limit: limit)
            (options.bundle, options.after) = (bundle, cursor)
            return try store.query("quokka", options: options)
        }
        func ranked(_ page: QueryPage) -> [String] { page.results.map { "\($0.uniqueIdentifier) \($0.score ?? 0)" } }
        XCTAssertEqual(ranked(try page(postgres)), ranked(try page(sqlite)))
        XCTAssertEqual(postgres.rankLists.counted, 1, "`quokka` as typed only")
        XCTAssertEqual(postgres.rankLists.prefixRereads, 0)
        // Another bundle's page: its first pass is short, so it reaches the prefix's.
        let few1 = try page(postgres, bundle: "com.example.few")
        XCTAssertEqual(ranked(few1), ranked(try page(sqlite, bundle: "com.example.few")))
        XCTAssertEqual(few1.results.map(\.uniqueIdentifier).sorted(), ["f1", "p1", "p2"])
        XCTAssertEqual(postgres.rankLists.counted, 2, "and now `quokka` as a prefix")
        XCTAssertEqual(postgres.rankLists.prefixRereads, 1)
        // Every page, cursor after cursor, as on SQLite: the last ones are of the prefix pass.
        var (cursors, pages) = ([String?(nil), nil], 0)
        repeat {
            let (p, s) = (try page(postgres, limit: 7, cursor: cursors[0]), try page(sqlite, limit: 7, cursor: cursors[1]))
            XCTAssertEqual(ranked(p), ranked(s), "page \(pages)")
            cursors = [p.nextCursor, s.nextCursor]
            pages += 1
        } while cursors[0] != nil && pages < 10
        XCTAssertEqual(pages, 5)
        XCTAssertNil(cursors[1])
    }

    /// A word's count (n, for its rarity) is made once for the items as they are: kept in the
    /// index for every other process's searches, and brought up to date once an item is written.
    func testAWordsCountIsKeptForOtherProcessesWhileTheItemsStandStill() throws {
        let (_, stores) = try makeStores(2)
        try TestSupport.seed(stores[0], bundle: "com.example.plain", [TestSupport.item("t", title: "Quokka"), TestSupport.item("d", description: "a quokka")])
        let options = QueryOptions(limit: 5)
        let first = try stores[0].query("quokka", options: options).results
        XCTAssertGreaterThan(stores[0].rankLists.counted, 0)
        XCTAssertEqual(try stores[1].query("quokka", options: options).results, first)
        XCTAssertEqual(stores[1].rankLists.counted, 0, "the counts of the first process were read")
        try TestSupport.seed(stores[0], bundle: "com.example.plain", [TestSupport.item("x", title: "Quokka quokka")])
        let after = try stores[1].query("quokka", options: options).results
        XCTAssertEqual(stores[1].rankLists.counted, 0, "brought up to date from the write (testAKeptCountIsBroughtUpToDateFromTheWritesSince)")
        XCTAssertGreaterThan(stores[1].rankLists.deltas, 0)
        XCTAssertEqual(after.map(\.uniqueIdentifier).first, "x")
        XCTAssertNotEqual(after.first { $0.uniqueIdentifier == "t" }?.score, first.first { $0.uniqueIdentifier == "t" }?.score, "a rarer word no more")
    }

    /// A count kept for the items of one snapshot is brought up to date from the writes since
    /// — items added, changed and taken away — by another process, without counting the word's
    /// items again (which reads the table's page of each); the scores are SQLite's. A statement
    /// that takes more than 1,000 items away is not logged: the counts are made again after it.
    func testAKeptCountIsBroughtUpToDateFromTheWritesSince() throws {
        let (_, stores) = try makeStores(2)
        let sqlite = try IndexStore.open(path: "\(try TestSupport.makeScratchDirectory(for: self))/index.sqlite")
        let both: [any IndexBackend] = [stores[0], sqlite]
        let filler = (0..<20).map { TestSupport.item("f\($0)", title: "Filler \($0)") }
        for store in both {
            try TestSupport.seed(store, bundle: "com.example.plain", filler + [
                TestSupport.item("t", title: "Quokka"), TestSupport.item("d", description: "a quokka"), TestSupport.item("x", title: "Wallaby"),
                TestSupport.item("gone", title: "Quokka gone"), TestSupport.item("changed", title: "Quokka changed"),
            ])
        }
        func ranked(_ store: any IndexQueries) throws -> [String] {
            try store.query("quokka", options: QueryOptions(limit: 20)).results.map { "\($0.uniqueIdentifier) \($0.score ?? 0)" }
        }
        XCTAssertEqual(try ranked(stores[0]), try ranked(sqlite))
        XCTAssertGreaterThan(stores[0].rankLists.counted, 0)
        // Added, changed both ways, taken away; and the same on SQLite.
        for store in both {
            try TestSupport.seed(store, bundle: "com.example.plain", [
                TestSupport.item("new", title: "Quokka new"), TestSupport.item("changed", title: "Wallaby now"), TestSupport.item("x", title: "Wallaby quokka"),
            ])
            let writes = try store.makeWriter(bundleIdentifier: "com.example.plain", scope: .direct, requestID: nil, declarations: [:])
            try writes.delete(identifiers: ["gone"])
            _ = try writes.acknowledge(with: { _ in })
        }
        let other = stores[1]
        XCTAssertEqual(try other.query("SELECT count(*) FROM items_gone").int(0, 0), 3, "the item taken away and the two changed, as they were")
        XCTAssertEqual(try ranked(other), try ranked(sqlite))
        XCTAssertEqual(Set(try ranked(other).map { String($0.prefix { $0 != " " }) }), ["t", "d", "x", "new"])
        XCTAssertEqual(other.rankLists.counted, 0, "brought up to date, not counted")
        XCTAssertGreaterThan(other.rankLists.deltas, 0)
        XCTAssertEqual(try other.query("SELECT count(*) FROM items_gone").int(0, 0), 0, "let go once no kept count needs them")

        // 1,001 items put, brought up to date too; then taken away in one statement: counted again.
        let many = (0..<1_001).map { TestSupport.item("m\($0)", title: "Many quokka \($0)") }
        for store in both { try TestSupport.seed(store, bundle: "com.example.many", many) }
        XCTAssertEqual(try ranked(stores[0]), try ranked(sqlite))
        XCTAssertEqual(stores[0].rankLists.counted, 2, "the first search's counts only")
        for store in both {
            let writes = try store.makeWriter(bundleIdentifier: "com.example.many", scope: .direct, requestID: nil, declarations: [:])
            try writes.deleteAll()
            _ = try writes.acknowledge(with: { _ in })
        }
        let counted = other.rankLists.counted
        XCTAssertEqual(try ranked(other), try ranked(sqlite))
        XCTAssertGreaterThan(other.rankLists.counted, counted, "counted again")
        XCTAssertEqual(try other.checkInvariants(quick: false).problems, [])
    }

    /// A word of one attribute is counted once too, and its count brought up to date after
    /// writes: of the title, whose words the document marks, and of the description, whose
    /// weight class the authors share, so its match reads the attributes, which an item gone
    /// keeps too.
    func testAWordOfOneAttributesCountIsBroughtUpToDateFromTheWritesSince() throws {
        let (_, stores) = try makeStores(2)
        let sqlite = try IndexStore.open(path: "\(try TestSupport.makeScratchDirectory(for: self))/index.sqlite")
        let both: [any IndexBackend] = [stores[0], sqlite]
        let declared = try AttributeDeclaration.parseAll(JSONParser.parse(text: #"{"shelf": {"type": "string", "searchable": true}}"#))
        for store in both {
            try TestSupport.seed(store, bundle: "com.example.plain", [
                TestSupport.item("t", title: "Quokka"), TestSupport.item("d", description: "a quokka"), TestSupport.item("gone", title: "Quokka gone"),
                TestSupport.item("both", title: "Quokka", description: "quokka"), TestSupport.item("gone2", description: "quokka gone"),
            ])
            // A bundle that declares text searchable but not by default: plain words are
            // rechecked against the built-in attributes, which read the attributes too.
            let writes = try store.makeWriter(bundleIdentifier: "com.example.shelved", scope: .direct, requestID: nil, declarations: declared)
            for json in [#"{"uniqueIdentifier": "s", "attributes": {"shelf": "quokka corner", "textContent": "a quokka"}}"#,
                         #"{"uniqueIdentifier": "h", "attributes": {"shelf": "quokka", "textContent": "shelved away"}}"#] {
                try writes.put(try ItemValidator.validate(JSONParser.parse(text: json), declarations: declared))
            }
            _ = try writes.acknowledge()
        }
        let title = #"title == "quokka"cdw"#, description = #"contentDescription == "quokka"cdw"#
        for query in [title, description, "quokka"] { XCTAssertEqual(try scores(stores[0], query), try scores(sqlite, query), query) }
        XCTAssertEqual(stores[0].rankLists.counted, 4, "the two words, and the plain word in both passes")
        for store in both {
            try TestSupport.seed(store, bundle: "com.example.plain", [TestSupport.item("new", title: "Quokka new", description: "quokka")])
            let writes = try store.makeWriter(bundleIdentifier: "com.example.plain", scope: .direct, requestID: nil, declarations: [:])
            try writes.delete(identifiers: ["gone", "gone2"])
            _ = try writes.acknowledge(with: { _ in })
            let shelved = try store.makeWriter(bundleIdentifier: "com.example.shelved", scope: .direct, requestID: nil, declarations: declared)
            try shelved.delete(identifiers: ["s", "h"])
            _ = try shelved.acknowledge(with: { _ in })
        }
        let other = stores[1]
        XCTAssertEqual(try scores(other, title), try scores(sqlite, title))
        XCTAssertEqual(Set(try scores(other, title).keys), ["t", "both", "new"])
        XCTAssertEqual(other.rankLists.counted, 0, "brought up to date, not counted")
        XCTAssertEqual(other.rankLists.deltas, 1)
        XCTAssertEqual(try scores(other, description), try scores(sqlite, description))
        XCTAssertEqual(Set(try scores(other, description).keys), ["d", "both", "new"])
        XCTAssertEqual(other.rankLists.counted, 0, "the description's word brought up to date too")
        XCTAssertEqual(other.rankLists.deltas, 2)
        XCTAssertEqual(try scores(other, "quokka"), try scores(sqlite, "quokka"))
        XCTAssertEqual(Set(try scores(other, "quokka").keys), ["t", "d", "both", "new"])
        XCTAssertEqual(other.rankLists.counted, 0, "the rechecked plain word brought up to date too")
    }

    /// Items taken away one by one while counts are kept, and no search to let go of the log:
    /// the fleet's purge duty lets go of it, and of the counts, once it is long; the next search
    /// counts again and scores as SQLite does.
    func testThePurgeLetsGoOfALongLogOfItemsGone() throws {
        let (postgres, sqlite) = try makeBothBackends()
        postgres.rankLists.longestCountLog = 2
        let items = (0..<6).map { TestSupport.item("q\($0)", title: "Quokka \($0)") }
        for store in [postgres as any IndexBackend, sqlite] { try TestSupport.seed(store, bundle: "com.example.plain", items) }
        _ = try postgres.query("quokka", options: QueryOptions(limit: 20))
        XCTAssertGreaterThan(try postgres.query("SELECT count(*) FROM unit_frequencies").int(0, 0), 0)
        for uid in ["q0", "q1"] {
            for store in [postgres as any IndexBackend, sqlite] {
                let writes = try store.makeWriter(bundleIdentifier: "com.example.plain", scope: .direct, requestID: nil, declarations: [:])
                try writes.delete(identifiers: [uid])
                _ = try writes.acknowledge(with: { _ in })
            }
            _ = try postgres.purgeExpired()
        }
        XCTAssertEqual(try postgres.query("SELECT count(*) FROM items_gone").int(0, 0), 2, "as long as the log may be: kept")
        try TestSupport.seed(postgres, bundle: "com.example.other", [TestSupport.item("x", title: "Other")])
        let writes = try postgres.makeWriter(bundleIdentifier: "com.example.other", scope: .direct, requestID: nil, declarations: [:])
        try writes.delete(identifiers: ["x"])
        _ = try writes.acknowledge(with: { _ in })
        _ = try postgres.purgeExpired()
        XCTAssertEqual(try postgres.query("SELECT count(*) FROM items_gone").int(0, 0), 0)
        XCTAssertEqual(try postgres.query("SELECT count(*) FROM unit_frequencies").int(0, 0), 0)
        let counted = postgres.rankLists.counted
        XCTAssertEqual(try scores(postgres, "quokka"), try scores(sqlite, "quokka"))
        XCTAssertGreaterThan(postgres.rankLists.counted, counted, "counted again")
    }

    /// A camel-case part scores the attribute it is in, as on SQLite: the document's slot of
    /// each attribute holds its parts (`PostgresDocument`), and the item's frequencies count
    /// them with their attribute's weight.
    func testACamelCasePartScoresTheAttributeItIsIn() throws {
        let (postgres, sqlite) = try makeBothBackends()
        for store in [postgres as any IndexBackend, sqlite] {
            try TestSupport.seed(store, bundle: "com.example.plain", [
                TestSupport.item("title", title: "QuokkaCorner"),
                TestSupport.item("title+name", title: "QuokkaCorner", extra: [("displayName", .string("Quokka"))]),
                TestSupport.item("name", extra: [("displayName", .string("corner"))]),
                TestSupport.item("authors", extra: [("authors", .array([.string("CornerSmith")]))]),
                TestSupport.item("authors+description", description: "a quokka", extra: [("authors", .array([.string("CornerSmith")]))]),
                TestSupport.item("description", description: "a corner"),
            ])
        }
        let scores = try scores(postgres, "corner")
        XCTAssertEqual(scores.count, 6)
        XCTAssertEqual(scores, try self.scores(sqlite, "corner"))
        XCTAssertGreaterThan(scores["title+name"] ?? 0, scores["authors"] ?? 0, "the title's weight, beside a displayName")
    }

    /// An item with more distinct words than a `tsvector` may hold (1 MiB of them) is written
    /// with the words met first in its document, its title's first, and its batch with it: the
    /// server's parser failed the whole batch ("string is too long for tsvector").
    func testAnItemWithMoreWordsThanADocumentHoldsKeepsTheFirstAndItsBatch() throws {
        let (_, stores) = try makeStores()
        let store = stores[0]
        let words = (0..<150_000).map { "w" + String(1_000_000 + $0) }.joined(separator: " ")
        try TestSupport.seed(store, bundle: "com.example.big", [
            TestSupport.item("big", title: "Quokka almanac", extra: [("textContent", .string(words))]),
            TestSupport.item("small", title: "Quokka"),
        ])
        let options = QueryOptions(limit: 20)
        XCTAssertEqual(Set(try store.query("quokka", options: options).results.map(\.uniqueIdentifier)), ["big", "small"])
        XCTAssertEqual(try store.query("almanac", options: options).results.map(\.uniqueIdentifier), ["big"])
        XCTAssertEqual(try store.query("w1000000", options: options).results.map(\.uniqueIdentifier), ["big"])
        XCTAssertEqual(try store.query("w1149999", options: options).results.map(\.uniqueIdentifier), ["big"],
                       "past the document's 1 MiB of words, in its exact positions (testAWordPastTheDocumentsMegabyteIsFoundAsOnSQLite)")
        XCTAssertEqual(try store.checkInvariants(quick: false).problems, [])
    }

    /// An index whose documents the server's parser made (schema 10 and before) has them made
    /// again from the items' attributes when this reindex opens it (migration 11), with its
    /// full-text index, declared attributes and all: the words found then are the tokenizer's
    /// (`example` in an e-mail address, `usr` in a path), the lists made from the old documents
    /// are gone, and `check` finds nothing.
    func testDocumentsTheServersParserMadeAreMadeAgainWhenTheIndexIsOpened() throws {
        let server = try PostgresServer.shared()
        let schema = server.freshSchema()
        let old = try open(server, schema: schema)
        try TestSupport.seed(old, bundle: "com.example.plain", [
            TestSupport.item("mail", title: "Write to ada@example.org"),
            TestSupport.item("path", title: "QuokkaCorner", extra: [("textContent", .string("/usr/local/bin/reindex-tool 4.5.1"))]),
        ])
        let declared = try AttributeDeclaration.parseAll(JSONParser.parse(text: #"{"shelf": {"type": "string", "searchable": true}}"#))
        let writes = try old.makeWriter(bundleIdentifier: "com.example.shelved", scope: .direct, requestID: nil, declarations: declared)
        try writes.put(try ItemValidator.validate(JSONParser.parse(text: #"{"uniqueIdentifier": "s", "attributes": {"shelf": "bob@example.com"}}"#), declarations: declared))
        _ = try writes.acknowledge(with: { _ in })
        try old.recordDeclarations(declared, bundle: "com.example.shelved")
        // As migration 10 left it: documents of the server's parser, no `reindex_slots`, a list.
        _ = try old.query("""
            UPDATE items SET doc = setweight(to_tsvector('reindex_search', coalesce(j->>'title', '')), 'A')
                || setweight(to_tsvector('reindex_search', coalesce(j->>'shelf', '')), 'C')
                || setweight(to_tsvector('reindex_search', coalesce(j->>'textContent', '')), 'D')
            """)
        _ = try old.query("DROP FUNCTION reindex_slots(tsvector, int[])")
        _ = try old.query("INSERT INTO rank_lists(key, horizon, length, complete) VALUES('w:corner', pg_current_xact_id(), 1, true)")
        _ = try old.query("UPDATE schema_version SET version = 10")
        XCTAssertEqual(try old.query("SELECT count(*) FROM items WHERE doc @@ 'example'::tsquery OR doc @@ 'usr'::tsquery").int(0, 0), 0,
                       "the parser's documents hold neither word")

        let reopened = try open(server, schema: schema)
        XCTAssertEqual(try reopened.query("SELECT version FROM schema_version").int(0, 0), PostgresSchema.migrations.count)
        XCTAssertEqual(try reopened.query("SELECT count(*) FROM rank_lists").int(0, 0), 0)
        let options = QueryOptions(limit: 20)
        XCTAssertEqual(try reopened.query("example", options: options).results.map(\.uniqueIdentifier), ["mail"])
        XCTAssertEqual(try reopened.query("usr", options: options).results.map(\.uniqueIdentifier), ["path"])
        XCTAssertEqual(try reopened.query("4.5", options: options).results.map(\.uniqueIdentifier), ["path"])
        XCTAssertEqual(try reopened.query(#"title == "corner"cdw"#, options: options).results.map(\.uniqueIdentifier), ["path"])
        XCTAssertEqual(try reopened.query(#"shelf == "example"w"#, options: options).results.map(\.uniqueIdentifier), ["s"])
        XCTAssertEqual(try reopened.query("example", options: QueryOptions(bundle: "com.example.shelved", limit: 20)).results.count, 0,
                       "a declared attribute that is not searched by default is found only by its name")
        XCTAssertEqual(try reopened.query("SELECT count(*) FROM pg_indexes WHERE indexname = 'items_doc' AND schemaname = $1", [schema]).int(0, 0), 1)
        XCTAssertEqual(try reopened.checkInvariants(quick: false).problems, [])
    }

    /// The lists an older reindex made hold scores of the older rule (above): opening the index
    /// with this one drops them (migration 10), and the searches that want them make them again.
    func testListsMadeBeforeTheTitleRuleAreDroppedWhenTheIndexIsOpened() throws {
        let server = try PostgresServer.shared()
        let schema = server.freshSchema()
        let old = try open(server, schema: schema)
        try TestSupport.seed(old, bundle: "com.example.plain", [TestSupport.item("title", title: "QuokkaCorner")])
        _ = try old.query("INSERT INTO rank_lists(key, horizon, length, complete) VALUES('w:corner', pg_current_xact_id(), 1, true)")
        _ = try old.query("""
            INSERT INTO rank_entries(list, n, score, hint, bundle, uid, item)
            SELECT 'w:corner', 0, 8, 0, bundle, uid, id FROM items
            """)
        _ = try old.query("UPDATE schema_version SET version = 9")
        let reopened = try open(server, schema: schema)
        XCTAssertEqual(try reopened.query("SELECT count(*) FROM rank_lists").int(0, 0), 0)
        XCTAssertEqual(try reopened.query("SELECT count(*) FROM rank_entries").int(0, 0), 0)
        XCTAssertEqual(try reopened.query("SELECT version FROM schema_version").int(0, 0), PostgresSchema.migrations.count)
        // Scored as now (BM25F: the one item is all of N and of n, and of the average length).
        let length = Double(try reopened.query("SELECT length FROM items").int(0, 0))
        XCTAssertEqual(try reopened.query("corner", options: QueryOptions(limit: 20)).results.map(\.score),
                       [Ranking.rarity(rows: 1, matching: 1) * Ranking.impact(10, length: length, average: length)])
    }

    func testTwoDeploymentsShareADatabaseInTheirOwnSchemasAndReopeningMigratesNothing() throws {
        let server = try PostgresServer.shared()
        let a = try open(server, schema: server.freshSchema("team_a"))
        let b = try open(server, schema: server.freshSchema("team_b"))
        let writes = try PostgresWrites(store: a, bundleIdentifier: "com.example.one", scope: .live)
        try writes.put(Self.item("1", title: "Shared database"))
        _ = try writes.acknowledge()
        XCTAssertEqual(try a.search("shared").count, 1)
        XCTAssertEqual(try b.search("shared").count, 0)
        let again = try open(server, schema: a.location.schema)
        XCTAssertEqual(try again.search("shared").count, 1)
        XCTAssertEqual(try again.query("SELECT version FROM schema_version").int(0, 0), PostgresSchema.migrations.count)
    }

    func testReindexAllIsInvisibleUntilAcknowledgedThenReplacesTheBundleInOneStep() throws {
        let (_, stores) = try makeStores(2)
        let (store, reader) = (stores[0], stores[1])
        let first = try PostgresWrites(store: store, bundleIdentifier: "com.example.one", scope: .replacement(generation: 1))
        for n in 0..<10 { try first.put(Self.item("old.\(n)", title: "Old item \(n)")) }
        try first.commitBatch()
        XCTAssertEqual(try reader.itemCount(bundle: "com.example.one"), 0, "a committed batch of a reindexAll is not visible")
        _ = try first.acknowledge()
        XCTAssertEqual(try reader.itemCount(bundle: "com.example.one"), 10)

        let second = try PostgresWrites(store: store, bundleIdentifier: "com.example.one", scope: .replacement(generation: 2))
        for n in 0..<4 { try second.put(Self.item("new.\(n)", title: "New item \(n)")) }
        try second.put(Self.item("old.1", title: "Old item kept"))
        try second.commitBatch()
        try second.put(Self.item("new.9", title: "New after the commit"))
        XCTAssertEqual(uids(try reader.search("old")).count, 10, "the previous generation stays searchable")
        XCTAssertEqual(try reader.search("new").count, 0)
        let counts = try second.acknowledge()
        XCTAssertEqual(counts.removed, 9)
        XCTAssertEqual(uids(try reader.items(bundle: "com.example.one")), ["new.0", "new.1", "new.2", "new.3", "new.9", "old.1"])
        XCTAssertEqual(try reader.search("kept").map(\.uniqueIdentifier), ["old.1"])
        XCTAssertEqual(try reader.query("SELECT count(*) FROM items").int(0, 0), 6, "the replaced generation's rows are gone")
    }

    func testAFailedAttemptKeepsItsCommittedBatchesAndARetryResumesFromThem() throws {
        let (_, stores) = try makeStores()
        let store = stores[0]
        let request = try store.enqueue(bundleIdentifier: "com.example.one", kind: .reindexAll, reason: .forced)
        _ = try store.markRunning(request.id)
        let attempt = try PostgresWrites(store: store, bundleIdentifier: "com.example.one", scope: .replacement(generation: request.id))
        for n in 0..<3 { try attempt.put(Self.item("a.\(n)", title: "Committed \(n)")) }
        try attempt.commitBatch { store in try store.saveClientState(request.id, "c3RhdGUx") }
        for n in 0..<3 { try attempt.put(Self.item("b.\(n)", title: "Uncommitted \(n)")) }
        try attempt.flush()
        attempt.rollback()
        _ = try store.markAttemptFailed(request.id, error: "refused", backoff: Backoff(baseSeconds: 0))
        let retried = try XCTUnwrap(try store.markRunning(request.id))
        XCTAssertEqual(retried.clientState, "c3RhdGUx")
        XCTAssertEqual(retried.attempts, 2)
        let resume = try PostgresWrites(store: store, bundleIdentifier: "com.example.one", scope: .replacement(generation: request.id))
        try resume.put(Self.item("c.0", title: "Resumed"))
        _ = try resume.acknowledge { store in try store.markDone(request.id) }
        XCTAssertEqual(uids(try store.items(bundle: "com.example.one")), ["a.0", "a.1", "a.2", "c.0"])
        XCTAssertEqual(try store.request(request.id)?.state, .done)
    }

    func testReindexItemsBecomesVisibleAtEachBatchCommitAndAFailureDropsTheRest() throws {
        let (_, stores) = try makeStores(2)
        let (store, reader) = (stores[0], stores[1])
        let seed = try PostgresWrites(store: store, bundleIdentifier: "com.example.one", scope: .replacement(generation: 1))
        try seed.put(Self.item("keep", title: "Keeper", domain: "a.b"))
        try seed.put(Self.item("gone", title: "Goner", domain: "a.b.c"))
        try seed.put(Self.item("other", title: "Other", domain: "a.bc"))
        _ = try seed.acknowledge()
        let writes = try PostgresWrites(store: store, bundleIdentifier: "com.example.one", scope: .live)
        try writes.put(Self.item("added", title: "Added"))
        try writes.delete(domains: ["a.b"])
        XCTAssertEqual(uids(try reader.items(bundle: "com.example.one")), ["gone", "keep", "other"], "nothing is visible before the commit")
        XCTAssertEqual(try writes.commitBatch(), 2)
        XCTAssertEqual(uids(try reader.items(bundle: "com.example.one")), ["added", "other"], "a.b takes a.b.c, not a.bc")
        try writes.delete(identifiers: ["other"])
        try writes.put(Self.item("late", title: "Late"))
        writes.rollback()
        XCTAssertEqual(uids(try reader.items(bundle: "com.example.one")), ["added", "other"])
        XCTAssertEqual(writes.counts.deleted, 2)
    }

    func testABundleCannotTouchAnotherBundlesItems() throws {
        let (_, stores) = try makeStores()
        let store = stores[0]
        let mine = try PostgresWrites(store: store, bundleIdentifier: "com.example.mine", scope: .live)
        try mine.put(Self.item("shared.id", title: "Mine"))
        _ = try mine.acknowledge()
        let theirs = try PostgresWrites(store: store, bundleIdentifier: "com.example.theirs", scope: .live)
        try theirs.delete(identifiers: ["shared.id"])
        try theirs.deleteAll()
        try theirs.put(Self.item("shared.id", title: "Theirs", update: false))
        _ = try theirs.acknowledge()
        let replace = try PostgresWrites(store: store, bundleIdentifier: "com.example.theirs", scope: .replacement(generation: 7))
        _ = try replace.acknowledge()
        XCTAssertEqual(try store.items(bundle: "com.example.mine").first?.title, "Mine")
        XCTAssertEqual(try store.itemCount(bundle: "com.example.theirs"), 0)
    }

    func testPartialUpdatesMergeIntoTheItemTheWriterSees() throws {
        let (_, stores) = try makeStores()
        let store = stores[0]
        let seed = try PostgresWrites(store: store, bundleIdentifier: "com.example.one", scope: .live)
        try seed.put(Self.item("1", title: "Ada Park", keywords: ["swift"]))
        _ = try seed.acknowledge()
        let update = try PostgresWrites(store: store, bundleIdentifier: "com.example.one", scope: .live)
        try update.put(Self.item("1", description: "Compilers", update: true))
        try update.put(Self.item("missing", title: "Nobody", update: true))
        let counts = try update.acknowledge()
        XCTAssertEqual(counts.ignoredUpdates, 1)
        let merged = try XCTUnwrap(try store.items(bundle: "com.example.one").first)
        XCTAssertEqual(merged.title, "Ada Park")
        XCTAssertEqual(merged.attributes["contentDescription"]?.stringValue, "Compilers")
        XCTAssertEqual(try store.search("compilers").map(\.uniqueIdentifier), ["1"], "the merged item is searchable by its new text")
        XCTAssertEqual(try store.search("swift").map(\.uniqueIdentifier), ["1"], "and by its old")
    }

    func testSearchIgnoresCaseAndAccentsMatchesTheLastWordAsAPrefixAndRanksTitlesFirst() throws {
        let (_, stores) = try makeStores()
        let store = stores[0]
        let writes = try PostgresWrites(store: store, bundleIdentifier: "com.example.one", scope: .live)
        try writes.put(Self.item("title", title: "Crème Brûlée"))
        try writes.put(Self.item("body", title: "Desserts", text: "how to make a creme brulee at home"))
        try writes.put(Self.item("keyword", title: "Recipes", keywords: ["CREME", "brulée"]))
        try writes.put(Self.item("unrelated", title: "Cremation records"))
        _ = try writes.acknowledge()
        XCTAssertEqual(try store.search("creme brulee").map(\.uniqueIdentifier), ["title", "keyword", "body"])
        XCTAssertEqual(try store.search("CRÈME BRÛL").map(\.uniqueIdentifier), ["title", "keyword", "body"])
        XCTAssertEqual(Set(try store.search("crem").map(\.uniqueIdentifier)), ["title", "keyword", "body", "unrelated"])
        XCTAssertEqual(try store.search("brulee crem").count, 3, "only the last word is a prefix")
        XCTAssertEqual(try store.search("it's ; DROP TABLE items; --").count, 0, "query text is data")
        XCTAssertEqual(try store.search("").count, 0)
        XCTAssertEqual(try store.query("SELECT count(*) FROM items").int(0, 0), 4)
    }

    func testSearchesInAnotherSessionSeeTheOldOrTheNewGenerationNeverAMix() throws {
        let (server, stores) = try makeStores()
        let store = stores[0]
        let schema = store.location.schema
        let generations = [("alpha", 300), ("beta", 200)]
        let stop = SharedFlag(false)
        let seen = SharedValue<Set<Int>>([])
        let failures = SharedValue<[String]>([])
        let reader = Thread {
            do {
                let reading = try PostgresStore.open(try PostgresLocation(server.connectionString, environment: ["REINDEX_PG_SCHEMA": schema]))
                while !stop.value {
                    let count = try reading.itemCount(bundle: "com.example.flip")
                    let found = try reading.search("item", limit: 1000).count
                    seen.update { $0.insert(count) }
                    if found != 0 && found != 300 && found != 200 { failures.update { $0.append("search saw \(found) items") } }
                }
            } catch { failures.update { $0.append("\(error)") } }
        }
        reader.start()
        for round in 1...12 {
            let (word, count) = generations[round % 2]
            let writes = try PostgresWrites(store: store, bundleIdentifier: "com.example.flip", scope: .replacement(generation: Int64(round)))
            for n in 0..<count { try writes.put(Self.item("\(word).\(n)", title: "\(word) item \(n)")) }
            if round % 3 == 0 { try writes.commitBatch() }
            _ = try writes.acknowledge()
        }
        stop.value = true
        while !reader.isFinished { usleep(10_000) }
        XCTAssertEqual(failures.value, [])
        XCTAssertTrue(seen.value.isSubset(of: [0, 200, 300]), "counts seen: \(seen.value.sorted())")
    }

    func testOnlyOneWorkerClaimsARequestAndAnExpiredLeaseIsTakenOverResumingFromTheClientState() throws {
        let (_, stores) = try makeStores(2)
        let (first, second) = (stores[0], stores[1])
        first.leaseSeconds = 1
        let request = try first.enqueue(bundleIdentifier: "com.example.one", kind: .reindexAll, reason: .forced)
        XCTAssertNotNil(try first.markRunning(request.id))
        XCTAssertNil(try second.markRunning(request.id), "a request under a live lease is not claimable")
        XCTAssertNil(try second.claimNext(bundles: nil), "nor is its bundle")
        let writes = try PostgresWrites(store: first, bundleIdentifier: "com.example.one", scope: .replacement(generation: request.id))
        try writes.put(Self.item("committed", title: "Committed"))
        try writes.commitBatch { store in try store.saveClientState(request.id, "Y29tbWl0dGVk") }
        try writes.put(Self.item("uncommitted", title: "Uncommitted"))
        try writes.flush()
        // The first worker stops renewing (it hangs, or its machine is gone): the lease runs out.
        usleep(1_300_000)
        let taken = try XCTUnwrap(try second.claimNext(bundles: ["com.example.one"]))
        XCTAssertEqual(taken.id, request.id)
        XCTAssertEqual(taken.clientState, "Y29tbWl0dGVk")
        XCTAssertEqual(taken.attempts, 2)
        XCTAssertThrowsError(try writes.acknowledge(), "the old worker's session was ended, so its batch cannot commit") { error in
            XCTAssertEqual((error as? StoreError)?.code, .connectionLost, "\(error)")
        }
        let resumed = try PostgresWrites(store: second, bundleIdentifier: "com.example.one", scope: .replacement(generation: taken.id))
        try resumed.put(Self.item("resumed", title: "Resumed"))
        _ = try resumed.acknowledge { store in try store.markDone(taken.id) }
        XCTAssertEqual(uids(try second.items(bundle: "com.example.one")), ["committed", "resumed"])
        // The first worker's store reconnects by itself and goes on.
        XCTAssertEqual(try first.request(request.id)?.state, .done)
    }

    func testACutConnectionFailsTheBatchLeavesNothingHalfVisibleAndTheStoreReconnects() throws {
        let (server, stores) = try makeStores(2)
        let (store, reader) = (stores[0], stores[1])
        let writes = try PostgresWrites(store: store, bundleIdentifier: "com.example.one", scope: .live)
        try writes.put(Self.item("first", title: "First"))
        _ = try writes.commitBatch()
        try writes.put(Self.item("second", title: "Second"))
        try writes.flush()
        try server.psql("SELECT pg_terminate_backend(\(store.connection.backendPID))")
        XCTAssertThrowsError(try writes.commitBatch()) { error in
            XCTAssertEqual((error as? StoreError)?.code, .connectionLost, "\(error)")
        }
        writes.rollback()
        XCTAssertEqual(uids(try reader.items(bundle: "com.example.one")), ["first"])
        XCTAssertEqual(try store.itemCount(bundle: "com.example.one"), 1, "the store reconnected")
    }

    func testAServerRestartFailsWhatWasInFlightAndTheStoreReconnectsWithBackoff() throws {
        // A private server, since this one is stopped and started again.
        let server = try PostgresServer()
        defer { server.destroy() }
        let store = try PostgresStore.open(try PostgresLocation(server.connectionString, environment: ["REINDEX_PG_SCHEMA": "restart"]))
        let writes = try PostgresWrites(store: store, bundleIdentifier: "com.example.one", scope: .live)
        try writes.put(Self.item("kept", title: "Kept"))
        _ = try writes.commitBatch()
        try writes.put(Self.item("lost", title: "Lost"))
        try writes.flush()
        try server.stop()
        XCTAssertThrowsError(try writes.commitBatch()) { error in
            XCTAssertEqual((error as? StoreError)?.code, .connectionLost, "\(error)")
        }
        writes.rollback()
        XCTAssertThrowsError(try store.itemCount(bundle: "com.example.one"), "the server is down")
        try server.start()
        var count: Int?
        for _ in 0..<200 where count == nil {
            count = try? store.itemCount(bundle: "com.example.one")
            if count == nil { usleep(50_000) }
        }
        XCTAssertEqual(count, 1, "after the restart the store reconnected; only the committed batch is there")
    }

    func testABundleOneHostLostKeepsItsItemsWhileAnotherHostHasItAndGoesWhenNoHostHasIt() throws {
        let (_, stores) = try makeStores(2)
        let (a, b) = (stores[0], stores[1])
        a.hostName = "host-a"
        b.hostName = "host-b"
        let key = "com.example.one"
        try a.recordSeen(key: key, identifier: key, version: "1", fingerprint: "f", now: 100)
        try b.recordSeen(key: key, identifier: key, version: "1", fingerprint: "f", now: 100)
        let writes = try PostgresWrites(store: a, bundleIdentifier: key, scope: .live)
        try writes.put(Self.item("1", title: "Fleet item one"))
        try writes.put(Self.item("2", title: "Fleet item two"))
        _ = try writes.acknowledge()

        // Host A loses the bundle: missing there, not for the fleet; nothing is removed.
        try a.markMissing(key, now: 200)
        XCTAssertNil(try a.bundleRecords().first?.missingSince, "host B still has the bundle")
        XCTAssertEqual(try a.hosts(bundle: key), ["host-b"])
        XCTAssertEqual(try a.removeBundle(key), 0, "the items of a bundle another host has were removed")
        XCTAssertEqual(try b.itemCount(bundle: key), 2)

        // Host B loses it too: missing for the fleet since then.
        try b.markMissing(key, now: 300)
        XCTAssertEqual(try a.bundleRecords().first?.missingSince, 300)
        XCTAssertEqual(try a.hosts(bundle: key), [])
        // A worker still running one of its requests (under a live lease) keeps it for now.
        let running = try b.enqueue(bundleIdentifier: key, kind: .reindexItems, identifiers: ["1"], reason: .forced)
        _ = try b.markRunning(running.id)
        XCTAssertEqual(try a.removeBundle(key), 0, "a bundle was removed under a request a worker is running")
        try b.markDone(running.id)
        XCTAssertEqual(try a.removeBundle(key), 2)
        XCTAssertEqual(try b.itemCount(bundle: key), 0)
        XCTAssertEqual(try b.query("SELECT count(*) FROM items WHERE bundle = $1", [key]).int(0, 0), 0)
        XCTAssertEqual(try b.bundleRecords(), [])

        // Back on a host: known again, and the fleet's scan rebuilds it from nothing.
        try b.recordSeen(key: key, identifier: key, version: "1", fingerprint: "f", now: 400)
        XCTAssertEqual(try a.hosts(bundle: key), ["host-b"])
        XCTAssertNil(try a.bundleRecords().first?.missingSince)
    }

    func testAHostThatStoppedLookingStopsCountingOnlyOnceNoWorkerOfItIsSeenEither() throws {
        let (_, stores) = try makeStores(2)
        let (live, gone) = (stores[0], stores[1])
        live.hostName = "host-live"
        gone.hostName = "host-gone"
        let key = "com.example.one", only = "com.example.only-on-gone"
        try gone.recordSeen(key: key, identifier: key, version: "1", fingerprint: "f", now: 100)
        try gone.recordSeen(key: only, identifier: only, version: "1", fingerprint: "f", now: 100)
        try live.recordSeen(key: key, identifier: key, version: "1", fingerprint: "f", now: 1_000)
        // A worker of the silent host seen recently: its records still count.
        try gone.query("INSERT INTO workers(id, host, pid, started, last_seen) VALUES('w', 'host-gone', 1, 100, 900)")
        XCTAssertEqual(try live.forgetSilentHosts(before: 500, now: 1_000), [])
        XCTAssertEqual(try live.hosts(bundle: only), ["host-gone"])
        // No worker of it seen since either: it stops counting; the bundle only it had is missing.
        try gone.query("UPDATE workers SET last_seen = 200 WHERE id = 'w'")
        XCTAssertEqual(try live.forgetSilentHosts(before: 500, now: 1_000), [only])
        XCTAssertEqual(try live.hosts(bundle: only), [])
        XCTAssertEqual(try live.hosts(bundle: key), ["host-live"])
        let records = Dictionary(uniqueKeysWithValues: try live.bundleRecords().map { ($0.key, $0.missingSince) })
        XCTAssertEqual(records[only] ?? nil, 1_000)
        XCTAssertEqual(records[key] ?? 0, nil, "a bundle a live host has is not missing")
    }

    func testFleetDutiesAreDoneOnceAndQueueingNotifiesListeners() throws {
        let (_, stores) = try makeStores(2)
        let (first, second) = (stores[0], stores[1])
        XCTAssertTrue(try first.claimDuty("purge", every: 60))
        XCTAssertFalse(try second.claimDuty("purge", every: 60))
        XCTAssertFalse(try first.claimDuty("purge", every: 60))
        try second.query("LISTEN \(second.notificationChannel)")
        try first.enqueue(bundleIdentifier: "com.example.one", kind: .reindexAll, reason: .forced)
        var received: [(channel: String, payload: String)] = []
        for _ in 0..<100 where received.isEmpty {
            var fds = [pollfd(fd: second.connection.socket, events: Int16(POLLIN), revents: 0)]
            _ = poll(&fds, 1, 50)
            received = second.connection.notifications()
        }
        XCTAssertEqual(received.map(\.payload), ["com.example.one"])
        try first.registerWorker()
        XCTAssertEqual(try second.workers().map(\.id), [first.workerID])
    }
}

/// A value shared with a thread, behind a lock.
final class SharedValue<Value>: @unchecked Sendable {
    private var stored: Value
    private let lock = NSLock()
    init(_ value: Value) { stored = value }
    var value: Value { lock.lock(); defer { lock.unlock() }; return stored }
    func update(_ body: (inout Value) -> Void) { lock.lock(); body(&stored); lock.unlock() }
}

final class SharedFlag: @unchecked Sendable {
    private var stored: Bool
    private let lock = NSLock()
    init(_ value: Bool) { stored = value }
    var value: Bool {
        get { lock.lock(); defer { lock.unlock() }; return stored }
        set { lock.lock(); stored = newValue; lock.unlock() }
    }
}
