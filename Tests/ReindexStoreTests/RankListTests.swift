import Foundation
@testable import ReindexStore
import ReindexProtocol
import ReindexTestSupport
import XCTest

/// Rank lists (SQLite/RankLists.swift): a search that reads a common word's list returns exactly
/// the pages a full read returns, before and after every kind of write.
final class RankListTests: XCTestCase {
    static let words = ["lantern", "river", "orchard", "summit", "comet", "harbour", "signal", "garden", "glass", "paper"]

    /// Item `n` of a deterministic set: short and long titles and descriptions, repeated words,
    /// a few hints, and identifiers whose order is not their writing order.
    static func item(_ n: Int, salt: Int = 0) -> SearchableItem {
        var x = UInt64(n * 7919 + salt * 104_729 + 17)
        func next(_ bound: Int) -> Int {
            x = x &* 6364136223846793005 &+ 1442695040888963407
            return Int((x >> 33) % UInt64(bound))
        }
        let title = (0..<(1 + next(3))).map { _ in words[next(words.count)] }.joined(separator: " ")
        let description = (0..<next(9)).map { _ in words[next(words.count)] }.joined(separator: " ")
        let hint: Double? = n % 37 == 0 ? Double(n % 5) - 2 : nil
        return SearchableItem(uniqueIdentifier: "i\((n * 7) % 1009)", attributes: .init(title: title, contentDescription: description, rankingHint: hint))
    }

    /// Two connections to one index: one that reads common words (above 5 rows) through rank
    /// lists of 12, and one that always reads in full.
    func listedAndFull(_ path: String) throws -> (listed: IndexStore, full: IndexStore) {
        let listed = try IndexStore.open(path: path)
        listed.queryState.upkeep.commonWords = 5
        listed.queryState.upkeep.size = 12
        let full = try IndexStore.open(path: path)
        full.queryState.upkeep.commonWords = .max
        return (listed, full)
    }

    /// `listedAndFull` of a new index holding items 0..<300, and a writer to it.
    func rankedIndex() throws -> (listed: IndexStore, full: IndexStore, index: LocalIndex) {
        let directory = try TestSupport.makeScratchDirectory(for: self)
        let (listed, full) = try listedAndFull(directory + "/index.sqlite")
        let index = LocalIndex(store: listed, bundleIdentifier: "com.example.ranked")
        try index.put((0..<300).map { Self.item($0) })
        return (listed, full, index)
    }

    /// The keys of the lists `store` keeps (those `LIKE` the pattern), in order.
    static func listKeys(_ store: IndexStore, like pattern: String = "%") throws -> [String] {
        let select = try store.connection.prepare("SELECT key FROM rank_lists WHERE key LIKE ?1 ORDER BY key")
        select.bind(1, pattern)
        var keys: [String] = []
        while try select.step() { keys.append(select.text(0) ?? "") }
        return keys
    }

    /// The first page of `query`, 7 results: identifiers and scores.
    static func firstPage(_ store: any IndexQueries, _ query: String) throws -> [String] {
        try store.query(query, options: QueryOptions(limit: 7)).results.map { "\($0.uniqueIdentifier) \($0.score ?? 0)" }
    }

    static let queries = words + ["lantern river", "comet garden", "glass paper summit", "la", "ri", "orchard si", "sum*", "lantern && rankingHint >= 0"]

    /// Every page of `query`, `limit` at a time: identifiers and scores (at most 60), on
    /// either backend.
    static func pages(_ store: any IndexQueries, _ query: String, limit: Int = 7) throws -> [String] {
        var options = QueryOptions(limit: limit)
        var all: [String] = []
        for _ in 0..<400 {
            let page = try store.query(query, options: options)
            all += page.results.map { "\($0.uniqueIdentifier) \($0.score ?? 0)" }
            guard let next = page.nextCursor, all.count < 60 else { return all }
            options.after = next
        }
        return all
    }

    func assertAgree(_ listed: IndexStore, _ full: IndexStore, _ when: String, file: StaticString = #filePath, line: UInt = #line) throws {
        for query in Self.queries {
            // Twice: the first search makes the lists it wants, the second reads them.
            _ = try Self.pages(listed, query)
            XCTAssertEqual(try Self.pages(listed, query), try Self.pages(full, query), "\(query) \(when)", file: file, line: line)
            XCTAssertEqual(try listed.search(query, limit: 25).map(\.uniqueIdentifier), try full.search(query, limit: 25).map(\.uniqueIdentifier),
                           "search \(query) \(when)", file: file, line: line)
        }
    }

