import ReindexStore
import ReindexSystem
import ReindexHost
import ReindexProtocol

extension Reindex {
    static func completions(_ context: CommandContext) throws -> Int32 {
        let name = context.arguments.positional[0]
        guard let shell = CompletionScript.Shell(rawValue: name) else {
            throw ReindexError(.usage, "no completions for shell '\(name)'; shells: \(CompletionScript.Shell.allCases.map(\.rawValue).joined(separator: ", "))")
        }
        Console.writeAll(1, Array(CompletionScript.script(for: shell, parser: ReindexCommands.parser).utf8))
        return 0
    }
}
