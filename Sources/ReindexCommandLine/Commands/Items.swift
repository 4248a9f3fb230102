import ReindexStore
import ReindexSystem
import ReindexHost
import ReindexProtocol

/// `reindex items BUNDLE_ID`: what is indexed for one bundle.
package struct ItemsCommand: ReindexCommand {
    package static let name = "items"
    package static let summary = "what is indexed for one bundle"

    package static let bundle = Argument<Self, String>("BUNDLE_ID", help: "the bundle")
    package static let domain = Option<Self, String>("domain", value: "D", help: "only items in this domain or its subdomains")
    package static let limit = Option<Self, Int>("limit", value: "N", help: "at most N items (default 100)", as: .positiveInteger)
    package static let arguments: [any DeclaredArgument<Self>] = [bundle]
    package static let options: [any DeclaredOption<Self>] = [domain, limit]

    package let bundle: String
    package let domain: String?
    package let limit: Int

    package init(_ arguments: Arguments<Self>) throws(ReindexError) {
        bundle = arguments[Self.bundle]
        domain = try arguments.value(Self.domain)
        limit = try arguments.value(Self.limit, default: 100)
    }

    package func run(_ context: CommandContext) throws -> Int32 {
        let store = try context.openIndex()
        let results = try store.items(bundle: bundle, domain: domain, limit: limit, now: Clock.now())
        ResultList.print(results, context: context, empty: "No items are indexed for \(bundle).")
        return 0
    }
}