    func testPagesReadThroughRankListsAreThePagesOfAFullReadThroughWritesUpdatesDeletesAndExpiry() throws {
        let directory = try TestSupport.makeScratchDirectory(for: self)
        let path = directory + "/index.sqlite"
        let (listed, full) = try listedAndFull(path)
        let index = LocalIndex(store: listed, bundleIdentifier: "com.example.ranked")
        let other = LocalIndex(store: listed, bundleIdentifier: "com.example.another")
        try index.put((0..<300).map { Self.item($0) })
        try other.put((300..<360).map { Self.item($0) })
        try assertAgree(listed, full, "after the first writes")
        let lists = try listed.connection.scalar("SELECT count(*) FROM rank_lists") ?? 0
        XCTAssertGreaterThanOrEqual(lists, 10, "the searches made lists")
        let entries = try listed.connection.scalar("SELECT count(*) FROM rank_entries") ?? 0

        // New items, some better than every entry of their words' lists (one word, short).
        try index.put((400..<460).map { n in
            n % 3 == 0 ? SearchableItem(uniqueIdentifier: "new\(n)", attributes: .init(title: Self.words[n % Self.words.count])) : Self.item(n)
        })
        XCTAssertGreaterThan(try listed.connection.scalar("SELECT count(*) FROM rank_entries") ?? 0, entries, "writes kept the lists")
        try assertAgree(listed, full, "after new items")
        // Items written again with other words and hints, deleted, and expired.
        try index.put((0..<80).map { n in
            var item = Self.item(n, salt: 1)
            item.uniqueIdentifier = Self.item(n).uniqueIdentifier
            if n % 4 == 0 { item.attributes.rankingHint = 7 }
            return item
        })
        try assertAgree(listed, full, "after items were written again")
        _ = try index.delete(identifiers: (100..<200).map { Self.item($0).uniqueIdentifier })
        try other.put([SearchableItem(uniqueIdentifier: "gone", expirationDate: Date(timeIntervalSinceNow: -60), attributes: .init(title: "lantern"))])
        try assertAgree(listed, full, "after deletes and an expired item")
        XCTAssertEqual(try listed.connection.scalar("SELECT count(*) FROM rank_entries e WHERE NOT EXISTS (SELECT 1 FROM items i WHERE i.id = e.item)"), 0,
                       "deleted items leave no entries")
        // `check` reads each list's word in full and finds the lists as the rule wants them…
        XCTAssertEqual(try listed.health(quick: false).problems, [])
        // …and says so when one is not: an entry gone, another with an impact its item does not have.
        try listed.connection.execute("""
            DELETE FROM rank_entries WHERE list = '=comet' AND item = (SELECT item FROM rank_entries WHERE list = '=comet' ORDER BY impact DESC LIMIT 1);
            UPDATE rank_entries SET impact = impact + 1 WHERE list = '=river' AND item = (SELECT item FROM rank_entries WHERE list = '=river' ORDER BY impact LIMIT 1);
            """)
        XCTAssertEqual(try listed.health(quick: false).problems, [
            "the rank list of 'comet' misses 1 item(s) it should hold",
            "the rank list of 'river' gives 1 item(s) an impact they do not have",
        ])
    }

    func testWordsFoundTogetherAreAnsweredFromTheirListsWithTheScoresOfAFullRead() throws {
        let directory = try TestSupport.makeScratchDirectory(for: self)
        let (listed, full) = try listedAndFull(directory + "/index.sqlite")
        // Short items holding both words, among longer ones holding either.
        try LocalIndex(store: listed, bundleIdentifier: "com.example.ranked").put((0..<200).map { Self.item($0) } + (0..<30).map { n in
            SearchableItem(uniqueIdentifier: "both\(n)", attributes: .init(title: n % 2 == 0 ? "harbour signal" : "signal harbour", rankingHint: n % 7 == 0 ? 1 : nil))
        })
        for query in ["harbour signal", "signal harb", "harbour sig"] {
            _ = try Self.pages(listed, query)
            let before = listed.queryState.upkeep.answered
            XCTAssertEqual(try listed.search(query, limit: 5).map { "\($0.uniqueIdentifier) \($0.score ?? 0)" },
                           try full.search(query, limit: 5).map { "\($0.uniqueIdentifier) \($0.score ?? 0)" }, query)
            XCTAssertGreaterThan(listed.queryState.upkeep.answered, before, "\(query): answered from the lists")
            XCTAssertEqual(try Self.pages(listed, query, limit: 4), try Self.pages(full, query, limit: 4), query)
        }
    }

    /// Two words whose items all tie (the same field, the same length), the items holding both
    /// coming last in the tie order: the lists are read past every item holding one word only
    /// — each set aside unread, since the other list has passed its place — to the items holding
    /// both, scored from their entries. Pages, later pages and a filter (that one read in full) as
    /// a full read gives them.
    func testTwoWordsWhoseItemsTieAreAnsweredFromTheirListsPastTheItemsHoldingOne() throws {
        let directory = try TestSupport.makeScratchDirectory(for: self)
        let (listed, full) = try listedAndFull(directory + "/index.sqlite")
        listed.queryState.upkeep.size = 4_000
        let items = (0..<3_000).map { n -> SearchableItem in
            let alpha = n % 3 == 0, beta = n % 5 == 0
            let title = alpha && beta ? "alpha beta" : alpha ? "alpha gamma" : beta ? "beta gamma" : "gamma delta"
            let uid = (alpha && beta ? "z" : "a") + String(100_000 + n)
            return SearchableItem(uniqueIdentifier: uid, attributes: .init(title: title, rankingHint: n == 2_970 ? 1 : nil))
        }
        try LocalIndex(store: listed, bundleIdentifier: "com.example.tied").put(items)
        for query in ["alpha beta", "beta alpha", "alpha beta && rankingHint >= 1"] {
            _ = try listed.search(query, limit: 7)  // makes the lists
            let before = listed.queryState.upkeep.answered
            let page = try listed.search(query, limit: 7).map { "\($0.uniqueIdentifier) \($0.score ?? 0)" }
            XCTAssertEqual(page, try full.search(query, limit: 7).map { "\($0.uniqueIdentifier) \($0.score ?? 0)" }, query)
            if !query.contains("&&") {
                XCTAssertGreaterThan(listed.queryState.upkeep.answered, before, "\(query): answered from the lists")
            }
            XCTAssertEqual(try Self.pages(listed, query, limit: 7), try Self.pages(full, query, limit: 7), query)
        }
        XCTAssertEqual(try listed.search("alpha beta", limit: 2).map(\.uniqueIdentifier), ["z102970", "z100000"], "the hint first, then the tie order")
    }

