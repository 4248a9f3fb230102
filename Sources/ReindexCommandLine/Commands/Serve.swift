import ReindexProtocol
import ReindexStore
import ReindexSystem
import ReindexHost

extension Reindex {
    static func serve(_ context: CommandContext) throws -> Int32 {
        var options = ServeOptions()
        options.environment = context.environment
        options.concurrency = try context.positiveInteger("concurrency", default: 2)
        options.removalGraceSeconds = try context.seconds("removal-grace", default: 3600)
        options.rescanSeconds = try context.seconds("rescan", default: 5)
        options.backoff.baseSeconds = try context.seconds("retry-base", default: 5)
        options.sandbox = try SandboxReport.options(context)
        let server = try Server(paths: context.paths, options: options)
        return server.run()
    }
}
