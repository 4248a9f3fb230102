import ReindexStore
import ReindexSystem
import ReindexHost
import ReindexProtocol

/// The list of results `search` and `items` print: the contract's JSON, or a title line and a
/// snippet (or description) per result.
enum ResultList {
    static func print(_ results: [SearchResult], context: CommandContext, empty: String) {
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
