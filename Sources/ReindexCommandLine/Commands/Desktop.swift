#if os(Linux)
import Foundation
import ReindexDesktop
import ReindexHost
import ReindexProtocol
import ReindexStore
import ReindexSystem

/// `reindex desktop serve|install|uninstall`: every indexed item in GNOME Shell's overview search
/// and in KRunner, over the session bus (`DesktopService`), and the files that register it.
package struct DesktopCommand: ReindexCommand {
    package static let name = "desktop"
    package static let summary = "search the index from GNOME Shell's overview and KRunner (serve, install, uninstall)"
    package static let discussion = """
            serve: owns org.reindexhost.SearchProvider on the session bus, exporting GNOME Shell's
            org.gnome.Shell.SearchProvider2 at /org/reindexhost/SearchProvider and KRunner's org.kde.krunner1 at
            /org/reindexhost/KRunner, until SIGTERM or SIGINT (exit 0, name released). What is typed is searched
            as 'reindex search' does (words, the last also as a prefix; the query language; expired items left
            out); picking a result opens it as its bundle's manifest declares ("open": {"url": …} or
            {"command": […]}, never through a shell), else opens its contentURL with xdg-open. Exit 69 when the
            bus cannot be reached or another process owns the name.
            install: writes, under $XDG_DATA_HOME, gnome-shell/search-providers/org.reindexhost.SearchProvider.ini,
            krunner/dbusplugins/org.reindexhost.SearchProvider.desktop, dbus-1/services/org.reindexhost.SearchProvider.service
            (so the bus starts 'reindex desktop serve' on the first search, with this --index and --extensions-path)
            and applications/org.reindexhost.SearchProvider.desktop. uninstall removes them. --json: {"files":[PATH…]}.
            "Show all results" (LaunchSearch) runs 'reindex search -- TERMS' in a terminal: --terminal, else
            $TERMINAL -e, else the first of x-terminal-emulator -e, gnome-terminal --, konsole -e, xterm -e.
            A search overtaken by the caller's next one before it ran is answered with no results, unsearched.
            See docs/DESKTOP.md.
            """

    package enum Action: String, CaseIterable, Sendable {
        case serve, install, uninstall
    }

    package static let action = Argument<Self, String>(
        "ACTION", help: "serve, install or uninstall", completion: .values(Action.allCases.map(\.rawValue)))
    package static let arguments: [any DeclaredArgument<Self>] = [action]
    package static let terminal = Option<Self, String>(
        "terminal", value: "COMMAND",
        help: "serve: the terminal that shows \"all results\", with the option that runs a command, e.g. \"kitty --\" (default $TERMINAL -e, else x-terminal-emulator -e); install writes it into the service")
    package static let options: [any DeclaredOption<Self>] = [terminal]

    package let action: Action
    package let terminal: [String]?

    package init(_ arguments: Arguments<Self>) throws(ReindexError) {
        let name = arguments[Self.action]
        guard let action = Action(rawValue: name) else {
            throw ReindexError(.usage, "no desktop action '\(name)'; actions: \(Action.allCases.map(\.rawValue).joined(separator: ", "))")
        }
        self.action = action
        self.terminal = try arguments.value(Self.terminal).map { $0.split(whereSeparator: \.isWhitespace).map(String.init) }
        if let terminal, terminal.isEmpty { throw ReindexError(.usage, "--terminal needs a program, e.g. --terminal \"xterm -e\"") }
    }

    package func run(_ context: CommandContext) throws -> Int32 {
        switch action {
        case .serve:
            let catalog = DesktopCatalog(
                openIndex: { () throws -> any IndexQueries in try context.openQueries() },
                identity: { Index.identity(context.paths.index) },
                discover: { Discovery.discover(context.paths) },
                log: Self.log,
                searchCommand: Self.reindexCommand(context),
                terminal: terminal)
            return try DesktopService.serve(catalog: catalog, log: Self.log)
        case .install, .uninstall:
            let installation = DesktopInstallation(dataHome: Self.dataHome(context.paths), serveCommand: Self.serveCommand(context, terminal: terminal))
            let files = try action == .install ? installation.install() : installation.uninstall()
            if context.json {
                Console.json(.object([("files", .array(files.map(JSONValue.string)))]))
            } else {
                for file in files { Console.out("\(action == .install ? "wrote" : "removed") \(file)") }
                if action == .install {
                    Console.out("Log out and back in (or restart GNOME Shell / KRunner) for the desktop to find the provider.")
                }
            }
            return 0
        }
    }

    /// `$XDG_DATA_HOME` as `HostPaths` resolved it (its data directory is `<data home>/reindex/data`).
    static func dataHome(_ paths: HostPaths) -> String {
        FileSystem.directoryName(FileSystem.directoryName(paths.data))
    }

    /// This executable with the index and search path given to this command (not the defaults,
    /// which the service finds itself).
    static func reindexCommand(_ context: CommandContext) -> [String] {
        var command = [executablePath()]
        if context.paths.indexSource != "default" { command += ["--index", context.paths.index] }
        let given = context.paths.searchPath.filter { $0.source == .option || $0.source == .environment }.map(\.directory)
        if !given.isEmpty { command += ["--extensions-path", given.joined(separator: ":")] }
        return command
    }

    /// `reindexCommand`, then `desktop serve` (with the terminal, when one was given).
    static func serveCommand(_ context: CommandContext, terminal: [String]? = nil) -> [String] {
        reindexCommand(context) + ["desktop", "serve"] + (terminal.map { ["--terminal", $0.joined(separator: " ")] } ?? [])
    }

    static func executablePath() -> String {
        var buffer = [CChar](repeating: 0, count: 4096)
        let n = readlink("/proc/self/exe", &buffer, buffer.count - 1)
        if n > 0 { return String(decoding: buffer[0..<n].map { UInt8(bitPattern: $0) }, as: UTF8.self) }
        return FileSystem.absolute(CommandLine.arguments[0])
    }

    /// One line on stderr per event, as `reindex serve` logs.
    static func log(_ text: String) {
        Console.err("\(RFC3339.format(Clock.now())) desktop: \(text)")
    }
}
#endif
