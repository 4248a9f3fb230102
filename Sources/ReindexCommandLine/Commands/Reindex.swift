import ReindexHost
import ReindexStore
import ReindexSystem
import ReindexProtocol
import Foundation

/// The `reindex` command, run by the executable's `main.swift`. Each subcommand lives in its own
/// file; the engine's work is done by ReindexHost.
public enum Reindex {
    public static func main() -> Never {
        // Orphans of the extensions come to us, so none can outlive its run by leaving its group.
        ExtensionProcess.adoptOrphans()
        // Past a file-size limit (ulimit -f) a write should fail with EFBIG, which the store
        // reports, rather than the signal killing the host in the middle of a commit.
        signal(SIGXFSZ, SIG_IGN)
        let arguments = Array(CommandLine.arguments.dropFirst())
        let parser = ReindexCommands.parser
        let parsed: ParsedArguments
        do {
            parsed = try parser.parse(arguments)
        } catch {
            Console.report(error)
            exit(error.code.exitCode)
        }
        if parsed.flag("version") {
            Console.out("reindex \(ReindexVersion.string) (protocol versions \(ReindexVersion.protocolVersions.map(String.init).joined(separator: ", ")))")
            exit(0)
        }
        guard let name = parsed.command, let spec = parser.command(named: name) else {
            if parsed.flag("help") { Console.out(parser.usage()); exit(0) }
            Console.err(parser.usage())
            Console.report(ReindexError(.usage, "no command given"))
            exit(64)
        }
        if parsed.flag("help") {
            Console.out(parser.usage(spec))
            exit(0)
        }
        let context = CommandContext(arguments: parsed, environment: ProcessInfo.processInfo.environment)
        do {
            let status = try run(name, context)
            exit(status)
        } catch let error as ReindexError {
            Console.report(error)
            exit(error.code.exitCode)
        } catch let error as SQLiteError {
            // The index failed under the command: damaged, busy past the timeout, disk full.
            let explained = IndexStore.explain(error, index: context.paths.index)
            Console.report(explained)
            exit(explained.code.exitCode)
        } catch {
            Console.report(ReindexError(.internal, "\(error)"))
            exit(70)
        }
    }

    static func run(_ name: String, _ context: CommandContext) throws -> Int32 {
        switch name {
        case "list": return try list(context)
        case "paths": return try paths(context)
        case "validate": return try validateWithWarnings(context)
        case "run": return try run(context)
        case "debug": return try debug(context)
        case "serve": return try serve(context)
        case "search": return try search(context)
        case "show": return try show(context)
        case "items": return try items(context)
        case "status": return try status(context)
        case "put": return try put(context)
        case "delete": return try delete(context)
        case "check": return try check(context)
        case "reset": return try reset(context)
        case "new": return try new(context)
        case "completions": return try completions(context)
        case "help": return try help(context)
        default: throw ReindexError(.usage, "unknown command '\(name)'")
        }
    }
}
