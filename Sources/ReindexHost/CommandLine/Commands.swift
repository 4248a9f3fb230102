import ReindexProtocol

/// The declarations of the `reindex` command line: every command and option, once.
public enum ReindexCommands {
    public static let global: [OptionSpec] = [
        OptionSpec("index", value: .required("PATH"), help: "the index database", environment: "REINDEX_INDEX"),
        OptionSpec("extensions-path", value: .required("DIRS"), help: "colon-separated directories searched before the user and system ones", environment: "REINDEX_EXTENSIONS_PATH"),
        OptionSpec("json", help: "print JSON instead of human-readable text"),
        OptionSpec("help", short: "h", help: "show help"),
        OptionSpec("version", help: "show the version"),
    ]

    static let requireSandbox = OptionSpec(
        "require-sandbox",
        help: "refuse to run the extension unsandboxed: no Landlock here, \"sandbox\": false in its manifest, or \"network\": false the kernel cannot enforce (exit 69)")

    static let requestOptions: [OptionSpec] = [
        OptionSpec("all", help: "reindex everything (reindexAll; the default)", exclusiveGroup: "request"),
        OptionSpec("ids", value: .required("ID[,ID…]"), help: "reindex these items (reindexItems)", exclusiveGroup: "request"),
        OptionSpec("ids-from", value: .required("FILE"), help: "reindex the items listed in FILE, one per line ('-' for stdin)", exclusiveGroup: "request"),
    ]

    public static let list = CommandSpec(
        "list", summary: "list every discovered bundle, and the shadowed and invalid ones with their reason",
        discussion: "Exit status: 0 when discovery ran, even if some bundles are invalid (they are listed under problems).")
    public static let paths = CommandSpec(
        "paths", summary: "show the search path in order, which directories exist, and the index and log locations")
    public static let validate = CommandSpec(
        "validate", summary: "check one bundle directory",
        arguments: [ArgumentSpec("DIR", help: "the bundle directory (holding manifest.json)")],
        options: [OptionSpec("run", help: "also start the extension against a scratch index, run reindexAll, and report every protocol problem"),
                  requireSandbox],
        discussion: """
            Shows what the extension's sandbox lets it use besides the system (its directory, its
            interpreter's installation, its data and temporary directories, the manifest's
            sandbox.read and sandbox.write), and warns when its manifest turns the sandbox off.
            Exit status: 0 valid, 65 invalid manifest (also: a declared path inside the index, the
            logs or another bundle), 66 no such directory, 69/75/76 when --run fails (69 also when
            --require-sandbox refuses to run it unsandboxed).
            """)

