import Foundation
import ReindexHost
import ReindexSystem
@testable import ReindexStore
import ReindexProtocol
import ReindexTestSupport
import XCTest

/// The query language on both backends: the same items, written the same way (real extensions
/// through `reindex run`, and `reindex put`), in a SQLite index and in a PostgreSQL index on the
/// server the tests start; every query form of QueryCommandTests, QueryParserTests and
/// CustomAttributeTests must match the same items on both, count the same, facet the same,
/// fail with the same error, and order and page the same by sort keys. Relevance order may
/// differ; its pages must still return every match once.
final class PostgresQueryAgreementTests: XCTestCase {
    typealias T = TestSupport
    var scratch = ""
    var sqlite: IndexStore!
    var postgres: PostgresStore!

    /// Places with the attributes the films and books do not have (displayName, latitude,
    /// booleans, rankingHint, alternateNames, endDate, punctuation and accents in words).
    static let places = [
        #"{"uniqueIdentifier":"p.1","domainIdentifier":"places.nyc","attributes":{"title":"Café Zoë","displayName":"Zoe's","latitude":40.7,"longitude":-74,"supportsPhoneCall":true,"rankingHint":5,"keywords":["coffee","o'brien"],"textContent":"c++ and foo-bar","contentType":"public.place"}}"#,
        #"{"uniqueIdentifier":"p.2","domainIdentifier":"places.nyc.brooklyn","attributes":{"title":"Harbour Café","latitude":41.2,"supportsPhoneCall":false,"rankingHint":-1,"alternateNames":["Le Port"],"authors":["Zoë Martin"],"textContent":"staff engineer lunches","contentType":"public.place"}}"#,
        #"{"uniqueIdentifier":"p.3","domainIdentifier":"places.tr","attributes":{"title":"Ürgüp caves","latitude":38.6,"contentDescription":"staff engineering offsite","keywords":["caves"],"endDate":"2025-12-31T23:00:00+01:00"}}"#,
        #"{"uniqueIdentifier":"p.4","attributes":{"title":"A \"quoted\" \\ word","textContent":"harbour dune","rating":2,"rankingHint":100}}"#,
        #"{"uniqueIdentifier":"p.5","attributes":{"displayName":"Dune bakery","rating":4.5,"contentType":"public.place","supportsNavigation":true}}"#,
        #"{"uniqueIdentifier":"p.6","attributes":{"title":"Star*Bucks 100% _under_","contentType":"public.place"}}"#,
        // For Core Spotlight's query strings (SpotlightQueryTableTests): dates, camel case, accents.
        #"{"uniqueIdentifier":"p.7","attributes":{"title":"MyWindowController","contentType":"public.swift-source","authors":["Steve"],"keywords":["AppKit","Swift"],"rating":4,"contentCreationDate":"2026-01-10T09:00:00Z","contentModificationDate":"2026-01-15T09:30:00Z"}}"#,
        #"{"uniqueIdentifier":"p.8","attributes":{"title":"Résumé","displayName":"resume.pdf","contentType":"com.adobe.pdf","authors":["STEVE","Wozniak"],"rating":1,"contentCreationDate":"2025-06-01T00:00:00Z","contentModificationDate":"2025-12-20T00:00:00Z"}}"#,
        #"{"uniqueIdentifier":"p.9","attributes":{"title":"naïve notes","contentType":"public.plain-text","keywords":["ml"],"contentCreationDate":"2026-01-15T07:00:00Z"}}"#,
        #"{"uniqueIdentifier":"p.10","attributes":{"title":"Quarterly report 2025","contentType":"com.microsoft.word.doc","contentCreationDate":"2026-01-14T16:00:00Z","contentModificationDate":"2026-02-03T10:00:00Z"}}"#,
    ].joined(separator: "\n") + "\n"

