import Foundation
import ReindexHost
import ReindexSystem
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

/// "Nothing a hostile query can do": past the limits of docs/QUERIES.md a query is an error with
/// its position (exit 65) — never a signal, never exit 70, never SQLite's own words — and up to
/// them it runs. A cursor that is damaged, foreign or of another order is an error too.
extension QueryCommandTests {
    /// Queries as large as `QueryLimits.standard` allows, in the shapes that compile to the
    /// deepest and longest SQL: nesting to the limit, every term a heavy one, 16 KiB.
    static func queriesAtTheLimits(extraLeaves: [String] = []) -> [String] {
        let limits = QueryLimits.standard
        let leaves = [#"* == "dune*"cd"#, #"keywords != "desert"c"#, #"title == "dune"w"#, "rating >= 1", "harbour",
                      #"* != "harbour"cdw"#, "!rating >= 4", #"authors == "guin"cdw"#, "InRange(rating, 1, 3)", "!dune"] + extraLeaves
        func leaf(_ n: Int) -> String { leaves[n % leaves.count] }
        func op(_ level: Int) -> String { level % 2 == 0 ? " || " : " && " }
        var queries: [String] = []
        // Every leaf is one term; the first six take no level of nesting.
        // A chain of groups as deep as allowed ('!' leaves need a level of their own), seven
        // terms at each level and the rest innermost.
        var chain = (0..<(limits.maximumTerms - 7 * (limits.maximumDepth - 1))).map(leaf).joined(separator: " || ")
        for level in 1..<limits.maximumDepth {
            chain = "(" + (0..<7).map { leaf($0 + level) }.joined(separator: op(level)) + op(level) + chain + ")"
        }
        queries.append(chain)
        // The same, the group last, and '!(' at every level (each two levels deep).
        var negated = (0..<(limits.maximumTerms - 16 * 3)).map { leaves[$0 % 6] }.joined(separator: " && ")
        for level in 0..<(limits.maximumDepth / 2) {
            negated = "!(" + (0..<3).map { leaves[($0 + level) % 6] }.joined(separator: op(level)) + op(level) + negated + ")"
        }
        queries.append(negated)
        // '&&' inside '||' by precedence, '||' inside '&&' by parentheses: two alternations
        // of the SQL at each level.
        var precedence = (0..<(limits.maximumTerms - 3 * (limits.maximumDepth - 1))).map(leaf).joined(separator: " && ")
        for level in 1..<limits.maximumDepth {
            precedence = leaf(level) + " || " + leaf(level + 1) + " && " + leaf(level + 2) + " && (" + precedence + ")"
        }
        queries.append(precedence)
        // A balanced tree of 256 terms, alternating || and &&.
        func tree(_ height: Int, _ first: Int) -> String {
            height == 0 ? leaf(first) : "(" + tree(height - 1, first) + op(height) + tree(height - 1, first + (1 << (height - 1))) + ")"
        }
        queries.append(tree(8, 0))
        // Flat chains of every kind of term.
        for n in 0..<leaves.count { queries.append(Array(repeating: leaf(n), count: limits.maximumTerms).joined(separator: n % 2 == 0 ? " || " : " && ")) }
        queries.append(Array(repeating: "harbour", count: limits.maximumTerms).joined(separator: " "))
        queries.append((0..<limits.maximumTerms).map { "w\($0)x" }.joined(separator: " "))
        queries.append("\"" + Array(repeating: "picture", count: limits.maximumTerms).joined(separator: " ") + "\"")
        queries.append(#"title == ""# + Array(repeating: "dune", count: limits.maximumTerms).joined(separator: " ") + #""cdw"#)
        // 16 KiB: one long string.
        let prefix = #"title == ""#
        queries.append(prefix + String(repeating: "é*", count: (limits.maximumLength - prefix.utf8.count - 4) / 3) + "x" + #""cd"#)
        return queries
    }

    func testHostileQueriesAreErrorsWithTheirPosition() throws {
        for (name, query, position, expected) in QueryCases.queriesPastTheLimits {
            for extra in [[], ["--count"], ["--facet", "contentType"]] {
                let result = try reindex(["search", query] + extra)
                XCTAssertEqual(result.status, 65, "\(name) \(extra): status \(result.status), \(result.stderr.prefix(300))")
                XCTAssertTrue(result.stderr.hasPrefix("error: query: at \(position): expected "), "\(name): \(result.stderr.prefix(300))")
                XCTAssertTrue(result.stderr.contains(expected), "\(name): \(result.stderr.prefix(300))")
                XCTAssertEqual(result.stderr.split(separator: "\n").count, 1, "\(name): \(result.stderr.prefix(300))")
            }
        }
    }

    func testQueriesAtTheLimitsRun() throws {
        for query in Self.queriesAtTheLimits() {
            XCTAssertNoThrow(try QueryParser.parse(query), query)
            for extra in [[], ["--count"], ["--sort", "rating:desc", "--limit", "3"], ["--facet", "keywords"]] {
                let result = try reindex(["search", query] + extra)
                XCTAssertEqual(result.status, 0, "\(extra) \(query.prefix(200))…: \(result.stderr.prefix(500))")
            }
        }
    }

    func testDamagedCursorsAndCursorsOfAnotherOrderAreErrors() throws {
        func failure(_ arguments: [String], naming words: [String], file: StaticString = #filePath, line: UInt = #line) throws {
            let result = try reindex(["search"] + arguments)
            XCTAssertEqual(result.status, 65, "\(arguments): \(result)", file: file, line: line)
            XCTAssertTrue(result.stderr.hasPrefix("error: cursor: "), result.stderr, file: file, line: line)
            for word in words { XCTAssertTrue(result.stderr.contains(word), "\(word): \(result.stderr)", file: file, line: line) }
            XCTAssertEqual(result.stderr.split(separator: "\n").count, 1, result.stderr, file: file, line: line)
        }
        for (cursor, names) in QueryCases.damagedCursors {
            try failure(["harbour", "--after", cursor], naming: [names])
            try failure(["", "--sort", "rating", "--after", cursor], naming: [names])
        }
        let byRelevance = try XCTUnwrap(try json(["search", "harbour", "--limit", "5"])["nextCursor"] as? String)
        let byRating = try XCTUnwrap(try json(["search", "harbour", "--limit", "5", "--sort", "rating:desc"])["nextCursor"] as? String)
        let byIdentifier = try XCTUnwrap(try json(["search", "", "--limit", "5"])["nextCursor"] as? String)
        try failure(["harbour", "--sort", "rating:desc", "--after", byRelevance], naming: ["by relevance", "sorted by rating:desc"])
        try failure(["harbour", "--after", byRating], naming: ["sorted by rating:desc", "by relevance"])
        try failure(["harbour", "--sort", "title", "--after", byRating], naming: ["sorted by rating:desc", "sorted by title:asc"])
        try failure(["harbour", "--after", byIdentifier], naming: ["by bundle and identifier", "by relevance"])
        try failure(["", "--sort", "rating", "--after", byIdentifier], naming: ["by bundle and identifier", "sorted by rating:asc"])
        // Each continues its own order.
        XCTAssertEqual(try reindex(["search", "harbour", "--after", byRelevance]).status, 0)
        XCTAssertEqual(try reindex(["search", "dune", "--sort", "rating:desc", "--after", byRating]).status, 0)
        XCTAssertEqual(try reindex(["search", "", "--after", byIdentifier]).status, 0)
    }
}

extension QueryCommandTests {
    /// What a store error while running a query says: the query's fault (65) without the
    /// store's words when the statement was one the store would not run; busy and I/O as ever.
    func testStoreErrorsOfAQueryAreExplainedNotShown() {
        let path = scratch + "/index.sqlite"
        for (code, message) in [(Int32(1), "parser stack overflow"), (1, "Expression tree is too large (maximum depth 1000)"), (18, "string or blob too big")] {
            let error = StoreError(sqlite: code, message: message, context: "SELECT b.identifier FROM items i").explained(index: path, doing: "search failed", query: true)
            XCTAssertEqual(error.code, .invalidData, message)
            XCTAssertTrue(error.message.hasPrefix("query: the index cannot run a query of this shape"), error.message)
            XCTAssertFalse(error.message.contains(message) || error.message.contains("SELECT"), error.message)
        }
        XCTAssertEqual(StoreError(sqlite: 5, message: "database is locked", context: "SELECT 1").explained(index: path, doing: "search failed", query: true).code, .requestFailed)
        XCTAssertEqual(StoreError(sqlite: 10, message: "disk I/O error", context: "SELECT 1").explained(index: path, doing: "search failed", query: true).code, .ioError)
        let internalError = StoreError(sqlite: 21, message: "bad parameter or other API misuse", context: "SELECT 1").explained(index: path, doing: "search failed", query: true)
        XCTAssertFalse(internalError.message.contains("misuse") || internalError.message.contains("SELECT"), internalError.message)
        for state in ["54001", "54000", "22P02", "53200"] {
            let error = StoreError(postgres: state, message: "stack depth limit exceeded", context: "SELECT").explained(index: "postgresql://h/db", doing: "search failed", query: true)
            XCTAssertEqual(error.code, .invalidData, state)
            XCTAssertFalse(error.message.contains("stack depth") || error.message.contains("SELECT"), error.message)
        }
        XCTAssertEqual(StoreError(postgres: "40001", message: "serialization", context: "").explained(index: "pg", doing: "search failed", query: true).code, .requestFailed)
    }
}
