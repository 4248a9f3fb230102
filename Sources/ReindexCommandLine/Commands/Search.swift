import ReindexStore
import ReindexSystem
import Foundation
import ReindexHost
import ReindexProtocol

/// `reindex search QUERY`: full-text search with the query language over live items, best first;
/// or the number of matches (`--count`), or counts per value (`--facet`).
package struct SearchCommand: ReindexCommand {
    package static let name = "search"
    package static let summary = "search live items with words and the query language, best first"
    package static let discussion = """
            Words: every word must match one of the full-text attributes, case- and accent-insensitively,
            and the last word also matches as a prefix (it may still be being typed). A word ending in * is
            always a prefix: 'eng' and 'staff eng' find engineering, 'eng staff' does not, 'eng* staff' does.
            Several arguments are one query, joined by spaces: reindex search staff eng is reindex search "staff eng".
            Relevance (SQLite index): BM25F - a word counts more the rarer it is in the index, the more often
            it occurs, and the weightier the attribute (title 10, displayName 8, alternateNames and keywords 5,
            authors 3, contentDescription 2, textContent 1), with repeats saturating and long items discounted;
            whole words before prefixes; ties by rankingHint, then bundle and identifier. A PostgreSQL index
            ranks by the attribute weights alone. See docs/QUERIES.md, "Relevance", and the language there.
            Limits: 16 KiB, 32 levels of ( and !, 256 words and comparisons (docs/QUERIES.md, "Limits").
            Exit status: 0 (also when nothing matches), 65 a malformed query or one past the limits (the message
            gives its position), or a --after cursor that is damaged or of another query's order; 66 no index at
            the path, 74 it cannot be read, 75 it stayed busy.
            """

    package static let query = Argument<Self, String>(
        "QUERY", help: "words (the last also as a prefix) and/or comparisons: rating >= 4 && title == \"dune*\"cd (see docs/QUERIES.md); several arguments are joined by spaces",
        variadic: true)
    package static let bundle = Option<Self, String>("bundle", value: "ID", help: "only this bundle's items", completion: .bundleIdentifier)
    package static let domain = Option<Self, String>("domain", value: "D", help: "only items in this domain or its subdomains")
    package static let limit = Option<Self, Int>("limit", value: "N", help: "at most N results (default 20)", as: .positiveInteger)
    package static let sort = Option<Self, [QuerySort]>(
        "sort", value: "ATTR[:asc|:desc]", help: "order by an attribute instead of relevance; repeat for ties (then bundle and identifier)",
        as: ValueConversion { (_, keys) throws(ReindexError) in
            var sort: [QuerySort] = []
            for key in keys { sort.append(try QuerySort(parsing: key)) }
            return sort
        })
    package static let after = Option<Self, String>("after", value: "CURSOR", help: "the page after this cursor (nextCursor of the previous page)")
    package static let count = Flag<Self>("count", help: "print only the exact number of matches")
    package static let fields = Option<Self, [String]>("fields", value: "A,B,…", help: "only these attributes in each result", as: .commaList)
    package static let facet = Option<Self, [String]>(
        "facet", value: "ATTR",
        help: "count the matches per value of a string attribute (contentType, domainIdentifier, bundleIdentifier, keywords, …); repeatable",
        as: .repeated)
    package static let facetTop = Option<Self, Int>("facet-top", value: "N", help: "the N most common values of each facet (default 10)", as: .positiveInteger)
    package static let markers = Option<Self, (open: String, close: String)>(
        "markers", value: "OPEN,CLOSE", help: "what marks matched words in JSON snippets (default [,])",
        as: .last { (option, text) throws(ReindexError) in
            let parts = text.split(separator: ",", maxSplits: 1, omittingEmptySubsequences: false).map(String.init)
            guard parts.count == 2 else { throw ReindexError(.usage, "--\(option) \(text): expected OPEN,CLOSE (e.g. '<b>,</b>')") }
            return (parts[0], parts[1])
        })
    package static let arguments: [any DeclaredArgument<Self>] = [query]
    package static let options: [any DeclaredOption<Self>] = [bundle, domain, limit, sort, after, count, fields, facet, facetTop, markers]

    package let query: String
    package let bundle: String?
    package let domain: String?
    package let limit: Int
    package let sort: [QuerySort]
    package let after: String?
    package let count: Bool
    package let fields: [String]?
    package let facets: [String]
    package let facetTop: Int
    package let markers: (open: String, close: String)?

    package init(_ arguments: Arguments<Self>) throws(ReindexError) {
        query = arguments[Self.query]
        bundle = try arguments.value(Self.bundle)
        domain = try arguments.value(Self.domain)
        limit = try arguments.value(Self.limit, default: 20)
        sort = try arguments.value(Self.sort, default: [])
        after = try arguments.value(Self.after)
        count = arguments[Self.count]
        fields = try arguments.value(Self.fields)
        facets = try arguments.value(Self.facet, default: [])
        facetTop = try arguments.value(Self.facetTop, default: 10)
        markers = try arguments.value(Self.markers)
    }

    package func run(_ context: CommandContext) throws -> Int32 {
        var options = QueryOptions(bundle: bundle, domain: domain, limit: limit, after: after)
        options.sort = sort
        // Whether the cursor suits this query's order, the store checks.
        if let after = options.after { try QueryCursor.check(after) }
        let terminal = !context.json && isatty(1) == 1 && context.environment["NO_COLOR"] == nil
        if terminal {
            options.snippetMarkers = ("\u{1B}[1;7m", "\u{1B}[0m")
        } else if let markers {
            options.snippetMarkers = (markers.open, markers.close)
        } else if !context.json {
            options.snippetMarkers = ("", "")
        }
        let store = try context.openQueries()
        if count {
            let n = try store.count(query, options: options)
            if context.json { Console.json(.object([("count", .integer(Int64(n)))])) } else { Console.out(String(n)) }
            return 0
        }
        if !facets.isEmpty {
            var members: [(String, JSONValue)] = []
            for attribute in facets {
                let counts = try store.facet(query, attribute: attribute, top: facetTop, options: options)
                if context.json {
                    members.append((attribute, .array(counts.map { .object([("value", .string($0.value)), ("count", .integer(Int64($0.count)))]) })))
                } else {
                    Console.out("\(attribute):")
                    if counts.isEmpty { Console.out("  (no values)") }
                    for entry in counts { Console.out("  \(entry.count)\t\(entry.value)") }
                }
            }
            if context.json { Console.json(.object([("facets", .object(members))])) }
            return 0
        }
        var page = try store.query(query, options: options)
        if let fields {
            for n in page.results.indices {
                let kept = (page.results[n].attributes.objectValue ?? []).filter { fields.contains($0.0) }
                page.results[n].attributes = .object(kept)
            }
        }
        if context.json {
            Console.json(.object([("results", .array(page.results.map(\.json))), ("nextCursor", page.nextCursor.map(JSONValue.string) ?? .null)]))
            return 0
        }
        // After a cursor, an empty page is the end of the pages, not a query that finds nothing.
        ResultList.print(page.results, context: context,
                         empty: options.after == nil ? "No items match '\(query)'." : "No more items match '\(query)' after this cursor.")
        if let next = page.nextCursor { Console.out("(more: --after \(next))") }
        return 0
    }
}
