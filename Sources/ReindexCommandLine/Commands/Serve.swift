import ReindexProtocol
import ReindexStore
import ReindexSystem
import ReindexHost
#if os(Linux)
import ReindexDesktop
#endif

/// `reindex serve`: the service (`Server`, on either index): works the queue, refreshes expiring items, recovers a
/// lost index and follows bundle changes until SIGTERM or SIGINT.
package struct ServeCommand: ReindexCommand {
    package static let name = "serve"
    package static let summary = "run as a service: work the queue, refresh expiring items, recover a lost index, follow bundle changes"
    package static let discussion = """
            Runs until SIGTERM or SIGINT: stops taking work, cancels running requests with $/cancel (they
            return to the queue), and exits 0. SIGHUP rescans the search path. A new bundle, or one whose
            version or executable changed, gets reindexAll (bundleChanged); a missing or corrupt index at
            start or while running is moved aside and every bundle gets reindexAll (indexLost); items
            expiring within a bundle's refreshBeforeExpirySeconds get one reindexItems (expiring); expired
            items are purged. Requests queued with 'reindex run --queue' are picked up without a restart.
            Logs go to stderr, one line each: TIME serve LEVEL: message. Only one serve per index.
            Extensions run sandboxed (docs/SECURITY.md); where the system has no Landlock, serve says so
            once at start and runs them unsandboxed, unless --require-sandbox is given.
            --desktop also runs 'reindex desktop serve' (GNOME Shell and KRunner search, docs/DESKTOP.md) as a
            child process with the same index and search path, stopped when serve stops.
            """

    package static let concurrency = Option<Self, Int>(
        "concurrency", value: "N", help: "at most N extensions at a time (default 2; never two of one bundle)", as: .positiveInteger)
    package static let removalGrace = Option<Self, Double>(
        "removal-grace", value: "SECONDS", help: "remove a bundle's items this long after it left the search path (default 3600)", as: .seconds)
    package static let rescan = Option<Self, Double>(
        "rescan", value: "SECONDS", help: "rescan the search path at least this often (default 5; inotify also triggers rescans)", as: .seconds)
    package static let retryBase = Option<Self, Double>(
        "retry-base", value: "SECONDS", help: "first retry delay; doubles with each failed attempt (default 5, at most 1 h)", as: .seconds)
    package static let requireSandbox = Flag<Self>(
        "require-sandbox",
        help: "run no extension unsandboxed: exit 69 at start where the system has no Landlock; a bundle with \"sandbox\": false fails its requests")
    package static let desktop = Flag<Self>(
        "desktop", help: "also answer desktop search (GNOME Shell, KRunner): runs 'reindex desktop serve' beside the service (docs/DESKTOP.md)")
    package static let options: [any DeclaredOption<Self>] = [concurrency, removalGrace, rescan, retryBase, requireSandbox, desktop]

    package let concurrency: Int
    package let removalGraceSeconds: Double
    package let rescanSeconds: Double
    package let retryBaseSeconds: Double
    package let requireSandbox: Bool
    package let desktop: Bool

    package init(_ arguments: Arguments<Self>) throws(ReindexError) {
        concurrency = try arguments.value(Self.concurrency, default: 2)
        removalGraceSeconds = try arguments.value(Self.removalGrace, default: 3600)
        rescanSeconds = try arguments.value(Self.rescan, default: 5)
        retryBaseSeconds = try arguments.value(Self.retryBase, default: 5)
        requireSandbox = arguments[Self.requireSandbox]
        desktop = arguments[Self.desktop]
    }

    package func run(_ context: CommandContext) throws -> Int32 {
        var options = ServeOptions()
        options.environment = context.environment
        options.concurrency = concurrency
        options.removalGraceSeconds = removalGraceSeconds
        options.rescanSeconds = rescanSeconds
        options.backoff.baseSeconds = retryBaseSeconds
        options.sandbox = try SandboxReport.options(required: requireSandbox, context: context)
        let server = try Server(paths: context.paths, options: options)
        let companion = try startDesktop(context)
        defer { companion?.stop() }
        return server.run()
    }

    /// With --desktop, `reindex desktop serve` on the same index and search path, as a child
    /// process that lives as long as this service (SIGTERM reaches it when the service stops).
    #if os(Linux)
    private func startDesktop(_ context: CommandContext) throws(ReindexError) -> DesktopCompanion? {
        guard desktop else { return nil }
        return try DesktopCompanion.start(DesktopCommand.serveCommand(context))
    }
    #else
    private struct NoCompanion { func stop() {} }
    private func startDesktop(_ context: CommandContext) throws(ReindexError) -> NoCompanion? {
        guard desktop else { return nil }
        throw ReindexError(.usage, "--desktop: desktop search answers over D-Bus, on Linux only")
    }
    #endif
}
