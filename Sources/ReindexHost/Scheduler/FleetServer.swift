import CReindexSystem
import class Foundation.Thread
import ReindexProtocol
import ReindexStore
import ReindexSystem

/// `reindex serve` on a PostgreSQL index: one worker of a fleet. Any number of them, on any
/// number of machines, share the index's queue:
/// - each worker runs only the bundles installed on its own host, and records which those are;
/// - a request is claimed on the connection that then runs it, `FOR UPDATE SKIP LOCKED`, under a
///   lease a heartbeat thread renews; a bundle's fleet-wide lock is a session advisory lock on
///   that connection, so nothing of a dead worker outlives its connection, and its request is
///   taken over when its lease has expired, resuming from the last committed client state;
/// - `reindex run --queue` (any `enqueue`) wakes idle workers at once through `LISTEN/NOTIFY`;
/// - expiry refreshes and purges are fleet duties, done by one worker per period;
/// - a lost connection fails what was running on it (exit 75 semantics, retried) and is
///   re-opened with backoff while the worker goes on serving.
public final class FleetServer {
    let paths: HostPaths
    let options: ServeOptions
    private let store: PostgresStore
    private let stopSignal = CancelSignal(signals: [SIGINT, SIGTERM])
    /// Woken when a worker's thread finishes.
    private let wake = WakePipe()
    private var workers: [String: Worker] = [:]
    private var discovered: [DiscoveredBundle] = []
    private var lastScan = -Double.infinity
    private var stopping = false
    private var listening = false
    private var cooldown: [String: Double] = [:]
    private let heartbeat: Heartbeat

    /// Opens the index (exit 69 when PostgreSQL cannot be reached) and registers the worker.
    public init(paths: HostPaths, options: ServeOptions) throws(ReindexError) {
        self.paths = paths
        self.options = options
        guard let opened = try Index.open(paths.index, environment: options.environment) as? PostgresStore else {
            throw ReindexError(.usage, "\(paths.indexDisplayName): not a PostgreSQL index")
        }
        store = opened
        do { try store.registerWorker() } catch {
            throw ReindexError(.cannotStart, "\(paths.indexDisplayName): cannot register this worker: \(error)")
        }
        heartbeat = Heartbeat(location: store.location, workerID: store.workerID, leaseSeconds: store.leaseSeconds)
    }

    public func run() -> Int32 {
        ServeLog.info("serving \(store.displayLocation) as worker \(store.workerID) (concurrency \(options.concurrency), lease \(Int(store.leaseSeconds)) s)")
        heartbeat.start()
        if store.created {
            discovered = Discovery.discover(paths).bundles
            ServeLog.warning("the index was just created; every bundle gets reindexAll (indexLost)")
            for bundle in discovered {
                _ = try? store.enqueue(bundleIdentifier: bundle.identifier, kind: .reindexAll, reason: .indexLost, maxAttempts: bundle.manifest.retry.maxAttempts)
            }
        }
        while true {
            let now = Clock.now()
            if stopping && workers.isEmpty { break }
            if !stopping {
                do { try tick(now: now) } catch let error as StoreError where error.code == .connectionLost {
                    listening = false
                    ServeLog.warning("\(error.message); reconnecting")
                } catch {
                    ServeLog.error("\(error)")
                }
            }
            wait(now: now)
            collectFinishedWorkers()
        }
        heartbeat.stop()
        _ = try? store.unregisterWorker()
        ServeLog.info("stopped")
        return 0
    }

    private func tick(now: Double) throws {
        if !listening {
            try store.query("LISTEN \(store.notificationChannel)")
            listening = true
        }
        if now - lastScan >= options.rescanSeconds { try scan(now: now) }
        if try store.claimDuty("expiry", every: 60, now: now) {
            try refreshExpiring(now: now)
            let purged = try store.purgeExpired(now: now)
            if purged > 0 { ServeLog.info("purged \(purged) expired item(s) for the fleet") }
        }
        if try store.claimDuty("hosts", every: 60, now: now) {
            for key in try store.forgetSilentHosts(before: now - options.removalGraceSeconds, now: now) {
                ServeLog.info("\(key): its last host has not been seen for \(Int(options.removalGraceSeconds)) s; missing for the fleet")
            }
        }
        try dispatch(now: now)
    }

