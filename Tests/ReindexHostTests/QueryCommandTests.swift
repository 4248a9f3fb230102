import Foundation
import ReindexHost
import ReindexSystem
@testable import ReindexCommandLine
@testable import ReindexStore
import ReindexProtocol
import ReindexTestSupport
import XCTest

/// The query language end to end: a real extension (Tests/Fixtures/extensions/films.py) indexes
/// a film catalogue through `reindex run`, and `reindex search` / `reindex show` query it.
final class QueryCommandTests: XCTestCase {
    var scratch = ""
    let bundle = "com.example.films"

    override func setUpWithError() throws {
        scratch = try TestSupport.makeScratchDirectory(for: self)
        let extensions = scratch + "/extensions"
        var spec = TestSupport.BundleSpec(bundle, executable: "films.py")
        spec.requestSeconds = 60
        try TestSupport.makeBundle(spec, in: extensions)
        let run = try reindex(["run", bundle])
        XCTAssertEqual(run.status, 0, run.description)
    }

    func reindex(_ arguments: [String], environment: [String: String] = [:]) throws -> TestSupport.CommandResult {
        try TestSupport.runReindex(["--index", scratch + "/index.sqlite", "--extensions-path", scratch + "/extensions"] + arguments, scratch: scratch,
                                   environment: TestSupport.commandEnvironment(scratch: scratch, extra: environment))
    }

