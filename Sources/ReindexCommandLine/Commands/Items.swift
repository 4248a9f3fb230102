import ReindexStore
import ReindexSystem
import ReindexHost
import ReindexProtocol

/// `reindex items BUNDLE_ID`: what is indexed for one bundle.
public struct ItemsCommand: ReindexCommand {
    public static let name = "items"
    public static let summary = "what is indexed for one bundle"

    public static let bundle = Argument<Self, String>("BUNDLE_ID", help: "the bundle")
    public static let domain = Option<Self, String>("domain", value: "D", help: "only items in this domain or its subdomains")
    public static let limit = Option<Self, Int>("limit", value: "N", help: "at most N items (default 100)", as: .positiveInteger)
    public static let arguments: [any DeclaredArgument<Self>] = [bundle]
    public static let options: [any DeclaredOption<Self>] = [domain, limit]

    public let bundle: String
    public let domain: String?
    public let limit: Int

    public init(_ arguments: Arguments<Self>) throws(ReindexError) {
        bundle = arguments[Self.bundle]
        domain = try arguments.value(Self.domain)
        limit = try arguments.value(Self.limit, default: 100)
    }

    public func run(_ context: CommandContext) throws -> Int32 {
        let store = try context.openStore()
        let results = try store.items(bundle: bundle, domain: domain, limit: limit)
        ResultList.print(results, context: context, empty: "No items are indexed for \(bundle).")
        return 0
    }
}
