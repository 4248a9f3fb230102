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
        options: [OptionSpec("run", help: "also start the extension against a scratch index, run reindexAll, and report every protocol problem")],
        discussion: "Exit status: 0 valid, 65 invalid manifest, 66 no such directory, 69/75/76 when --run fails.")

    /// Every command, in the order help lists them.
    public static let all: [CommandSpec] = [list, paths, validate]

    public static let parser = ArgumentParser(
        toolName: "reindex",
        summary: "discovers reindexing extensions, keeps a searchable index and asks extensions to regenerate it",
        globalOptions: global, commands: all)
}
