import Foundation
import ReindexHost
import ReindexSystem
@testable import ReindexStore
import ReindexProtocol
import ReindexTestSupport
import XCTest

/// `reindex search`, `show`, `put`, `delete`, `check` and `reset` on a PostgreSQL index, as real
/// processes against the server the tests start: the films of QueryCommandTests, indexed by
/// `reindex run`, queried with the same flags, JSON fields and exit codes as on SQLite.
final class PostgresQueryCommandTests: XCTestCase {
    typealias T = TestSupport
    var scratch = ""
    var server: PostgresServer!
    var schema = ""
    let bundle = "com.example.films"

    override func setUpWithError() throws {
        scratch = try T.makeScratchDirectory(for: self)
        server = try PostgresServer.shared()
        schema = server.freshSchema("qcmd")
        var spec = T.BundleSpec(bundle, executable: "films.py")
        spec.requestSeconds = 60
        try T.makeBundle(spec, in: scratch + "/extensions")
        let run = try reindex(["run", bundle])
        XCTAssertEqual(run.status, 0, run.description)
    }

    func reindex(_ arguments: [String], stdin: String? = nil) throws -> T.CommandResult {
        try T.runReindex(["--index", server.connectionURI, "--extensions-path", scratch + "/extensions"] + arguments, scratch: scratch,
                         environment: T.commandEnvironment(scratch: scratch, extra: ["REINDEX_PG_SCHEMA": schema]), stdin: stdin)
    }

