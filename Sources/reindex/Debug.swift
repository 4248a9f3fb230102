import ReindexHost

extension Reindex {
    static func debug(_ context: CommandContext) throws -> Int32 {
        try DebugRun.execute(context: context)
    }
}
