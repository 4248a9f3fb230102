import ReindexStore
import ReindexSystem
import Foundation
import ReindexHost
import ReindexProtocol

extension Reindex {
    static func search(_ context: CommandContext) throws -> Int32 {
        let query = context.arguments.positional[0]
        let arguments = context.arguments
        var options = QueryOptions(bundle: arguments.value("bundle"), domain: arguments.value("domain"),
                                   limit: try context.positiveInteger("limit", default: 20), after: arguments.value("after"))
        for key in arguments.options["sort"] ?? [] { options.sort.append(try QuerySort(parsing: key)) }
        if let after = options.after, !QueryCursor.isValid(after) {
            throw ReindexError(.invalidData, "--after: not a cursor this reindex wrote (use nextCursor of the previous page)")
        }
        let terminal = !context.json && isatty(1) == 1 && context.environment["NO_COLOR"] == nil
        if terminal {
            options.snippetMarkers = ("\u{1B}[1;7m", "\u{1B}[0m")
        } else if let markers = arguments.value("markers") {
            let parts = markers.split(separator: ",", maxSplits: 1, omittingEmptySubsequences: false).map(String.init)
            guard parts.count == 2 else { throw ReindexError(.usage, "--markers \(markers): expected OPEN,CLOSE (e.g. '<b>,</b>')") }
            options.snippetMarkers = (parts[0], parts[1])
        } else if !context.json {
            options.snippetMarkers = ("", "")
        }
        let store = try context.openStore()
        if arguments.flag("count") {
            let n = try store.count(query, options: options)
            if context.json { Console.json(.object([("count", .integer(Int64(n)))])) } else { Console.out(String(n)) }
            return 0
        }
        let facets = arguments.options["facet"] ?? []
        if !facets.isEmpty {
            let top = try context.positiveInteger("facet-top", default: 10)
            var members: [(String, JSONValue)] = []
            for attribute in facets {
                let counts = try store.facet(query, attribute: attribute, top: top, options: options)
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
        if let fields = context.list("fields") {
            for n in page.results.indices {
                let kept = (page.results[n].attributes.objectValue ?? []).filter { fields.contains($0.0) }
                page.results[n].attributes = .object(kept)
            }
        }
        if context.json {
            Console.json(.object([("results", .array(page.results.map(\.json))), ("nextCursor", page.nextCursor.map(JSONValue.string) ?? .null)]))
            return 0
        }
        printResults(page.results, context: context, empty: "No items match '\(query)'.")
        if let next = page.nextCursor { Console.out("(more: --after \(next))") }
        return 0
    }

    static func show(_ context: CommandContext) throws -> Int32 {
        let bundle = context.arguments.positional[0], identifier = context.arguments.positional[1]
        let store = try context.openStore()
        guard let record = try store.item(bundle: bundle, uniqueIdentifier: identifier) else {
            throw ReindexError(.bundleNotFound, "\(bundle): no live item '\(identifier)'")
        }
        if context.json {
            Console.json(record.json)
            return 0
        }
        let r = record.result
        Console.out("\(r.title ?? r.uniqueIdentifier)  [\(r.bundleIdentifier) \(r.uniqueIdentifier)]")
        Console.out("  domain: \(r.domainIdentifier ?? "-")")
        Console.out("  expires: \(r.expiration.map { RFC3339.format($0) + (record.expired ? " (expired)" : "") } ?? "never")")
        Console.out("  generation: \(record.generation)\(record.generationCommitted.map { ", made live " + RFC3339.format($0) } ?? "")")
        for (key, value) in r.attributes.objectValue ?? [] {
            Console.out("  \(key): \(value.stringValue ?? String(decoding: JSONWriter.bytes(value), as: UTF8.self))")
        }
        return 0
    }

    static func items(_ context: CommandContext) throws -> Int32 {
        let bundle = context.arguments.positional[0]
        let limit = try context.positiveInteger("limit", default: 100)
        let store = try context.openStore()
        let results = try store.items(bundle: bundle, domain: context.arguments.value("domain"), limit: limit)
        printResults(results, context: context, empty: "No items are indexed for \(bundle).")
        return 0
    }

    static func printResults(_ results: [SearchResult], context: CommandContext, empty: String) {
        if context.json {
            Console.json(.object([("results", .array(results.map(\.json)))]))
            return
        }
        if results.isEmpty { Console.out(empty); return }
        for result in results {
            let title = result.title ?? result.uniqueIdentifier
            let line = "\(title)  [\(result.bundleIdentifier) \(result.uniqueIdentifier)]"
            Console.out(line)
            if let snippet = result.snippet {
                Console.out("    \(snippet.text)")
            } else if let description = result.attributes["contentDescription"]?.stringValue {
                Console.out("    \(description)")
            }
        }
    }
}
