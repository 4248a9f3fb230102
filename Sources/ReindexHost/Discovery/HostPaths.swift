import ReindexStore
import ReindexSystem
/// Where the host looks for bundles, keeps its index and writes logs — resolved once from the
/// options and the environment, in the order of the contract.
public struct HostPaths: Sendable, Equatable {
    /// One directory of the search path and where it came from.
    public struct Entry: Sendable, Equatable {
        public enum Source: String, Sendable {
            case option = "--extensions-path"
            case environment = "REINDEX_EXTENSIONS_PATH"
            case userData = "XDG_DATA_HOME"
            case systemData = "XDG_DATA_DIRS"
        }
        public var directory: String
        public var source: Source
    }

    /// The search path, first match wins.
    public var searchPath: [Entry]
    /// The index database file.
    public var index: String
    /// Where `--index` came from: the option, the environment or the default.
    public var indexSource: String
    /// The directory of per-bundle logs.
    public var logs: String {
        didSet { recordings = FileSystem.join(FileSystem.directoryName(logs), "recordings") }
    }
    /// The directory of per-bundle recorded sessions (`reindex runs`), beside `logs`.
    public private(set) var recordings: String
    /// The user's extensions directory (where `bundle-extension` installs by default).
    public var userExtensions: String
    /// Where each bundle's private, persistent data directory lives (`REINDEX_DATA_DIR` is
    /// `<data>/<bundle>`): `$XDG_DATA_HOME/reindex/data`.
    public var data: String

    /// Resolves every path from the global options and the environment.
    ///
    /// - `extensionsPath`: the `--extensions-path` value (colon-separated), searched first; when
    ///   absent, `REINDEX_EXTENSIONS_PATH` takes its place.
    /// - `index`: `--index`, else `REINDEX_INDEX`, else `$XDG_DATA_HOME/reindex/index.sqlite`.
    /// - Logs go beside an index given by `--index` (or `REINDEX_INDEX`), else to `$XDG_STATE_HOME/reindex/logs`.
    public init(extensionsPath: String?, index: String?, environment: [String: String]) {
        let home = environment["HOME"].flatMap { $0.isEmpty ? nil : $0 } ?? "/"
        func xdg(_ name: String, _ fallback: String) -> String {
            if let value = environment[name], value.hasPrefix("/") { return value }
            return FileSystem.join(home, fallback)
        }
        let dataHome = xdg("XDG_DATA_HOME", ".local/share")
        let stateHome = xdg("XDG_STATE_HOME", ".local/state")

        var entries: [Entry] = []
        if let extensionsPath {
            for part in extensionsPath.split(separator: ":") where !part.isEmpty {
                entries.append(Entry(directory: FileSystem.absolute(String(part)), source: .option))
            }
        } else if let fromEnvironment = environment["REINDEX_EXTENSIONS_PATH"] {
            for part in fromEnvironment.split(separator: ":") where !part.isEmpty {
                entries.append(Entry(directory: FileSystem.absolute(String(part)), source: .environment))
            }
        }
        userExtensions = FileSystem.join(dataHome, "reindex/extensions")
        data = FileSystem.join(dataHome, "reindex/data")
        entries.append(Entry(directory: userExtensions, source: .userData))
        let dataDirs = environment["XDG_DATA_DIRS"].flatMap { $0.isEmpty ? nil : $0 } ?? "/usr/local/share:/usr/share"
        for part in dataDirs.split(separator: ":") where part.hasPrefix("/") {
            entries.append(Entry(directory: FileSystem.join(String(part), "reindex/extensions"), source: .systemData))
        }
        searchPath = entries

        // A PostgreSQL connection string is kept as given (it is no path).
        func resolved(_ index: String) -> String { PostgresLocation.isConnectionString(index) ? index : FileSystem.absolute(index) }
        if let index {
            self.index = resolved(index)
            indexSource = "--index"
        } else if let fromEnvironment = environment["REINDEX_INDEX"], !fromEnvironment.isEmpty {
            self.index = resolved(fromEnvironment)
            indexSource = "REINDEX_INDEX"
        } else {
            self.index = FileSystem.join(dataHome, "reindex/index.sqlite")
            indexSource = "default"
        }
        if indexSource == "default" || PostgresLocation.isConnectionString(self.index) {
            logs = FileSystem.join(stateHome, "reindex/logs")
        } else {
            logs = FileSystem.join(FileSystem.directoryName(self.index), "logs")
        }
        recordings = FileSystem.join(FileSystem.directoryName(logs), "recordings")
    }

    /// The index fit to print: a path, or a connection string with any password masked.
    public var indexDisplayName: String { Index.displayName(index) }

    /// The log file of one bundle. Bundle identifiers are validated reverse-DNS names, so this
    /// can never leave the logs directory; the identifier is lower-cased since it is compared
    /// case-insensitively.
    public func logFile(for bundleIdentifier: String) -> String {
        FileSystem.join(logs, Self.safeName(bundleIdentifier) + ".log")
    }

    /// The directory of one bundle's recorded sessions, named like its log file.
    public func recordingsDirectory(for bundleIdentifier: String) -> String {
        FileSystem.join(recordings, Self.safeName(bundleIdentifier))
    }

    /// The private data directory of one bundle (`REINDEX_DATA_DIR`), named like its log file.
    public func dataDirectory(for bundleIdentifier: String) -> String {
        FileSystem.join(data, Self.safeName(bundleIdentifier))
    }

    /// A bundle identifier as a file name: validated reverse-DNS names cannot leave a directory.
    static func safeName(_ bundleIdentifier: String) -> String {
        Manifest.isValidBundleIdentifier(bundleIdentifier) ? bundleIdentifier.lowercased() : "invalid-bundle-identifier"
    }
}

import ReindexProtocol
