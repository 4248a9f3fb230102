import ReindexStore
import ReindexSystem
import ReindexHost
import ReindexProtocol

/// `reindex reset`: erases the index (keeping the old file aside) and queues reindexAll
/// (indexLost) for every bundle.
package struct ResetCommand: ReindexCommand {
    package static let name = "reset"
    package static let summary = "erase the index and queue reindexAll (indexLost) for every bundle"
    package static let discussion = "The old database is kept beside the new one with a timestamp. 'reindex serve' (or 'reindex run') then rebuilds it."

    package init(_ arguments: Arguments<Self>) {}

    package func run(_ context: CommandContext) throws -> Int32 {
        let aside = try IndexStore.erase(path: context.paths.index)
        let store = try IndexStore.open(path: context.paths.index)
        let queued = context.queueIndexLost(store)
        if context.json {
            Console.json(.object([("index", .string(store.path)), ("keptAs", aside.map(JSONValue.string) ?? .null), ("queued", .integer(Int64(queued)))]))
        } else {
            Console.out("\(store.path): erased" + (aside.map { " (the old database is kept as \($0))" } ?? "") + "; queued reindexAll (indexLost) for \(queued) bundle(s)")
        }
        return 0
    }
}