    func json(_ arguments: [String], file: StaticString = #filePath, line: UInt = #line) throws -> [String: Any] {
        let result = try reindex(["--json"] + arguments)
        XCTAssertEqual(result.status, 0, result.description, file: file, line: line)
        return try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any], result.stdout, file: file, line: line)
    }

    func identifiers(_ query: String, _ extra: [String] = [], file: StaticString = #filePath, line: UInt = #line) throws -> [String] {
        let document = try json(["search", query, "--limit", "1000"] + extra, file: file, line: line)
        return (document["results"] as? [[String: Any]] ?? []).compactMap { $0["uniqueIdentifier"] as? String }
    }

    /// Every page of a query through --after, in order.
    func allPages(_ query: String, limit: Int, _ extra: [String] = []) throws -> [String] {
        var cursor: String? = nil
        var all: [String] = []
        for _ in 0..<1000 {
            let document = try json(["search", query, "--limit", String(limit)] + extra + (cursor.map { ["--after", $0] } ?? []))
            let page = (document["results"] as? [[String: Any]] ?? []).compactMap { $0["uniqueIdentifier"] as? String }
            XCTAssertLessThanOrEqual(page.count, limit)
            all += page
            guard let next = document["nextCursor"] as? String else { return all }
            XCTAssertEqual(page.count, limit, "only a full page has a next cursor")
            cursor = next
        }
        XCTFail("paging did not end")
        return all
    }

    /// The fixture's films, as (identifier, rating, movie?) — mirrors films.py.
    var films: [(id: String, rating: Double, movie: Bool)] {
        var result: [(id: String, rating: Double, movie: Bool)] = []
        for n in 0..<120 { result.append((String(format: "film.%03d", n), Double(n % 6), n % 3 != 0)) }
        result.append(("film.dune", 5, true))
        result.append(("film.dunes", 3.5, true))
        return result
    }

    func testFiltersCountsAndEveryPageOnce() throws {
        let query = #"rating >= 4 && contentType == "public.movie""#
        let expected = Set(films.filter { $0.rating >= 4 && $0.movie }.map(\.id))
        XCTAssertEqual(Set(try identifiers(query)), expected)
        let count = try json(["search", query, "--count"])["count"] as? Int
        XCTAssertEqual(count, expected.count)
        // Filter-only pages: by bundle and identifier, every match once.
        let paged = try allPages(query, limit: 7)
        XCTAssertEqual(paged, expected.sorted())
        // Sorted pages: rating descending, ties by identifier, every match once.
        let sorted = try allPages(query, limit: 5, ["--sort", "rating:desc"])
        XCTAssertEqual(sorted, films.filter { $0.rating >= 4 && $0.movie }.sorted { ($0.rating, $1.id) > ($1.rating, $0.id) }.map(\.id))
        // Relevance pages of a word every film holds.
        let harbour = try allPages("harbour", limit: 9)
        XCTAssertEqual(harbour.count, 120)
        XCTAssertEqual(Set(harbour).count, 120)
        XCTAssertEqual(try json(["search", "harbour", "--count"])["count"] as? Int, 120)
        XCTAssertEqual(try json(["search", "harb", "--count"])["count"] as? Int, 120)
        // Sorted by a date, then paged with words.
        let byDate = try allPages("harbour", limit: 11, ["--sort", "startDate", "--sort", "rating:desc"])
        XCTAssertEqual(Set(byDate).count, 120)
        // Day first (n % 28), then rating descending, then identifier.
        let key = { (id: String) -> (Int, Int, String) in
            let n = Int(id.suffix(3)) ?? 0
            return (n % 28, -(n % 6), id)
        }
        XCTAssertEqual(byDate, byDate.sorted { key($0) < key($1) })
    }

    func testStringModifiersWordsTimesRangesAndRestrictions() throws {
        XCTAssertEqual(Set(try identifiers(#"title == "dune*"cd"#)), ["film.dune", "film.dunes"])
        XCTAssertEqual(try identifiers(#"title == "Dune""#), ["film.dune"])
        XCTAssertEqual(try identifiers(#"title == "DUNE""#), [])
        XCTAssertEqual(try identifiers(#"title == "DUNE"c"#), ["film.dune"])
        XCTAssertEqual(try identifiers(#"title == "dunes of urgup"cd"#), ["film.dunes"])
        XCTAssertEqual(try identifiers(#"title == "dunes of urgup"c"#), [])
        XCTAssertEqual(try identifiers(#"title != "Dune" && rating == 5 && startDate >= $time.iso(2026-02-01T00:00:00Z)"#), [])
        XCTAssertEqual(try identifiers(#"authors == "le guin"cdw"#), ["film.dune"])
        XCTAssertEqual(try identifiers(#"* == "desert"cdw"#), ["film.dune"])
        XCTAssertEqual(try identifiers(#"keywords == "DESERT"c"#), ["film.dune"])
        XCTAssertEqual(Set(try identifiers("startDate > $time.iso(2026-01-31T00:00:00Z)")), ["film.dune", "film.dunes"])
        XCTAssertEqual(try identifiers("InRange(rating, 3, 3.9)").count, 21)
        XCTAssertEqual(try identifiers("!(rating >= 1) && harbour").count, 20)
        XCTAssertEqual(try identifiers("rating == 5 || rating < 1").count, 41)
        // Whole word first, then the prefix; restrictions in the language and as flags.
        XCTAssertEqual(try identifiers("dune"), ["film.dune", "film.dunes"])
        XCTAssertEqual(try identifiers("domain:com.example.films.documentary dune"), ["film.dunes"])
        XCTAssertEqual(try identifiers("dune", ["--domain", "com.example.films.documentary"]), ["film.dunes"])
        XCTAssertEqual(try identifiers("bundle:com.example.other dune"), [])
        // FTS5 syntax in input is text: OR is a word every match must hold, title:dune a word.
        XCTAssertEqual(try identifiers("dune OR harbour"), [])
        XCTAssertEqual(try identifiers("title:dune"), [])
    }

    func testFieldsFacetsSnippetsShowAndErrors() throws {
        let fields = try json(["search", "dune", "--fields", "title,rating"])
        let first = try XCTUnwrap((fields["results"] as? [[String: Any]])?.first)
        XCTAssertEqual(Set((first["attributes"] as? [String: Any] ?? [:]).keys), ["title", "rating"])

        let facets = try XCTUnwrap(try json(["search", "harbour", "--facet", "contentType", "--facet", "domainIdentifier", "--facet-top", "2"])["facets"] as? [String: Any])
        let types = try XCTUnwrap(facets["contentType"] as? [[String: Any]])
        XCTAssertEqual(types.map { $0["value"] as? String }, ["public.movie", "public.episode"])
        XCTAssertEqual(types.map { $0["count"] as? Int }, [80, 40])
        XCTAssertEqual((facets["domainIdentifier"] as? [[String: Any]])?.count, 2)

        let snippet = try XCTUnwrap((try json(["search", "desert"])["results"] as? [[String: Any]])?.first?["snippet"] as? [String: Any])
        XCTAssertEqual(snippet["attribute"] as? String, "contentDescription")
        XCTAssertEqual(snippet["text"] as? String, "A drama in the [desert]")
        let marked = try XCTUnwrap((try json(["search", "desert", "--markers", "<b>,</b>"])["results"] as? [[String: Any]])?.first?["snippet"] as? [String: Any])
        XCTAssertEqual(marked["text"] as? String, "A drama in the <b>desert</b>")
        let human = try reindex(["search", "desert"])
        XCTAssertEqual(human.status, 0)
        XCTAssertTrue(human.stdout.contains("A drama in the desert"), human.stdout)
        XCTAssertFalse(human.stdout.contains("\u{1B}"), "no terminal escapes when stdout is not a terminal")

        let shown = try json(["show", bundle, "film.dune"])
        XCTAssertEqual(shown["uniqueIdentifier"] as? String, "film.dune")
        XCTAssertEqual(shown["domainIdentifier"] as? String, "com.example.films.drama")
        XCTAssertNotNil(shown["generation"] as? Int)
        XCTAssertNotNil(shown["generationCommitted"] as? String)
        XCTAssertEqual((shown["attributes"] as? [String: Any])?["authors"] as? [String], ["Frank Herbert", "Ursula K. Le Guin"])
        let missing = try reindex(["show", bundle, "film.none"])
        XCTAssertEqual(missing.status, 1, "an existing bundle without the item is not 'bundle not found': \(missing)")

        for (query, position) in [("rating >= ", 11), ("(dune", 6), ("ratng > 4", 1), ("title == 4", 1), ("a = b", 3)] {
            let bad = try reindex(["search", query])
            XCTAssertEqual(bad.status, 65, "\(query): \(bad)")
            XCTAssertTrue(bad.stderr.hasPrefix("error: query: at \(position): expected "), "\(query): \(bad.stderr)")
            XCTAssertEqual(bad.stderr.split(separator: "\n").count, 1, bad.stderr)
            XCTAssertFalse(bad.stderr.lowercased().contains("sqlite") || bad.stderr.contains("fts5"), bad.stderr)
        }
        let badCursor = try reindex(["search", "dune", "--after", "nonsense"])
        XCTAssertEqual(badCursor.status, 65, badCursor.description)
    }
}

extension QueryCommandTests {
    /// Every `reindex search` line of docs/QUERIES.md's examples runs, and those that say what
    /// they find (`# → id id`) find exactly that.
    func testTheExamplesOfQueriesMDRun() throws {
        let doc = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("docs/QUERIES.md")
        let text = try String(contentsOf: doc, encoding: .utf8)
        let examples = text.components(separatedBy: "## Examples").last ?? ""
        var ran = 0
        for line in examples.split(separator: "\n") where line.hasPrefix("reindex search '") {
            let body = line.dropFirst("reindex search '".count)
            guard let close = body.lastIndex(of: "'") else { XCTFail("unquoted example: \(line)"); continue }
            let query = String(body[..<close])
            let rest = body[body.index(after: close)...]
            let parts = rest.components(separatedBy: "# →")
            let flags = parts[0].split(separator: " ").map(String.init)
            let result = try reindex(["--json", "search", query] + flags)
            XCTAssertEqual(result.status, 0, "\(line)\n\(result)")
            ran += 1
            guard parts.count == 2 else { continue }
            let expected = Set(parts[1].split(separator: " ").map(String.init))
            let document = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any])
            let found = Set((document["results"] as? [[String: Any]] ?? []).compactMap { $0["uniqueIdentifier"] as? String })
            XCTAssertEqual(found, expected, String(line))
        }
        XCTAssertGreaterThanOrEqual(ran, 16)
    }
}

/// What a newcomer hits first: paging `items`, typos, unquoted words, the prefix rule and `show`
/// of an item that is not there.
extension QueryCommandTests {
    func testItemsPagesLikeSearchWithAfterAndNextCursor() throws {
        var cursor: String? = nil
        var all: [String] = []
        for _ in 0..<100 {
            let document = try json(["items", bundle, "--limit", "25"] + (cursor.map { ["--after", $0] } ?? []))
            let page = (document["results"] as? [[String: Any]] ?? []).compactMap { $0["uniqueIdentifier"] as? String }
            XCTAssertLessThanOrEqual(page.count, 25)
            all += page
            XCTAssertTrue(document.keys.contains("nextCursor"), "items --json has nextCursor (null on the last page)")
            guard let next = document["nextCursor"] as? String else { break }
            cursor = next
        }
        XCTAssertEqual(all, films.map(\.id).sorted(), "every item once, by identifier")

        let human = try reindex(["items", bundle, "--limit", "5"])
        XCTAssertEqual(human.status, 0, human.description)
        let lines = human.stdout.split(separator: "\n")
        let more = try XCTUnwrap(lines.last, human.stdout)
        XCTAssertTrue(more.hasPrefix("(more: --after "), "the last line says how to get the rest: \(human.stdout)")
        let next = try reindex(["items", bundle, "--limit", "5", "--after", String(more.dropFirst("(more: --after ".count).dropLast())])
        XCTAssertEqual(next.status, 0, next.description)
        XCTAssertTrue(next.stdout.contains(films.map(\.id).sorted()[5]), next.stdout)
        XCTAssertEqual(try reindex(["items", bundle, "--after", "nonsense"]).status, 65)
    }

    func testSeveralUnquotedWordsAreOneQuery() throws {
        let quoted = try identifiers("desert drama")
        XCTAssertFalse(quoted.isEmpty)
        let result = try reindex(["--json", "search", "desert", "drama", "--limit", "1000"])
        XCTAssertEqual(result.status, 0, result.description)
        let document = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any])
        XCTAssertEqual((document["results"] as? [[String: Any]] ?? []).compactMap { $0["uniqueIdentifier"] as? String }, quoted)
    }

    func testTyposGetTheNearestName() throws {
        let command = try reindex(["serch", "dune"])
        XCTAssertEqual(command.status, 64, command.description)
        XCTAssertTrue(command.stderr.contains("did you mean 'search'?"), command.stderr)
        let option = try reindex(["search", "dune", "--lmit", "3"])
        XCTAssertEqual(option.status, 64, option.description)
        XCTAssertTrue(option.stderr.contains("did you mean '--limit'?"), option.stderr)
        let attribute = try reindex(["search", #"titel == "Dune""#])
        XCTAssertEqual(attribute.status, 65, attribute.description)
        XCTAssertTrue(attribute.stderr.hasPrefix("error: query: at 1: expected "), attribute.stderr)
        XCTAssertTrue(attribute.stderr.contains("did you mean 'title'?"), attribute.stderr)
        let bundleTypo = try reindex(["run", "com.example.flims"])
        XCTAssertEqual(bundleTypo.status, 66, bundleTypo.description)
        XCTAssertTrue(bundleTypo.stderr.contains("did you mean 'com.example.films'?"), bundleTypo.stderr)
        // Far from every name: no suggestion.
        for far in [try reindex(["frobnicate"]), try reindex(["search", "x", "--zzzzzz"]), try reindex(["search", "zzzzz > 4"])] {
            XCTAssertFalse(far.stderr.contains("did you mean"), far.stderr)
        }
    }

    func testShowTellsAMissingItemFromAMissingBundle() throws {
        let item = try reindex(["show", bundle, "film.none"])
        XCTAssertEqual(item.status, 1, item.description)
        XCTAssertEqual(item.stderr, "error: \(bundle): no live item 'film.none'\n")
        let other = try reindex(["show", "com.example.flims", "film.dune"])
        XCTAssertEqual(other.status, 66, other.description)
        XCTAssertTrue(other.stderr.hasPrefix("error: com.example.flims: no such bundle"), other.stderr)
        XCTAssertTrue(other.stderr.contains("did you mean '\(bundle)'?"), other.stderr)
        let help = try reindex(["show", "--help"])
        XCTAssertTrue(help.stdout.contains("1 when the bundle exists but has no such live item"), help.stdout)
    }

    /// `search --help` states the prefix rule in docs/QUERIES.md's words.
    func testSearchHelpStatesThePrefixRuleOfQueriesMD() throws {
        let doc = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("docs/QUERIES.md")
        let words = try XCTUnwrap(try String(contentsOf: doc, encoding: .utf8).components(separatedBy: "## Words").dropFirst().first)
        let paragraph = words.components(separatedBy: "\n\n")[1].replacingOccurrences(of: "\n", with: " ").replacingOccurrences(of: "`", with: "")
        let rule = try XCTUnwrap(paragraph.range(of: "the last word also matches as a prefix"), paragraph)
        let sentences = paragraph[rule.lowerBound...].components(separatedBy: ". ").prefix(2).map { $0.hasSuffix(".") ? String($0.dropLast()) : $0 }
        XCTAssertEqual(sentences.count, 2)
        let help = try reindex(["search", "--help"])
        let text = help.stdout.replacingOccurrences(of: "\n", with: " ")
        for sentence in sentences { XCTAssertTrue(text.contains(sentence), "search --help lacks '\(sentence)':\n\(help.stdout)") }
        XCTAssertFalse(text.contains("each also matches as a prefix"), help.stdout)
    }
}
