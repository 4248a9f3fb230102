import ReindexStore
import ReindexSystem
import ReindexHost
import ReindexProtocol

/// `reindex help [COMMAND] [--man]`: the help of the tool or of one command, or the manual page
/// (`ManPage`), all from the command table.
package struct HelpCommand: ReindexCommand {
    package static let name = "help"
    package static let summary = "show the help of the tool or of one command, or the manual page"

    package static let command = Argument<Self, String?>("COMMAND", help: "the command to explain", completion: .command)
    package static let man = Flag<Self>("man", help: "print the manual page (roff) instead; read it with: reindex help --man | man -l -")
    package static let arguments: [any DeclaredArgument<Self>] = [command]
    package static let options: [any DeclaredOption<Self>] = [man]

    package let command: String?
    package let man: Bool

    package init(_ arguments: Arguments<Self>) {
        command = arguments[Self.command]
        man = arguments[Self.man]
    }

    package func run(_ context: CommandContext) throws -> Int32 {
        let parser = ReindexCommands.parser
        if man {
            Console.writeAll(1, Array(ManPage.roff(parser).utf8))
            return 0
        }
        guard let name = command else {
            Console.out(parser.usage())
            return 0
        }
        guard let command = ReindexCommands.command(named: name) else {
            let names = ReindexCommands.table.map { $0.name }
            throw ReindexError(.usage, "unknown command '\(name)'\(Suggestion.clause(for: name, among: names)); commands: \(names.joined(separator: ", "))")
        }
        Console.out(parser.usage(command.spec))
        return 0
    }
}
