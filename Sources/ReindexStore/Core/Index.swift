import ReindexProtocol
import ReindexSystem

/// How the `reindex serve` processes of an index share its queue: the one fact `serve` builds its
/// claim policy on, known from the index's name before anything is opened.
public enum QueueSharing: Sendable {
    /// One host serves the index (a SQLite file): it owns every bundle, one `serve` at a time.
    case oneHost
    /// Any number of hosts serve it (PostgreSQL): requests are claimed under leases.
    case fleet
}

/// Opens the index `index` names: a PostgreSQL connection string or a SQLite path.
public enum Index {
    /// `create: false` (commands that only read) never makes a SQLite file that is not there.
    public static func open(_ index: String, environment: [String: String], create: Bool = true) throws(ReindexError) -> any IndexBackend {
        try openForQueries(index, environment: environment, create: create)
    }

    /// How the index `index` names is served.
    public static func sharing(_ index: String) -> QueueSharing {
        PostgresLocation.isConnectionString(index) ? .fleet : .oneHost
    }

    /// Opens a fleet's index (`sharing` is `.fleet`), with the lease `REINDEX_PG_LEASE_SECONDS` asks for.
    public static func openFleet(_ index: String, environment: [String: String]) throws(ReindexError) -> PostgresStore {
        let store = try PostgresStore.open(try PostgresLocation(index, environment: environment))
        if let lease = environment["REINDEX_PG_LEASE_SECONDS"].flatMap(Double.init), lease > 0 { store.leaseSeconds = lease }
        return store
    }

    /// What a failure of either backend means for the person who ran the command, with its exit
    /// code (`StoreError.explained`), for a caller that has the index's location but no store
    /// (the command line's last resort); with a store, `IndexBackend.explain` says the same. An
    /// error of the host's passes through; any other is an internal one.
    public static func explain(_ error: any Error, index: String, doing what: String? = nil) -> ReindexError {
        if let error = error as? ReindexError { return error }
        if let error = error as? StoreError {
            return error.explained(index: PostgresLocation.isConnectionString(index) ? PostgresLocation.masked(index) : index, doing: what)
        }
        return ReindexError(.internal, (what.map { "\($0): " } ?? "") + "\(error)")
    }
}

// MARK: What the host asks of an index's location

extension Index {
    /// The index `index` names fit to print: a path, or a connection string with any password
    /// masked.
    public static func displayName(_ index: String) -> String {
        sharing(index) == .fleet ? PostgresLocation.masked(index) : index
    }

    /// The file the index is kept in, for what must protect it: the sandbox keeps every
    /// extension from it, everything named after it and the `locks` beside it. nil for an index
    /// kept by a database server (PostgreSQL), which has no file on this host.
    public static func file(_ index: String) -> String? {
        sharing(index) == .fleet ? nil : index
    }

    /// What tells this index from another that replaced it at the same place (the desktop search
    /// opens the index again when it changes): a SQLite file's device and inode, nil while there
    /// is no file; a PostgreSQL index is never replaced under its name, so one constant.
    public static func identity(_ index: String) -> String? {
        guard let path = file(index) else { return "postgresql" }
        var info = stat()
        guard stat(path, &info) == 0 else { return nil }
        return "\(info.st_dev):\(info.st_ino)"
    }

    /// A throwaway copy of the index for `debug --scratch-index`, as `scratch/index.sqlite` (the
    /// directory exists): a consistent copy of a SQLite file (none when it does not exist yet).
    /// A shared database is not copied: a fresh schema is its scratch index, which the caller is
    /// told how to name.
    public static func scratchCopy(of index: String, in scratch: String) throws(ReindexError) -> String {
        guard let path = file(index) else {
            throw ReindexError(.usage, "\(displayName(index)): --scratch-index copies a SQLite index file; with a PostgreSQL index, point REINDEX_PG_SCHEMA (or ?options=-csearch_path=NAME) at a scratch schema instead")
        }
        let copy = FileSystem.join(scratch, "index.sqlite")
        if FileSystem.exists(path) {
            let real = try IndexStore.open(path: path)
            do { try real.copy(to: copy) } catch {
                throw ReindexError(.ioError, "cannot copy the index to a scratch file: \(error)")
            }
        }
        return copy
    }
}

extension Index {
    /// Erases the index `index` names: a SQLite file is moved aside with a timestamp and a new
    /// one opened (a damaged file, which cannot be opened, is erased all the same); a PostgreSQL
    /// schema's tables are emptied in one transaction, nothing kept aside.
    public static func erase(_ index: String, environment: [String: String]) throws(ReindexError) -> IndexErasure {
        if sharing(index) == .fleet {
            let store = try openFleet(index, environment: environment)
            do {
                return IndexErasure(store: store, keptAs: nil, erasedItems: try store.erase())
            } catch {
                throw store.explain(error, doing: "reset failed")
            }
        }
        let aside = try IndexStore.erase(path: index)
        return IndexErasure(store: try IndexStore.open(path: index), keptAs: aside, erasedItems: nil)
    }
}

extension Index {
    /// Opens the index `index` names for queries: a PostgreSQL connection string or a SQLite path
    /// (`open` is the same index as an `IndexBackend`).
    public static func openForQueries(_ index: String, environment: [String: String], create: Bool = true) throws(ReindexError) -> any IndexQueries {
        switch sharing(index) {
        case .fleet: return try openFleet(index, environment: environment)
        case .oneHost: return try IndexStore.open(path: index, create: create)
        }
    }
}