    override func setUpWithError() throws {
        scratch = try T.makeScratchDirectory(for: self)
        let extensions = scratch + "/extensions"
        var films = T.BundleSpec("com.example.films", executable: "films.py")
        films.requestSeconds = 60
        try T.makeBundle(films, in: extensions)
        var books = T.BundleSpec("com.example.catalogue", executable: "catalogue.py")
        books.extraManifest = [("attributes", CustomAttributeTests.declarations)]
        try T.makeBundle(books, in: extensions)

        let server = try PostgresServer.shared()
        let schema = server.freshSchema("query")
        let sqlitePath = scratch + "/index.sqlite"
        for index in [sqlitePath, server.connectionURI] {
            func reindex(_ arguments: [String], stdin: String? = nil) throws -> T.CommandResult {
                try T.runReindex(["--index", index, "--extensions-path", extensions] + arguments, scratch: scratch,
                                 environment: T.commandEnvironment(scratch: scratch, extra: ["REINDEX_PG_SCHEMA": schema]), stdin: stdin)
            }
            for bundle in ["com.example.films", "com.example.catalogue"] {
                let run = try reindex(["run", bundle])
                XCTAssertEqual(run.status, 0, "\(index): \(run)")
            }
            let items = try reindex(["run", "com.example.catalogue", "--ids", "b.4"])
            XCTAssertEqual(items.status, 0, "\(index): \(items)")
            let put = try reindex(["put", "com.example.places"], stdin: Self.places)
            XCTAssertEqual(put.status, 0, "\(index): \(put)")
        }
        sqlite = try IndexStore.open(path: sqlitePath)
        postgres = try PostgresStore.open(try PostgresLocation(server.connectionString, environment: ["REINDEX_PG_SCHEMA": schema]))
    }

    /// Every query form the other query tests use, and more of each kind.
    static let queries: [String] = [
        // Words: every one must match, the last also as a prefix; accents and case ignored.
        "dune", "dun", "DUNE", "harbour", "harb", "harbour dune", "dune harbour", "desert", "picture 7", "picture 1",
        "cafe", "CAFÉ zoe", "zoë", "urgup", "ürgüp cav", "o'brien", "c++", "foo-bar", "foo bar", "staff eng", "staff engineer",
        "\"staff engineer\"", "eng*", "le port", "lighthouse", "tide", "mystery", "dune OR harbour", "title:dune", "documentary 11",
        "director 3", "quoted word", "nothing-matches",
        // Comparisons of every type and operator.
        #"title == "Dune""#, #"title == "DUNE""#, #"title == "DUNE"c"#, #"title == "dune*"cd"#, #"title == "dunes of urgup"cd"#,
        #"title == "dunes of urgup"c"#, #"title == "dunes of urgup"d"#, #"title == "*caf*"cd"#, #"title != "Dune""#, #"title < "D""#,
        #"title >= "Picture 5""#, #"title == "A \"quoted\" \\ word""#, #"title == "Star\*Bucks*""#, #"title == "*100%*""#,
        #"title == "*_under_""#, #"title == "Star*Bucks 100% _under_"c"#,
        #"title == "DUNES OF ÜRGÜP"c"#, #"title == "ürgüp CAVES"c"#, #"title == "CAFÉ*"c"#, #"title == "cafe zoe"cd"#,
        #"contentType == "public.movie""#, #"contentType != "public.movie""#, #"contentType == "PUBLIC.*"c"#,
        #"keywords == "DESERT"c"#, #"keywords == "desert""#, #"keywords != "harbour""#, #"keywords == "o'brien""#,
        #"authors == "le guin"cdw"#, #"authors == "Director 1""#, #"authors == "zoe*"cd"#, #"alternateNames == "Le Port""#,
        #"* == "desert"cdw"#, #"* == "dune"c"#, #"* != "dune"c"#, #"* == "caves"w"#, #"title == "dune"w"#, #"title != "dune"w"#,
        #"displayName == "dune"w"#, #"keywords == "harb*"w"#, #"textContent == "lighthouse"w"#, #"contentDescription == "staff engineering"w"#,
        "rating >= 4", "rating > 4", "rating == 5", "rating != 5", "rating < 1", "rating <= 1", "rating >= 4.5", "rankingHint > 0", "rankingHint != 5",
        "latitude >= 40", "latitude < 40.7", "longitude == -74", "InRange(latitude, 40.0, 41.5)", "InRange(rating, 3, 3.9)", "InRange(rating, 3.2, 3.9)",
        "supportsPhoneCall == true", "supportsPhoneCall == false", "supportsPhoneCall != true", "supportsNavigation == true",
        "startDate > $time.iso(2026-01-31T00:00:00Z)", "startDate <= $time.iso(2026-01-03T20:00:00Z)", #"startDate == "2026-01-05T20:00:00Z""#,
        "startDate != $time.iso(2026-01-05T20:00:00Z)", "endDate < $time.iso(2026-01-01T00:00:00Z)", "endDate == $time.iso(2025-12-31T22:00:00Z)",
        "startDate > $time.now", "startDate < $time.today(-7)",
        #"domainIdentifier == "com.example.films.drama""#, #"domainIdentifier == "places.*""#, #"uniqueIdentifier == "film.00*""#,
        #"uniqueIdentifier > "p.3""#, #"bundleIdentifier == "com.example.places""#, #"bundleIdentifier != "com.example.films""#,
        // Restrictions and logic.
        "domain:com.example.films.documentary dune", "domain:places.nyc", "bundle:com.example.other dune", "bundle:com.example.catalogue",
        "bundle:COM.EXAMPLE.PLACES cafe", "dune && rating >= 4", #"(title == "dune"c || title == "dunes*"c) && !(rating < 4)"#,
        #"rating >= 4 && contentType == "public.movie""#, #"rating >= 4 && contentType == "public.movie" || rating < 1"#,
        #"rating >= 4 && (contentType == "public.movie" || rating < 1)"#, "!(rating >= 1) && harbour", "rating == 5 || rating < 1",
        "!rating >= 4 && dune", "dune rating >= 4", "!(dune)", "!harbour", "harbour || cafe", "(harbour || cafe) && latitude > 41",
        #"!(title == "dune"w) && dun"#, "!(supportsPhoneCall == true)", "!(pages >= 300)",
        // Declared attributes (catalogue.py).
        "pages >= 300", "InRange(pages, 100, 400)", "published > $time.iso(2020-01-01T00:00:00Z)", "inPrint == true", "inPrint != true",
        #"genres == "mystery""#, #"isbn == "978-2""#, #"isbn == "978-*" && pages < 500"#, #"genres == "fiction"w"#, #"genres == "science fiction"w"#,
        #"genres != "fiction"w"#, #"genres == "SCIENCE*"c"#, #"isbn > "978-1""#, #"isbn != "978-2""#, "pages != 120", "pages < 100", "lighthouse && pages < 200",
        "pages > 100", #"published == "2019-01-01T00:00:00Z""#, #"blurb == "*lighthouse*""#, "blurb == \"verses about the tide\"cw",
    ]