    public static let run = CommandSpec(
        "run", summary: "force a request now and wait for its acknowledgement",
        arguments: [ArgumentSpec("BUNDLE_ID", help: "the bundle to ask")],
        options: requestOptions + [
            OptionSpec("reason", value: .required("R"), help: "the reason sent to the extension (default forced)"),
            OptionSpec("queue", help: "only queue the request for 'reindex serve' and return"),
            requireSandbox,
        ],
        discussion: """
            Shows a progress bar on a terminal; prints a summary (put, deleted, rejected, duration).
            Ctrl-C sends $/cancel to the extension; the request goes back to the queue.
            The extension runs in its sandbox (see docs/SECURITY.md); where the system has no
            Landlock it runs unsandboxed after a warning, unless --require-sandbox is given.
            Exit status: 0 acknowledged, 65 invalid manifest (a declared sandbox path inside the index,
            the logs or another bundle), 66 no such bundle, 69 the extension could not be started (also:
            --require-sandbox refused to run it unsandboxed), 75 the request failed (crash, timeout,
            refusal, cancel, a full disk; a retry is queued), 76 protocol violation.
            """)
    public static let debug = CommandSpec(
        "debug", summary: "run a request in debug mode: no timeouts, attach a debugger, trace the protocol",
        arguments: [ArgumentSpec("BUNDLE_ID", help: "the bundle to debug")],
        options: requestOptions + [
            OptionSpec("reason", value: .required("R"), help: "the reason sent to the extension (default forced)"),
            OptionSpec("wait-for-debugger", value: .optional("SECONDS"), help: "hold the extension until a debugger attaches (give up after SECONDS; default: wait forever)"),
            OptionSpec("trace", value: .optional("full"), help: "print every protocol message with direction, time and size (--trace=full: whole payloads)"),
            OptionSpec("scratch-index", help: "run against a throwaway copy of the index"),
            OptionSpec("print-attach", help: "print the process name and attach commands, then go on without waiting"),
            OptionSpec("no-sandbox", help: "run the extension without its sandbox (to tell whether the sandbox is what stops it)"),
            requireSandbox,
        ],
        discussion: """
            The request runs now, whatever the queue and backoff say, with every timeout off.
            Before the extension does any work its PID and the attach commands (lldb, gdb, a VS Code
            launch.json entry) are printed to stderr; its stderr is streamed live, prefixed 'ext|'.
            With --wait-for-debugger an SDK extension waits in the SDK's gate; any other extension is
            started stopped just before exec, so attaching and continuing starts it.
            The process name for attach-by-name tools is the executable's file name.
            The extension runs in its sandbox, as under 'reindex run' (a debugger attaches to it from
            outside all the same); the host prints what the sandbox grants.
            Ends with the same summary and exit codes as 'reindex run'. See docs/DEBUGGING.md.
            """)
    public static let serve = CommandSpec(
        "serve", summary: "run as a service: work the queue, refresh expiring items, recover a lost index, follow bundle changes",
        options: [
            OptionSpec("concurrency", value: .required("N"), help: "at most N extensions at a time (default 2; never two of one bundle)"),
            OptionSpec("removal-grace", value: .required("SECONDS"), help: "remove a bundle's items this long after it left the search path (default 3600)"),
            OptionSpec("rescan", value: .required("SECONDS"), help: "rescan the search path at least this often (default 5; inotify also triggers rescans)"),
            OptionSpec("retry-base", value: .required("SECONDS"), help: "first retry delay; doubles with each failed attempt (default 5, at most 1 h)"),
            OptionSpec("require-sandbox", help: "run no extension unsandboxed: exit 69 at start where the system has no Landlock; a bundle with \"sandbox\": false fails its requests"),
        ],
        discussion: """
            Runs until SIGTERM or SIGINT: stops taking work, cancels running requests with $/cancel (they
            return to the queue), and exits 0. SIGHUP rescans the search path. A new bundle, or one whose
            version or executable changed, gets reindexAll (bundleChanged); a missing or corrupt index at
            start or while running is moved aside and every bundle gets reindexAll (indexLost); items
            expiring within a bundle's refreshBeforeExpirySeconds get one reindexItems (expiring); expired
            items are purged. Requests queued with 'reindex run --queue' are picked up without a restart.
            Logs go to stderr, one line each: TIME serve LEVEL: message. Only one serve per index.
            Extensions run sandboxed (docs/SECURITY.md); where the system has no Landlock, serve says so
            once at start and runs them unsandboxed, unless --require-sandbox is given.
            """)
    public static let search = CommandSpec(
        "search", summary: "full-text search over live items, best first",
        arguments: [ArgumentSpec("QUERY", help: "words to find; each word also matches as a prefix (eng finds engineering)")],
        options: [
            OptionSpec("bundle", value: .required("ID"), help: "only this bundle's items"),
            OptionSpec("domain", value: .required("D"), help: "only items in this domain or its subdomains"),
            OptionSpec("limit", value: .required("N"), help: "at most N results (default 20)"),
        ])
    public static let items = CommandSpec(
        "items", summary: "what is indexed for one bundle",
        arguments: [ArgumentSpec("BUNDLE_ID", help: "the bundle")],
        options: [
            OptionSpec("domain", value: .required("D"), help: "only items in this domain or its subdomains"),
            OptionSpec("limit", value: .required("N"), help: "at most N items (default 100)"),
        ])
    public static let status = CommandSpec(
        "status", summary: "index health, per-bundle item counts, queued and failed requests, last runs")
    public static let put = CommandSpec(
        "put", summary: "index items read from stdin (one JSON item per line) for a bundle",
        arguments: [ArgumentSpec("BUNDLE_ID", help: "the bundle the items belong to")],
        discussion: "A bad line is reported with its line number and skipped; the rest is applied in one transaction.\nExit status: 0 all lines applied, 65 some lines were rejected (the others were applied).")
    public static let delete = CommandSpec(
        "delete", summary: "remove items of a bundle",
        arguments: [ArgumentSpec("BUNDLE_ID", help: "the bundle")],
        options: [
            OptionSpec("ids", value: .required("ID[,ID…]"), help: "these items", exclusiveGroup: "what"),
            OptionSpec("domains", value: .required("D[,D…]"), help: "every item in these domains and their subdomains", exclusiveGroup: "what"),
            OptionSpec("all", help: "every item of the bundle", exclusiveGroup: "what"),
        ])
    public static let check = CommandSpec(
        "check", summary: "check the index's integrity (SQLite and full-text index)",
        discussion: "Exit status: 0 healthy, 65 damaged (run 'reindex reset' to rebuild it from the extensions).")
    public static let reset = CommandSpec(
        "reset", summary: "erase the index and queue reindexAll (indexLost) for every bundle",
        discussion: "The old database is kept beside the new one with a timestamp. 'reindex serve' (or 'reindex run') then rebuilds it.")

    /// Every command, in the order help lists them.
    public static let all: [CommandSpec] = [list, paths, validate, run, debug, serve, search, items, status, put, delete, check, reset]

    public static let parser = ArgumentParser(
        toolName: "reindex",
        summary: "discovers reindexing extensions, keeps a searchable index and asks extensions to regenerate it",
        globalOptions: global, commands: all)
}