    /// Records which bundles this host has; a bundle gone from this host is missing here (and
    /// for the fleet once no host has it). Items are never removed because one host lost a bundle:
    /// only once no host has had it for the removal grace (`removeBundle` checks again, under
    /// the bundle's lock, that no host has it).
    private func scan(now: Double) throws {
        lastScan = now
        let result = Discovery.discover(paths)
        let installed = Set(result.bundles.map(\.key))
        let records = Dictionary(try store.bundleRecords().map { ($0.key, $0) }, uniquingKeysWith: { a, _ in a })
        for bundle in result.bundles {
            if let record = records[bundle.key], record.fingerprint != nil,
               record.fingerprint != bundle.executableFingerprint || record.version != bundle.manifest.version {
                try store.enqueue(bundleIdentifier: bundle.identifier, kind: .reindexAll, reason: .bundleChanged, maxAttempts: bundle.manifest.retry.maxAttempts)
            } else if records[bundle.key]?.fingerprint == nil || records[bundle.key]?.missingSince != nil {
                // New to the fleet, or back after no host had it (another worker may be removing
                // its items at this moment): rebuilt.
                try store.enqueue(bundleIdentifier: bundle.identifier, kind: .reindexAll, reason: .bundleChanged, maxAttempts: bundle.manifest.retry.maxAttempts)
            }
            try store.recordSeen(key: bundle.key, identifier: bundle.identifier, version: bundle.manifest.version, fingerprint: bundle.executableFingerprint, now: now)
        }
        for old in discovered where !installed.contains(old.key) { try store.markMissing(old.key, now: now) }
        discovered = result.bundles
        for record in records.values where !installed.contains(record.key) && workers[record.key] == nil {
            guard let since = record.missingSince, now - since >= options.removalGraceSeconds else { continue }
            let removed = try store.removeBundle(record.key)
            if removed > 0 {
                ServeLog.info("\(record.identifier): on no host of the fleet for \(Int(now - since)) s; removed its \(removed) item(s)")
            }
        }
    }

    private func refreshExpiring(now: Double) throws {
        for bundle in discovered {
            let until = now + bundle.manifest.refreshBeforeExpirySeconds
            let ids = try store.expiringItems(bundle: bundle.key, after: now, until: until, limit: 10_000)
            guard !ids.isEmpty else { continue }
            try store.enqueue(bundleIdentifier: bundle.identifier, kind: .reindexItems, identifiers: ids, reason: .expiring,
                              maxAttempts: bundle.manifest.retry.maxAttempts)
            try store.markRefreshAsked(bundle: bundle.key, identifiers: ids)
        }
    }

    private func dispatch(now: Double) throws {
        cooldown = cooldown.filter { $0.value > now }
        guard workers.count < options.concurrency else { return }
        let mine = Dictionary(discovered.map { ($0.key, $0) }, uniquingKeysWith: { a, _ in a })
        let busy = Set(workers.keys).union(cooldown.keys)
        // Requests of bundles this host does not have are left to hosts that do. Workers that
        // look at once would all pick the oldest request and all but one would find it taken: each
        // picks among the oldest few at random instead, so they mostly claim different ones.
        var candidates = try store.dueCandidates(now: now).filter { mine[$0.bundleKey] != nil && !busy.contains($0.bundleKey) }
        var started = Set<String>()
        while workers.count < options.concurrency, !candidates.isEmpty {
            let window = min(candidates.count, 8)
            let request = candidates.remove(at: Int.random(in: 0..<window))
            guard started.insert(request.bundleKey).inserted, let bundle = mine[request.bundleKey] else { continue }
            start(bundle: bundle, request: request)
        }
    }

    private func start(bundle: DiscoveredBundle, request: QueuedRequest) {
        let worker = Worker(bundle: bundle, request: request)
        workers[bundle.key] = worker
        let paths = self.paths
        let options = self.options
        let wake = self.wake
        let heartbeat = self.heartbeat
        worker.start(waking: wake) { FleetServer.work(worker, paths: paths, options: options, heartbeat: heartbeat) }
    }

