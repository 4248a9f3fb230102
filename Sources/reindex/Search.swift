import ReindexHost
import ReindexProtocol

extension Reindex {
    static func search(_ context: CommandContext) throws -> Int32 {
        let query = context.arguments.positional[0]
        let limit = try context.positiveInteger("limit", default: 20)
        let store = try context.openStore()
        let results = try store.search(query, bundle: context.arguments.value("bundle"), domain: context.arguments.value("domain"), limit: limit)
        printResults(results, context: context, empty: "No items match '\(query)'.")
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
            if let description = result.attributes["contentDescription"]?.stringValue {
                Console.out("    \(description)")
            }
        }
    }
}