    func json(_ arguments: [String], file: StaticString = #filePath, line: UInt = #line) throws -> [String: Any] {
        let result = try reindex(["--json"] + arguments)
        XCTAssertEqual(result.status, 0, result.description, file: file, line: line)
        return try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any], result.description, file: file, line: line)
    }

    func identifiers(_ query: String, _ extra: [String] = [], file: StaticString = #filePath, line: UInt = #line) throws -> [String] {
        let document = try json(["search", query, "--limit", "1000"] + extra, file: file, line: line)
        return (document["results"] as? [[String: Any]] ?? []).compactMap { $0["uniqueIdentifier"] as? String }
    }

    func testSearchTakesTheLanguageFlagsAndCursorsOnPostgreSQL() throws {
        XCTAssertEqual(try identifiers("dune"), ["film.dune", "film.dunes"])
        XCTAssertEqual(Set(try identifiers(#"title == "dune*"cd"#)), ["film.dune", "film.dunes"])
        XCTAssertEqual(try identifiers(#"title == "dunes of urgup"c"#), [])
        XCTAssertEqual(try identifiers(#"authors == "le guin"cdw"#), ["film.dune"])
        XCTAssertEqual(try identifiers("dune", ["--domain", "com.example.films.documentary"]), ["film.dunes"])
        XCTAssertEqual(try identifiers("dune OR harbour"), [])
        let query = #"rating >= 4 && contentType == "public.movie""#
        XCTAssertEqual(try json(["search", query, "--count"])["count"] as? Int, 41)
        // Pages by sort key through --after: every match once, rating descending, ties by identifier.
        var cursor: String? = nil
        var paged: [String] = []
        repeat {
            let document = try json(["search", query, "--limit", "7", "--sort", "rating:desc"] + (cursor.map { ["--after", $0] } ?? []))
            paged += (document["results"] as? [[String: Any]] ?? []).compactMap { $0["uniqueIdentifier"] as? String }
            cursor = document["nextCursor"] as? String
        } while cursor != nil
        XCTAssertEqual(paged.count, 41)
        XCTAssertEqual(paged.first, "film.005")
        XCTAssertEqual(paged, paged.sorted { a, b in
            let ra = a == "film.dune" ? 5 : (Int(a.suffix(3)) ?? 0) % 6, rb = b == "film.dune" ? 5 : (Int(b.suffix(3)) ?? 0) % 6
            return ra != rb ? ra > rb : a < b
        })
        // Fields, facets, snippets.
        let fields = try json(["search", "dune", "--fields", "title,rating"])
        let first = try XCTUnwrap((fields["results"] as? [[String: Any]])?.first)
        XCTAssertEqual(Set((first["attributes"] as? [String: Any] ?? [:]).keys), ["title", "rating"])
        XCTAssertNotNil(first["score"] as? Double)
        let facets = try XCTUnwrap(try json(["search", "harbour", "--facet", "contentType", "--facet-top", "2"])["facets"] as? [String: Any])
        let types = try XCTUnwrap(facets["contentType"] as? [[String: Any]])
        XCTAssertEqual(types.map { $0["value"] as? String }, ["public.movie", "public.episode"])
        XCTAssertEqual(types.map { $0["count"] as? Int }, [80, 40])
        let marked = try XCTUnwrap((try json(["search", "desert", "--markers", "<b>,</b>"])["results"] as? [[String: Any]])?.first?["snippet"] as? [String: Any])
        XCTAssertEqual(marked["attribute"] as? String, "contentDescription")
        XCTAssertEqual(marked["text"] as? String, "A drama in the <b>desert</b>")
        // Malformed queries and cursors: one error line, exit 65, nothing of the database in it.
        for (query, position) in [("rating >= ", 11), ("(dune", 6), ("ratng > 4", 1), ("title == 4", 1), ("a = b", 3)] {
            let bad = try reindex(["search", query])
            XCTAssertEqual(bad.status, 65, "\(query): \(bad)")
            XCTAssertTrue(bad.stderr.hasPrefix("error: query: at \(position): expected "), "\(query): \(bad.stderr)")
            XCTAssertEqual(bad.stderr.split(separator: "\n").count, 1, bad.stderr)
        }
        XCTAssertEqual(try reindex(["search", "dune", "--after", "nonsense"]).status, 65)
        let bogus = Cursor.sorted(ordering: "rating:asc", values: Array(repeating: .string("x"), count: 5)).encoded
        let wrong = try reindex(["search", "", "--sort", "rating", "--after", bogus])
        XCTAssertEqual(wrong.status, 65, wrong.description)
        XCTAssertEqual(try reindex(["search", "", "--sort", "thumbnailData"]).status, 64)
    }

    func testTheExamplesOfQueriesMDFindTheSameOnPostgreSQL() throws {
        let doc = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("docs/QUERIES.md")
        let examples = try String(contentsOf: doc, encoding: .utf8).components(separatedBy: "## Examples").last ?? ""
        var ran = 0
        for line in examples.split(separator: "\n") where line.hasPrefix("reindex search '") {
            let body = line.dropFirst("reindex search '".count)
            guard let close = body.lastIndex(of: "'") else { continue }
            let parts = body[body.index(after: close)...].components(separatedBy: "# →")
            let result = try reindex(["--json", "search", String(body[..<close])] + parts[0].split(separator: " ").map(String.init))
            XCTAssertEqual(result.status, 0, "\(line)\n\(result)")
            ran += 1
            guard parts.count == 2 else { continue }
            let document = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any])
            let found = Set((document["results"] as? [[String: Any]] ?? []).compactMap { $0["uniqueIdentifier"] as? String })
            XCTAssertEqual(found, Set(parts[1].split(separator: " ").map(String.init)), String(line))
        }
        XCTAssertGreaterThanOrEqual(ran, 16)
    }

    func testShowPutAndDeleteOnPostgreSQL() throws {
        let shown = try json(["show", bundle, "film.dune"])
        XCTAssertEqual(shown["uniqueIdentifier"] as? String, "film.dune")
        XCTAssertEqual(shown["domainIdentifier"] as? String, "com.example.films.drama")
        XCTAssertNotNil(shown["generation"] as? Int)
        XCTAssertNotNil(shown["generationCommitted"] as? String, "the reindexAll that made the generation live")
        XCTAssertEqual((shown["attributes"] as? [String: Any])?["authors"] as? [String], ["Frank Herbert", "Ursula K. Le Guin"])
        let missing = try reindex(["show", bundle, "film.none"])
        XCTAssertEqual(missing.status, 1, "the bundle exists, the item does not: \(missing)")
        XCTAssertTrue(missing.stderr.hasPrefix("error: "), missing.stderr)
        XCTAssertEqual(try reindex(["show", "com.example.nothing", "film.dune"]).status, 66)

        // put: good lines applied together, a bad one reported with its number (exit 65).
        let lines = [#"{"uniqueIdentifier":"n.1","domainIdentifier":"notes.work","attributes":{"title":"Quarterly lighthouse review","rating":4}}"#,
                     #"{"uniqueIdentifier":"n.2","attributes":{"rating":"high"}}"#,
                     "not json",
                     #"{"uniqueIdentifier":"n.3","domainIdentifier":"notes.home","attributes":{"title":"Lighthouse paint"}}"#,
                     #"{"uniqueIdentifier":"film.dune","isUpdate":true,"attributes":{"rating":1}}"#,
                     #"{"uniqueIdentifier":"n.9","isUpdate":true,"attributes":{"rating":1}}"#].joined(separator: "\n") + "\n"
        let notes = try reindex(["--json", "put", "com.example.notes"], stdin: lines)
        XCTAssertEqual(notes.status, 65, notes.description)
        XCTAssertTrue(notes.stderr.contains("stdin line 2"), notes.stderr)
        XCTAssertTrue(notes.stderr.contains("stdin line 3"), notes.stderr)
        let summary = try JSONParser.parse(text: notes.stdout)
        XCTAssertEqual(summary["put"], .integer(2))
        XCTAssertEqual(summary["rejected"], .integer(2))
        XCTAssertEqual(summary["ignoredUpdates"], .integer(2), "updates of items the bundle does not have")
        XCTAssertEqual(Set(try identifiers("lighthouse")), ["n.1", "n.3"])
        let films = try reindex(["put", bundle], stdin: #"{"uniqueIdentifier":"film.dune","isUpdate":true,"attributes":{"rating":1}}"# + "\n")
        XCTAssertEqual(films.status, 0, films.description)
        XCTAssertEqual(try identifiers(#"title == "Dune" && rating == 1"#), ["film.dune"], "a partial update merged into the live item")
        XCTAssertEqual(try reindex(["put", "not a bundle"], stdin: "").status, 64)

        // delete: by identifier, by domain, all; each bundle only its own items.
        XCTAssertEqual(try json(["delete", "com.example.notes", "--ids", "n.1,n.404"])["deleted"] as? Int, 1)
        XCTAssertEqual(try json(["delete", "com.example.notes", "--domains", "notes"])["deleted"] as? Int, 1)
        XCTAssertEqual(try identifiers("lighthouse"), [])
        XCTAssertEqual(try json(["delete", bundle, "--domains", "com.example.films.documentary"])["deleted"] as? Int, 31)
        XCTAssertEqual(try identifiers("dune"), ["film.dune"])
        XCTAssertEqual(try reindex(["delete", bundle]).status, 64)
        XCTAssertEqual(try json(["delete", bundle, "--all"])["deleted"] as? Int, 91)
        XCTAssertEqual(try json(["search", "harbour", "--count"])["count"] as? Int, 0)
    }

    func testCheckAndResetOnPostgreSQL() throws {
        let healthy = try json(["check"])
        XCTAssertEqual(healthy["healthy"] as? Bool, true, "\(healthy)")
        XCTAssertEqual(healthy["problems"] as? [String], [])
        XCTAssertTrue((healthy["index"] as? String)?.contains("schema \(schema)") == true, "\(healthy)")
        XCTAssertEqual(try reindex(["check", "--quick"]).status, 0)

        // Damage the index behind the host's back: an item of no bundle, a document without its title …
        try server.psql("INSERT INTO \(schema).items(bundle, gen, uid, attributes, doc) VALUES ('com.example.ghost', 0, 'g.1', '{}', ''::tsvector)")
        try server.psql("UPDATE \(schema).items SET doc = ''::tsvector WHERE uid = 'film.dune'")
        // … and a count of tokens for the score that is not its items' (the triggers kept the ghost's).
        try server.psql("UPDATE \(schema).full_text_totals SET tokens = tokens + 7 WHERE bundle <> 'com.example.ghost'")
        let damaged = try reindex(["--json", "check"])
        XCTAssertEqual(damaged.status, 65, damaged.description)
        let report = try JSONParser.parse(text: damaged.stdout)
        XCTAssertEqual(report["healthy"], .bool(false))
        let problems = report["problems"]?.arrayValue?.compactMap(\.stringValue) ?? []
        XCTAssertTrue(problems.contains { $0.contains("1 item(s) belong to a bundle the index does not know") }, "\(problems)")
        XCTAssertTrue(problems.contains { $0.contains("1 item(s) have a full-text document without their title's words") }, "\(problems)")
        XCTAssertTrue(problems.contains { $0.contains("1 bundle(s) whose count of items or tokens for the score") }, "\(problems)")
        XCTAssertTrue(damaged.stderr.contains("run 'reindex reset'"), damaged.stderr)

        // Reset: everything erased in one transaction, the rebuild queued; run rebuilds it.
        let reset = try json(["reset"])
        XCTAssertEqual(reset["erased"] as? Int, 123)
        XCTAssertEqual(reset["queued"] as? Int, 1)
        XCTAssertTrue(reset["keptAs"] is NSNull)
        XCTAssertEqual(try json(["search", "", "--count"])["count"] as? Int, 0)
        let status = try json(["status"])
        let bundles = status["bundles"] as? [[String: Any]] ?? []
        XCTAssertEqual(bundles.first?["pending"] as? Int, 1, "\(status)")
        XCTAssertEqual(try json(["check"])["healthy"] as? Bool, true)
        XCTAssertEqual(try reindex(["run", bundle]).status, 0)
        XCTAssertEqual(try identifiers("dune"), ["film.dune", "film.dunes"])

        // debug's scratch copy is of a file: a PostgreSQL index says what to do instead.
        let debug = try reindex(["debug", bundle, "--scratch-index"])
        XCTAssertEqual(debug.status, 64, debug.description)
        XCTAssertTrue(debug.stderr.contains("REINDEX_PG_SCHEMA"), debug.stderr)
    }
}