    /// Two common words whose best items each hold only one of them (titled "signal …" or
    /// "harbour …"), while the items holding both mention them lower down: no entry of either
    /// word's list holds the other word, so those lists cannot prove a page. The first search
    /// makes the list of the two words together with theirs, and later searches read their pages
    /// from it — while the rarities are those it was made for, kept by writes that leave them so (an
    /// item written again with a new hint), and made again once they move (a new item).
    func testTwoCommonWordsWhoseBestItemsHoldOnlyOneAreAnsweredFromTheirListTogether() throws {
        let directory = try TestSupport.makeScratchDirectory(for: self)
        let (listed, full) = try listedAndFull(directory + "/index.sqlite")
        let index = LocalIndex(store: listed, bundleIdentifier: "com.example.ranked")
        func note(_ n: Int, hint: Double? = nil) -> SearchableItem {
            SearchableItem(uniqueIdentifier: "b\(n)", domainIdentifier: n % 4 == 0 ? nil : "notes", attributes: .init(
                title: "note \(n)", contentDescription: (n % 5 == 0 ? "signal harbours" : "the signal of the harbour") + String(repeating: " and more", count: n % 6),
                rankingHint: hint ?? (n % 7 == 0 ? 1 : nil)))
        }
        try index.put((0..<40).map { n in SearchableItem(uniqueIdentifier: "s\(n)", attributes: .init(title: "signal beacon \(n)")) }
            + (0..<40).map { n in SearchableItem(uniqueIdentifier: "h\(n)", attributes: .init(title: "harbour dock \(n)", rankingHint: n % 9 == 0 ? 2 : nil)) }
            + (0..<60).map { note($0) })
        let queries = ["signal harbour", "harbour signal", "signal harbour && domainIdentifier == \"notes\""]
        func assertAnsweredTogether(_ when: String) throws {
            for query in queries {
                let before = listed.queryState.upkeep.answered
                for limit in [1, 7] {
                    XCTAssertEqual(try listed.search(query, limit: limit).map { "\($0.uniqueIdentifier) \($0.score ?? 0)" },
                                   try full.search(query, limit: limit).map { "\($0.uniqueIdentifier) \($0.score ?? 0)" }, "\(query), first \(limit), \(when)")
                }
                // (A query with a filter the index narrows by may read the filter's items instead.)
                if !query.contains("&&") {
                    XCTAssertEqual(listed.queryState.upkeep.answered, before + 2, "\(query): both pages answered from the list together, \(when)")
                }
                XCTAssertEqual(try Self.pages(listed, query, limit: 4), try Self.pages(full, query, limit: 4), "\(query), \(when)")
            }
        }
        // The first search (read in full) makes the words' lists and their list together.
        _ = try listed.search("signal harbour", limit: 7)
        XCTAssertEqual(try listed.connection.scalar("SELECT count(*) FROM rank_lists WHERE key = '&=harbour =signal' AND rarities IS NOT NULL"), 1,
                       "one list for the two words in either order")
        try assertAnsweredTogether("after it was made")

        // Written again with a hint and the same words: the rarities stay, the writer keeps the list.
        try index.put([note(6, hint: 9)])
        try assertAnsweredTogether("after an item was written again")
        XCTAssertEqual(try listed.search("signal harbour", limit: 1).first?.uniqueIdentifier, "b6", "its new hint counts")

        // A new item: every rarity moves a little. The list, made for the rarities before, still
        // bounds each item's score, so pages are proven from it (its entries scored from their
        // rows) without making it again.
        try listed.connection.execute("CREATE TEMP TABLE made AS SELECT rarities FROM rank_lists WHERE key = '&=harbour =signal'")
        try index.put([SearchableItem(uniqueIdentifier: "new", attributes: .init(title: "harbour signal"))])
        try assertAnsweredTogether("after a new item")
        XCTAssertEqual(try listed.connection.scalar("SELECT count(*) FROM rank_lists l, temp.made m WHERE l.key = '&=harbour =signal' AND l.rarities = m.rarities"), 1,
                       "the list was not made again")
        XCTAssertEqual(try listed.search("signal harbour", limit: 1).first?.uniqueIdentifier, "new")

        // `check` reads the two words' items in full, with the rarities the list was made for.
        XCTAssertEqual(try listed.health(quick: false).problems, [])
        try listed.connection.execute("DELETE FROM rank_entries WHERE list = '&=harbour =signal' AND item = (SELECT item FROM rank_entries WHERE list = '&=harbour =signal' ORDER BY impact DESC LIMIT 1)")
        XCTAssertEqual(try listed.health(quick: false).problems, ["the rank list of 'harbour signal' misses 1 item(s) it should hold"])
    }

