import ReindexStore
import ReindexSystem
import ReindexHost
import ReindexProtocol

/// `reindex paths`: the search path in order, which directories exist, the index and the logs.
package struct PathsCommand: ReindexCommand {
    package static let name = "paths"
    package static let summary = "show the search path in order, which directories exist, and the index and log locations"

    package init(_ arguments: Arguments<Self>) {}

    package func run(_ context: CommandContext) throws -> Int32 {
        let paths = context.paths
        if context.json {
            Console.json(.object([
                ("searchPath", .array(paths.searchPath.map { entry in
                    .object([("directory", .string(entry.directory)), ("source", .string(entry.source.rawValue)),
                             ("exists", .bool(FileSystem.isDirectory(entry.directory)))])
                })),
                ("index", .string(paths.indexDisplayName)),
                ("indexSource", .string(paths.indexSource)),
                ("logs", .string(paths.logs)),
                ("recordings", .string(paths.recordings)),
                ("data", .string(paths.data)),
                ("sandbox", SandboxSupport.current.json),
            ]))
            return 0
        }
        Console.out("Search path (first match wins for a bundle identifier):")
        for (n, entry) in paths.searchPath.enumerated() {
            let state = FileSystem.isDirectory(entry.directory) ? "exists" : "missing"
            Console.out("  \(n + 1). \(entry.directory)  [\(entry.source.rawValue), \(state)]")
        }
        Console.out("Every subdirectory of these that holds a manifest.json is a bundle.")
        Console.out("Index: \(paths.indexDisplayName)  [\(paths.indexSource)]")
        Console.out("Logs:  \(paths.logs)")
        Console.out("Recorded sessions: \(paths.recordings)  [each bundle's in <bundle> in it; 'reindex runs BUNDLE_ID']")
        Console.out("Data:  \(paths.data)  [each bundle's REINDEX_DATA_DIR is <bundle> in it]")
        Console.out("Sandbox: \(SandboxSupport.current)")
        return 0
    }
}
