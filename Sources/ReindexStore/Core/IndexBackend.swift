import ReindexProtocol
import ReindexSystem

/// An index, whichever database holds it: the SQLite file (`IndexStore`, the embedded default)
/// or a PostgreSQL database shared by a fleet (`PostgresStore`). Each conformer is one
/// connection, used from one thread at a time, and keeps its statements in its own folder
/// (SQLite/, PostgreSQL/, with files of matching names).
///
/// It is the sum of the roles callers need, so a caller can ask for no more than it uses:
/// reading (`IndexReading`), writing a request (`RequestWriting`), the durable queue and run
/// history (`RequestQueueing`), the bundle registry and expiry (`BundleRegistry`), and upkeep
/// (`IndexMaintaining`).
public protocol IndexBackend: IndexReading, RequestWriting, RequestQueueing, BundleRegistry, IndexMaintaining {}

/// Reading an index: plain searches, a bundle's items and status, in one snapshot if asked.
public protocol IndexReading: AnyObject {
    /// Where the index is, fit to print: a path, or a connection string with the password masked.
    var displayLocation: String { get }
    func search(_ text: String, bundle: String?, domain: String?, limit: Int, now: Double) throws -> [SearchResult]
    func items(bundle: String, domain: String?, limit: Int, now: Double) throws -> [SearchResult]
    func itemCount(bundle: String, now: Double) throws -> Int
    func knownBundles() throws -> [(key: String, identifier: String)]
    func status(bundle identifier: String) throws -> BundleStatus
    /// Runs `body` in one read snapshot, so what it reads never shows half of a commit.
    func snapshot<T>(_ body: () throws -> T) throws -> T
    /// What a failed operation on this index means to a person, with its exit code (damaged,
    /// busy, unreachable, full disk), naming the index and `what` was being done.
    func explain(_ error: any Error, doing what: String?) -> ReindexError
}

/// Writing what a request (or an application's batch) sends.
public protocol RequestWriting: AnyObject {
    /// Writes for one request or writer, held back as protocol-v1.md says (see `IndexWriting`).
    func makeWriter(bundleIdentifier: String, scope: WriteScope, requestID: Int64?,
                    declarations: [String: AttributeDeclaration]) throws -> any IndexWriting
    /// Called once before a session streams an extension's operations into this index.
    func prepareForSession(cancelFD: Int32?)
    /// The attribute declarations the bundle's items were last written with.
    func declarations(bundle key: String) throws -> [String: AttributeDeclaration]
    /// The client state the bundle's application last ended a batch with, or nil (`LocalIndex`;
    /// IndexStore+ClientState.swift, PostgresStore+ClientState.swift).
    func applicationClientState(bundle key: String) throws -> [UInt8]?
    /// Records the application's client state (at most `LocalIndex.maximumClientStateBytes`);
    /// called inside the transaction that publishes the batch's items.
    func saveApplicationClientState(_ state: [UInt8], bundle key: String) throws
    /// Removes what direct writers of this bundle that are gone left staged: on SQLite the
    /// stagings of dead processes (invisible rows); PostgreSQL rolled theirs back already.
    func sweepAbandonedStagings(bundle key: String) throws
}

/// The durable request queue and the run history (IndexStore+Queue.swift, PostgresStore+Queue.swift).
public protocol RequestQueueing: AnyObject {
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
    func recordRun(_ run: RunRecord) throws
    func lastRun(bundle identifier: String) throws -> RunRecord?
}

/// The bundles the index has seen, and the expiry of their items
/// (IndexStore+Bundles.swift; PostgresStore.swift).
public protocol BundleRegistry: AnyObject {
    func bundleRecords() throws -> [BundleRecord]
    func recordSeen(key: String, identifier: String, version: String?, fingerprint: String?, now: Double) throws
    func markMissing(_ key: String, now: Double) throws
    func removeBundle(_ key: String) throws -> Int
    func expiringItems(bundle key: String, after: Double, until: Double, limit: Int) throws -> [String]
    func markRefreshAsked(bundle key: String, identifiers: [String]) throws
    func purgeExpired(now: Double) throws -> Int
}

/// Upkeep and what opening the index found (IndexStore+Maintenance.swift,
/// PostgresStore+Maintenance.swift).
public protocol IndexMaintaining: AnyObject {
    /// What a check of the index finds: damage, broken invariants, leftovers, a lost index.
    func health(quick: Bool) throws(ReindexError) -> IndexHealth
    /// Why every bundle needs reindexAll (indexLost) since this connection opened the index, or
    /// nil: a SQLite file lost (missing after use, damaged and moved aside) and made anew, or a
    /// PostgreSQL schema this connection created.
    var lossAtOpen: IndexLoss? { get }
    /// The index's fleet role when many hosts share it (PostgreSQL): claims and leases, the
    /// bundle's fleet-wide lock, the workers and hosts; nil for an index one host owns.
    var fleet: (any FleetQueue)? { get }
}

/// An index opened in place of a lost one, or created: every bundle needs reindexAll (indexLost).
public struct IndexLoss: Sendable {
    /// What to tell the person who ran the command (the lost file, where the damaged one was
    /// kept); nil when there is nothing to tell (a PostgreSQL schema made at its first use).
    public var warning: String?
}

extension IndexReading {
    /// What a failed operation on this index means to a person (`StoreError.explained`).
    public func explain(_ error: any Error, doing what: String?) -> ReindexError {
        Index.explain(error, index: displayLocation, doing: what)
    }
}

extension RequestQueueing {
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
