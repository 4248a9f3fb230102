import CReindexSystem
import class Foundation.Thread
import ReindexProtocol
import ReindexStore
import ReindexSystem

/// The claim policy of a PostgreSQL index: `reindex serve` as one worker of a fleet. Any number
/// of them, on any number of machines, share the index's queue:
/// - each worker runs only the bundles installed on its own host, and records which those are;
/// - a request is claimed on the connection that then runs it, `FOR UPDATE SKIP LOCKED`, under a
///   lease a heartbeat thread renews; a bundle's fleet-wide lock is a session advisory lock on
///   that connection, so nothing of a dead worker outlives its connection, and its request is
///   taken over when its lease has expired, resuming from the last committed client state;
/// - `reindex run --queue` (any `enqueue`) wakes idle workers at once through `LISTEN/NOTIFY`;
/// - expiry refreshes and purges are fleet duties, done by one worker per period;
/// - a lost connection fails what was running on it (exit 75 semantics, retried) and is
///   re-opened with backoff while the worker goes on serving.
final class FleetClaims: ClaimPolicy {
    let paths: HostPaths
    let options: ServeOptions
    private let fleet: PostgresStore
    private let heartbeat: Heartbeat
    private var listening = false

    /// Opens the index (exit 69 when PostgreSQL cannot be reached) and registers the worker.
    init(paths: HostPaths, options: ServeOptions) throws(ReindexError) {
        self.paths = paths
        self.options = options
        fleet = try Index.openFleet(paths.index, environment: options.environment)
        do { try fleet.registerWorker() } catch {
            throw ReindexError(.cannotStart, "\(paths.indexDisplayName): cannot register this worker: \(error)")
        }
        heartbeat = Heartbeat(location: fleet.location, workerID: fleet.workerID, leaseSeconds: fleet.leaseSeconds)
    }

    var store: any IndexBackend { fleet }
    var hasIndex: Bool { true }
    var failedStartCooldown: Double { 1 }
    var servingLine: String {
        "serving \(fleet.displayLocation) as worker \(fleet.workerID) (concurrency \(options.concurrency), lease \(Int(fleet.leaseSeconds)) s)"
    }
    var lostAtStart: String? { fleet.created ? "the index was just created" : nil }

    func begin() { heartbeat.start() }

    func end() {
        heartbeat.stop()
        _ = try? fleet.unregisterWorker()
    }

    /// The index is a server's: nothing of it can be lost here. Listens for wake-ups.
    func checkIndex() throws -> String? {
        if !listening {
            try fleet.query("LISTEN \(fleet.notificationChannel)")
            listening = true
        }
        return nil
    }

    func rebuild() throws {
        throw ReindexError(.internal, "a PostgreSQL index is never rebuilt by a worker")
    }

    func meaning(of error: any Error) -> TurnFailure {
        guard let error = error as? StoreError, error.code == .connectionLost else { return .other }
        listening = false
        return .reconnecting(error.message)
    }

