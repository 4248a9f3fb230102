import ReindexStore
import ReindexSystem
import ReindexHost
import ReindexProtocol

/// `reindex help [COMMAND] [--man]`: the help of the tool or of one command, or the manual page
/// (`ManPage`), all from the command table.
public struct HelpCommand: ReindexCommand {
    public static let name = "help"
    public static let summary = "show the help of the tool or of one command, or the manual page"

    public static let command = Argument<Self, String?>("COMMAND", help: "the command to explain", completion: .command)
    public static let man = Flag<Self>("man", help: "print the manual page (roff) instead; read it with: reindex help --man | man -l -")
    public static let arguments: [any DeclaredArgument<Self>] = [command]
    public static let options: [any DeclaredOption<Self>] = [man]

    public let command: String?
    public let man: Bool

    public init(_ arguments: Arguments<Self>) {
        command = arguments[Self.command]
        man = arguments[Self.man]
    }

    public func run(_ context: CommandContext) throws -> Int32 {
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
            throw ReindexError(.usage, "unknown command '\(name)'; commands: \(ReindexCommands.table.map { $0.name }.joined(separator: ", "))")
        }
        Console.out(parser.usage(command.spec))
        return 0
    }
}
