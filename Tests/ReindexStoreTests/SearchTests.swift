import Foundation
import ReindexHost
import ReindexSystem
@testable import ReindexStore
import ReindexProtocol
import ReindexTestSupport
import XCTest

/// Search behaviour that depends on the candidate window and the whole-word-then-prefix passes.
final class SearchTests: XCTestCase {
    var directory = ""

    override func setUpWithError() throws {
        directory = NSTemporaryDirectory() + "reindex-search-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
    }

    override func tearDownWithError() throws {
        try? FileManager.default.removeItem(atPath: directory)
    }

    private func item(_ id: String, _ title: String, _ description: String = "") -> SearchableItem {
        SearchableItem(uniqueIdentifier: id, attributes: .init(title: title, contentDescription: description))
    }

    func testAFilteredSearchLooksPastTheCandidateWindow() throws {
        let store = try IndexStore.open(path: directory + "/index.sqlite")
        // More matches than one window in a busy bundle first, then the only ones of a quiet bundle.
        let busy = LocalIndex(store: store, bundleIdentifier: "com.example.busy")
        try busy.put((0..<(500 * 3)).map { item("b\($0)", "common word \($0)") })
        let quiet = LocalIndex(store: store, bundleIdentifier: "com.example.quiet")
        try quiet.put([item("q1", "common thing"), item("q2", "another common thing")])

        let found = try store.search("common", bundle: "com.example.quiet", limit: 20)
        XCTAssertEqual(Set(found.map(\.uniqueIdentifier)), ["q1", "q2"])
        // Unfiltered, a page fills from the window.
        XCTAssertEqual(try store.search("common", limit: 20).count, 20)
    }

    func testHiddenRowsInTheWindowDoNotEmptyThePage() throws {
        let store = try IndexStore.open(path: directory + "/index.sqlite")
        let index = LocalIndex(store: store, bundleIdentifier: "com.example.expiring")
        let past = Date(timeIntervalSinceNow: -3600)
        // The oldest matches (first in the window) have all expired.
        try index.put((0..<(500 + 50)).map {
            SearchableItem(uniqueIdentifier: "old\($0)", expirationDate: past, attributes: .init(title: "lantern \($0)"))
        })
        try index.put([item("new1", "lantern fresh"), item("new2", "lantern bright")])
        XCTAssertEqual(Set(try store.search("lantern", limit: 5).map(\.uniqueIdentifier)), ["new1", "new2"])
    }

    func testWholeWordMatchesComeBeforePrefixMatches() throws {
        let store = try IndexStore.open(path: directory + "/index.sqlite")
        let index = LocalIndex(store: store, bundleIdentifier: "com.example.words")
        try index.put([item("long", "engineering handbook"), item("exact", "engine room")])
        XCTAssertEqual(try store.search("engine", limit: 10).map(\.uniqueIdentifier), ["exact", "long"])
        // A partial word alone still finds by prefix.
        XCTAssertEqual(Set(try store.search("engin", limit: 10).map(\.uniqueIdentifier)), ["exact", "long"])
    }
}

/// Relevance is exact over every match, however common the words (issue 14).
final class RelevanceTests: XCTestCase {
    func testAnItemTitledWithTheWordComesFirstAmongAHundredThousandMatches() throws {
        let directory = try TestSupport.makeScratchDirectory(for: self)
        let store = try IndexStore.open(path: directory + "/index.sqlite")
        let index = LocalIndex(store: store, bundleIdentifier: "com.example.many")
        // 100,000 items that all hold the word in their description, then one titled with it.
        var items: [SearchableItem] = []
        for n in 0..<100_000 {
            items.append(SearchableItem(uniqueIdentifier: "d\(n)", attributes: .init(title: "Item \(n)", contentDescription: "about the orchard \(n)")))
        }
        try index.put(items)
        try index.put([SearchableItem(uniqueIdentifier: "titled", attributes: .init(title: "Orchard"))])
        XCTAssertEqual(try store.search("orchard", limit: 5).first?.uniqueIdentifier, "titled")
        // And the same as a prefix being typed.
        XCTAssertEqual(try store.search("orch", limit: 5).first?.uniqueIdentifier, "titled")
        // Written first instead of last, it still comes first.
        let other = LocalIndex(store: store, bundleIdentifier: "com.example.other")
        try other.put([SearchableItem(uniqueIdentifier: "early", attributes: .init(title: "Lantern"))])
        try index.put((0..<2_000).map { SearchableItem(uniqueIdentifier: "l\($0)", attributes: .init(contentDescription: "lantern \($0)")) })
        XCTAssertEqual(try store.search("lantern", limit: 3).first?.uniqueIdentifier, "early")
    }

