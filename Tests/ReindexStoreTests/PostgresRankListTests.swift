import Foundation
@testable import ReindexStore
import ReindexProtocol
import ReindexTestSupport
import XCTest

/// Rank lists on PostgreSQL (PostgresStore+RankLists.swift): a first page read through a common
/// word's lists is exactly the page a full read returns, before and after every kind of write —
/// new items, items written again, deletes, expiry, a reindexAll staged while a list is made and
/// acknowledged after — on a server the tests start.
final class PostgresRankListTests: XCTestCase, @unchecked Sendable {
    private var server: PostgresServer!
    private var schema = ""

    override func setUpWithError() throws {
        server = try PostgresServer.shared()
        schema = server.freshSchema("ranklists")
    }

    /// Two connections to one index: one that reads common words (above 5 items) through rank
    /// lists of 12, made again once more than 100 items changed, and one that always reads in full.
    func listedAndFull() throws -> (listed: PostgresStore, full: PostgresStore) {
        let location = try PostgresLocation(server.connectionString, environment: ["REINDEX_PG_SCHEMA": schema])
        let listed = try PostgresStore.open(location)
        listed.rankLists.commonWords = 5
        listed.rankLists.size = 12
        listed.rankLists.changedRows = 100
        let full = try PostgresStore.open(location)
        full.rankLists.enabled = false
        return (listed, full)
    }

