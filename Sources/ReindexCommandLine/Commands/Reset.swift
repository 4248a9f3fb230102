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
        if context.paths.isPostgreSQL { return try resetPostgreSQL(context) }
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

extension ResetCommand {
    /// `reindex reset` of a PostgreSQL index: its tables emptied in one transaction, the rebuilds queued.
    func resetPostgreSQL(_ context: CommandContext) throws -> Int32 {
        let store = try context.openIndex()
        guard let fleet = store as? PostgresStore else { return 70 }
        let erased: Int
        do { erased = try fleet.erase() } catch {
            throw PostgresStore.explain(error, index: store.displayLocation, doing: "reset failed")
        }
        let queued = context.queueIndexLost(store)
        if context.json {
            Console.json(.object([("index", .string(store.displayLocation)), ("keptAs", .null), ("erased", .integer(Int64(erased))),
                                  ("queued", .integer(Int64(queued)))]))
        } else {
            Console.out("\(store.displayLocation): erased \(erased) item(s) (nothing is kept aside in PostgreSQL); queued reindexAll (indexLost) for \(queued) bundle(s)")
        }
        return 0
    }
}