    func testScoresAddUpOverWordsWeightedByAttributeAndTheShorterItemWins() throws {
        let directory = try TestSupport.makeScratchDirectory(for: self)
        let store = try IndexStore.open(path: directory + "/index.sqlite")
        let index = LocalIndex(store: store, bundleIdentifier: "com.example.rank")
        try index.put([
            SearchableItem(uniqueIdentifier: "both-title", attributes: .init(title: "river signal")),
            SearchableItem(uniqueIdentifier: "title-desc", attributes: .init(title: "river", contentDescription: "signal")),
            SearchableItem(uniqueIdentifier: "kw-desc", attributes: .init(contentDescription: "river", keywords: ["signal"])),
            SearchableItem(uniqueIdentifier: "desc-desc", attributes: .init(contentDescription: "river signal")),
            SearchableItem(uniqueIdentifier: "desc-desc-longer", attributes: .init(contentDescription: "signal and river")),
        ])
        let results = try store.search("river signal", limit: 10)
        XCTAssertEqual(results.map(\.uniqueIdentifier), ["both-title", "title-desc", "kw-desc", "desc-desc", "desc-desc-longer"])
        let scores = results.map { $0.score ?? 0 }
        XCTAssertEqual(scores, scores.sorted(by: >))
        XCTAssertEqual(Set(scores).count, 5, "\(scores)")
    }

    func testARareWordInADescriptionBeatsACommonWordInATitle() throws {
        let directory = try TestSupport.makeScratchDirectory(for: self)
        let store = try IndexStore.open(path: directory + "/index.sqlite")
        let index = LocalIndex(store: store, bundleIdentifier: "com.example.rarity")
        // "tool" is in the title of 60 items; "zephyr" in 4 items.
        var items = (0..<60).map { SearchableItem(uniqueIdentifier: "t\($0)", attributes: .init(title: "tool \($0)", contentDescription: "made of steel")) }
        items += [
            SearchableItem(uniqueIdentifier: "described", attributes: .init(title: "gadget", contentDescription: "zephyr tool")),
            SearchableItem(uniqueIdentifier: "titled", attributes: .init(title: "tool", textContent: "zephyr")),
            SearchableItem(uniqueIdentifier: "rare-title", attributes: .init(title: "zephyr", contentDescription: "a tool")),
            SearchableItem(uniqueIdentifier: "common-title", attributes: .init(title: "tool", contentDescription: "a zephyr")),
        ]
        try index.put(items)
        let found = try store.search("zephyr tool", limit: 10).map(\.uniqueIdentifier)
        // Both words in titles and descriptions: the rare word's title first.
        XCTAssertEqual(found.first, "rare-title", "\(found)")
        // The rare word in a description before the common word in a title (and the rare one
        // only in the body text).
        XCTAssertLessThan(try XCTUnwrap(found.firstIndex(of: "described")), try XCTUnwrap(found.firstIndex(of: "titled")), "\(found)")
    }

    func testAnItemWithBothWordsBeatsItemsTitledWithTheCommonOne() throws {
        let directory = try TestSupport.makeScratchDirectory(for: self)
        let store = try IndexStore.open(path: directory + "/index.sqlite")
        let index = LocalIndex(store: store, bundleIdentifier: "com.example.passwords")
        // "manager" is in 40 titles; three of these mention a password somewhere in their text.
        var items = (0..<40).map { SearchableItem(uniqueIdentifier: "m\($0)", attributes: .init(title: "manager \($0)", contentDescription: "manages things")) }
        for n in 0..<3 {
            items.append(SearchableItem(uniqueIdentifier: "titled\(n)", attributes: .init(
                title: "Session manager \(n)", contentDescription: "Manages sessions",
                textContent: "Starts the session after the login screen has checked the password of the user, then restores the windows.")))
        }
        items.append(SearchableItem(uniqueIdentifier: "keepass", attributes: .init(title: "KeePass", contentDescription: "Password manager")))
        try index.put(items)
        XCTAssertEqual(try store.search("password manager", limit: 10).map(\.uniqueIdentifier).first, "keepass")
    }

