import ReindexHost
import ReindexProtocol

extension Reindex {
    static func validate(_ context: CommandContext) throws -> Int32 {
        let directory = context.arguments.positional[0]
        guard FileSystem.isDirectory(directory) else {
            throw ReindexError(.bundleNotFound, "\(directory): no such bundle directory")
        }
        let bundle: DiscoveredBundle
        switch Discovery.load(directory: directory) {
        case .success(let found): bundle = found
        case .failure(let problem):
            throw ReindexError(.invalidData, problem.reason)
        }
        if context.arguments.flag("run") {
            throw ReindexError(.usage, "validate --run is not available in this build yet")
        }
        if context.json {
            Console.json(.object([("valid", true), ("bundleIdentifier", .string(bundle.identifier)),
                                  ("path", .string(bundle.directory)), ("executable", .string(bundle.executablePath)),
                                  ("manifest", bundle.manifest.json)]))
        } else {
            Console.out("\(bundle.directory): valid bundle \(bundle.identifier) \(bundle.manifest.version), executable \(bundle.executablePath)")
        }
        return 0
    }
}
