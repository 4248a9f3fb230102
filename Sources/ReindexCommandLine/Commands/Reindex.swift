import ReindexHost
import ReindexStore
import ReindexSystem
import ReindexProtocol
import Foundation

/// The `reindex` command, run by the executable's `main.swift`: parses the command line against
/// `ReindexCommands.table`, reads it into the chosen command's typed value and runs it. Each
/// command lives in its own file; the engine's work is done by ReindexHost.
package enum Reindex {
    package static func main() -> Never {
        // Orphans of the extensions come to us, so none can outlive its run by leaving its group.
        ExtensionProcess.adoptOrphans()
        // Past a file-size limit (ulimit -f) a write should fail with EFBIG, which the store
        // reports, rather than the signal killing the host in the middle of a commit.
        signal(SIGXFSZ, SIG_IGN)
        let arguments = Array(CommandLine.arguments.dropFirst())
        // Only the named command's declaration is built; the whole tool's help builds them all.
        let parser = ReindexCommands.startParser
        let parsed: ParsedArguments
        do {
            parsed = try parser.parse(arguments)
        } catch {
            Console.report(error)
            exit(error.code.exitCode)
        }
        let globals = parsed.globals
        if globals[Global.version] {
            Console.out("reindex \(ReindexVersion.string) (protocol versions \(ReindexVersion.protocolVersions.map(String.init).joined(separator: ", ")))")
            exit(0)
        }
        guard let name = parsed.command, let command = ReindexCommands.command(named: name) else {
            if globals[Global.help] { Console.out(ReindexCommands.parser.usage()); exit(0) }
            Console.err(ReindexCommands.parser.usage())
            Console.report(ReindexError(.usage, "no command given"))
            exit(64)
        }
        if globals[Global.help] {
            Console.out(parser.usage(command.spec))
            exit(0)
        }
        exit(run(command, parsed, environment: ProcessInfo.processInfo.environment))
    }

    /// Reads the command line into `Command`'s value and runs it; errors become their exit codes.
    static func run<Command: ReindexCommand>(_ type: Command.Type, _ parsed: ParsedArguments, environment: [String: String]) -> Int32 {
        let arguments = parsed.arguments(for: Command.self)
        var index: String? = nil
        do {
            let context = try CommandContext(arguments, environment: environment)
            index = context.paths.index
            return try Command(arguments).run(context)
        } catch let error as ReindexError {
            Console.report(error)
            return error.code.exitCode
        } catch let error as StoreError {
            // The index failed under the command: damaged, busy past the timeout, disk full,
            // a lost connection; its code decides the exit code (StoreError.explained).
            let explained = Index.explain(error, index: index ?? "")
            Console.report(explained)
            return explained.code.exitCode
        } catch {
            Console.report(ReindexError(.internal, "\(error)"))
            return 70
        }
    }
}