    func testEqualScoresAreOrderedByIdentifierNotByWhenTheyWereWritten() throws {
        let directory = try TestSupport.makeScratchDirectory(for: self)
        let store = try IndexStore.open(path: directory + "/index.sqlite")
        let index = LocalIndex(store: store, bundleIdentifier: "com.example.ties")
        for id in ["m", "z", "a", "q"] { try index.put([SearchableItem(uniqueIdentifier: id, attributes: .init(title: "sqlite"))]) }
        let other = LocalIndex(store: store, bundleIdentifier: "com.example.another")
        try other.put([SearchableItem(uniqueIdentifier: "b", attributes: .init(title: "sqlite"))])
        let results = try store.search("sqlite", limit: 10)
        // Bundle, then identifier: com.example.another's b, then a, m, q, z.
        XCTAssertEqual(results.map(\.uniqueIdentifier), ["b", "a", "m", "q", "z"])
        XCTAssertEqual(Set(results.map(\.score)).count, 1)
    }
}

/// `count` of words alone comes from the full-text index less the rows searches cannot see.
final class CountTests: XCTestCase {
    func testCountsOnlyWhatSearchesSee() throws {
        let directory = try TestSupport.makeScratchDirectory(for: self)
        let store = try IndexStore.open(path: directory + "/index.sqlite")
        let index = LocalIndex(store: store, bundleIdentifier: "com.example.count")
        try index.put((0..<30).map { SearchableItem(uniqueIdentifier: "v\($0)", attributes: .init(title: "comet \($0)")) })
        // Expired items and a writer's staged (uncommitted, invisible) puts match too.
        try index.put((0..<5).map {
            SearchableItem(uniqueIdentifier: "x\($0)", expirationDate: Date(timeIntervalSinceNow: -60), attributes: .init(title: "comet gone \($0)"))
        })
        let writer = try IndexStore.open(path: directory + "/index.sqlite")
        let staged = try StagedWrites(store: writer, bundleIdentifier: "com.example.count", scope: .live)
        for n in 0..<7 { try staged.put(try ItemValidator.validate(SearchableItem(uniqueIdentifier: "s\(n)", attributes: .init(title: "comet staged")).json)) }
        try staged.flush()
        XCTAssertEqual(try store.count("comet"), 30)
        XCTAssertEqual(try store.count("com"), 30)
        XCTAssertEqual(try store.count("comet gone"), 0)
        XCTAssertEqual(try store.count("comet && title == \"comet 1*\""), 11)
        XCTAssertEqual(try store.query("comet", options: QueryOptions(limit: 100)).results.count, 30)
        staged.rollback()
    }
}

/// rankingHint in relevance (docs/QUERIES.md, "Relevance"): among items of equal score, the
/// higher hint first (none counts as 0), then by bundle and identifier; never above a better score.
final class RankingHintTests: XCTestCase {
    private func item(_ id: String, title: String? = nil, description: String? = nil, hint: Double? = nil) -> SearchableItem {
        SearchableItem(uniqueIdentifier: id, attributes: .init(title: title, contentDescription: description, rankingHint: hint))
    }

    /// Every result of `query`, page by page through the cursor.
    private func paged(_ store: any IndexQueries, _ query: String, limit: Int) throws -> [String] {
        var options = QueryOptions(limit: limit)
        var all: [String] = []
        for _ in 0..<1000 {
            let page = try store.query(query, options: options)
            all += page.results.map(\.uniqueIdentifier)
            guard let next = page.nextCursor else { return all }
            options.after = next
        }
        XCTFail("paging did not end")
        return all
    }

