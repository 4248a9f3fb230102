import ReindexProtocol
import ReindexSystem

/// What the supervisor, the scheduler and the commands need of an index, whichever database
/// holds it: the SQLite file (`IndexStore`, the embedded default) or a PostgreSQL database shared
/// by a fleet (`PostgresStore`). Each conformer is one connection, used from one thread at a
/// time; each keeps every statement in its own folder.
public protocol IndexBackend: AnyObject {
    /// Where the index is, fit to print: a path, or a connection string with the password masked.
    var displayLocation: String { get }

    /// Writes for one request or writer, held back as protocol-v1.md says (see `IndexWriting`).
    func makeWriter(bundleIdentifier: String, scope: StagedWrites.Scope, requestID: Int64?,
                    declarations: [String: AttributeDeclaration]) throws -> any IndexWriting
    /// Called once before a session streams an extension's operations into this index.
    func prepareForSession(cancelFD: Int32?)

    // The durable request queue.
    func enqueue(bundleIdentifier: String, kind: RequestKind, identifiers: [String], reason: ReindexReason,
                 maxAttempts: Int, notBefore: Double?, coalesce: Bool) throws -> QueuedRequest
    func request(_ id: Int64) throws -> QueuedRequest?
    func requests(bundle identifier: String, state: RequestState) throws -> [QueuedRequest]
    func requests(state: RequestState) throws -> [QueuedRequest]
    func markRunning(_ id: Int64) throws -> QueuedRequest?
    func nextDueRequest(now: Double, excludingBundles: Set<String>) throws -> QueuedRequest?
    func nextDueTime(excludingBundles: Set<String>) throws -> Double?
    func recoverAbandoned(bundle identifier: String) throws
    func requeue(_ id: Int64, note: String) throws
    func saveProgress(_ id: Int64, _ progress: ProgressParams) throws
    func markDone(_ id: Int64) throws
    func saveClientState(_ id: Int64, _ clientState: String?) throws
    /// Books a failed attempt: pending again after the backoff, or failed for good once its
    /// attempts are used up, or at once when `final` (a retry would only repeat it).
    func markAttemptFailed(_ id: Int64, error: String, backoff: Backoff, now: Double, final: Bool) throws -> QueuedRequest?
    func discardPartialReplacement(_ request: QueuedRequest) throws -> Int?

    // Run history.
    func recordRun(_ run: RunRecord) throws
    func lastRun(bundle identifier: String) throws -> RunRecord?

    // The bundle registry and expiry.
    func bundleRecords() throws -> [BundleRecord]
    func recordSeen(key: String, identifier: String, version: String?, fingerprint: String?, now: Double) throws
    func markMissing(_ key: String, now: Double) throws
    func removeBundle(_ key: String) throws -> Int
    func expiringItems(bundle key: String, after: Double, until: Double, limit: Int) throws -> [String]
    func markRefreshAsked(bundle key: String, identifiers: [String]) throws
    func purgeExpired(now: Double) throws -> Int
    func declarations(bundle key: String) throws -> [String: AttributeDeclaration]

    // An application's own batches (`LocalIndex`; IndexStore+ClientState.swift,
    // Postgres/PostgresStore+ClientState.swift).
    /// The client state the bundle's application last ended a batch with, or nil.
    func applicationClientState(bundle key: String) throws -> [UInt8]?
    /// Records the application's client state (at most `LocalIndex.maximumClientStateBytes`);
    /// called inside the transaction that publishes the batch's items.
    func saveApplicationClientState(_ state: [UInt8], bundle key: String) throws
    /// Removes what direct writers of this bundle that are gone left staged: on SQLite the
    /// stagings of dead processes (invisible rows); PostgreSQL rolled theirs back already.
    func sweepAbandonedStagings(bundle key: String) throws
    /// What a failed operation on this index means to a person, with its exit code (damaged,
    /// busy, unreachable, full disk), naming the index and `what` was being done.
    func explain(_ error: any Error, doing what: String?) -> ReindexError

    // Reads.
    func search(_ text: String, bundle: String?, domain: String?, limit: Int, now: Double) throws -> [SearchResult]
    func items(bundle: String, domain: String?, limit: Int, now: Double) throws -> [SearchResult]
    func itemCount(bundle: String, now: Double) throws -> Int
    func knownBundles() throws -> [(key: String, identifier: String)]
    func status(bundle identifier: String) throws -> BundleStatus

    // Maintenance (IndexMaintenance.swift).
    /// What a check of the index finds: damage, broken invariants, leftovers, a lost index.
    func health(quick: Bool) throws(ReindexError) -> IndexHealth

    // Sharing (`FleetQueue`).
    /// The index's fleet role when many hosts share it (PostgreSQL): claims and leases, the
    /// bundle's fleet-wide lock, the workers and hosts; nil for an index one host owns.
    var fleet: (any FleetQueue)? { get }
    /// Why every bundle needs reindexAll (indexLost) since this connection opened the index, or
    /// nil: a SQLite file lost (missing after use, damaged and moved aside) and made anew, or a
    /// PostgreSQL schema this connection created.
    var lossAtOpen: IndexLoss? { get }
    /// Runs `body` in one read snapshot, so what it reads never shows half of a commit.
    func snapshot<T>(_ body: () throws -> T) throws -> T
}

