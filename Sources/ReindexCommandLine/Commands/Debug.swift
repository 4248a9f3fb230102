import ReindexProtocol
import ReindexStore
import ReindexSystem
import ReindexHost

extension Reindex {
    static func debug(_ context: CommandContext) throws -> Int32 {
        try DebugRun.execute(context: context)
    }
}