    func identifiers(_ page: QueryPage) -> [String] { page.results.map { "\($0.bundleIdentifier)/\($0.uniqueIdentifier)" } }

    /// A search narrowed to earlier results (the desktop's subsearch) checks each candidate
    /// alone, with the full-text index's own tokenizer on SQLite: it must keep exactly the
    /// candidates a search of the same words finds — typed a letter at a time, one-letter last
    /// words, accents, camel-case parts, digits, several words — in the candidates' order, and
    /// the same on PostgreSQL.
    func testARefinementKeepsExactlyTheCandidatesASearchFinds() throws {
        var everything: [ItemKey] = []
        var options = QueryOptions(limit: 1000)
        options.now = Clock.now()
        for result in try sqlite.query(#"uniqueIdentifier == "*""#, options: options).results {
            everything.append(ItemKey(bundle: result.bundleIdentifier, uniqueIdentifier: result.uniqueIdentifier))
        }
        XCTAssertGreaterThan(everything.count, 20)
        everything.reverse()  // an order of its own, which a refinement keeps
        let position = Dictionary(uniqueKeysWithValues: everything.enumerated().map { ($1, $0) })
        var typed: [String] = ["d", "h", "s", "z", "c", "u", "w", "p 7", "staff e", "staff en", "harbour d", "cafe z", "zoë",
                               "ZOE", "ürg", "urgup cav", "window", "windowcon", "my", "contr", "2025", "report 20", "naive", "naïve n",
                               "lighthouse", "nothing", "dune harbour", "e", "a b"]
        for word in ["dune", "harbour", "picture", "mystery", "documentary"] {
            for end in 1...word.count { typed.append(String(word.prefix(end))) }
        }
        for (name, store) in [("sqlite", sqlite as any IndexQueries), ("postgresql", postgres as any IndexQueries)] {
            for words in typed {
                let found = Set(try store.query(words, options: options).results.map { ItemKey(bundle: $0.bundleIdentifier, uniqueIdentifier: $0.uniqueIdentifier) })
                let refined = try store.refine(everything, words: words, now: Clock.now())
                    .map { ItemKey(bundle: $0.bundleIdentifier, uniqueIdentifier: $0.uniqueIdentifier) }
                XCTAssertEqual(found.subtracting(refined).map(\.uniqueIdentifier).sorted(), [], "\(name): '\(words)': found by a search, not kept")
                XCTAssertEqual(Set(refined).subtracting(found).map(\.uniqueIdentifier).sorted(), [], "\(name): '\(words)': kept, not found by a search")
                XCTAssertEqual(refined.count, found.count, "\(name): '\(words)': each candidate once")
                XCTAssertEqual(refined.map { position[$0] ?? -1 }, refined.map { position[$0] ?? -1 }.sorted(), "\(name): '\(words)': in the candidates' order")
            }
            // Unknown items and other bundles' identifiers are left out; a query the language
            // refuses is an error the caller handles (the desktop retries it as plain words).
            XCTAssertEqual(try store.refine([ItemKey(bundle: "com.example.none", uniqueIdentifier: "p.1")], words: "cafe", now: Clock.now()).count, 0, name)
        }
    }