    /// While a reindexAll is staged (and until its old generation is deleted), rows come and go
    /// at every batch: a list of two words together would be made for rarities already gone, so
    /// none is made, and pages are read in full; once acknowledged, the next search makes it.
    func testNoListOfTwoWordsTogetherIsMadeWhileAReindexAllIsStaged() throws {
        let directory = try TestSupport.makeScratchDirectory(for: self)
        let (listed, full) = try listedAndFull(directory + "/index.sqlite")
        let bundle = "com.example.ranked"
        func items(_ salt: String) -> [ValidatedItem] {
            (0..<30).map { TestSupport.item("s\($0)", title: "signal beacon \(salt)") }
                + (0..<30).map { TestSupport.item("h\($0)", title: "harbour dock \(salt)") }
                + (0..<30).map { TestSupport.item("b\($0)", title: "note", description: "the signal of the harbour" + String(repeating: " \(salt)", count: $0 % 4)) }
        }
        try TestSupport.seed(listed, bundle: bundle, items("one"))
        let queued = try listed.enqueue(bundleIdentifier: bundle, kind: .reindexAll, reason: .forced)
        _ = try listed.markRunning(queued.id)
        let writer = try listed.makeWriter(bundleIdentifier: bundle, scope: .replacement(generation: queued.id), requestID: queued.id, declarations: [:])
        for item in items("two") { try writer.put(item) }
        _ = try writer.commitBatch()
        for _ in 0..<2 {
            XCTAssertEqual(try Self.pages(listed, "signal harbour", limit: 4), try Self.pages(full, "signal harbour", limit: 4))
        }
        XCTAssertEqual(try listed.connection.scalar("SELECT count(*) FROM rank_lists WHERE key LIKE '&%'"), 0, "no list together while staged")
        _ = try writer.acknowledge { store in try store.markDone(queued.id) }
        XCTAssertEqual(try Self.pages(listed, "signal harbour", limit: 4), try Self.pages(full, "signal harbour", limit: 4))
        // One for each pass: the words as typed, and the last also as a prefix.
        XCTAssertEqual(try Self.listKeys(listed, like: "&%"), ["&*harbour =signal", "&=harbour =signal"], "made once acknowledged")
    }

    /// Every pair of words, with lists short, middling and long: each page as a full read gives it.
    func testEveryPairOfWordsPagesAsAFullReadWithListsOfAnyLength() throws {
        for size in [10, 60, 400] {
            let directory = try TestSupport.makeScratchDirectory(for: self) + "/\(size)"
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
            let (listed, full) = try listedAndFull(directory + "/index.sqlite")
            listed.queryState.upkeep.size = size
            try LocalIndex(store: listed, bundleIdentifier: "com.example.pairs").put((0..<500).map { Self.item($0) })
            for a in Self.words.prefix(6) {
                for b in Self.words.suffix(5) where a != b {
                    let query = "\(a) \(b)"
                    _ = try listed.search(query, limit: 5)
                    XCTAssertEqual(try Self.pages(listed, query, limit: 5), try Self.pages(full, query, limit: 5), "\(query), lists of \(size)")
                }
            }
        }
    }

    /// A reindexAll's committed item that a later, discarded batch had replaced is put back with
    /// its rankingHint in the lists' entries, so a page read through them orders it as a full
    /// read does.
    func testAnItemPutBackAfterADiscardedBatchKeepsItsHintInTheLists() throws {
        let directory = try TestSupport.makeScratchDirectory(for: self)
        let (listed, full) = try listedAndFull(directory + "/index.sqlite")
        listed.queryState.upkeep.size = 4_000
        let bundle = "com.example.hinted"
        try LocalIndex(store: listed, bundleIdentifier: bundle).put((0..<40).map { SearchableItem(uniqueIdentifier: "l\($0)", attributes: .init(title: "lantern")) })
        _ = try listed.search("lantern", limit: 5)  // makes the list
        let queued = try listed.enqueue(bundleIdentifier: bundle, kind: .reindexAll, reason: .forced)
        _ = try listed.markRunning(queued.id)
        let first = try listed.makeWriter(bundleIdentifier: bundle, scope: .replacement(generation: queued.id), requestID: queued.id, declarations: [:])
        for k in 0..<40 { try first.put(TestSupport.item("l\(k)", title: "lantern", extra: k == 39 ? [("rankingHint", .integer(5))] : [])) }
        _ = try first.commitBatch()
        try first.put(TestSupport.item("l39", title: "lantern again"))  // replaces it in the next batch…
        try first.flush()  // …in a group committed before the batch is
        first.rollback()  // discarded: l39 is put back as the first batch wrote it
        let second = try listed.makeWriter(bundleIdentifier: bundle, scope: .replacement(generation: queued.id), requestID: queued.id, declarations: [:])
        _ = try second.acknowledge { store in try store.markDone(queued.id) }
        XCTAssertEqual(try full.search("lantern", limit: 1).map(\.uniqueIdentifier), ["l39"], "its hint puts it first")
        let before = listed.queryState.upkeep.answered
        XCTAssertEqual(try listed.search("lantern", limit: 5).map { "\($0.uniqueIdentifier) \($0.score ?? 0)" },
                       try full.search("lantern", limit: 5).map { "\($0.uniqueIdentifier) \($0.score ?? 0)" })
        XCTAssertGreaterThan(listed.queryState.upkeep.answered, before, "answered from the list")
    }

