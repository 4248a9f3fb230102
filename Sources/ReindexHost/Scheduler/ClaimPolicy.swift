import CReindexSystem
import ReindexProtocol
import ReindexStore
import ReindexSystem

/// What `Server`, the one loop of `reindex serve`, leaves to the way its index is shared
/// (`QueueSharing`): which due requests are this host's, how the bundles it has are recorded,
/// which duties it does, how a worker opens the index and holds a bundle, and what a failed turn
/// means. `LocalClaims` is an index one host owns (SQLite), `FleetClaims` one a fleet shares
/// (PostgreSQL).
protocol ClaimPolicy: AnyObject {
    /// The loop's own connection.
    var store: any IndexBackend { get }
    /// False only while a lost index could not be replaced.
    var hasIndex: Bool { get }
    /// The first line of the log.
    var servingLine: String { get }
    /// Why every bundle gets reindexAll (indexLost) at start, or nil.
    var lostAtStart: String? { get }
    /// How long a bundle whose worker could not start waits before it is tried again.
    var failedStartCooldown: Double { get }
    func begin()
    func end()
    /// Why the index must be rebuilt, or nil; called at every turn.
    func checkIndex() throws -> String?
    /// Starts a fresh index in place of a lost one.
    func rebuild() throws
    /// What a failed turn means.
    func meaning(of error: any Error) -> TurnFailure
    /// Records the bundles this host has now and queues what their changes call for.
    func record(_ bundles: [DiscoveredBundle], previously: [DiscoveredBundle], running: Set<String>, now: Double) throws
    /// Whether this process does `duty` this turn.
    func takesDuty(_ duty: ServeDuty, now: Double) throws -> Bool
    /// The duties of a shared queue that have no counterpart on one host.
    func sharedDuties(now: Double) throws
    /// Due requests this host may start, the preferred first (at most one per bundle is started).
    func candidates(now: Double, busy: Set<String>, installed: [String: DiscoveredBundle], room: Int) throws -> [QueuedRequest]
    /// Puts back requests a dead worker left running, holding the bundle's lock; false when the
    /// lock is held by someone else.
    func recover(_ bundle: DiscoveredBundle) throws -> Bool
    /// A descriptor that is readable when new work may have been queued elsewhere, or nil.
    var wakeFD: Int32? { get }
    func drainWake()
    /// How a worker thread opens the index and holds the bundle.
    var workerStore: WorkerStore { get }
}

/// Opens a worker's own connection and holds the bundle's lock: the store and what releases it;
/// throws `WorkerCannotStart` when it cannot.
typealias WorkerStore = @Sendable (DiscoveredBundle, RequestRunner) throws -> (any IndexBackend, () -> Void)

/// A worker could not start its request, which stays in the queue; `busy` when another process
/// (or worker of the fleet) runs the bundle, which is the queue working as meant.
struct WorkerCannotStart: Error, CustomStringConvertible {
    var description: String
    var busy: Bool
}

/// The periodic duties of the loop.
enum ServeDuty {
    case refreshExpiring
    case purgeExpired
}

/// What a failed turn of the loop means.
enum TurnFailure {
    /// The index is gone or damaged: rebuild it.
    case indexLost(String)
    /// Someone else's transaction was in the way: try again next turn.
    case busy
    /// The connection was lost; it is opened again on the next turn.
    case reconnecting(String)
    case other
}

/// An index one host owns (a SQLite file): every due request is this host's, one `serve` at a
/// time (a file lock beside the index), bundles are recorded as this host sees them, and a lost
/// or damaged file is replaced by a fresh index.
final class LocalClaims: ClaimPolicy {
    let paths: HostPaths
    let options: ServeOptions
    /// nil only for the moment `rebuild` swaps the old database for a fresh one.
    private var index: IndexStore!
    private let serveLock: BundleLock
    private var lastPurge = -Double.infinity

    /// Takes the single-`serve` lock, then opens the index.
    init(paths: HostPaths, options: ServeOptions) throws(ReindexError) {
        self.paths = paths
        self.options = options
        let (lock, holder) = try BundleLock.acquire(name: "serve", index: paths.index)
        guard let lock else {
            throw ReindexError(.usage, "another reindex serve\(holder.map { " (pid \($0))" } ?? "") is already serving the index \(paths.index); stop it first")
        }
        serveLock = lock
        index = try IndexStore.open(path: paths.index)
        // The loop never waits long for a request's write lock; it retries on the next turn.
        index.connection.setBusyTimeout(milliseconds: 200)
    }

    var store: any IndexBackend { index }
    var hasIndex: Bool { index != nil }
    var failedStartCooldown: Double { 5 }
    var wakeFD: Int32? { nil }
    func drainWake() {}
    func begin() {}
    func end() { serveLock.release() }
    func sharedDuties(now: Double) throws {}

    var servingLine: String {
        "serving \(paths.index) (pid \(getpid()), concurrency \(options.concurrency), removal grace \(Int(options.removalGraceSeconds)) s)"
    }