    func testEveryQueryFormMatchesTheSameItemsOnBothBackends() throws {
        var matched = 0
        for query in Self.queries {
            let options = QueryOptions(limit: 1000)
            let expected = try sqlite.query(query, options: options)
            let found = try postgres.query(query, options: options)
            // The same page: the same items in the same order (BM25F from the same statistics,
            // ties alike, or the same sort), each with the same score.
            XCTAssertEqual(identifiers(found), identifiers(expected), query)
            XCTAssertEqual(found.results.map(\.score), expected.results.map(\.score), "scores of \(query)")
            XCTAssertEqual(try postgres.count(query, options: options), try sqlite.count(query, options: options), "count of \(query)")
            if !expected.results.isEmpty { matched += 1 }
            // With words, the snippet of each result is the same (the same attribute, the same marks).
            let snippets = Dictionary(expected.results.map { ("\($0.bundleIdentifier)/\($0.uniqueIdentifier)", $0.snippet) }) { a, _ in a }
            for result in found.results {
                XCTAssertEqual(result.snippet, snippets["\(result.bundleIdentifier)/\(result.uniqueIdentifier)"] ?? nil, "snippet in \(query)")
            }
        }
        XCTAssertGreaterThan(matched, Self.queries.count * 3 / 4, "most queries match something, so the agreement means something")
        // With the options' restrictions too.
        for (query, bundle, domain) in [("harbour", "com.example.films", nil), ("dune", nil, "com.example.films.documentary"), ("cafe", nil, "places.nyc"),
                                        ("rating >= 2", "com.example.places", nil), ("", "com.example.catalogue", nil), ("", nil, "places")] as [(String, String?, String?)] {
            let options = QueryOptions(bundle: bundle, domain: domain, limit: 1000)
            XCTAssertEqual(Set(identifiers(try postgres.query(query, options: options))), Set(identifiers(try sqlite.query(query, options: options))),
                           "\(query) \(bundle ?? "") \(domain ?? "")")
        }
    }