    static let words = RankListTests.words
    static let queries = words + ["la", "ri", "sum*", "orchard si", "lantern && rankingHint >= 0", "comet && title == \"comet*\"",
                                  "lantern river", "comet garden", "glass paper summit", "signal harbour*",
                                  // Words of one attribute: lists of their own.
                                  #"title == "lantern"cdw"#, #"contentDescription == "river"cdw"#, #"title == "sum*"cdw"#,
                                  #"title == "comet"cdw && title == "garden"cdw"#,
                                  // Phrases: lists of their own; one whose last word is also a prefix, two.
                                  #"* == "river lantern"cdw"#, "river-lantern", #"* == "garden comet"cdw && summit"#,
                                  "river-lan", "garden-c", #"* == "river lan*"cdw"#, "summit river-lan"]

    func pages(_ store: PostgresStore, _ query: String, limit: Int = 7) throws -> [String] {
        try RankListTests.pages(store, query, limit: limit)
    }

    /// The first page of each query, and each query's pages, agree; returns how many first
    /// pages the lists answered.
    @discardableResult
    func assertAgree(_ listed: PostgresStore, _ full: PostgresStore, _ when: String, file: StaticString = #filePath, line: UInt = #line) throws -> Int {
        let before = listed.rankLists.answered
        for query in Self.queries {
            // Twice: the first search makes the lists it wants, the second reads them.
            _ = try listed.query(query, options: QueryOptions(limit: 7))
            for limit in [1, 7, 20] {
                XCTAssertEqual(try listed.query(query, options: QueryOptions(limit: limit)).results.map { "\($0.uniqueIdentifier) \($0.score ?? 0)" },
                               try full.query(query, options: QueryOptions(limit: limit)).results.map { "\($0.uniqueIdentifier) \($0.score ?? 0)" },
                               "\(query), first \(limit), \(when)", file: file, line: line)
            }
            XCTAssertEqual(try pages(listed, query), try pages(full, query), "\(query) \(when)", file: file, line: line)
        }
        return listed.rankLists.answered - before
    }

    func testFirstPagesReadThroughRankListsAreThoseOfAFullReadThroughWritesUpdatesDeletesAndExpiry() throws {
        let (listed, full) = try listedAndFull()
        let index = LocalIndex(store: listed, bundleIdentifier: "com.example.ranked")
        let other = LocalIndex(store: listed, bundleIdentifier: "com.example.another")
        _ = try index.put((0..<300).map { RankListTests.item($0) })
        _ = try other.put((300..<360).map { RankListTests.item($0) })
        XCTAssertGreaterThan(try assertAgree(listed, full, "after the first writes"), 30, "the lists answered first pages")
        XCTAssertGreaterThanOrEqual(try listed.query("SELECT count(*) FROM rank_lists").int(0, 0), 10, "the searches made lists")
        XCTAssertEqual(try listed.query("SELECT string_agg(left(key, strpos(key, '#') - 1), ' ' ORDER BY key) FROM rank_lists WHERE key LIKE '%@%'").text(0, 0),
                       "&comet garden@title *sum@title =lantern@title =river@contentDescription",
                       "the words of one attribute have lists of their own (two words without theirs, their list together)")
        XCTAssertEqual(try listed.query("SELECT string_agg(left(key, strpos(key, '#') - 1), ' ' ORDER BY key) FROM rank_lists WHERE strpos(key, chr(3)) > 0").text(0, 0),
                       "&garden\u{3}comet summit &garden\u{3}comet summit* &river\u{3}lan summit &river\u{3}lan* summit *river\u{3}lan +garden\u{3}c +river\u{3}lan "
                       + "=garden\u{3}c =river\u{3}lan =river\u{3}lantern",
                       "phrases have lists of their own, one whose last word is also a prefix two; typed bare and asked as `cdw`, the same")
        XCTAssertEqual(try listed.checkInvariants(quick: false).problems, [])
        // `check` reads them as the words of that attribute, or as the phrases they are of.
        func wrong(_ by: Int) -> String {
            "UPDATE rank_entries SET hint = hint + \(by) WHERE (list LIKE '=lantern@title#%' OR list LIKE '=river' || chr(3) || 'lantern#%' OR list LIKE '+river' || chr(3) || 'lan#%'"
                + " OR list LIKE '&river' || chr(3) || 'lan* summit#%') AND n = 1"
        }
        _ = try listed.query(wrong(1))
        XCTAssertEqual(try listed.checkInvariants(quick: false).problems, ["the rank list of 'river lan* summit' gives 1 item(s) a score or hint they do not have",
                                                                            "the rank list of 'river lan*' gives 1 item(s) a score or hint they do not have",
                                                                            "the rank list of 'lantern' gives 1 item(s) a score or hint they do not have",
                                                                            "the rank list of 'river lantern' gives 1 item(s) a score or hint they do not have"])
        _ = try listed.query(wrong(-1))
        let horizons = try listed.query("SELECT string_agg(horizon::text, ',' ORDER BY key) FROM rank_lists WHERE key NOT LIKE '&%'").text(0, 0)

        // New items, some better than every entry of their words' lists (one word, short): fewer
        // than the lists' limit of changed items, so read as candidates beside the lists.
        _ = try index.put((400..<460).map { n in
            n % 3 == 0 ? SearchableItem(uniqueIdentifier: "new\(n)", attributes: .init(title: Self.words[n % Self.words.count], rankingHint: 3))
                : RankListTests.item(n)
        })
        XCTAssertGreaterThan(try assertAgree(listed, full, "after new items"), 30)
        XCTAssertEqual(try listed.query("SELECT string_agg(horizon::text, ',' ORDER BY key) FROM rank_lists WHERE key NOT LIKE '&%'").text(0, 0), horizons,
                       "the words' lists were read with the items changed since, not made again (a list of words together is, when the rarities it was made for moved more than its first entries' scores lie apart: in an index this small, a few items move them)")
        // Items written again with other words and hints: past the limit, so the lists are made again.
        _ = try index.put((0..<80).map { n in
            var item = RankListTests.item(n, salt: 1)
            item.uniqueIdentifier = RankListTests.item(n).uniqueIdentifier
            if n % 4 == 0 { item.attributes.rankingHint = 7 }
            return item
        })
        try assertAgree(listed, full, "after items were written again")
        XCTAssertNotEqual(try listed.query("SELECT string_agg(horizon::text, ',' ORDER BY key) FROM rank_lists WHERE key NOT LIKE '&%'").text(0, 0), horizons,
                          "the lists were made again")
        // A partial update of a listed item's hint, deletes, and an expired item.
        // (The last of the first page's best score: its hint alone puts it first.)
        let best = try full.query("comet", options: QueryOptions(limit: 12)).results
        let top = try XCTUnwrap(best.last { $0.score == best.first?.score && $0.bundleIdentifier == "com.example.ranked" })
        _ = try index.update([SearchableItem(uniqueIdentifier: top.uniqueIdentifier, attributes: .init(rankingHint: 50))])
        _ = try index.delete(identifiers: (100..<200).map { RankListTests.item($0).uniqueIdentifier })
        _ = try other.put([SearchableItem(uniqueIdentifier: "gone", expirationDate: Date(timeIntervalSinceNow: -60), attributes: .init(title: "lantern", rankingHint: 99))])
        XCTAssertGreaterThan(try assertAgree(listed, full, "after an update, deletes and an expired item"), 30)
        XCTAssertEqual(try listed.query("comet", options: QueryOptions(limit: 1)).results.first?.uniqueIdentifier, top.uniqueIdentifier,
                       "the updated hint counts")

        // `check` reads each list's word in full and finds the lists as the rule wants them…
        XCTAssertEqual(try listed.health(quick: false).problems, [])
        // …and says so when one is not: an entry gone, another with a score its item does not have.
        _ = try listed.query("""
            WITH gone AS (DELETE FROM rank_entries WHERE list LIKE '=comet#%' AND n = 1 RETURNING 1)
            UPDATE rank_entries SET score = score + 1 WHERE list LIKE '=river#%' AND n = 2 AND EXISTS (SELECT 1 FROM items i WHERE i.id = item)
            """)
        XCTAssertEqual(try listed.health(quick: false).problems, [
            "the rank list of 'comet' misses 1 item(s) it should hold",
            "the rank list of 'river' gives 1 item(s) a score or hint they do not have",
        ])
    }

    func testAReindexAllStagedWhileAListIsMadeIsFoundOnceItIsAcknowledged() throws {
        let (listed, full) = try listedAndFull()
        let first = try PostgresWrites(store: listed, bundleIdentifier: "com.example.ranked", scope: .replacement(generation: 1))
        for n in 0..<200 { try first.put(try RankListTests.item(n).validated()) }
        _ = try first.acknowledge()
        // The next generation is written and committed batch by batch, not yet live…
        let second = try PostgresWrites(store: listed, bundleIdentifier: "com.example.ranked", scope: .replacement(generation: 2))
        for n in 0..<150 { try second.put(try RankListTests.item(n, salt: 2).validated()) }
        try second.commitBatch()
        // …while the searches make their lists, from items of both generations.
        XCTAssertGreaterThan(try assertAgree(listed, full, "while a reindexAll is staged"), 30)
        // Acknowledged: the staged items are the bundle now, without any being written again.
        _ = try second.acknowledge()
        XCTAssertEqual(try listed.query("SELECT count(*) FROM rank_lists").int(0, 0), 0, "the acknowledgement dropped the lists")
        XCTAssertGreaterThan(try assertAgree(listed, full, "after the reindexAll was acknowledged"), 30)
    }

    func testSeveralCommonWordsAreAnsweredFromTheirListsWithTheScoresOfAFullRead() throws {
        let (listed, full) = try listedAndFull()
        listed.rankLists.size = 40
        // Short items holding both words, among longer ones holding either.
        _ = try LocalIndex(store: listed, bundleIdentifier: "com.example.ranked").put((0..<200).map { RankListTests.item($0) } + (0..<30).map { n in
            SearchableItem(uniqueIdentifier: "both\(n)", attributes: .init(title: n % 2 == 0 ? "harbour signal" : "signal harbour", rankingHint: n % 7 == 0 ? 1 : nil))
        })
        for query in ["harbour signal", "signal harbour", "lantern river comet"] {
            _ = try listed.query(query, options: QueryOptions(limit: 5))
            let before = listed.rankLists.answered
            for limit in [1, 5, 12] {
                XCTAssertEqual(try listed.query(query, options: QueryOptions(limit: limit)).results.map { "\($0.uniqueIdentifier) \($0.score ?? 0)" },
                               try full.query(query, options: QueryOptions(limit: limit)).results.map { "\($0.uniqueIdentifier) \($0.score ?? 0)" },
                               "\(query), first \(limit)")
            }
            XCTAssertGreaterThan(listed.rankLists.answered, before, "\(query): answered from the lists")
            XCTAssertEqual(try pages(listed, query, limit: 4), try pages(full, query, limit: 4), query)
            // The page's statement looks the candidates up by id; it never reads the words'
            // matches from the full-text index (which at a million items is every match).
            let plan = try listed.queryPlan(query, options: QueryOptions(limit: 5))
            XCTAssertFalse(plan.contains { $0.contains("items_doc") }, "\(query): \(plan.joined(separator: "\n"))")
            XCTAssertTrue(plan.contains { $0.contains("items_pkey") }, "\(query): \(plan.joined(separator: "\n"))")
        }
    }

    /// Two common words whose best items each hold only one of them (titled "signal …" or
    /// "harbour …"), while the items holding both mention them lower down: no item of either
    /// word's list holds the other, so those lists cannot prove a page and a full read scored
    /// every item holding both. The first search makes the list of the two words together and
    /// reads its page from it; later searches and pages walk it, with the pages of a full read
    /// before and after writes, and `check` reads it again.
    func testTwoCommonWordsWhoseBestItemsHoldOnlyOneAreAnsweredFromTheirListTogether() throws {
        let (listed, full) = try listedAndFull()
        let index = LocalIndex(store: listed, bundleIdentifier: "com.example.ranked")
        _ = try index.put((0..<40).map { n in SearchableItem(uniqueIdentifier: "s\(n)", attributes: .init(title: "signal beacon \(n)")) }
            + (0..<40).map { n in SearchableItem(uniqueIdentifier: "h\(n)", attributes: .init(title: "harbour dock \(n)", rankingHint: n % 9 == 0 ? 2 : nil)) }
            + (0..<60).map { n in
                SearchableItem(uniqueIdentifier: "b\(n)", attributes: .init(
                    title: "note \(n)", contentDescription: n % 5 == 0 ? "signal harbours" : "the signal of the harbour", rankingHint: n % 7 == 0 ? 1 : nil))
            })
        let queries = ["signal harbour", "harbour signal", "signal harbour && title == \"note*\""]
        for query in queries {
            let before = listed.rankLists.answered
            let first = try listed.query(query, options: QueryOptions(limit: 7))
            XCTAssertEqual(first.results.map { "\($0.uniqueIdentifier) \($0.score ?? 0)" },
                           try full.query(query, options: QueryOptions(limit: 7)).results.map { "\($0.uniqueIdentifier) \($0.score ?? 0)" }, query)
            XCTAssertEqual(listed.rankLists.answered, before + 1, "\(query): the first search was answered from the lists it made")
        }
        // One list for the two words in either order, whatever the filter (and its folding).
        let together = try listed.query("SELECT string_agg(key, ',' ORDER BY key) FROM rank_lists WHERE key LIKE '&%'").text(0, 0) ?? ""
        XCTAssertEqual(together.split(separator: ",").filter { $0.hasPrefix("&harbour signal#") }.count, 1, together)
        func assertAnsweredTogether(_ when: String) throws {
            for query in queries {
                let before = listed.rankLists.answered
                for limit in [1, 7] {
                    XCTAssertEqual(try listed.query(query, options: QueryOptions(limit: limit)).results.map { "\($0.uniqueIdentifier) \($0.score ?? 0)" },
                                   try full.query(query, options: QueryOptions(limit: limit)).results.map { "\($0.uniqueIdentifier) \($0.score ?? 0)" },
                                   "\(query), first \(limit), \(when)")
                }
                XCTAssertEqual(listed.rankLists.answered, before + 2, "\(query): both pages answered from the list together, \(when)")
                XCTAssertEqual(try pages(listed, query, limit: 4), try pages(full, query, limit: 4), "\(query), \(when)")
            }
        }
        try assertAnsweredTogether("after the first search")
        let plan = try listed.queryPlan("signal harbour", options: QueryOptions(limit: 5))
        XCTAssertFalse(plan.contains { $0.contains("items_doc") }, plan.joined(separator: "\n"))

        // A new item holding both in its title, the best of the query now, and one written again
        // without them: read beside the list as changed items.
        _ = try index.put([SearchableItem(uniqueIdentifier: "new", attributes: .init(title: "harbour signal")),
                           SearchableItem(uniqueIdentifier: "b3", attributes: .init(title: "note 3"))])
        try assertAnsweredTogether("after writes")
        XCTAssertEqual(try listed.query("signal harbour", options: QueryOptions(limit: 1)).results.first?.uniqueIdentifier, "new")

        XCTAssertEqual(try listed.health(quick: false).problems, [])
        // Past the lists' limit, lists of words together go before those of single words (a
        // word's two lists are made together: room for one more list makes one go).
        listed.rankLists.maximumLists = try listed.query("SELECT count(*) FROM rank_lists").int(0, 0) + 1
        _ = try listed.query("beacon", options: QueryOptions(limit: 3))
        XCTAssertEqual(try listed.query("SELECT string_agg(left(key, strpos(key, '#')), ' ' ORDER BY key) FROM rank_lists").text(0, 0),
                       "=beacon# =harbour# =signal#",
                       "the list of 'beacon' took the place of the lists of words together")
        listed.rankLists.maximumLists = 64
        _ = try listed.query("signal harbour", options: QueryOptions(limit: 7))
        _ = try listed.query("DELETE FROM rank_entries WHERE list LIKE '&harbour signal#%' AND n = 1")
        XCTAssertEqual(try listed.health(quick: false).problems, ["the rank list of 'harbour signal' misses 1 item(s) it should hold"])
    }

    func testAPairTypedHalfwayIsAnsweredFromTheListOfItsWordsWithTheLastAsAPrefix() throws {
        let (listed, full) = try listedAndFull()
        let index = LocalIndex(store: listed, bundleIdentifier: "com.example.ranked")
        _ = try index.put((0..<300).map { RankListTests.item($0) } + [
            // `gla` and `ri` as whole words too: a first pass of a few items before the second's.
            SearchableItem(uniqueIdentifier: "whole1", attributes: .init(title: "gla", contentDescription: "comet")),
            SearchableItem(uniqueIdentifier: "whole2", attributes: .init(title: "comet ri", rankingHint: 3)),
        ])
        func first(_ store: PostgresStore, _ query: String, _ limit: Int) throws -> [String] {
            try store.query(query, options: QueryOptions(limit: limit)).results.map { "\($0.uniqueIdentifier) \($0.score ?? 0)" }
        }
        let queries = ["comet gla", "comet ri", "garden riv", "lantern comet si"]
        func assertAnswered(_ when: String) throws {
            for query in queries {
                let before = listed.rankLists.answered
                for limit in [1, 7] {
                    XCTAssertEqual(try first(listed, query, limit), try first(full, query, limit), "\(query), first \(limit), \(when)")
                }
                XCTAssertEqual(listed.rankLists.answered, before + 2, "\(query): both first pages answered from the list, \(when)")
                // (Past the list's 12 entries: read in full, the same page.)
                XCTAssertEqual(try first(listed, query, 20), try first(full, query, 20), "\(query), first 20, \(when)")
                XCTAssertEqual(try pages(listed, query, limit: 4), try pages(full, query, limit: 4), "\(query), \(when)")
            }
        }
        for query in queries {
            let before = listed.rankLists.answered
            XCTAssertEqual(try first(listed, query, 7), try first(full, query, 7), query)
            XCTAssertEqual(listed.rankLists.answered, before + 1, "\(query): the first search was answered from the list it made")
        }
        let keys = try listed.query("SELECT string_agg(left(key, strpos(key, '#')), ' ' ORDER BY key) FROM rank_lists WHERE key LIKE '&%'").text(0, 0) ?? ""
        for key in ["&comet gla*#", "&comet ri*#", "&garden riv*#", "&comet lantern si*#"] { XCTAssertTrue(keys.contains(key), keys) }
        try assertAnswered("after the first search")
        XCTAssertEqual(try first(listed, "comet gla", 1), ["whole1 " + (try first(full, "comet gla", 1).first?.split(separator: " ").last.map(String.init) ?? "")],
                       "the first pass comes first")

        // Written since: a new best item of the second pass, one of the first, one written again.
        _ = try index.put([SearchableItem(uniqueIdentifier: "new", attributes: .init(title: "comet glass garden river", rankingHint: 5)),
                           SearchableItem(uniqueIdentifier: "whole3", attributes: .init(title: "comet gla")),
                           RankListTests.item(5, salt: 9)])
        try assertAnswered("after writes")
        let top = try first(listed, "comet gla", 7).map { String($0.split(separator: " ")[0]) }
        XCTAssertEqual(Array(top.prefix(2)), ["whole3", "whole1"], "the first pass first")
        XCTAssertEqual(top[2], "new", "\(top)")
        XCTAssertEqual(try listed.health(quick: false).problems, [])
    }

    func testAPairTypedOneLetterMoreIsReadFromThePairsListWithTheShorterPrefixAndMakesNoListOfAWord() throws {
        let (listed, full) = try listedAndFull()
        let index = LocalIndex(store: listed, bundleIdentifier: "com.example.ranked")
        _ = try index.put((0..<300).map { RankListTests.item($0) } + [
            SearchableItem(uniqueIdentifier: "whole1", attributes: .init(title: "comet gla", rankingHint: 2)),
        ])
        func first(_ store: PostgresStore, _ query: String, _ limit: Int) throws -> [String] {
            try store.query(query, options: QueryOptions(limit: limit)).results.map { "\($0.uniqueIdentifier) \($0.score ?? 0)" }
        }
        func lists() throws -> [String: String] {
            let r = try listed.query("SELECT left(key, strpos(key, '#')), horizon::text FROM rank_lists")
            return Dictionary(uniqueKeysWithValues: (0..<r.rowCount).map { (r.text($0, 0) ?? "", r.text($0, 1) ?? "") })
        }
        // The word first, then the pair typed key by key.
        XCTAssertEqual(try first(listed, "comet", 7), try first(full, "comet", 7))
        let word = try XCTUnwrap(try lists()["=comet#"], "the word's own list")
        XCTAssertEqual(try first(listed, "comet gl", 7), try first(full, "comet gl", 7))
        XCTAssertEqual(try lists()["=comet#"], word, "the word's own list is not made again")
        // (No list of `comet`'s second pass: its first is not whole in its list, so no page reads it.)
        XCTAssertEqual(Set(try lists().keys), ["=comet#", "&comet gl#", "&comet gl*#"],
                       "only the pair's lists together are made, not one of `gl`")
        let made = try lists()
        for query in ["comet gla", "comet glas", "comet glass"] {
            let before = listed.rankLists.fromParentLists
            for limit in [1, 7] {
                XCTAssertEqual(try first(listed, query, limit), try first(full, query, limit), "\(query), first \(limit)")
            }
            XCTAssertEqual(listed.rankLists.fromParentLists, before + 2, "\(query): both pages read from `comet gl*`'s list")
            XCTAssertEqual(try lists(), made, "\(query): no list made")
        }
        // Later pages, past the list's 12 entries, are read as before (and may make lists).
        for query in ["comet gla", "comet glas", "comet glass"] {
            XCTAssertEqual(try pages(listed, query, limit: 4), try pages(full, query, limit: 4), query)
        }
        XCTAssertEqual(try first(listed, "comet gla", 1).first?.split(separator: " ").first, "whole1", "the first pass first")

        // Written since: a new best item of the second pass, a new one of the first, one written again.
        _ = try index.put([SearchableItem(uniqueIdentifier: "new", attributes: .init(title: "comet glassy garden", rankingHint: 5)),
                           SearchableItem(uniqueIdentifier: "whole2", attributes: .init(title: "comet glas")),
                           RankListTests.item(5, salt: 9)])
        for query in ["comet gla", "comet glas", "comet glass"] {
            for limit in [1, 7, 20] {
                XCTAssertEqual(try first(listed, query, limit), try first(full, query, limit), "\(query), first \(limit), after writes")
            }
            XCTAssertEqual(try pages(listed, query, limit: 3), try pages(full, query, limit: 3), "\(query), after writes")
        }
        XCTAssertEqual(try listed.health(quick: false).problems, [])
    }

    /// A common word without lists of its own, read from its shorter prefix's lists (a search
    /// field's next key), is not counted at every search once the server's statistics say how
    /// common it is: the count built the word's whole bitmap (36 ms for a word 125,000 of 1M
    /// items hold) only to choose between two ways to the same page.
    func testACommonWordReadFromAShorterPrefixsListsIsNotCountedOnceTheStatisticsSayItIsCommon() throws {
        let (listed, full) = try listedAndFull()
        let index = LocalIndex(store: listed, bundleIdentifier: "com.example.ranked")
        // More items hold `comet` than 4 × 257; none holds `co` as a word.
        _ = try index.put((0..<1_100).map {
            SearchableItem(uniqueIdentifier: "c\($0)", attributes: .init(title: "comet \($0 % 7 == 0 ? "glass" : "paper")", rankingHint: Double($0 % 13)))
        })
        func first(_ store: PostgresStore, _ query: String, _ limit: Int) throws -> [String] {
            try store.query(query, options: QueryOptions(limit: limit)).results.map { "\($0.uniqueIdentifier) \($0.score ?? 0)" }
        }
        func lists() throws -> Set<String> {
            let r = try listed.query("SELECT left(key, strpos(key, '#')) FROM rank_lists")
            return Set((0..<r.rowCount).map { r.text($0, 0) ?? "" })
        }
        XCTAssertEqual(try first(listed, "co", 7), try first(full, "co", 7))
        XCTAssertEqual(try lists(), ["=co#", "+co#"])
        _ = try listed.query("ANALYZE items")
        // The next key in a process of its own, which reads the statistics afresh.
        let location = try PostgresLocation(server.connectionString, environment: ["REINDEX_PG_SCHEMA": schema])
        let next = try PostgresStore.open(location)
        (next.rankLists.commonWords, next.rankLists.size, next.rankLists.changedRows) = (5, 12, 100)
        for limit in [1, 7] {
            let (parents, counts) = (next.rankLists.fromParentLists, next.rankLists.exactCounts)
            XCTAssertEqual(try first(next, "comet", limit), try first(full, "comet", limit), "first \(limit)")
            XCTAssertEqual(next.rankLists.fromParentLists, parents + 1, "first \(limit): read from `co`'s lists")
            XCTAssertEqual(next.rankLists.exactCounts, counts, "first \(limit): `comet` not counted")
        }
        XCTAssertEqual(try lists(), ["=co#", "+co#"], "no list made")
        // A word the statistics do not list is counted, as before.
        let counts = next.rankLists.exactCounts
        XCTAssertEqual(try first(next, "comet glass", 7), try first(full, "comet glass", 7))
        XCTAssertEqual(try first(next, "cox", 7), try first(full, "cox", 7))
        XCTAssertGreaterThan(next.rankLists.exactCounts, counts, "a word the statistics do not list is counted")
        XCTAssertEqual(try next.health(quick: false).problems, [])
    }

    func testAPageAfterACursorInTheSecondPassWalksPastTheFirstPassItemsTheListHolds() throws {
        let (listed, full) = try listedAndFull()
        let index = LocalIndex(store: listed, bundleIdentifier: "com.example.ranked")
        // Most score 20 in `comet gla*`: in its list (which holds them all), the first pass's
        // items (`gla` as typed) sit between the second pass's in identifier order.
        _ = try index.put(["a1", "a2", "a3", "b1", "b2", "b3", "b4"].map { SearchableItem(uniqueIdentifier: $0, attributes: .init(title: "comet glass")) }
            + ["a4p", "a5p", "a6p"].map { SearchableItem(uniqueIdentifier: $0, attributes: .init(title: "comet gla")) }
            + [SearchableItem(uniqueIdentifier: "x0", attributes: .init(title: "comet", contentDescription: "glade"))])
        for limit in [1, 2, 3, 4] {
            _ = try listed.query("comet gla", options: QueryOptions(limit: limit))
            XCTAssertEqual(try pages(listed, "comet gla", limit: limit), try pages(full, "comet gla", limit: limit), "pages of \(limit)")
        }
        XCTAssertEqual(try pages(listed, "comet gla", limit: 3).prefix(6).map { String($0.split(separator: " ")[0]) },
                       ["a4p", "a5p", "a6p", "a1", "a2", "a3"])
    }

    func testRareWordsAndRestrictedWordsAreReadInFullAndMakeNoList() throws {
        let (listed, full) = try listedAndFull()
        _ = try LocalIndex(store: listed, bundleIdentifier: "com.example.ranked").put((0..<40).map { RankListTests.item($0) } + [
            SearchableItem(uniqueIdentifier: "rare", attributes: .init(title: "quokka")),
        ])
        for query in ["quokka", "title == \"comet\"w", "quokka lantern"] {
            XCTAssertEqual(try pages(listed, query, limit: 3), try pages(full, query, limit: 3), query)
        }
        XCTAssertEqual(try listed.query("SELECT count(*) FROM rank_lists").int(0, 0), 0)
        XCTAssertEqual(listed.rankLists.answered, 0)
    }

    /// The first search of common words whose lists are missing makes them and reads its page
    /// from them, rather than scoring every match and then reading them all again for the lists.
    /// When a list cannot be made — another session holds the lists' table, or the session may
    /// not write — the search reads every match instead and still answers; only a refusal to
    /// write keeps later searches of the process from trying first.
    func testTheFirstSearchOfACommonWordMakesItsListsAndReadsItsPageFromThem() throws {
        let (listed, full) = try listedAndFull()
        _ = try LocalIndex(store: listed, bundleIdentifier: "com.example.ranked").put((0..<300).map { RankListTests.item($0) })
        for (n, query) in ["lantern", "comet", "la", "orchard"].enumerated() {
            let page = try listed.query(query, options: QueryOptions(limit: 7))
            XCTAssertEqual(page.results.map { "\($0.uniqueIdentifier) \($0.score ?? 0)" },
                           try full.query(query, options: QueryOptions(limit: 7)).results.map { "\($0.uniqueIdentifier) \($0.score ?? 0)" }, query)
            XCTAssertEqual(listed.rankLists.answered, n + 1, "\(query): the first search was answered from the lists it made")
        }
        XCTAssertEqual(try listed.health(quick: false).problems, [], "lists made together, a word's two passes at once, are exact")

        let location = try PostgresLocation(server.connectionString, environment: ["REINDEX_PG_SCHEMA": schema])
        let holder = try PostgresStore.open(location)
        try holder.connection.execute("BEGIN; LOCK TABLE rank_lists IN SHARE ROW EXCLUSIVE MODE")
        defer { holder.connection.rollback() }
        var before = listed.rankLists.answered
        XCTAssertEqual(try listed.query("river", options: QueryOptions(limit: 7)).results.map(\.uniqueIdentifier),
                       try full.query("river", options: QueryOptions(limit: 7)).results.map(\.uniqueIdentifier))
        XCTAssertEqual(listed.rankLists.answered, before, "no list could be made: every match was read")
        XCTAssertFalse(listed.rankLists.makingFailed, "a lock held a moment does not stop later searches from making lists")
        holder.connection.rollback()

        try listed.connection.execute("SET default_transaction_read_only = on")
        before = listed.rankLists.answered
        XCTAssertEqual(try listed.query("summit", options: QueryOptions(limit: 7)).results.map(\.uniqueIdentifier),
                       try full.query("summit", options: QueryOptions(limit: 7)).results.map(\.uniqueIdentifier))
        XCTAssertEqual(listed.rankLists.answered, before)
        XCTAssertTrue(listed.rankLists.makingFailed, "a session that may not write reads in full from now on")
        XCTAssertEqual(try listed.query("SELECT count(*) FROM rank_lists WHERE key LIKE '%summit%'").int(0, 0), 0)
    }

    /// Later pages (`--after`) of one word are read from its lists too while they are within them,
    /// each the page a full read gives; past the lists' entries the pages are read in full. (Of
    /// several words, a later page's rows score below the sum of the lists' bounds sooner, so
    /// mostly read in full; `assertAgree` checks that they agree.)
    func testLaterPagesAreReadFromTheListsWhileTheyAreWithinThem() throws {
        let (listed, full) = try listedAndFull()
        listed.rankLists.size = 40
        _ = try LocalIndex(store: listed, bundleIdentifier: "com.example.ranked").put((0..<300).map { RankListTests.item($0) })
        for query in ["lantern", "comet", "la"] {
            _ = try listed.query(query, options: QueryOptions(limit: 4))  // makes the lists
            var listedOptions = QueryOptions(limit: 4), fullOptions = QueryOptions(limit: 4)
            var pagesRead = 0, answered = 0
            while pagesRead < 30 {
                let before = listed.rankLists.answered
                let page = try listed.query(query, options: listedOptions), expected = try full.query(query, options: fullOptions)
                XCTAssertEqual(page.results.map { "\($0.uniqueIdentifier) \($0.score ?? 0)" }, expected.results.map { "\($0.uniqueIdentifier) \($0.score ?? 0)" },
                               "\(query), page \(pagesRead + 1)")
                pagesRead += 1
                if pagesRead > 1 { answered += listed.rankLists.answered - before }
                guard let next = page.nextCursor, let expectedNext = expected.nextCursor else {
                    XCTAssertNil(expected.nextCursor, "\(query): the listed pages ended first")
                    break
                }
                listedOptions.after = next
                fullOptions.after = expectedNext
            }
            // The lists hold 40 entries: the pages within them (after the first) come from them.
            XCTAssertGreaterThanOrEqual(answered, 5, "\(query): later pages answered from the lists")
        }
    }

    /// A word with a filter walks its list in order and stops once the page is full: one
    /// statement however far into the list the filter's items are (the items of a bundle whose
    /// key sorts last come last in each tie), with the pages of a full read — first and later
    /// pages, in a scope or with a condition, before and after items are written again.
    func testAWordWithAFilterWalksItsListToThePageInOneStatement() throws {
        let (listed, full) = try listedAndFull()
        listed.rankLists.size = 400
        _ = try LocalIndex(store: listed, bundleIdentifier: "com.example.aaa").put((0..<900).map { RankListTests.item($0) })
        let late = LocalIndex(store: listed, bundleIdentifier: "com.example.zzz")
        _ = try late.put((900..<1200).map { RankListTests.item($0) })
        let queries: [(String, String?)] = [("lantern", "com.example.zzz"), ("comet", "com.example.aaa"), ("la", "com.example.zzz"),
                                            ("river && contentDescription == \"*glass*\"", nil), ("garden && title == \"garden*\"", "com.example.zzz")]
        func pages(_ store: PostgresStore, _ query: String, _ bundle: String?) throws -> [String] {
            var options = QueryOptions(limit: 7)
            options.bundle = bundle
            var all: [String] = []
            while all.count < 80 {
                let page = try store.query(query, options: options)
                all += page.results.map { "\($0.bundleIdentifier) \($0.uniqueIdentifier) \($0.score ?? 0)" }
                guard let next = page.nextCursor else { break }
                options.after = next
            }
            return all
        }
        func assertAgree(_ when: String) throws {
            for (query, bundle) in queries {
                _ = try listed.query(query, options: QueryOptions(limit: 7))  // makes the lists
                let before = listed.rankLists.answered
                XCTAssertEqual(try pages(listed, query, bundle), try pages(full, query, bundle), "\(query) in \(bundle ?? "every bundle"), \(when)")
                XCTAssertGreaterThan(listed.rankLists.answered, before, "\(query): pages answered from the list, \(when)")
            }
        }
        try assertAgree("after the first writes")
        var scope = QueryOptions(limit: 7)
        scope.bundle = "com.example.zzz"
        let plan = try listed.queryPlan("lantern", options: scope)
        XCTAssertEqual(plan.filter { $0.hasPrefix("Limit") }.count, 1, "one statement for the page:\n" + plan.joined(separator: "\n"))
        XCTAssertTrue(plan.contains { $0.contains("rank_entries_pkey") }, "the list is walked in its order:\n" + plan.joined(separator: "\n"))

        // Items of the late bundle written again, some now with a word in their titles: read
        // beside the walk as changed items.
        _ = try late.put((900..<930).map { n in
            var item = RankListTests.item(n, salt: 2)
            item.uniqueIdentifier = RankListTests.item(n).uniqueIdentifier
            if n % 3 == 0 { item.attributes.title = "lantern garden comet" }
            return item
        })
        try assertAgree("after items were written again")
    }

    /// An item expired when its word's lists were made, and written again with only a new
    /// expiration, is read beside the lists like any item written since.
    func testAnItemWrittenAgainWithOnlyANewExpirationIsReadBesideTheLists() throws {
        let (listed, full) = try listedAndFull()
        listed.rankLists.size = 40
        let index = LocalIndex(store: listed, bundleIdentifier: "com.example.ranked")
        _ = try index.put((0..<300).map { RankListTests.item($0) })
        func phoenix(expiring seconds: Double) -> SearchableItem {
            SearchableItem(uniqueIdentifier: "phoenix", expirationDate: Date(timeIntervalSinceNow: seconds), attributes: .init(title: "lantern", rankingHint: 99))
        }
        _ = try index.put([phoenix(expiring: -60)])
        _ = try listed.query("lantern", options: QueryOptions(limit: 7))  // makes the lists, without it
        _ = try index.put([phoenix(expiring: 3_600)])
        let before = listed.rankLists.answered
        let page = try listed.query("lantern", options: QueryOptions(limit: 7)).results.map { "\($0.uniqueIdentifier) \($0.score ?? 0)" }
        XCTAssertTrue(page.contains { $0.hasPrefix("phoenix ") }, "its title of the one word puts it on the page: \(page)")
        XCTAssertEqual(page, try full.query("lantern", options: QueryOptions(limit: 7)).results.map { "\($0.uniqueIdentifier) \($0.score ?? 0)" })
        XCTAssertGreaterThan(listed.rankLists.answered, before, "answered from the lists")
    }

    func testListsAreKeptUpToTheirLimitTheOldestMadeGoingFirst() throws {
        let (listed, full) = try listedAndFull()
        listed.rankLists.maximumLists = 5
        _ = try LocalIndex(store: listed, bundleIdentifier: "com.example.ranked").put((0..<300).map { RankListTests.item($0) })
        for word in ["lantern", "river", "orchard", "summit"] {
            _ = try listed.query(word, options: QueryOptions(limit: 3))
            XCTAssertLessThanOrEqual(try listed.query("SELECT count(*) FROM rank_lists").int(0, 0), 5, word)
        }
        // One list per word (their first passes are longer than a list, so no page reads a list of
        // their second): five lists, four words, and the first word's goes when a sixth is made.
        let kept = try listed.query("SELECT string_agg(key, ' ' ORDER BY key) FROM rank_lists").text(0, 0) ?? ""
        XCTAssertTrue(kept.contains("=summit#") && !kept.contains("+summit#"), kept)
        _ = try listed.query("garden", options: QueryOptions(limit: 3))
        _ = try listed.query("comet", options: QueryOptions(limit: 3))
        let later = try listed.query("SELECT string_agg(key, ' ' ORDER BY key) FROM rank_lists").text(0, 0) ?? ""
        XCTAssertTrue(later.contains("=comet#") && later.contains("=garden#") && !later.contains("lantern"), later)
        XCTAssertLessThanOrEqual(try listed.query("SELECT count(*) FROM rank_lists").int(0, 0), 5)
        XCTAssertEqual(try listed.query("SELECT count(*) FROM rank_entries WHERE list NOT IN (SELECT key FROM rank_lists)").int(0, 0), 0,
                       "a dropped list's entries go with it")
        for word in ["lantern", "summit"] {
            XCTAssertEqual(try pages(listed, word, limit: 3), try pages(full, word, limit: 3), word)
        }
    }

    /// Past the limit, the list a search used least lately goes, not the oldest made: a word
    /// searched again keeps its list while words searched once make room. Another process's
    /// search counts as a use too, and the use is recorded without a write at every search.
    func testListsPastTheirLimitGoTheLeastUsedFirst() throws {
        let (listed, full) = try listedAndFull()
        listed.rankLists.maximumLists = 5
        listed.rankLists.useResolution = 0
        _ = try LocalIndex(store: listed, bundleIdentifier: "com.example.ranked").put((0..<300).map { RankListTests.item($0) })
        func kept() throws -> String { try listed.query("SELECT string_agg(left(key, strpos(key, '#')), ' ' ORDER BY key) FROM rank_lists").text(0, 0) ?? "" }
        for word in ["lantern", "river", "orchard", "summit"] { _ = try listed.query(word, options: QueryOptions(limit: 3)) }
        XCTAssertEqual(try kept(), "=lantern# =orchard# =river# =summit#")
        // `lantern` searched again (by another process); `garden` and `comet` each make a list
        // in place of one (a word's two lists are made together: four are kept besides).
        let other = try PostgresStore.open(listed.location)
        (other.rankLists.commonWords, other.rankLists.size, other.rankLists.changedRows) = (5, 12, 100)
        other.rankLists.useResolution = 0
        let answered = other.rankLists.answered
        XCTAssertEqual(try pages(other, "lantern", limit: 3), try pages(full, "lantern", limit: 3))
        XCTAssertGreaterThan(other.rankLists.answered, answered, "read from its list")
        for word in ["garden", "comet"] { _ = try listed.query(word, options: QueryOptions(limit: 3)) }
        XCTAssertEqual(try kept(), "=comet# =garden# =lantern# =summit#", "the lists used least lately went (`river`, then `orchard`), not the oldest made")
        _ = try listed.query("summit", options: QueryOptions(limit: 3))
        _ = try listed.query("orchard", options: QueryOptions(limit: 3))
        XCTAssertEqual(try kept(), "=comet# =garden# =orchard# =summit#", "`lantern`, now the list used least lately, went")
        // Within `useResolution`, a process records a list's use once.
        listed.rankLists.useResolution = 60
        let used = try listed.query("SELECT used::text FROM rank_lists WHERE key LIKE '=comet#%'").text(0, 0)
        for _ in 0..<3 { _ = try listed.query("comet", options: QueryOptions(limit: 3)) }
        XCTAssertEqual(try listed.query("SELECT used::text FROM rank_lists WHERE key LIKE '=comet#%'").text(0, 0), used, "recorded once a minute at most")
        for word in ["comet", "orchard"] {
            XCTAssertEqual(try pages(listed, word, limit: 3), try pages(full, word, limit: 3), word)
        }
    }

    /// A search field sends a new prefix at every key. A word typed one letter more than a prefix
    /// with lists (`gar` after `ga`) is read from them, without reading every match and without
    /// lists of its own; its pages are a full read's, through writes.
    func testAWordTypedOneLetterMoreIsReadFromTheListsOfItsShorterPrefix() throws {
        let (listed, full) = try listedAndFull()
        try RankListTests.assertTypedKeysReadShorterLists(listed, full, fromParents: { listed.rankLists.fromParentLists },
                                                          lists: { try listed.query("SELECT count(*) FROM rank_lists").int(0, 0) })
        XCTAssertEqual(try listed.health(quick: false).problems, [])
    }

    /// The first search of a common word whose count is not known counts its items in the read
    /// that makes its lists, not in a read of every match of its own before them. The count is
    /// the full read's: every generation (one staged and not live) and expired items too, so
    /// the page and its scores are a full read's; a word's second pass (items holding it only
    /// as a prefix) is counted with its list too. The counts are kept for other processes.
    func testAFirstSearchCountsACommonWordInTheReadThatMakesItsLists() throws {
        let (listed, full) = try listedAndFull()
        _ = try LocalIndex(store: listed, bundleIdentifier: "com.example.ranked").put((0..<300).map { RankListTests.item($0) })
        _ = try LocalIndex(store: listed, bundleIdentifier: "com.example.another").put((0..<40).map { n in
            SearchableItem(uniqueIdentifier: "gone\(n)", expirationDate: Date(timeIntervalSinceNow: -60), attributes: .init(title: "lantern comet la", rankingHint: 9))
        })
        let staged = try PostgresWrites(store: listed, bundleIdentifier: "com.example.ranked", scope: .replacement(generation: 7))
        for n in 0..<60 { try staged.put(try SearchableItem(uniqueIdentifier: "s\(n)", attributes: .init(title: "lantern garden lamp")).validated()) }
        try staged.commitBatch()
        func scores(_ store: PostgresStore, _ query: String) throws -> [String] {
            try store.query(query, options: QueryOptions(limit: 7)).results.map { "\($0.uniqueIdentifier) \($0.score ?? 0)" }
        }
        // The full read's pages first, with counts of its own (kept in the index, they are let
        // go of: the lists' read is to count them again).
        let queries = ["lantern", "la", #"title == "comet"cdw"#, "river-lantern"]
        let expected = try Dictionary(uniqueKeysWithValues: queries.map { ($0, try scores(full, $0)) })
        _ = try listed.query("DELETE FROM unit_frequencies")
        for query in queries {
            let (counted, withLists, answered) = (listed.rankLists.counted, listed.rankLists.countedWithLists, listed.rankLists.answered)
            XCTAssertEqual(try scores(listed, query), expected[query], query)
            XCTAssertEqual(listed.rankLists.counted, counted, "\(query): not counted in a read of its own")
            XCTAssertGreaterThan(listed.rankLists.countedWithLists, withLists, "\(query): counted with its lists")
            XCTAssertEqual(listed.rankLists.answered, answered + 1, "\(query): the page read from the lists")
        }
        // `la`: few items hold it as typed, so its second pass has a list, and a count, too.
        XCTAssertEqual(try listed.query("SELECT count(*) FROM rank_lists WHERE key LIKE '+la#%'").int(0, 0), 1)
        XCTAssertEqual(try scores(listed, "la"), expected["la"])
        // (The staged generation was written without a request, which `check` notes.)
        XCTAssertEqual(try listed.checkInvariants(quick: false).problems.filter { !$0.contains("belong to no request") }, [])

        // Another process reads the counts kept.
        let location = try PostgresLocation(server.connectionString, environment: ["REINDEX_PG_SCHEMA": schema])
        let next = try PostgresStore.open(location)
        for query in queries {
            XCTAssertEqual(try scores(next, query), expected[query], query)
        }
        XCTAssertEqual(next.rankLists.counted + next.rankLists.countedWithLists, 0, "the counts kept were read")

        // A word whose count is known is counted no more, and one a shorter prefix's lists may
        // answer is counted as before: neither makes lists first.
        let counted = listed.rankLists.counted
        XCTAssertEqual(try scores(listed, "lan"), try scores(full, "lan"))
        XCTAssertEqual(listed.rankLists.fromParentLists, 1, "`lan` read from the lists of `la`")
        XCTAssertGreaterThan(listed.rankLists.counted, counted, "`lan` counted in the search")
    }
}

private extension SearchableItem {
    func validated() throws -> ValidatedItem {
        try ItemValidator.validate(json, path: "items[0]", declarations: [:])
    }
}
