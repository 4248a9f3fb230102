import ReindexStore
import ReindexSystem
import ReindexHost
import ReindexProtocol

/// `reindex completions bash|zsh|fish`: prints the completion script (`CompletionScript`),
/// generated from the command table.
package struct CompletionsCommand: ReindexCommand {
    package static let name = "completions"
    package static let summary = "print a shell completion script for bash, zsh or fish"
    package static let discussion = """
            Commands, options and known option values are completed; bundle identifiers are asked of
            'reindex list --json' at completion time. Install, for example:
              bash: reindex completions bash > ~/.local/share/bash-completion/completions/reindex
              zsh:  reindex completions zsh > ~/.zfunc/_reindex   (with fpath+=~/.zfunc before compinit)
              fish: reindex completions fish > ~/.config/fish/completions/reindex.fish
            """

    package static let shell = Argument<Self, String>(
        "SHELL", help: "bash, zsh or fish", completion: .values(CompletionScript.Shell.allCases.map(\.rawValue)))
    package static let arguments: [any DeclaredArgument<Self>] = [shell]

    package let shell: CompletionScript.Shell

    package init(_ arguments: Arguments<Self>) throws(ReindexError) {
        let name = arguments[Self.shell]
        guard let shell = CompletionScript.Shell(rawValue: name) else {
            throw ReindexError(.usage, "no completions for shell '\(name)'; shells: \(CompletionScript.Shell.allCases.map(\.rawValue).joined(separator: ", "))")
        }
        self.shell = shell
    }

    package func run(_ context: CommandContext) throws -> Int32 {
        Console.writeAll(1, Array(CompletionScript.script(for: shell, parser: ReindexCommands.parser).utf8))
        return 0
    }
}