    func testAHigherHintComesFirstAmongEqualScoresButNeverAboveABetterMatch() throws {
        let directory = try TestSupport.makeScratchDirectory(for: self)
        let store = try IndexStore.open(path: directory + "/index.sqlite")
        let index = LocalIndex(store: store, bundleIdentifier: "com.example.hints")
        try index.put([
            item("high", description: "river", hint: 5),
            item("low", description: "river", hint: 1),
            item("sunk", description: "river", hint: -2),
            item("titled", title: "river"),
            item("zero", description: "river", hint: 0),
            item("none", description: "river"),
        ])
        let expected = ["titled", "high", "low", "none", "zero", "sunk"]
        XCTAssertEqual(try store.search("river", limit: 10).map(\.uniqueIdentifier), expected)
        for limit in [1, 2, 4] { XCTAssertEqual(try paged(store, "river", limit: limit), expected, "limit \(limit)") }
        // The prefix pass orders its group the same way.
        XCTAssertEqual(try store.search("riv", limit: 10).map(\.uniqueIdentifier), expected)
        // A filter keeps the order of what passes it.
        XCTAssertEqual(try paged(store, "river && rankingHint != 1", limit: 2), ["titled", "high", "none", "zero", "sunk"])
    }

    /// On both backends: ties are ordered by hint, then bundle and identifier — never by when
    /// the items were written — and the cursor pages through them each once.
    func testEveryTieIsOrderedByHintThenIdentifierAndPagesThroughEveryItemOnce() throws {
        for testIndex in try TestIndex.both(for: self) {
            let n = testIndex.name
            let store = try testIndex.open()
            let queries = try Index.openForQueries(testIndex.argument, environment: testIndex.environment)
            let index = LocalIndex(store: store, bundleIdentifier: "com.example.hints")
            // 300 matches of one score: every hint counts, however many ties and however old.
            var items: [SearchableItem] = []
            let hints: [Int: Double] = [5: 2, 100: 9, 250: -3, 260: 2]
            for n in 0..<300 { items.append(item("i\(n)", description: "lantern \(n)", hint: hints[n])) }
            items.append(item("other", title: "unrelated", hint: 50))
            try index.put(items)
            // Another bundle's ties (its key sorts first), one of them expired, written after.
            let another = LocalIndex(store: store, bundleIdentifier: "com.example.another")
            try another.put((0..<30).map { item("a\($0)", description: "lantern \($0)") } + [
                SearchableItem(uniqueIdentifier: "a-gone", expirationDate: Date(timeIntervalSinceNow: -60), attributes: .init(contentDescription: "lantern gone")),
            ])
            let plain = (0..<30).map { "a\($0)" }.sorted() + (0..<300).filter { hints[$0] == nil }.map { "i\($0)" }.sorted()
            let expected = ["i100", "i260", "i5"] + plain + ["i250"]
            XCTAssertEqual(try queries.query("lantern", options: QueryOptions(limit: 400)).results.map(\.uniqueIdentifier), expected, n)
            for limit in [1, 7, 20, 150] { XCTAssertEqual(try paged(queries, "lantern", limit: limit), expected, "\(n): limit \(limit)") }
            XCTAssertEqual(try paged(queries, "lantern && (rankingHint > 0 || rankingHint < 0)", limit: 1), ["i100", "i260", "i5", "i250"], n)
            var one = QueryOptions(limit: 4)
            one.bundle = "com.example.hints"
            XCTAssertEqual(try queries.query("lantern", options: one).results.map(\.uniqueIdentifier), ["i100", "i260", "i5", "i0"], n)
        }
    }

    func testAPartialUpdateOfTheHintReordersTheResults() throws {
        let directory = try TestSupport.makeScratchDirectory(for: self)
        let result = try TestSupport.runReindex(["--index", directory + "/index.sqlite", "put", "com.example.hints"], scratch: directory, stdin: """
            {"uniqueIdentifier":"a","attributes":{"title":"comet"}}
            {"uniqueIdentifier":"b","attributes":{"title":"comet"}}

            """)
        XCTAssertEqual(result.status, 0, result.description)
        let store = try IndexStore.open(path: directory + "/index.sqlite")
        XCTAssertEqual(try store.search("comet").map(\.uniqueIdentifier), ["a", "b"])
        let update = try TestSupport.runReindex(["--index", directory + "/index.sqlite", "put", "com.example.hints"], scratch: directory,
                                                stdin: #"{"uniqueIdentifier":"b","isUpdate":true,"attributes":{"rankingHint":3}}"# + "\n")
        XCTAssertEqual(update.status, 0, update.description)
        XCTAssertEqual(try store.search("comet").map(\.uniqueIdentifier), ["b", "a"])
    }
}