    /// Records which bundles this host has; a bundle gone from this host is missing here (and
    /// for the fleet once no host has it). Items are never removed because one host lost a bundle:
    /// only once no host has had it for the removal grace (`removeBundle` checks again, under
    /// the bundle's lock, that no host has it).
    func record(_ bundles: [DiscoveredBundle], previously: [DiscoveredBundle], running: Set<String>, now: Double) throws {
        let installed = Set(bundles.map(\.key))
        let records = Dictionary(try fleet.bundleRecords().map { ($0.key, $0) }, uniquingKeysWith: { a, _ in a })
        for bundle in bundles {
            if let record = records[bundle.key], record.fingerprint != nil,
               record.fingerprint != bundle.executableFingerprint || record.version != bundle.manifest.version {
                try fleet.enqueue(bundleIdentifier: bundle.identifier, kind: .reindexAll, reason: .bundleChanged, maxAttempts: bundle.manifest.retry.maxAttempts)
            } else if records[bundle.key]?.fingerprint == nil || records[bundle.key]?.missingSince != nil {
                // New to the fleet, or back after no host had it (another worker may be removing
                // its items at this moment): rebuilt.
                try fleet.enqueue(bundleIdentifier: bundle.identifier, kind: .reindexAll, reason: .bundleChanged, maxAttempts: bundle.manifest.retry.maxAttempts)
            }
            try fleet.recordSeen(bundle, now: now)
        }
        for old in previously where !installed.contains(old.key) { try fleet.markMissing(old.key, now: now) }
        for record in records.values where !installed.contains(record.key) && !running.contains(record.key) {
            guard let since = record.missingSince, now - since >= options.removalGraceSeconds else { continue }
            let removed = try fleet.removeBundle(record.key)
            if removed > 0 {
                ServeLog.info("\(record.identifier): on no host of the fleet for \(Int(now - since)) s; removed its \(removed) item(s)")
            }
        }
    }

    /// Expiry and purges are done by one worker of the fleet a minute.
    func takesDuty(_ duty: ServeDuty, now: Double) throws -> Bool {
        switch duty {
        case .refreshExpiring: return try fleet.claimDuty("expiry", every: 60, now: now)
        case .purgeExpired: return try fleet.claimDuty("purge", every: 60, now: now)
        }
    }

    /// Bundles no host has been seen with for the removal grace are missing for the fleet.
    func sharedDuties(now: Double) throws {
        guard try fleet.claimDuty("hosts", every: 60, now: now) else { return }
        for key in try fleet.forgetSilentHosts(before: now - options.removalGraceSeconds, now: now) {
            ServeLog.info("\(key): its last host has not been seen for \(Int(options.removalGraceSeconds)) s; missing for the fleet")
        }
    }

    /// Requests of bundles this host does not have are left to hosts that do. Workers that look
    /// at once would all pick the oldest request and all but one would find it taken: each picks
    /// among the oldest few at random instead, so they mostly claim different ones.
    func candidates(now: Double, busy: Set<String>, installed: [String: DiscoveredBundle], room: Int) throws -> [QueuedRequest] {
        var due = try fleet.dueCandidates(now: now).filter { installed[$0.bundleKey] != nil && !busy.contains($0.bundleKey) }
        var order: [QueuedRequest] = []
        while !due.isEmpty { order.append(due.remove(at: Int.random(in: 0..<min(due.count, 8)))) }
        return order
    }

    /// A worker puts back what a dead one left running only once its lease has expired, when it
    /// starts the bundle's next request (`recoverAbandoned` under the bundle's lock).
    func recover(_ bundle: DiscoveredBundle) throws -> Bool { false }

    var wakeFD: Int32? { listening && fleet.connection.isHealthy ? fleet.connection.socket : nil }

    func drainWake() {
        let woken = fleet.connection.notifications()
        if !woken.isEmpty { ServeLog.info("woken by \(woken.count) notification(s): \(Set(woken.map(\.payload)).sorted().joined(separator: ", "))") }
        if !fleet.connection.isHealthy { listening = false }
    }

    /// A connection of the worker's own holds the bundle's fleet-wide lock; the lease names the
    /// heartbeat's worker id, which renews it.
    var workerStore: WorkerStore {
        let index = paths.index
        let environment = options.environment
        let workerID = heartbeat.workerID
        return { bundle, runner in
            do throws(ReindexError) {
                let store = try Index.openFleet(index, environment: environment)
                let release = try runner.hold(bundle, store: store, renewingLeases: false)
                store.adoptWorkerID(workerID)
                return (store, release)
            } catch {
                // Another worker claiming the same request first is the queue working as meant.
                let taken = error.message.contains("already running a request")
                throw WorkerCannotStart(description: taken ? "taken by another worker" : "busy or unreachable: \(error)", busy: taken)
            }
        }
    }
}