    /// The first search of common words whose lists are missing makes them and reads its page
    /// from them, rather than scoring every match and then reading them all again for the lists;
    /// inside a caller's transaction it reads in full, and the next search outside makes them.
    func testTheFirstSearchOfCommonWordsMakesTheirListsAndReadsItsPageFromThem() throws {
        let directory = try TestSupport.makeScratchDirectory(for: self)
        let (listed, full) = try listedAndFull(directory + "/index.sqlite")
        try LocalIndex(store: listed, bundleIdentifier: "com.example.ranked").put((0..<300).map { Self.item($0) })
        for query in ["lantern", "la", "comet river", "garden glass"] {
            let before = listed.queryState.upkeep.answered
            XCTAssertEqual(try listed.query(query, options: QueryOptions(limit: 7)).results.map { "\($0.uniqueIdentifier) \($0.score ?? 0)" },
                           try full.query(query, options: QueryOptions(limit: 7)).results.map { "\($0.uniqueIdentifier) \($0.score ?? 0)" }, query)
            XCTAssertGreaterThan(listed.queryState.upkeep.answered, before, "\(query): the first search was answered from the lists it made")
        }
        XCTAssertEqual(try listed.health(quick: false).problems, [])
        let before = listed.queryState.upkeep.answered
        try listed.transaction {
            XCTAssertEqual(try listed.search("summit", limit: 7).map(\.uniqueIdentifier), try full.search("summit", limit: 7).map(\.uniqueIdentifier))
        }
        XCTAssertEqual(listed.queryState.upkeep.answered, before, "inside a transaction: read in full")
        XCTAssertEqual(try listed.connection.scalar("SELECT count(*) FROM rank_lists WHERE key = '=summit'"), 0)
        XCTAssertEqual(try listed.search("summit", limit: 7).map(\.uniqueIdentifier), try full.search("summit", limit: 7).map(\.uniqueIdentifier))
        XCTAssertGreaterThan(listed.queryState.upkeep.answered, before, "outside, the list is made, and the page read from it")
    }

    func testAListIsMadeOnlyWhenNoWriterHoldsTheIndexAndSearchesStillAnswer() throws {
        let directory = try TestSupport.makeScratchDirectory(for: self)
        let path = directory + "/index.sqlite"
        let (listed, full) = try listedAndFull(path)
        try LocalIndex(store: listed, bundleIdentifier: "com.example.ranked").put((0..<200).map { Self.item($0) })
        // A writer holds the index: the search answers from a full read, and makes no list.
        let writer = try IndexStore.open(path: path)
        try writer.connection.execute("BEGIN IMMEDIATE")
        XCTAssertEqual(try Self.pages(listed, "comet"), try Self.pages(full, "comet"))
        try writer.connection.execute("COMMIT")
        XCTAssertEqual(try listed.connection.scalar("SELECT count(*) FROM rank_lists"), 0)
        // Once it is free, the next search makes it.
        XCTAssertEqual(try Self.pages(listed, "comet"), try Self.pages(full, "comet"))
        XCTAssertEqual(try listed.connection.scalar("SELECT count(*) FROM rank_lists WHERE key = '=comet'"), 1)
        XCTAssertEqual(try Self.pages(listed, "comet"), try Self.pages(full, "comet"))
    }