    var lostAtStart: String? {
        (index.openReport.lostReason ?? (index.openReport.created ? "there was no index" : nil)).map { "the index was lost (\($0))" }
    }

    func checkIndex() throws -> String? {
        index.fileIsStillThere ? nil : "the database file \(paths.index) was deleted or replaced"
    }

    func meaning(of error: any Error) -> TurnFailure {
        guard let error = error as? StoreError else { return .other }
        if error.code == .damaged { return .indexLost("the database is corrupt (\(error.message))") }
        return error.code == .busy ? .busy : .other
    }

    func rebuild() throws {
        let deleted = !FileSystem.exists(paths.index)
        let corrupt = !deleted && !((try? index.integrityCheck(quick: true)) ?? []).isEmpty
        // Our connection to the old database closes first: closing checkpoints into the old
        // file and removes its -wal and -shm by name, and the old WAL must never meet a fresh
        // database (SQLite would read the old file's pages from it).
        index = nil
        if deleted {
            for suffix in ["-wal", "-shm"] where FileSystem.exists(paths.index + suffix) {
                unlink(paths.index + suffix)
            }
        }
        if corrupt {
            _ = try IndexStore.moveAside(paths.index)
        }
        index = try IndexStore.open(path: paths.index)
        index.connection.setBusyTimeout(milliseconds: 200)
    }

    /// A new bundle, or one whose version or executable changed, gets reindexAll; one that left
    /// the search path is missing, and its items go after the removal grace.
    func record(_ bundles: [DiscoveredBundle], previously: [DiscoveredBundle], running: Set<String>, now: Double) throws {
        var records: [String: BundleRecord] = [:]
        for record in try index.bundleRecords() { records[record.key] = record }
        for bundle in bundles {
            let record = records[bundle.key]
            if record == nil || record?.version == nil {
                ServeLog.info("\(bundle.identifier): new bundle \(bundle.manifest.version); queueing reindexAll")
                try index.enqueue(bundleIdentifier: bundle.identifier, kind: .reindexAll, reason: .bundleChanged, maxAttempts: bundle.manifest.retry.maxAttempts)
            } else if let record, record.version != bundle.manifest.version || record.fingerprint != bundle.executableFingerprint {
                let what = record.version != bundle.manifest.version
                    ? "version \(record.version ?? "?") → \(bundle.manifest.version)" : "its executable changed"
                ServeLog.info("\(bundle.identifier): \(what); queueing reindexAll (bundleChanged)")
                try index.enqueue(bundleIdentifier: bundle.identifier, kind: .reindexAll, reason: .bundleChanged, maxAttempts: bundle.manifest.retry.maxAttempts)
            } else if record?.missingSince != nil {
                ServeLog.info("\(bundle.identifier): back on the search path; its items are kept")
            }
            try index.recordSeen(bundle, now: now)
        }
        let present = Set(bundles.map(\.key))
        for record in records.values where !present.contains(record.key) && record.version != nil {
            if let since = record.missingSince {
                if now - since >= options.removalGraceSeconds, !running.contains(record.key) {
                    let removed = try index.removeBundle(record.key)
                    ServeLog.info("\(record.identifier): gone from the search path for \(Int(now - since)) s; removed its \(removed) item(s)")
                }
            } else {
                try index.markMissing(record.key, now: now)
                ServeLog.info("\(record.identifier): missing from the search path; its items go after \(Int(options.removalGraceSeconds)) s unless it returns")
            }
        }
    }

    /// Expiring items are asked for every turn; expired ones purged every 10 s.
    func takesDuty(_ duty: ServeDuty, now: Double) throws -> Bool {
        switch duty {
        case .refreshExpiring: return true
        case .purgeExpired:
            guard now - lastPurge >= 10 else { return false }
            lastPurge = now
            return true
        }
    }

    /// The oldest due request of each bundle nobody runs.
    func candidates(now: Double, busy: Set<String>, installed: [String: DiscoveredBundle], room: Int) throws -> [QueuedRequest] {
        var skipped = busy
        var found: [QueuedRequest] = []
        while found.count < room, let request = try index.nextDueRequest(now: now, excludingBundles: skipped) {
            skipped.insert(request.bundleKey)
            if installed[request.bundleKey] != nil { found.append(request) }
        }
        return found
    }

    func recover(_ bundle: DiscoveredBundle) throws -> Bool {
        guard let (lock, _) = try? BundleLock.acquire(name: bundle.key, index: paths.index), let lock else { return false }
        defer { lock.release() }
        try index.recoverAbandoned(bundle: bundle.identifier)
        return true
    }

    var workerStore: WorkerStore {
        let path = paths.index
        return { bundle, _ in
            let store = try IndexStore.open(path: path)
            let (lock, holder) = try BundleLock.acquire(name: bundle.key, index: path)
            guard let lock else {
                throw WorkerCannotStart(description: "busy: process \(holder.map(String.init) ?? "?") is running a request for it; trying again later", busy: true)
            }
            return (store, { lock.release() })
        }
    }
}
