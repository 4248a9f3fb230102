import ReindexHost
import ReindexStore
import ReindexSystem
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
        OptionSpec("resume", help: "resume an unfinished reindexAll from its last committed batch (default: start fresh, discarding it)"),
    ]

    public static let list = CommandSpec(
        "list", summary: "list every discovered bundle, and the shadowed and invalid ones with their reason",
        discussion: "Exit status: 0 when discovery ran, even if some bundles are invalid (they are listed under problems).")
    public static let paths = CommandSpec(
        "paths", summary: "show the search path in order, which directories exist, and the index and log locations")
    public static let validate = CommandSpec(
        "validate", summary: "check one bundle directory",
        arguments: [ArgumentSpec("DIR", help: "the bundle directory (holding manifest.json)")],
        options: [
            OptionSpec("run", help: "also run the conformance suite: start the extension against a scratch index and check every rule of the protocol"),
            OptionSpec("check", value: .required("NAME"), help: "with --run, run only this check (initialize, version-negotiation, reindexAll, reindexAll-resume, reindexItems, unknown-request, cancel, batch-commit, stdout-clean, exit, no-leftover-processes)"),
            requireSandbox,
        ],
        discussion: """
            Shows what the extension's sandbox lets it use besides the system (its directory, its
            interpreter's installation, its data and temporary directories, the manifest's
            sandbox.read and sandbox.write), and warns when its manifest turns the sandbox off.
            --run prints one line per check (pass, fail or skipped, with its evidence), or with --json
            {"bundleIdentifier", "valid", "checks": [{"name", "rule", "result", "evidence"}], "put", "deleted", "rejected"}.
            A check stops at the first violation that decides it; it never waits out a timeout.
            Exit status: 0 valid (with --run: every check passed), 65 invalid manifest (also: a declared
            path inside the index, the logs or another bundle) or a failed check, 66 no such directory,
            69 --require-sandbox refused to run it unsandboxed.
            """)

    public static let run = CommandSpec(
        "run", summary: "force a request now and wait for its acknowledgement",
        arguments: [ArgumentSpec("BUNDLE_ID", help: "the bundle to ask")],
        options: requestOptions + [
            OptionSpec("reason", value: .required("R"), help: "the reason sent to the extension (default forced)", completion: .values(ReindexReason.known.map(\.rawValue))),
            OptionSpec("queue", help: "only queue the request for 'reindex serve' and return"),
            requireSandbox,
        ],
        discussion: """
            Shows a progress bar on a terminal; prints a summary (put, deleted, rejected, duration).
            A forced reindexAll starts fresh (clientState null): when an earlier attempt left committed
            batches, they are discarded and the summary says how many items went; --resume resumes from
            its last client state instead. Only retries by 'reindex serve' resume by themselves.
            Ctrl-C, SIGTERM and SIGHUP (a closed terminal) send $/cancel to the extension; the request
            goes back to the queue.
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
            OptionSpec("reason", value: .required("R"), help: "the reason sent to the extension (default forced)", completion: .values(ReindexReason.known.map(\.rawValue))),
            OptionSpec("wait-for-debugger", value: .optional("SECONDS"), help: "hold the extension until a debugger attaches (give up after SECONDS; default: wait forever)"),
            OptionSpec("trace", value: .optional("full"), help: "print every protocol message with direction, time and size (--trace=full: whole payloads)", completion: .values(["full"])),
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
        "search", summary: "search live items with words and the query language, best first",
        arguments: [ArgumentSpec("QUERY", help: "words (each also matches as a prefix: eng finds engineering) and/or comparisons: rating >= 4 && title == \"dune*\"cd (see docs/QUERIES.md)")],
        options: [
            OptionSpec("bundle", value: .required("ID"), help: "only this bundle's items", completion: .bundleIdentifier),
            OptionSpec("domain", value: .required("D"), help: "only items in this domain or its subdomains"),
            OptionSpec("limit", value: .required("N"), help: "at most N results (default 20)"),
            OptionSpec("sort", value: .required("ATTR[:asc|:desc]"), help: "order by an attribute instead of relevance; repeat for ties (then bundle and identifier)"),
            OptionSpec("after", value: .required("CURSOR"), help: "the page after this cursor (nextCursor of the previous page)"),
            OptionSpec("count", help: "print only the exact number of matches"),
            OptionSpec("fields", value: .required("A,B,…"), help: "only these attributes in each result"),
            OptionSpec("facet", value: .required("ATTR"), help: "count the matches per value of a string attribute (contentType, domainIdentifier, bundleIdentifier, keywords, …); repeatable"),
            OptionSpec("facet-top", value: .required("N"), help: "the N most common values of each facet (default 10)"),
            OptionSpec("markers", value: .required("OPEN,CLOSE"), help: "what marks matched words in JSON snippets (default [,])"),
        ],
        discussion: """
            Relevance: each word scores by the most important attribute it is found in (title 10, displayName 8,
            alternateNames and keywords 5, authors 3, contentDescription 2, textContent 1), summed over the words;
            whole words before prefixes; ties newest first. See docs/QUERIES.md for the language.
            Exit status: 0 (also when nothing matches), 65 a malformed query (the message gives its position).
            """)
    public static let show = CommandSpec(
        "show", summary: "print one live item whole: attributes, domain, expiration, generation",
        arguments: [ArgumentSpec("BUNDLE_ID", help: "the bundle", completion: .bundleIdentifier), ArgumentSpec("UNIQUE_ID", help: "the item's identifier")],
        discussion: "Exit status: 0, or 66 when the bundle has no such live item.")
    public static let items = CommandSpec(
        "items", summary: "what is indexed for one bundle",
        arguments: [ArgumentSpec("BUNDLE_ID", help: "the bundle")],
        options: [
            OptionSpec("domain", value: .required("D"), help: "only items in this domain or its subdomains"),
            OptionSpec("limit", value: .required("N"), help: "at most N items (default 100)"),
        ])
    public static let status = CommandSpec(
        "status", summary: "index health, per-bundle item counts, running, queued and failed requests, last runs",
        options: [OptionSpec("failed", help: "also list failed requests that a later success made moot")],
        discussion: """
            A running request is shown with its extension's last progress. A failed request counts until a later
            run of the bundle succeeds (any reindexAll, or a reindexItems after a failed reindexItems); then it is
            moot, and only --failed lists it. A bundle the index knows but the search path no longer has is marked
            'not installed': 'reindex serve' removes its items after its removal grace (default 1 hour).
            """)
    public static let put = CommandSpec(
        "put", summary: "index items read from stdin (one JSON item per line) for a bundle",
        arguments: [ArgumentSpec("BUNDLE_ID", help: "the bundle the items belong to")],
        discussion: """
            A bad line — not JSON, an invalid item, or longer than 16 MiB — is reported with its line number and
            skipped; the rest is applied together in one short transaction at the end of input (nothing is visible
            before). No more than one line is held in memory.
            Exit status: 0 all lines applied, 65 some lines were rejected (the others were applied).
            """)
    public static let delete = CommandSpec(
        "delete", summary: "remove items of a bundle",
        arguments: [ArgumentSpec("BUNDLE_ID", help: "the bundle")],
        options: [
            OptionSpec("ids", value: .required("ID[,ID…]"), help: "these items", exclusiveGroup: "what"),
            OptionSpec("domains", value: .required("D[,D…]"), help: "every item in these domains and their subdomains", exclusiveGroup: "what"),
            OptionSpec("all", help: "every item of the bundle", exclusiveGroup: "what"),
        ])
    public static let check = CommandSpec(
        "check", summary: "check the index's integrity (SQLite, the full-text index and the index's own invariants)",
        options: [OptionSpec("quick", help: "SQLite's quick check and the invariants, without the slow full-text integrity check")],
        discussion: """
            Besides SQLite's integrity check, every item must have its full-text row (and the reverse), every item a
            known bundle, every live generation a reindexAll that made it, and every invisible row a running or
            resumable writer. Rows left by a writer that is gone are listed as leftovers (the next run of the bundle or
            'reindex serve' sweeps them); they do not make the index unhealthy.
            Exit status: 0 healthy, 65 damaged (run 'reindex reset' to rebuild it from the extensions),
            75 the index stayed busy (try again later).
            """)
    public static let reset = CommandSpec(
        "reset", summary: "erase the index and queue reindexAll (indexLost) for every bundle",
        discussion: "The old database is kept beside the new one with a timestamp. 'reindex serve' (or 'reindex run') then rebuilds it.")

    public static let new = CommandSpec(
        "new", summary: "write a working extension project (manifest, handlers with a batch loop, README) to start from",
        arguments: [
            ArgumentSpec("LANGUAGE", help: "swift, python or typescript", completion: .values(NewExtension.Language.allCases.map(\.rawValue))),
            ArgumentSpec("NAME", help: "the extension's name: a letter, then letters, digits and _ (its type, executable and directory)"),
        ],
        options: [
            OptionSpec("id", value: .required("BUNDLE_ID"), help: "the bundle identifier (default com.example.<name in lower case>.indexer)", completion: CompletionKind.none),
            OptionSpec("output", value: .required("DIR"), help: "where to write the project (default ./NAME); must be new or empty"),
        ],
        discussion: """
            Python and TypeScript projects are bundles as written: 'reindex validate DIR --run' passes. A Swift
            project is a bundle once built ('swift build'; its manifest names .build/debug/NAME). The project finds
            the SDK of the ReindexHost checkout this reindex was built from (or $REINDEX_SOURCE_ROOT,
            $REINDEX_PYTHON_SDK, $REINDEX_TS_SDK when set); its README says how to vendor it instead.
            Exit status: 0 written, 64 bad NAME, language or --id, 73 the output exists and is not empty.
            """)
    public static let completions = CommandSpec(
        "completions", summary: "print a shell completion script for bash, zsh or fish",
        arguments: [ArgumentSpec("SHELL", help: "bash, zsh or fish", completion: .values(CompletionScript.Shell.allCases.map(\.rawValue)))],
        discussion: """
            Commands, options and known option values are completed; bundle identifiers are asked of
            'reindex list --json' at completion time. Install, for example:
              bash: reindex completions bash > ~/.local/share/bash-completion/completions/reindex
              zsh:  reindex completions zsh > ~/.zfunc/_reindex   (with fpath+=~/.zfunc before compinit)
              fish: reindex completions fish > ~/.config/fish/completions/reindex.fish
            """)
    public static let help = CommandSpec(
        "help", summary: "show the help of the tool or of one command, or the manual page",
        arguments: [ArgumentSpec("COMMAND", help: "the command to explain", optional: true, completion: .command)],
        options: [OptionSpec("man", help: "print the manual page (roff) instead; read it with: reindex help --man | man -l -")])

    /// Every command, in the order help lists them.
    public static let all: [CommandSpec] = [list, paths, validate, run, debug, serve, search, show, items, status, put, delete, check, reset,
                                            new, completions, help]

    public static let parser = ArgumentParser(
        toolName: "reindex",
        summary: "discovers reindexing extensions, keeps a searchable index and asks extensions to regenerate it",
        globalOptions: global, commands: all)
}
