import ReindexHost
import ReindexStore
import ReindexSystem
import ReindexProtocol

/// A command of `reindex`: it declares its arguments and options once, as typed constants
/// (`static let limit = Option<SearchCommand, Int>(…)`), lists them in `arguments` and `options`
/// (the order of help), parses into a value of itself, and runs.
///
/// The phantom type parameter keeps a command to its own declarations: `Arguments<SearchCommand>`
/// reads `Option<SearchCommand, _>`, `Flag<SearchCommand>` and the `Global` options, and nothing
/// else compiles. Help, usage, completions and the manual page are derived from `spec`.
package protocol ReindexCommand: Sendable {
    static var name: String { get }
    static var summary: String { get }
    /// Text after the options in help and the manual page; empty by default.
    static var discussion: String { get }
    static var arguments: [any DeclaredArgument<Self>] { get }
    static var options: [any DeclaredOption<Self>] { get }

    /// Reads the parsed command line; conversion errors are usage errors (exit 64).
    init(_ arguments: Arguments<Self>) throws(ReindexError)
    /// Does the work; returns the exit status.
    func run(_ context: CommandContext) throws -> Int32
    /// The command only reads the index: it never creates one (a missing index is an error
    /// naming the path). Declared for each such command in `ReindexCommand+IndexAccess.swift`.
    static var onlyReadsIndex: Bool { get }
}

extension ReindexCommand {
    package static var discussion: String { "" }
    package static var arguments: [any DeclaredArgument<Self>] { [] }
    package static var options: [any DeclaredOption<Self>] { [] }
    package static var onlyReadsIndex: Bool { false }

    /// The declaration the parser, help, completions and the manual page read.
    package static var spec: CommandSpec {
        CommandSpec(name, summary: summary, arguments: arguments.map(\.spec), options: options.map(\.spec), discussion: discussion)
    }
}
