import ReindexStore
import ReindexSystem
import ReindexHost
import ReindexProtocol

/// `reindex items BUNDLE_ID`: what is indexed for one bundle, by identifier, a page at a time.
package struct ItemsCommand: ReindexCommand {
    package static let name = "items"
    package static let summary = "what is indexed for one bundle"
    package static let discussion = """
            Items come by identifier. A page holds at most --limit items; when more exist, JSON has their
            cursor in nextCursor and text ends with a line '(more: --after CURSOR)': pass it back as
            --after CURSOR for the next page. Paging returns every item once while nothing changes.
            Exit status: 0 (also when the bundle has no items), 65 a cursor this reindex did not write.
            """

    package static let bundle = Argument<Self, String>("BUNDLE_ID", help: "the bundle")
    package static let domain = Option<Self, String>("domain", value: "D", help: "only items in this domain or its subdomains")
    package static let limit = Option<Self, Int>("limit", value: "N", help: "at most N items (default 100)", as: .positiveInteger)
    package static let after = Option<Self, String>("after", value: "CURSOR", help: "the page after this cursor (nextCursor of the previous page)")
    package static let arguments: [any DeclaredArgument<Self>] = [bundle]
    package static let options: [any DeclaredOption<Self>] = [domain, limit, after]

    package let bundle: String
    package let domain: String?
    package let limit: Int
    package let after: String?

    package init(_ arguments: Arguments<Self>) throws(ReindexError) {
        bundle = arguments[Self.bundle]
        domain = try arguments.value(Self.domain)
        limit = try arguments.value(Self.limit, default: 100)
        after = try arguments.value(Self.after)
    }

    package func run(_ context: CommandContext) throws -> Int32 {
        if let after, !QueryCursor.isValid(after) {
            throw ReindexError(.invalidData, "--after: not a cursor this reindex wrote (use nextCursor of the previous page)")
        }
        // An empty query with the bundle as restriction: every live item, by bundle and
        // identifier, paged on that order like search's pages.
        let store = try context.openQueries()
        let page = try store.query("", options: QueryOptions(bundle: bundle, domain: domain, limit: limit, after: after))
        if context.json {
            Console.json(.object([("results", .array(page.results.map(\.json))), ("nextCursor", page.nextCursor.map(JSONValue.string) ?? .null)]))
            return 0
        }
        ResultList.print(page.results, context: context, empty: after == nil ? "No items are indexed for \(bundle)." : "No more items for \(bundle).")
        if let next = page.nextCursor { Console.out("(more: --after \(next))") }
        return 0
    }
}
