import ReindexStore
import ReindexSystem
import ReindexHost
import ReindexProtocol

extension Reindex {
    static func run(_ context: CommandContext) throws -> Int32 {
        let bundle = try context.findBundle(context.arguments.positional[0])
        let selection = try RequestSelection(context)
        let store = try context.openStore()
        if context.arguments.flag("queue") {
            let request = try store.enqueue(bundleIdentifier: bundle.identifier, kind: selection.kind, identifiers: selection.identifiers,
                                            reason: selection.reason, maxAttempts: bundle.manifest.retry.maxAttempts)
            if context.json {
                Console.json(.object([("bundleIdentifier", .string(bundle.identifier)), ("request", .string(request.kind.rawValue)),
                                      ("outcome", "queued"), ("requestId", .integer(request.id))]))
            } else {
                Console.out("\(bundle.identifier): queued \(request.kind.rawValue) as request \(request.id) for 'reindex serve'")
            }
            return 0
        }
        var options = SessionOptions()
        options.sandbox = try SandboxReport.options(context)
        return try ForcedRun.execute(context: context, bundle: bundle, selection: selection, options: options, store: store).status
    }
}
