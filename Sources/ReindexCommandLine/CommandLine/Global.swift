/// The phantom command of the options every command takes (`--index`, `--json`, …).
package enum Global {
    package static let index = Option<Global, String>(
        "index", value: "PATH", help: "the index database", environment: "REINDEX_INDEX")
    package static let extensionsPath = Option<Global, String>(
        "extensions-path", value: "DIRS", help: "colon-separated directories searched before the user and system ones", environment: "REINDEX_EXTENSIONS_PATH")
    package static let json = Flag<Global>("json", help: "print JSON instead of human-readable text")
    package static let help = Flag<Global>("help", short: "h", help: "show help")
    package static let version = Flag<Global>("version", help: "show the version")

    /// In the order help lists them.
    package static let options: [any DeclaredOption<Global>] = [index, extensionsPath, json, help, version]
}