    func testMalformedQueriesFailTheSameWayOnBothBackends() {
        let bad = ["rating >= ", "(dune", "ratng > 4", "title == 4", "a = b", #"isbn == "978"w"#, #"shelf == "A""#, "rating == true",
                   #"title < "a"c"#, #"keywords > "a""#, "InRange(title, 1, 2)", #"startDate > "yesterday""#, #"rating == "4"w"#, "thumbnailData == 1"]
        for query in bad {
            var sqliteError: ReindexError?
            var postgresError: ReindexError?
            do { _ = try sqlite.query(query, options: QueryOptions()) } catch { sqliteError = error }
            do { _ = try postgres.query(query, options: QueryOptions()) } catch { postgresError = error }
            XCTAssertNotNil(sqliteError, query)
            XCTAssertEqual(postgresError?.message, sqliteError?.message, query)
            XCTAssertEqual(postgresError?.code, sqliteError?.code, query)
        }
        for key in ["nonsense", "thumbnailData"] {
            var options = QueryOptions()
            options.sort = [QuerySort(attribute: key)]
            XCTAssertThrowsError(try postgres.query("", options: options), key) { error in
                XCTAssertEqual((error as? ReindexError)?.code, .usage, "\(key): \(error)")
            }
        }
    }

    /// Every page of a query through its cursors.
    func pages(_ store: any IndexQueries, _ query: String, limit: Int, sort: [QuerySort] = []) throws -> [String] {
        var options = QueryOptions(limit: limit, sort: sort)
        var all: [String] = []
        for _ in 0..<1000 {
            let page = try store.query(query, options: options)
            XCTAssertLessThanOrEqual(page.results.count, limit)
            all += identifiers(page)
            guard let next = page.nextCursor else { return all }
            XCTAssertEqual(page.results.count, limit, "only a full page has a next cursor")
            options.after = next
        }
        XCTFail("paging did not end")
        return all
    }

    func testSortedOrdersAndTheirPagesAreTheSameOnBothBackends() throws {
        let sorts: [[QuerySort]] = [
            [], [QuerySort(attribute: "rating", descending: true)], [QuerySort(attribute: "rating")],
            [QuerySort(attribute: "startDate"), QuerySort(attribute: "rating", descending: true)], [QuerySort(attribute: "title")],
            [QuerySort(attribute: "title", descending: true)], [QuerySort(attribute: "keywords")], [QuerySort(attribute: "contentType"), QuerySort(attribute: "uniqueIdentifier", descending: true)],
            [QuerySort(attribute: "domainIdentifier", descending: true)], [QuerySort(attribute: "bundleIdentifier", descending: true)],
            [QuerySort(attribute: "latitude")], [QuerySort(attribute: "supportsPhoneCall", descending: true)], [QuerySort(attribute: "endDate")],
            [QuerySort(attribute: "pages", descending: true)], [QuerySort(attribute: "published")], [QuerySort(attribute: "isbn", descending: true)],
            [QuerySort(attribute: "inPrint")], [QuerySort(attribute: "genres")], [QuerySort(attribute: "rankingHint", descending: true)], [QuerySort(attribute: "expirationDate")],
        ]
        for sort in sorts {
            for query in ["", "harbour", #"rating >= 4 && contentType == "public.movie""#, "dun", "cafe || pages > 100"] {
                let label = "\(query) sorted by \(sort.map { $0.attribute + ($0.descending ? ":desc" : "") })"
                let expected = identifiers(try sqlite.query(query, options: QueryOptions(limit: 1000, sort: sort)))
                let whole = identifiers(try postgres.query(query, options: QueryOptions(limit: 1000, sort: sort)))
                if sort.isEmpty && !query.isEmpty {
                    XCTAssertEqual(Set(whole), Set(expected), label)
                } else {
                    XCTAssertEqual(whole, expected, label)
                }
                for limit in [1, 7] where expected.count < 200 || limit == 7 {
                    XCTAssertEqual(try pages(postgres, query, limit: limit, sort: sort), whole, "\(label), pages of \(limit)")
                }
            }
        }
        // Core Spotlight's names sort as the index's own, on both backends.
        for backend in [sqlite as any IndexQueries, postgres as any IndexQueries] {
            for (alias, name) in [("kMDItemStarRating:desc", "rating:desc"), ("kMDItemTitle", "title"), ("kMDItemContentCreationDate", "contentCreationDate")] {
                let byAlias = identifiers(try backend.query("", options: QueryOptions(limit: 1000, sort: [try QuerySort(parsing: alias)])))
                XCTAssertEqual(byAlias, identifiers(try backend.query("", options: QueryOptions(limit: 1000, sort: [try QuerySort(parsing: name)]))), alias)
            }
            XCTAssertEqual(try backend.facet("", attribute: "kMDItemKeywords", top: 5, options: QueryOptions()).map(\.value),
                           try backend.facet("", attribute: "keywords", top: 5, options: QueryOptions()).map(\.value))
        }
        // The fixture's own expectation (QueryCommandTests): rating descending, ties by identifier.
        let sorted = try pages(postgres, #"rating >= 4 && contentType == "public.movie""#, limit: 5, sort: [QuerySort(attribute: "rating", descending: true)])
        XCTAssertEqual(sorted.first, "com.example.films/film.005")
    }

    /// Text that PostgreSQL's own parser splits its own way — an e-mail address, a URL, a file
    /// path, version numbers, decimals, hyphens, underscores, ligatures, camel case — is split
    /// and folded as SQLite's full-text index does on both backends, so every word finds the same
    /// items, whole, as a prefix, as a phrase, and in one attribute (`w`), a declared one too.
    /// (PostgreSQL's parser kept `ada@example.org`, `/usr/local/bin/reindex-tool` and `4.5.1`
    /// whole: `example`, `usr` and `4` found nothing there.)
    func testWordsAreSplitAndFoldedAlikeOnBothBackends() throws {
        func item(_ uid: String, _ attributes: [(String, JSONValue)]) throws -> ValidatedItem {
            try ItemValidator.validate(.object([("uniqueIdentifier", .string(uid)), ("attributes", .object(attributes))]))
        }
        let items = [
            try item("w.1", [("textContent", .string("write to ada@example.org or see https://docs.example.net/guide/intro-page.html"))]),
            try item("w.2", [("title", .string("/usr/local/bin/reindex-tool")), ("textContent", .string("--version 4.5.1"))]),
            try item("w.3", [("title", .string("Ægir Œuvre straße")), ("contentDescription", .string("price 3.50 EUR, 10,000 units"))]),
            try item("w.4", [("title", .string("foo_bar baz-qux")), ("keywords", .array([.string("C#"), .string("node.js")]))]),
            try item("w.5", [("title", .string("MyHTTPServer")), ("authors", .array([.string("O'Neil-Smith")]))]),
            // Two attributes of each weight class of PostgreSQL's document, other words in each.
            try item("w.6", [("title", .string("Lighthouse keeper")), ("displayName", .string("Keeper's log")),
                             ("authors", .array([.string("Ann Harbor")])), ("contentDescription", .string("notes by the harbor")),
                             ("keywords", .array([.string("beacon")])), ("alternateNames", .array([.string("Pharos")]))]),
        ]
        // The catalogue declares `genres` searchable (not by default).
        let declared = try AttributeDeclaration.parseAll(CustomAttributeTests.declarations)
        for store in [sqlite as any IndexBackend, postgres as any IndexBackend] {
            try TestSupport.seed(store, bundle: "com.example.words", items)
            let writes = try store.makeWriter(bundleIdentifier: "com.example.catalogue", scope: .direct, requestID: nil, declarations: declared)
            try writes.put(try ItemValidator.validate(.object([("uniqueIdentifier", .string("s.1")), ("attributes", .object([
                ("genres", .array([.string("mail bob@example.com"), .string("row 7.2")])), ("title", .string("Shelf")),
            ]))]), declarations: declared))
            _ = try writes.acknowledge(with: { _ in })
        }
        let queries = [
            "example", "ada", "org", "docs", "net", "guide", "intro", "page", "html", "https", "intro-page", "example.org",
            "usr", "local", "bin", "reindex", "tool", "reindex-tool", "version", "4", "5", "1", "4.5", "4.5.1", "\"4 5 1\"",
            "aegir", "ægir", "oeuvre", "œuvre", "strasse", "straße", "stra", "3", "50", "3.50", "10", "000", "eur",
            "foo", "bar", "foo_bar", "baz", "qux", "baz-qux", "c", "node", "js", "node.js", "myhttpserver", "my", "httpserver",
            "server", "neil", "o'neil", "smith", "neil smith", "exam", "ada@example.org", "bob", "com", "7.2",
            #"textContent == "example"w"#, #"textContent == "example.org"w"#, #"title == "qux"w"#, #"title == "bin"w"#,
            #"title == "tool"w"#, #"keywords == "js"w"#, #"authors == "smith"w"#, #"title == "server"w"#, #"title == "my"w"#,
            #"textContent == "4.5"w"#, #"contentDescription == "3.50"w"#, #"title == "straße"w"#, #"textContent == "usr"w"#,
            #"authors == "harbor"w"#, #"authors == "notes"w"#, #"contentDescription == "ann"w"#, #"contentDescription == "harbor"w"#,
            #"title == "log"w"#, #"displayName == "lighthouse"w"#, #"title == "keeper"w"#, #"displayName == "keeper's log"w"#,
            #"keywords == "pharos"w"#, #"alternateNames == "pharos"w"#, #"keywords == "beac*"w"#, "ann harbor", "\"keeper ann\"",
            #"genres == "example"w"#, #"genres == "bob"w"#, #"genres == "7.2"w"#, #"genres == "row"w"#, #"genres == "shelf"w"#,
        ]
        var options = QueryOptions(limit: 100)
        options.now = Clock.now()
        var found = 0
        // Each `w` comparison also as `cdw`, which reads the full-text index (the document's slots
        // on PostgreSQL); `w` alone splits the attribute's own text, on both backends.
        let folded = queries.filter { $0.hasSuffix("\"w") }.map { String($0.dropLast()) + "cdw" }
        for query in queries + folded {
            let expected = identifiers(try sqlite.query(query, options: options)).filter { $0.hasPrefix("com.example.words/") || $0.hasSuffix("/s.1") }
            let got = identifiers(try postgres.query(query, options: options)).filter { $0.hasPrefix("com.example.words/") || $0.hasSuffix("/s.1") }
            XCTAssertEqual(got, expected, query)
            if !expected.isEmpty { found += 1 }
        }
        XCTAssertGreaterThan(found, (queries.count + folded.count) * 3 / 5, "most queries find something, so the agreement means something")
        // What SQLite's tokenizer makes of them, so the agreement is the right one.
        for (query, uid) in [("example", "w.1"), ("usr", "w.2"), ("4.5", "w.2"), ("baz", "w.4"), ("httpserver", "w.5"), ("straße", "w.3"), (#"authors == "harbor"cdw"#, "w.6"), (#"title == "keeper"cdw"#, "w.6"), (#"genres == "example"w"#, "s.1")] {
            XCTAssertTrue(try postgres.query(query, options: options).results.contains { $0.uniqueIdentifier == uid }, "\(query) finds \(uid)")
        }
    }

    func testRelevancePagesReturnEveryMatchOnceWholeWordsFirst() throws {
        // Whole words before prefixes: every item with the word "dune" before Dunes.
        let dune = try postgres.query("dune", options: QueryOptions(limit: 20)).results.map(\.uniqueIdentifier)
        XCTAssertEqual(dune.last, "film.dunes", "\(dune)")
        XCTAssertEqual(Set(dune.dropLast()), ["film.dune", "b.1", "p.4", "p.5"])
        for (query, limit) in [("harbour", 9), ("harb", 13), ("dun", 1), ("cafe", 1), ("picture 1", 4), ("harbour || dune", 8)] {
            let all = try pages(postgres, query, limit: limit)
            XCTAssertEqual(all.count, Set(all).count, "\(query): a match on two pages")
            XCTAssertEqual(Set(all), Set(identifiers(try sqlite.query(query, options: QueryOptions(limit: 1000)))), query)
        }
        // The same order: BM25F from the same statistics on both (docs/QUERIES.md, "Relevance"),
        // each score to the bit, ties by hint, bundle and identifier alike.
        for query in ["harbour", "dune", "cafe", "staff eng", "zoe", "desert", "harb", "picture 1", "harbour || dune", "\"harbour dune\"", "\"staff engineer\"",
                      #"title == "harbour"cdw"#, "dun*"] {
            let expected = try sqlite.query(query, options: QueryOptions(limit: 1000))
            let found = try postgres.query(query, options: QueryOptions(limit: 1000))
            XCTAssertFalse(expected.results.isEmpty, query)
            XCTAssertEqual(identifiers(found), identifiers(expected), query)
            XCTAssertEqual(found.results.map(\.score), expected.results.map(\.score), query)
        }
        // So a cursor of one backend continues on the other, where the same items are.
        let first = try sqlite.query("harbour", options: QueryOptions(limit: 2))
        let rest = try postgres.query("harbour", options: QueryOptions(limit: 1000, after: try XCTUnwrap(first.nextCursor)))
        XCTAssertEqual(identifiers(first) + identifiers(rest), identifiers(try sqlite.query("harbour", options: QueryOptions(limit: 1000))))
        // A cursor of the field score PostgreSQL ranked by before is refused, with the reason.
        let fieldScore = Cursor.relevance(scoring: .fieldScore, pass: 0, score: 10, hint: 0, bundle: "b", uid: "b.2").encoded
        XCTAssertThrowsError(try postgres.query("harbour", options: QueryOptions(limit: 1, after: fieldScore))) { error in
            XCTAssertTrue("\(error)".contains("field score"), "\(error)")
        }
        let harbour = try postgres.query("harbour", options: QueryOptions(limit: 1000)).results.map(\.uniqueIdentifier)
        XCTAssertEqual(Array(harbour.prefix(2)), ["b.2", "p.2"], "the items titled Harbour first, the one without a hint before the one hinted -1")
        XCTAssertEqual(harbour.last, "p.4", "a hint of 100 does not lift a textContent match above keyword matches")
    }

    func testFacetsAndOneItemAreTheSameOnBothBackends() throws {
        for (query, attribute) in [("harbour", "contentType"), ("harbour", "domainIdentifier"), ("", "bundleIdentifier"), ("", "keywords"),
                                   ("rating >= 3", "authors"), ("", "genres"), ("", "isbn"), ("dune", "keywords")] {
            let expected = try sqlite.facet(query, attribute: attribute, top: 5, options: QueryOptions())
            let found = try postgres.facet(query, attribute: attribute, top: 5, options: QueryOptions())
            XCTAssertEqual(found.map(\.value), expected.map(\.value), "\(attribute) of \(query)")
            XCTAssertEqual(found.map(\.count), expected.map(\.count), "\(attribute) of \(query)")
        }
        XCTAssertThrowsError(try postgres.facet("", attribute: "rating", top: 5, options: QueryOptions())) { error in
            XCTAssertEqual((error as? ReindexError)?.code, .usage)
        }
        for (bundle, uid) in [("com.example.films", "film.dune"), ("com.example.places", "p.1"), ("COM.EXAMPLE.CATALOGUE", "b.1")] {
            let expected = try XCTUnwrap(try sqlite.item(bundle: bundle, uniqueIdentifier: uid, now: Clock.now()))
            let found = try XCTUnwrap(try postgres.item(bundle: bundle, uniqueIdentifier: uid, now: Clock.now()))
            XCTAssertEqual(found.result.bundleIdentifier, expected.result.bundleIdentifier, uid)
            XCTAssertEqual(found.result.uniqueIdentifier, expected.result.uniqueIdentifier, uid)
            XCTAssertEqual(found.result.domainIdentifier, expected.result.domainIdentifier, uid)
            XCTAssertEqual(found.result.attributes, expected.result.attributes, uid)
            XCTAssertEqual(found.expired, expected.expired)
            XCTAssertEqual(found.generationCommitted != nil, expected.generationCommitted != nil, uid)
        }
        XCTAssertNil(try postgres.item(bundle: "com.example.films", uniqueIdentifier: "film.none", now: Clock.now()))
    }
}

/// The limits of docs/QUERIES.md on both backends: the same queries at the limits run and
/// match the same items; past them, the same error; a cursor of another order, the same error.
extension PostgresQueryAgreementTests {
    func testQueriesAtAndPastTheLimitsAgree() throws {
        let declared = [#"genres == "fiction"w"#, "pages >= 300", #"isbn == "978-*""#, "!inPrint == true"]
        for query in QueryCommandTests.queriesAtTheLimits(extraLeaves: declared) {
            let options = QueryOptions(limit: 1000)
            let expected = try sqlite.query(query, options: options)
            let found = try postgres.query(query, options: options)
            XCTAssertEqual(Set(identifiers(found)), Set(identifiers(expected)), String(query.prefix(200)))
            XCTAssertEqual(try postgres.count(query, options: options), try sqlite.count(query, options: options), String(query.prefix(200)))
        }
        for (name, query, _, _) in QueryCases.queriesPastTheLimits {
            var sqliteError: ReindexError?
            var postgresError: ReindexError?
            do { _ = try sqlite.query(query, options: QueryOptions()) } catch { sqliteError = error }
            do { _ = try postgres.query(query, options: QueryOptions()) } catch { postgresError = error }
            XCTAssertEqual(sqliteError?.code, .invalidData, name)
            XCTAssertEqual(postgresError?.message, sqliteError?.message, name)
        }
        let byRelevance = try XCTUnwrap(try postgres.query("harbour", options: QueryOptions(limit: 5)).nextCursor)
        var sorted = QueryOptions(limit: 5)
        sorted.sort = [QuerySort(attribute: "rating", descending: true)]
        let byRating = try XCTUnwrap(try postgres.query("harbour", options: sorted).nextCursor)
        sorted.after = byRelevance
        XCTAssertThrowsError(try postgres.query("harbour", options: sorted)) { XCTAssertEqual(($0 as? ReindexError)?.code, .invalidData) }
        XCTAssertThrowsError(try postgres.query("harbour", options: QueryOptions(after: byRating))) { XCTAssertEqual(($0 as? ReindexError)?.code, .invalidData) }
        for (cursor, _) in QueryCases.damagedCursors {
            XCTAssertThrowsError(try postgres.query("harbour", options: QueryOptions(after: cursor)), cursor) { XCTAssertEqual(($0 as? ReindexError)?.code, .invalidData) }
        }
    }
}