    func testTheNextConnectionReadsTheDocumentFrequenciesCountedBeforeUntilTheIndexChanges() throws {
        let directory = try TestSupport.makeScratchDirectory(for: self)
        let path = directory + "/index.sqlite"
        let (listed, full) = try listedAndFull(path)
        let index = LocalIndex(store: listed, bundleIdentifier: "com.example.ranked")
        try index.put((0..<300).map { Self.item($0) })
        let queries = ["comet river", "la", "orchard si"]
        func kept(_ store: IndexStore) throws -> [String: Int] {
            let rows = try store.connection.prepare("SELECT phrase, n FROM unit_frequencies")
            var all: [String: Int] = [:]
            while try rows.step() { all[rows.text(0) ?? ""] = rows.int(1) }
            return all
        }
        func counts(_ store: IndexStore, _ phrases: some Sequence<String>) throws -> [String: Int] {
            var all: [String: Int] = [:]
            for phrase in phrases {
                all[phrase] = Int(try store.connection.scalar("SELECT count(*) FROM items_fts WHERE items_fts MATCH '\(phrase.replacingOccurrences(of: "'", with: "''"))'") ?? -1)
            }
            return all
        }
        for query in queries { _ = try Self.pages(listed, query) }
        let first = try kept(listed)
        XCTAssertTrue(Set(first.keys).isSuperset(of: ["\"comet\"", "\"river\"", "\"la\"", "\"la\"*", "\"orchard\"", "\"si\"", "\"si\"*"]), "\(first.keys.sorted())")
        XCTAssertEqual(first, try counts(listed, first.keys), "kept as counted")

        // A new connection (the next process) reads them, and pages as a full read does.
        let next = try IndexStore.open(path: path)
        next.queryState.upkeep.commonWords = 5
        next.queryState.upkeep.size = 12
        for query in queries { XCTAssertEqual(try Self.pages(next, query), try Self.pages(full, query), query) }
        XCTAssertEqual(next.queryState.counted, 0, "nothing counted again")

        // A write changes the full-text index: the next connection counts again, and keeps its counts.
        try index.put([SearchableItem(uniqueIdentifier: "new", attributes: .init(title: "comet comet", contentDescription: "river lantern"))])
        let after = try IndexStore.open(path: path)
        for query in queries { _ = try after.search(query, limit: 7) }
        XCTAssertGreaterThan(after.queryState.counted, 0)
        let second = try kept(after)
        XCTAssertEqual(second, try counts(after, second.keys))
        XCTAssertEqual(second["\"comet\""], first["\"comet\""].map { $0 + 1 })
        XCTAssertEqual(try after.health(quick: false).problems, [])

        // While a writer holds the index, a search answers and keeps nothing; the next one keeps it.
        let writer = try IndexStore.open(path: path)
        try writer.connection.execute("BEGIN IMMEDIATE")
        let busy = try IndexStore.open(path: path)
        XCTAssertEqual(try busy.search("glass", limit: 7).map(\.uniqueIdentifier), try full.search("glass", limit: 7).map(\.uniqueIdentifier))
        XCTAssertNil(try kept(busy)["\"glass\""])
        try writer.connection.execute("COMMIT")
        _ = try busy.search("glass paper", limit: 7)
        XCTAssertNotNil(try kept(busy)["\"glass\""])

        // `check` counts each kept frequency again.
        try writer.connection.execute("UPDATE unit_frequencies SET n = n + 1 WHERE phrase = '\"river\"'")
        XCTAssertEqual(try writer.health(quick: false).problems.filter { $0.contains("document frequenc") }.count, 1)
    }

    func testAWordTypedHalfwayIsReadFromItsPrefixListWithoutReadingTheOtherWordsPostings() throws {
        let directory = try TestSupport.makeScratchDirectory(for: self)
        let (listed, full) = try listedAndFull(directory + "/index.sqlite")
        try LocalIndex(store: listed, bundleIdentifier: "com.example.ranked").put((0..<300).map { Self.item($0) })
        // `riv` is no word of any item: the whole-word pass (`comet AND riv`) has no match, and
        // the prefix pass (`comet AND riv*`) is read from the lists.
        func page(_ store: IndexStore, _ query: String) throws -> [String] {
            try store.query(query, options: QueryOptions(limit: 7)).results.map { "\($0.uniqueIdentifier) \($0.score ?? 0)" }
        }
        for query in ["comet riv", "riv", "garden gla"] {
            _ = try page(listed, query)
            let before = listed.queryState.fullReads
            XCTAssertEqual(try page(listed, query), try page(full, query), query)
            XCTAssertEqual(listed.queryState.fullReads, before, "\(query): nothing read in full")
        }
    }

    /// A search field sends a new prefix at every key. A word typed one letter more than a prefix
    /// with a list (`gar` after `ga`) is read from that list, each item met scored from its row,
    /// without a full read and without a list of its own; its pages are a full read's, through
    /// writes.
    func testAWordTypedOneLetterMoreIsReadFromTheListOfItsShorterPrefix() throws {
        let directory = try TestSupport.makeScratchDirectory(for: self)
        let (listed, full) = try listedAndFull(directory + "/index.sqlite")
        try Self.assertTypedKeysReadShorterLists(listed, full, fromParents: { listed.queryState.fromParentLists },
                                                 lists: { Int(try listed.connection.scalar("SELECT count(*) FROM rank_lists") ?? 0) },
                                                 fullReads: { listed.queryState.fullReads })
        XCTAssertEqual(try listed.health(quick: false).problems, [])
    }

    /// The second word of a pair typed one letter more than a pair with a list together
    /// (`comet ga` after `comet g`) is read from that list, each item met scored from its row and
    /// the rest bounded by its entries: its pages are a full read's, through writes, and the pair
    /// gets no list together of its own.
    func testTheSecondWordTypedOneLetterMoreIsReadFromTheListOfThePairWithItsShorterPrefix() throws {
        let (listed, full, index) = try rankedIndex()
        let page = Self.firstPage
        func together() throws -> Int64 { try listed.connection.scalar("SELECT count(*) FROM rank_lists WHERE key LIKE '&%'") ?? 0 }
        var fromParent = 0
        for (n, pairs) in [["comet g", "comet ga", "comet gar", "comet gard", "comet garde"],
                           ["river s", "river si", "river sig", "river sign", "river signa"],
                           ["paper l", "paper la", "paper lan", "paper lant"]].enumerated() {
            if n == 2 {
                try index.put((300..<340).map { Self.item($0, salt: 5) })
                _ = try index.delete(identifiers: ["i28", "i35", "i42"])
            }
            // The first key makes the lists; the next ones read the first key's list together.
            XCTAssertEqual(try page(listed, pairs[0]), try page(full, pairs[0]), pairs[0])
            XCTAssertEqual(try page(listed, pairs[0]), try page(full, pairs[0]), pairs[0])
            for query in pairs.dropFirst() {
                let (read, made) = (listed.queryState.fromParentLists, try together())
                XCTAssertEqual(try page(listed, query), try page(full, query), query)
                if listed.queryState.fromParentLists > read {
                    fromParent += 1
                    XCTAssertEqual(try together(), made, "\(query): no list together of its own")
                }
                XCTAssertEqual(try Self.pages(listed, query), try Self.pages(full, query), query)
            }
        }
        XCTAssertGreaterThan(fromParent, 3, "keys read from the list of the pair with a shorter prefix")
        XCTAssertEqual(try listed.health(quick: false).problems, [])
    }

    /// A pair typed one letter more whose items tie (identical items, as synthetic sets have),
    /// where every token of the shorter prefix is one of the longer's (`b*` is only `budgeting`):
    /// the list of the pair with the shorter prefix, made with the rarities of now, proves the
    /// page at the first entry tying with its last after it, so no list is made for the key.
    func testAPairTypedOneLetterMoreWhoseItemsTieIsReadFromTheShorterPrefixsListTogether() throws {
        let directory = try TestSupport.makeScratchDirectory(for: self)
        let (listed, full) = try listedAndFull(directory + "/index.sqlite")
        let index = LocalIndex(store: listed, bundleIdentifier: "com.example.ranked")
        try index.put((0..<80).map { SearchableItem(uniqueIdentifier: "t\(($0 * 37) % 101)", attributes: .init(title: "Tanaka", keywords: ["budgeting"],
                                                                                                           rankingHint: $0 == 50 ? 2 : nil)) }
            + (0..<40).map { SearchableItem(uniqueIdentifier: "r\($0)", attributes: .init(title: "Tanaka river")) }
            + (0..<100).map { SearchableItem(uniqueIdentifier: "c\($0)", attributes: .init(title: "comet river")) })
        let page = Self.firstPage
        XCTAssertEqual(try page(listed, "tanaka"), try page(full, "tanaka"))
        XCTAssertEqual(try page(listed, "tanaka b"), try page(full, "tanaka b"))
        let made = try Self.listKeys(listed)
        XCTAssertEqual(made, ["&*b =tanaka", "=tanaka"])
        for query in ["tanaka bu", "tanaka bud", "tanaka budg", "tanaka budgeti"] {
            let read = listed.queryState.fromParentLists
            XCTAssertEqual(try page(listed, query), try page(full, query), query)
            XCTAssertEqual(listed.queryState.fromParentLists, read + 1, "\(query): read from `tanaka b*`'s list")
            XCTAssertEqual(try Self.listKeys(listed), made, "\(query): no list made")
        }
        XCTAssertEqual(try page(listed, "tanaka bu").first?.split(separator: " ").first, "t32", "the hint first (item 50)")
        // Later pages, and pages after writes that move the rarities (more `b*` words than
        // `budgeting`), whatever lists they make.
        for query in ["tanaka bu", "tanaka budg"] { XCTAssertEqual(try Self.pages(listed, query), try Self.pages(full, query), query) }
        try index.put([SearchableItem(uniqueIdentifier: "t0a", attributes: .init(title: "Tanaka", keywords: ["budgeting"])),
                       SearchableItem(uniqueIdentifier: "b1", attributes: .init(title: "Tanaka banner"))])
        for query in ["tanaka b", "tanaka bu", "tanaka bud"] {
            XCTAssertEqual(try page(listed, query), try page(full, query), "\(query), after writes")
            XCTAssertEqual(try Self.pages(listed, query), try Self.pages(full, query), "\(query), after writes")
        }
        XCTAssertEqual(try listed.health(quick: false).problems, [])
    }

    /// Two common words without their list together, where a word has no list of its own (a
    /// search field's `comet g`, `g*` in most items): the first search makes their list together
    /// only, and reads its page from it; the word's own list waits for a search of the word alone.
    func testTheFirstSearchOfTwoWordsMakesOnlyTheirListTogetherWhenAWordHasNoListOfItsOwn() throws {
        let (listed, full, index) = try rankedIndex()
        let page = Self.firstPage
        func keys() throws -> [String] { try Self.listKeys(listed) }
        XCTAssertEqual(try page(listed, "comet"), try page(full, "comet"))
        XCTAssertEqual(try keys(), ["=comet"])
        // The first word has its list, the second (a prefix) none.
        XCTAssertEqual(try page(listed, "comet g"), try page(full, "comet g"))
        XCTAssertEqual(try keys(), ["&*g =comet", "=comet"], "only the list together is made")
        let read = listed.queryState.upkeep.answered
        XCTAssertEqual(try page(listed, "comet g"), try page(full, "comet g"))
        XCTAssertGreaterThan(listed.queryState.upkeep.answered, read, "the page is read from the list together")
        // Neither word with a list: again, their list together alone.
        XCTAssertEqual(try page(listed, "river signal"), try page(full, "river signal"))
        XCTAssertEqual(try keys(), ["&*g =comet", "&=river =signal", "=comet"])
        // Later pages, past what the lists together hold (12 entries here), are a full read's,
        // whatever lists they make.
        XCTAssertEqual(try Self.pages(listed, "comet g"), try Self.pages(full, "comet g"))
        XCTAssertEqual(try Self.pages(listed, "river signal"), try Self.pages(full, "river signal"))
        // After writes the rarities have moved: pages stay a full read's, whatever lists they make.
        try index.put((300..<330).map { Self.item($0, salt: 3) })
        _ = try index.delete(identifiers: ["i14", "i21"])
        for query in ["comet g", "river signal", "g", "signal"] {
            XCTAssertEqual(try Self.pages(listed, query), try Self.pages(full, query), query)
        }
        XCTAssertTrue(try keys().contains("*g"), "a search of the word alone makes its list")
        XCTAssertEqual(try listed.health(quick: false).problems, [])
    }

    /// The pass of a pair that leaves out the items holding both words whole (`comet s` after
    /// the few items holding `comet` and `s`) reads their list together past those items, as the
    /// pass without any to leave out does: the list is made alone, and its pages are a full read's,
    /// through writes that move the rarities.
    func testThePassLeavingOutTheItemsHoldingBothWordsWholeReadsTheirListTogether() throws {
        let (listed, full, index) = try rankedIndex()
        try index.put((0..<4).map { SearchableItem(uniqueIdentifier: "s\($0)", attributes: .init(title: "comet s", contentDescription: "paper")) })
        let page = Self.firstPage
        func keys() throws -> [String] { try Self.listKeys(listed) }
        XCTAssertEqual(try page(listed, "comet s"), try page(full, "comet s"))
        XCTAssertEqual(try keys(), ["&*s =comet"], "only the list together is made")
        let read = listed.queryState.upkeep.answered
        let first = try page(listed, "comet s")
        XCTAssertEqual(first, try page(full, "comet s"))
        XCTAssertEqual(first.filter { $0.hasPrefix("s") }.count, 4, "the items holding both words whole come first")
        XCTAssertGreaterThan(listed.queryState.upkeep.answered, read, "the rest of the page is read from the list together")
        XCTAssertEqual(try Self.pages(listed, "comet s"), try Self.pages(full, "comet s"))
        try index.put((300..<330).map { Self.item($0, salt: 3) })
        _ = try index.delete(identifiers: ["i14", "s2"])
        for query in ["comet s", "comet si", "comet s && rankingHint >= 0"] {
            XCTAssertEqual(try page(listed, query), try page(full, query), query)
            XCTAssertEqual(try Self.pages(listed, query), try Self.pages(full, query), query)
        }
        XCTAssertEqual(try listed.health(quick: false).problems, [])
    }

    /// The body of each backend's test of a word typed one letter more (the SQLite one above,
    /// `PostgresRankListTests`'): `fromParents` counts the pages read from a shorter prefix's
    /// lists, `lists` the lists kept, `fullReads` (where the backend counts them) the passes read
    /// in full. Two words are typed key by key, before and after writes, then every prefix of
    /// every word after lists of their first one or two letters; every page agrees with a full read.
    static func assertTypedKeysReadShorterLists(_ listed: any IndexBackend & IndexQueries, _ full: any IndexQueries,
                                                fromParents: () -> Int, lists: () throws -> Int, fullReads: (() -> Int)? = nil,
                                                file: StaticString = #filePath, line: UInt = #line) throws {
        let index = LocalIndex(store: listed, bundleIdentifier: "com.example.ranked")
        try index.put((0..<300).map { item($0) })
        let page = firstPage
        for (n, typed) in [["ga", "gar", "gard", "garde", "garden"], ["su", "sum", "summ", "summi", "summit"]].enumerated() {
            let when = n == 0 ? "as typed" : "after writes"
            if n == 1 {
                try index.put((300..<330).map { item($0, salt: 3) })
                _ = try index.delete(identifiers: ["i14", "i21", "i700"])
            }
            // The first key makes its lists; the next ones read them.
            XCTAssertEqual(try page(listed, typed[0]), try page(full, typed[0]), "\(typed[0]) \(when)", file: file, line: line)
            for query in typed.dropFirst() {
                let (reads, read, made) = (fullReads?(), fromParents(), try lists())
                XCTAssertEqual(try page(listed, query), try page(full, query), "\(query) \(when)", file: file, line: line)
                XCTAssertEqual(fullReads?(), reads, "\(query) \(when): nothing read in full", file: file, line: line)
                XCTAssertGreaterThan(fromParents(), read, "\(query) \(when): read from the lists of `\(typed[0])`", file: file, line: line)
                XCTAssertEqual(try lists(), made, "\(query) \(when): no lists of its own", file: file, line: line)
            }
            // Every page, the later ones too (past what the short lists hold, they make their own).
            for query in ["gar", "garden", "gla", "orch", "lanter"] {
                XCTAssertEqual(try pages(listed, query), try pages(full, query), "\(query) \(when)", file: file, line: line)
            }
        }
        // Every prefix of every word, after lists of their first one or two letters: each page as
        // a full read's, whether the shorter lists prove it or the word's own lists are made.
        for word in words { _ = try page(listed, String(word.prefix(1))) }
        for word in words { _ = try page(listed, String(word.prefix(2))) }
        let read = fromParents()
        for word in words {
            for end in 3...word.count {
                let query = String(word.prefix(end))
                XCTAssertEqual(try page(listed, query), try page(full, query), query, file: file, line: line)
                XCTAssertEqual(try pages(listed, query), try pages(full, query), query, file: file, line: line)
            }
        }
        XCTAssertGreaterThan(fromParents(), read, file: file, line: line)
    }

    /// A list is made from every match's impact alone, and only the matches that can still make
    /// it are looked up: the same entries, in the same order, as SQLite's sorter over every match
    /// joined to its item — for words, prefixes and two words together, lists shorter and longer
    /// than the matches, and matches that tie at the boundary (the test's items repeat words).
    func testAListMadeFromImpactsAloneIsTheListOfEveryMatchSorted() throws {
        let directory = try TestSupport.makeScratchDirectory(for: self)
        let (listed, _) = try listedAndFull(directory + "/index.sqlite")
        try LocalIndex(store: listed, bundleIdentifier: "com.example.ranked").put((0..<300).map { Self.item($0) })
        // 200 items alike: every match of `quartz` ties, more than the ties `bestEntries` keeps at
        // size 3 (64 × 3, then SQLite's sorter), fewer at 12 and up (looked up, 24 entries held).
        try LocalIndex(store: listed, bundleIdentifier: "com.example.alike").put((0..<200).map {
            SearchableItem(uniqueIdentifier: "q\(($0 * 37) % 211)", attributes: .init(title: "quartz"))
        })
        func shown(_ entries: [RankEntry]) -> [String] { entries.map { "\($0.item) \($0.impact) \($0.hint) \($0.uid)" } }
        let average = try listed.rankStatistics().average
        let rows = Double(try listed.fullTextTotals().rows)
        var compared = 0
        for size in [3, 12, 40, 400] {
            listed.queryState.upkeep.size = size
            for key in Self.words.map({ "=" + $0 }) + ["=quartz", "*q", "*la", "*s", "*g", "&=comet =garden", "&=lantern *ri"] {
                var rarities: [Double]? = nil
                if key.hasPrefix("&") {
                    rarities = try RankLists.parts(key).map { Ranking.rarity(rows: rows, matching: Double(try listed.documentFrequency(phrase: RankLists.phrase($0)))) }
                }
                let phrase = RankLists.phrase(key)
                let sorted = try listed.bestEntriesSorted(phrase: phrase, average: average, rarities: rarities)
                XCTAssertEqual(shown(try listed.bestEntries(phrase: phrase, average: average, rarities: rarities)), shown(sorted), "\(key), \(size)")
                compared += sorted.count
            }
        }
        XCTAssertGreaterThan(compared, 1000)
    }
}
