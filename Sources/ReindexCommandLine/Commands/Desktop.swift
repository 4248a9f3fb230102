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
            See docs/DESKTOP.md.
            """

    package enum Action: String, CaseIterable, Sendable {
        case serve, install, uninstall
    }

    package static let action = Argument<Self, String>(
        "ACTION", help: "serve, install or uninstall", completion: .values(Action.allCases.map(\.rawValue)))
    package static let arguments: [any DeclaredArgument<Self>] = [action]

    package let action: Action

    package init(_ arguments: Arguments<Self>) throws(ReindexError) {
        let name = arguments[Self.action]
        guard let action = Action(rawValue: name) else {
            throw ReindexError(.usage, "no desktop action '\(name)'; actions: \(Action.allCases.map(\.rawValue).joined(separator: ", "))")
        }
        self.action = action
    }

    package func run(_ context: CommandContext) throws -> Int32 {
        switch action {
        case .serve:
            let catalog = DesktopCatalog(
                openIndex: { () throws -> any IndexQueries in try context.openQueries() },
                keepsIndexOpen: context.paths.isPostgreSQL,
                discover: { Discovery.discover(context.paths) },
                log: Self.log)
            return try DesktopService.serve(catalog: catalog, log: Self.log)
        case .install, .uninstall:
            let installation = DesktopInstallation(dataHome: Self.dataHome(context.paths), serveCommand: Self.serveCommand(context))
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
    /// which the service finds itself), then `desktop serve`.
    static func serveCommand(_ context: CommandContext) -> [String] {
        var command = [executablePath()]
        if context.paths.indexSource != "default" { command += ["--index", context.paths.index] }
        let given = context.paths.searchPath.filter { $0.source == .option || $0.source == .environment }.map(\.directory)
        if !given.isEmpty { command += ["--extensions-path", given.joined(separator: ":")] }
        return command + ["desktop", "serve"]
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
