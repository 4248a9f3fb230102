import ReindexStore
import ReindexSystem
import ReindexHost
import ReindexProtocol

extension Reindex {
    static func help(_ context: CommandContext) throws -> Int32 {
        let parser = ReindexCommands.parser
        if context.arguments.flag("man") {
            Console.writeAll(1, Array(ManPage.roff(parser).utf8))
            return 0
        }
        guard let name = context.arguments.positional.first else {
            Console.out(parser.usage())
            return 0
        }
        guard let spec = parser.command(named: name) else {
            throw ReindexError(.usage, "unknown command '\(name)'; commands: \(parser.commands.map(\.name).joined(separator: ", "))")
        }
        Console.out(parser.usage(spec))
        return 0
    }
}