    /// Runs one request on a connection of its own: the bundle's fleet-wide lock, the claim with
    /// its lease, the session.
    private static func work(_ worker: Worker, paths: HostPaths, options: ServeOptions, heartbeat: Heartbeat) {
        let runner = RequestRunner(paths: paths, backoff: options.backoff)
        do {
            guard let store = try Index.open(paths.index, environment: options.environment) as? PostgresStore else { return }
            let release = try runner.hold(worker.bundle, store: store, renewingLeases: false)
            defer { release() }
            try store.recoverAbandoned(bundle: worker.bundle.identifier)
            // The lease names the heartbeat's worker id, which renews it.
            store.adoptWorkerID(heartbeat.workerID)
            let due = worker.request
            ServeLog.info("\(worker.bundle.identifier): starting \(due.kind.rawValue) (\(due.reason)), request \(due.id), attempt \(due.attempts + 1) of \(due.maxAttempts)")
            let session = options.session(for: worker, paths: paths)
            let results = runner.run(bundle: worker.bundle, requests: [due], store: store, options: session)
            worker.finish(results: results, error: nil)
        } catch {
            worker.finish(results: nil, error: "busy or unreachable: \(error)")
        }
    }

    private func wait(now: Double) {
        var timeout = options.tickSeconds
        if !stopping, workers.count < options.concurrency,
           let due = try? store.nextDueTime(excludingBundles: Set(workers.keys).union(cooldown.keys)) {
            timeout = min(timeout, max(0, due - now))
        }
        var fds = [pollfd(fd: stopSignal.readFD, events: Int16(POLLIN), revents: 0),
                   pollfd(fd: wake.readFD, events: Int16(POLLIN), revents: 0)]
        if listening && store.connection.isHealthy { fds.append(pollfd(fd: store.connection.socket, events: Int16(POLLIN), revents: 0)) }
        _ = fds.withUnsafeMutableBufferPointer { poll($0.baseAddress, nfds_t($0.count), Int32(timeout * 1000) + 1) }
        if fds[0].revents != 0 {
            _ = stopSignal.drainSignals()
            if !stopping {
                stopping = true
                ServeLog.info("stopping: no new work; cancelling \(workers.count) running request(s)")
                for worker in workers.values { worker.cancel() }
            }
        }
        if fds[1].revents != 0 { wake.drain() }
        if fds.count > 2 && fds[2].revents != 0 {
            let woken = store.connection.notifications()
            if !woken.isEmpty { ServeLog.info("woken by \(woken.count) notification(s): \(Set(woken.map(\.payload)).sorted().joined(separator: ", "))") }
            if !store.connection.isHealthy { listening = false }
        }
    }

    private func collectFinishedWorkers() {
        for (key, worker) in workers {
            guard let (results, error) = worker.finished else { continue }
            workers[key] = nil
            let id = worker.bundle.identifier
            if let error {
                // Another worker claiming the same request first is the queue working as meant.
                if error.contains("already running a request") { ServeLog.info("\(id): taken by another worker") } else { ServeLog.warning("\(id): \(error)") }
                cooldown[key] = Clock.now() + 1
            }
            for result in results ?? [] {
                if let failure = result.failure {
                    ServeLog.warning("\(id): \(result.request.kind.rawValue) (\(result.request.reason)) \(failure.kind.rawValue): \(failure.message) — request \(result.request.id) is \(result.stateAfter.rawValue)")
                } else {
                    ServeLog.info("\(id): \(result.request.kind.rawValue) (\(result.request.reason)) acknowledged: put \(result.counts.put), deleted \(result.counts.deleted), rejected \(result.counts.rejected) in \(DurationText.milliseconds(result.durationSeconds)) s")
                }
            }
        }
    }
}

/// Renews the leases of this worker's running requests and its `last_seen`, every third of the
/// lease, on a connection of its own (reconnecting with backoff when it is lost).
final class Heartbeat: @unchecked Sendable {
    let location: PostgresLocation
    let workerID: String
    let leaseSeconds: Double
    private let lock = Lock()
    private var stopped = false

    init(location: PostgresLocation, workerID: String, leaseSeconds: Double) {
        self.location = location
        self.workerID = workerID
        self.leaseSeconds = leaseSeconds
    }

    func start() {
        let thread = Thread { [self] in
            var store: PostgresStore?
            while !lock.withLock({ stopped }) {
                if store == nil { store = try? PostgresStore.open(location) }
                if let store {
                    store.adoptWorkerID(workerID)
                    do { try store.renewLeases() } catch { ServeLog.warning("cannot renew this worker's leases: \(error)") }
                }
                usleep(useconds_t(max(0.05, leaseSeconds / 3) * 1_000_000))
            }
        }
        thread.start()
    }

    func stop() { lock.withLock { stopped = true } }
}
