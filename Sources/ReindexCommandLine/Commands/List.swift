import ReindexStore
import ReindexSystem
import ReindexHost
import ReindexProtocol

/// `reindex list`: every discovered bundle, and the shadowed and invalid ones with their reason.
package struct ListCommand: ReindexCommand {
    package static let name = "list"
    package static let summary = "list every discovered bundle, and the shadowed and invalid ones with their reason"
    package static let discussion = "Exit status: 0 when discovery ran, even if some bundles are invalid (they are listed under problems)."

    package init(_ arguments: Arguments<Self>) {}

    package func run(_ context: CommandContext) throws -> Int32 {
        let result = Discovery.discover(context.paths)
        if context.json {
            Console.json(.object([
                ("bundles", .array(result.bundles.map { bundle in
                    .object([
                        ("bundleIdentifier", .string(bundle.identifier)),
                        ("displayName", .string(bundle.manifest.displayName)),
                        ("version", .string(bundle.manifest.version)),
                        ("path", .string(bundle.directory)),
                        ("executable", .string(bundle.executablePath)),
                        ("sandboxed", .bool(bundle.manifest.sandbox.isEnabled)),
                        ("priority", .string(bundle.manifest.priority.rawValue)),
                        ("warnings", .array((bundle.warnings + SandboxReport.bundleWarnings(bundle)).map(JSONValue.string))),
                    ])
                })),
                ("problems", .array(result.problems.map { problem in
                    var members: [(String, JSONValue)] = [("path", .string(problem.path)), ("reason", .string(problem.reason))]
                    if let id = problem.bundleIdentifier { members.append(("bundleIdentifier", .string(id))) }
                    return .object(members)
                })),
            ]))
            return 0
        }
        if result.bundles.isEmpty {
            Console.out("No bundles found on the search path (see 'reindex paths').")
        }
        for bundle in result.bundles {
            Console.out("\(bundle.identifier)  \(bundle.manifest.displayName) \(bundle.manifest.version)")
            Console.out("    \(bundle.directory)")
            for warning in bundle.warnings { Console.out("    warning: \(warning)") }
            for warning in SandboxReport.bundleWarnings(bundle) { Console.out("    warning: \(warning)") }
        }
        if !result.problems.isEmpty {
            Console.out("\nProblems:")
            for problem in result.problems {
                Console.out("  \(problem.path)\n    \(problem.reason)")
            }
        }
        return 0
    }
}
