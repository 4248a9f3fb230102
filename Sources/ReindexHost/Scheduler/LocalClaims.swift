import CReindexSystem
import ReindexProtocol
import ReindexStore
import ReindexSystem

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