/// An index opened in place of a lost one, or created: every bundle needs reindexAll (indexLost).
public struct IndexLoss: Sendable {
    /// What to tell the person who ran the command (the lost file, where the damaged one was
    /// kept); nil when there is nothing to tell (a PostgreSQL schema made at its first use).
    public var warning: String?
}

/// The role of an index any number of hosts share (PostgreSQL): what a command or a serve worker
/// asks of the fleet beyond `IndexBackend`.
public protocol FleetQueue: IndexBackend {
    var location: PostgresLocation { get }
    /// The id the leases this connection takes are recorded under.
    var workerID: String { get }
    var leaseSeconds: Double { get }
    /// Takes the bundle's lock across the fleet (held by this connection), or explains who holds it.
    func lockBundle(key: String, identifier: String) throws(ReindexError)
    func unlockBundle(_ key: String)
    /// The workers seen lately, with what each runs.
    func workers() throws -> [PostgresStore.Worker]
    /// The hosts that have a bundle installed.
    func hosts(bundle key: String) throws -> [String]
}

/// The operations of one request (or direct writer) on its way into an index: nothing is visible
/// before `commitBatch` (for a `reindexItems`) or `acknowledge`; a replacement (`reindexAll`)
/// only at `acknowledge`; `rollback` discards what was not committed.
public protocol IndexWriting: AnyObject {
    var counts: WriteCounts { get }
    var declarations: [String: AttributeDeclaration] { get }
    /// Operations are waiting to be sent (the session sends them before it waits).
    var hasOpenGroup: Bool { get }
    func put(_ item: ValidatedItem) throws
    func reject(count: Int)
    func delete(identifiers: [String]) throws
    func delete(domains: [String]) throws
    func deleteAll() throws
    func flush() throws
    /// Commits the batch with `extra` (the client state) in its transaction; returns how many
    /// operations it held.
    func commitBatch(with extra: (any IndexBackend) throws -> Void) throws -> Int
    /// Ends the request successfully with `extra` (marking it done, the run) in its transaction.
    func acknowledge(with extra: (any IndexBackend) throws -> Void) throws -> WriteCounts
    func rollback()
}

extension IndexBackend {
    /// What a failed operation on this index means to a person (`StoreError.explained`).
    public func explain(_ error: any Error, doing what: String?) -> ReindexError {
        Index.explain(error, index: displayLocation, doing: what)
    }

    /// A failed attempt that may be retried (see the requirement).
    public func markAttemptFailed(_ id: Int64, error: String, backoff: Backoff, now: Double = Clock.now()) throws -> QueuedRequest? {
        try markAttemptFailed(id, error: error, backoff: backoff, now: now, final: false)
    }

    @discardableResult
    public func enqueue(bundleIdentifier: String, kind: RequestKind, identifiers: [String] = [], reason: ReindexReason,
                        maxAttempts: Int = 5, notBefore: Double? = nil) throws -> QueuedRequest {
        try enqueue(bundleIdentifier: bundleIdentifier, kind: kind, identifiers: identifiers, reason: reason,
                    maxAttempts: maxAttempts, notBefore: notBefore, coalesce: true)
    }
}

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
        switch sharing(index) {
        case .fleet: return try openFleet(index, environment: environment)
        case .oneHost: return try IndexStore.open(path: index, create: create)
        }
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

// MARK: The SQLite index

extension IndexStore: IndexBackend {
    public var displayLocation: String { path }
    public var fleet: (any FleetQueue)? { nil }
    public var lossAtOpen: IndexLoss? {
        openReport.lostReason.map { reason in
            let aside = openReport.movedAsideTo.map { " (the damaged file was kept as \($0))" } ?? ""
            return IndexLoss(warning: "the index at \(path) was lost: \(reason)\(aside); a fresh one was created")
        }
    }

    public func snapshot<T>(_ body: () throws -> T) throws -> T {
        try within("BEGIN", body, { $0 })
    }

    public func makeWriter(bundleIdentifier: String, scope: StagedWrites.Scope, requestID: Int64?,
                           declarations: [String: AttributeDeclaration]) throws -> any IndexWriting {
        try StagedWrites(store: self, bundleIdentifier: bundleIdentifier, scope: scope, requestID: requestID, declarations: declarations)
    }

    public func prepareForSession(cancelFD: Int32?) {
        // Wait as long as it takes for another writer, unless this request is cancelled.
        connection.setBusyWait(seconds: 3600, cancelFD: cancelFD)
    }
}


extension StagedWrites: IndexWriting {
    public func commitBatch(with extra: (any IndexBackend) throws -> Void) throws -> Int {
        try commitBatch { (store: IndexStore) throws in try extra(store) }
    }

    public func acknowledge(with extra: (any IndexBackend) throws -> Void) throws -> WriteCounts {
        try acknowledge { (store: IndexStore) throws in try extra(store) }
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
