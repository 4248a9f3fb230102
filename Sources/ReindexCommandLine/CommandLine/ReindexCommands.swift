import ReindexHost
import ReindexStore
import ReindexSystem
import ReindexProtocol

/// The `reindex` command line: the table of command types, in the order help lists them. Each
/// command declares its own arguments and options (`Commands/*.swift`); the global ones are
/// `Global`'s. Parsing, help, completions and the manual page are all derived from this table.
package enum ReindexCommands {
    package static let table: [any ReindexCommand.Type] = [
        ListCommand.self, PathsCommand.self, ValidateCommand.self, RunCommand.self, DebugCommand.self, RunsCommand.self, ServeCommand.self,
    ] + desktop + [
        SearchCommand.self, ShowCommand.self, ItemsCommand.self, StatusCommand.self, PutCommand.self, DeleteCommand.self,
        CheckCommand.self, ResetCommand.self, NewCommand.self, CompletionsCommand.self, HelpCommand.self,
    ]

    /// Desktop search answers over D-Bus (sd-bus): Linux only.
    #if os(Linux)
    private static let desktop: [any ReindexCommand.Type] = [DesktopCommand.self]
    #else
    private static let desktop: [any ReindexCommand.Type] = []
    #endif

    package static let global: [OptionSpec] = Global.options.map(\.spec)

    /// Every command's declaration, in the table's order.
    package static let all: [CommandSpec] = table.map { $0.spec }

    static let summary = "discovers reindexing extensions, keeps a searchable index and asks extensions to regenerate it"

    package static let parser = ArgumentParser(toolName: "reindex", summary: summary, globalOptions: global, commands: all)

    /// The parser a start uses: it builds the declaration of the command named on the command
    /// line only, not all of them (`reindex --version` builds none).
    package static let startParser = ArgumentParser(
        toolName: "reindex", summary: summary, globalOptions: global, commandNames: table.map { $0.name }, lookup: spec(named:))

    /// The declaration of the command of this name.
    @Sendable static func spec(named name: String) -> CommandSpec? {
        command(named: name)?.spec
    }

    /// The command type of this name.
    package static func command(named name: String) -> (any ReindexCommand.Type)? {
        table.first { $0.name == name }
    }
}
