import ReindexStore
import ReindexSystem
import ReindexHost
import ReindexProtocol

/// `reindex reset`: erases the index (keeping the old file aside) and queues reindexAll
/// (indexLost) for every bundle.
package struct ResetCommand: ReindexCommand {
    package static let name = "reset"
    package static let summary = "erase the index and queue reindexAll (indexLost) for every bundle"
    package static let discussion = """
            The old database is kept beside the new one with a timestamp. 'reindex serve' (or 'reindex run') then rebuilds it.
            A PostgreSQL index is erased in its schema, in one transaction (searches see the old index or the empty one);
            nothing is kept aside there: the database's backups are the way back. It waits up to 10 seconds for
            transactions in progress (exit 75 if they hold on).
            """

    package init(_ arguments: Arguments<Self>) {}

    package func run(_ context: CommandContext) throws -> Int32 {
        let erased = try Index.erase(context.paths.index, environment: context.environment)
        let store = erased.store
        let queued = context.queueIndexLost(store)
        if context.json {
            var members: [(String, JSONValue)] = [("index", .string(store.displayLocation)), ("keptAs", erased.keptAs.map(JSONValue.string) ?? .null)]
            if let items = erased.erasedItems { members.append(("erased", .integer(Int64(items)))) }
            members.append(("queued", .integer(Int64(queued))))
            Console.json(.object(members))
        } else if let items = erased.erasedItems {
            Console.out("\(store.displayLocation): erased \(items) item(s) (nothing is kept aside in PostgreSQL); queued reindexAll (indexLost) for \(queued) bundle(s)")
        } else {
            Console.out("\(store.displayLocation): erased" + (erased.keptAs.map { " (the old database is kept as \($0))" } ?? "") + "; queued reindexAll (indexLost) for \(queued) bundle(s)")
        }
        return 0
    }
}
