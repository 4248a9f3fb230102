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

/// The options `run` and `debug` share: what to ask for, why, and whether to resume. Declared
/// here once, typed for each command that conforms.
package protocol RequestCommand: ReindexCommand {}

extension RequestCommand {
    package static var all: Flag<Self> { Flag("all", help: "reindex everything (reindexAll; the default)", exclusiveGroup: "request") }
    package static var ids: Option<Self, [String]> {
        Option("ids", value: "ID[,ID…]", help: "reindex these items (reindexItems)", exclusiveGroup: "request", as: .commaList)
    }
    package static var idsFrom: Option<Self, String> {
        Option("ids-from", value: "FILE", help: "reindex the items listed in FILE, one per line ('-' for stdin)", exclusiveGroup: "request")
    }
    package static var resume: Flag<Self> {
        Flag("resume", help: "resume an unfinished reindexAll from its last committed batch (default: start fresh, discarding it)")
    }
    package static var reason: Option<Self, ReindexReason> {
        Option("reason", value: "R", help: "the reason sent to the extension (default forced)", completion: .values(ReindexReason.known.map(\.rawValue)),
               as: .last { _, text in ReindexReason(text) })
    }
    /// `--all | --ids | --ids-from` and `--resume`, in help's order.
    static var requestOptions: [any DeclaredOption<Self>] { [all, ids, idsFrom, resume] }

    /// What the command line asks for; `--ids-from` is read when the request is made.
    static func request(_ arguments: Arguments<Self>) throws(ReindexError) -> RequestSelection.Asked {
        let ids = try arguments.value(Self.ids)
        return RequestSelection.Asked(ids: ids, idsFrom: try arguments.value(Self.idsFrom),
                                      reason: try arguments.value(Self.reason, default: .forced), resume: arguments[Self.resume])
    }
}

/// Commands that start an extension under its sandbox: `validate`, `run`, `debug`.
package protocol SandboxedCommand: ReindexCommand {}

extension SandboxedCommand {
    package static var requireSandbox: Flag<Self> {
        Flag("require-sandbox",
             help: "refuse to run the extension unsandboxed: no Landlock here, \"sandbox\": false in its manifest, or \"network\": false the kernel cannot enforce (exit 69)")
    }
}
