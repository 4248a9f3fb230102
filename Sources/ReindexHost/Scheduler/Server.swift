import ReindexStore
import CReindexSystem
import class Foundation.Thread
import ReindexProtocol
import ReindexSystem

// `Server` is the one loop of `reindex serve` on either index (queue, expiry, purge, index loss,
// rescans, workers and their shutdown), each duty a method; what differs between an index one
// host owns and one a fleet shares is its `ClaimPolicy` (ClaimPolicy.swift, LocalClaims.swift,
// FleetClaims.swift). Its options, its workers and its log lines are `ServeOptions`, `Worker` and
// `ServeLog`.

/// `reindex serve`: keeps every bundle's index current without anyone typing a command.
///
/// It works the durable request queue (at most `concurrency` extensions at once, never two of the
/// same bundle, honouring backoff), asks for items that are about to expire and purges expired
/// ones, rebuilds a lost index, and notices new, changed and removed bundles (inotify with a
/// polling fallback; SIGHUP rescans). SIGTERM/SIGINT stop new work, cancel running requests
/// through the protocol (they return to the queue) and exit cleanly. Which requests are this
/// host's, and how the bundles it has are recorded, is its claim policy's: every one on a SQLite
/// index (`LocalClaims`), those it claims under a lease on a fleet's PostgreSQL index
/// (`FleetClaims`).
public final class Server {
    let paths: HostPaths
    let options: ServeOptions
    private let policy: any ClaimPolicy
    private var exitStatus: Int32 = 0
    private let stopSignal = CancelSignal(signals: [SIGINT, SIGTERM])
    private let hangupSignal = CancelSignal(signals: [SIGHUP])
    /// Woken when a worker's thread finishes.
    private let wake = WakePipe()
    private var workers: [String: Worker] = [:]
    /// Bundles whose last dispatch could not start (lock busy, index unreadable): not before then.
    private var cooldown: [String: Double] = [:]
    private var discovered: [DiscoveredBundle] = []
    private var reportedProblems = Set<String>()
    private var lastScan = -Double.infinity
    private var stopping = false
    private let watcher = SearchPathWatcher()

    /// Opens the index under the claim policy its sharing calls for (on SQLite, the single-`serve`
    /// lock first; on PostgreSQL, exit 69 when it cannot be reached, and the worker registered).
    public init(paths: HostPaths, options: ServeOptions) throws(ReindexError) {
        if options.sandbox.required, case .unavailable = SandboxSupport.current {
            throw ReindexError(.cannotStart, "serve --require-sandbox: sandbox \(SandboxSupport.current); no extension could run")
        }
        self.paths = paths
        self.options = options
        switch Index.sharing(paths.index) {
        case .oneHost: policy = try LocalClaims(paths: paths, options: options)
        case .fleet: policy = try FleetClaims(paths: paths, options: options)
        }
    }

    private var store: any IndexBackend { policy.store }

    /// Runs until SIGTERM or SIGINT; returns the exit status.
    public func run() -> Int32 {
        ServeLog.info(policy.servingLine)
        for entry in paths.searchPath { ServeLog.info("search path: \(entry.directory)\(FileSystem.isDirectory(entry.directory) ? "" : " (missing)")") }
        if case .unavailable = SandboxSupport.current {
            ServeLog.warning("sandbox \(SandboxSupport.current): extensions run unsandboxed; --require-sandbox refuses to run them instead")
        } else {
            ServeLog.info("sandbox: \(SandboxSupport.current)")
        }
        policy.begin()
        if let reason = policy.lostAtStart {
            // Before the first scan, so the rebuild is asked for as indexLost, not as new bundles.
            discovered = Discovery.discover(paths).bundles
            ServeLog.warning("\(reason); every bundle gets reindexAll (indexLost)")
            queueIndexLost()
        }
        turn { try scan(now: Clock.now()) }
        for bundle in discovered { _ = try? policy.recover(bundle) }
        while true {
            let now = Clock.now()
            if stopping && workers.isEmpty { break }
            if !stopping { turn { try tick(now: now) } }
            wait(now: now)
            collectFinishedWorkers()
        }
        policy.end()
        ServeLog.info("stopped")
        return exitStatus
    }

    // MARK: One turn of the loop

    /// Runs a turn's work; what a failure means is the policy's to say.
    private func turn(_ work: () throws -> Void) {
        do { try work() } catch {
            switch policy.meaning(of: error) {
            case .indexLost(let reason): indexLost(reason)
            case .busy: lastScan = -Double.infinity  // a request holds the write lock: this turn's bookkeeping waits for the next
            case .reconnecting(let message): ServeLog.warning("\(message); reconnecting")
            case .other: ServeLog.error("\(error)")
            }
        }
    }

    private func tick(now: Double) throws {
        if let reason = try policy.checkIndex() {
            indexLost(reason)
            return
        }
        if watcher.drain() || hangupSignal.drainSignals() > 0 || now - lastScan >= options.rescanSeconds {
            try scan(now: now)
        }
        if try policy.takesDuty(.refreshExpiring, now: now) { try refreshExpiring(now: now) }
        if try policy.takesDuty(.purgeExpired, now: now) {
            let purged = try store.purgeExpired(now: now)
            if purged > 0 { ServeLog.info("purged \(purged) expired item(s)") }
        }
        try policy.sharedDuties(now: now)
        try dispatch(now: now)
    }

    private func wait(now: Double) {
        var timeout = options.tickSeconds
        if !stopping, workers.count < options.concurrency {
            // Bundles that are busy or cooling down cannot start anything now: their due
            // requests must not turn this wait into a busy loop.
            let blocked = Set(workers.keys).union(cooldown.keys)
            if let due = try? store.nextDueTime(excludingBundles: blocked) { timeout = min(timeout, max(0, due - now)) }
            if let cooled = cooldown.values.min() { timeout = min(timeout, max(0, cooled - now)) }
        }
        var fds = [pollfd(fd: stopSignal.readFD, events: Int16(POLLIN), revents: 0),
                   pollfd(fd: hangupSignal.readFD, events: Int16(POLLIN), revents: 0),
                   pollfd(fd: wake.readFD, events: Int16(POLLIN), revents: 0)]
        let wakeFD = policy.wakeFD
        if let wakeFD { fds.append(pollfd(fd: wakeFD, events: Int16(POLLIN), revents: 0)) }
        if watcher.fd >= 0 { fds.append(pollfd(fd: watcher.fd, events: Int16(POLLIN), revents: 0)) }
        _ = fds.withUnsafeMutableBufferPointer { poll($0.baseAddress, nfds_t($0.count), Int32(timeout * 1000) + 1) }
        if fds[0].revents != 0 {
            _ = stopSignal.drainSignals()
            if !stopping {
                stopping = true
                ServeLog.info("stopping: no new work; cancelling \(workers.count) running request(s)")
                for worker in workers.values { worker.cancel() }
            }
        }
        if fds[2].revents != 0 { wake.drain() }
        if wakeFD != nil, fds[3].revents != 0 { policy.drainWake() }
    }

    // MARK: Bundles

    /// Rescans the search path and has the policy record what changed (and queue its requests).
    private func scan(now: Double) throws {
        lastScan = now
        let result = Discovery.discover(paths)
        let previous = discovered
        discovered = result.bundles
        for problem in result.problems where reportedProblems.insert(problem.path + problem.reason).inserted {
            ServeLog.warning("bundle problem: \(problem.reason)")
        }
        // What the sandbox will not enforce for a bundle, said once (Landlock missing altogether
        // was said at start).
        for bundle in discovered {
            for warning in SandboxSupport.current.warnings(for: bundle, options: options.sandbox)
            where !warning.hasPrefix("sandbox unavailable") && reportedProblems.insert(bundle.key + warning).inserted {
                ServeLog.warning(warning + (options.sandbox.required ? "; --require-sandbox: its requests fail" : ""))
            }
        }
        watcher.rearm(paths: paths, bundles: discovered)
        try policy.record(discovered, previously: previous, running: Set(workers.keys), now: now)
    }

    private func queueIndexLost() {
        for bundle in discovered {
            do {
                try store.enqueue(bundleIdentifier: bundle.identifier, kind: .reindexAll, reason: .indexLost, maxAttempts: bundle.manifest.retry.maxAttempts)
                try store.recordSeen(bundle)
            } catch {
                ServeLog.error("\(bundle.identifier): cannot queue reindexAll (indexLost): \(error)")
            }
        }
    }

    /// The index was lost while serving: wait for running requests, have the policy start a fresh
    /// index and ask every bundle for everything.
    private func indexLost(_ reason: String) {
        ServeLog.warning("the index was lost: \(reason); rebuilding it from every bundle")
        for worker in workers.values { worker.cancel() }
        while !workers.isEmpty {
            usleep(50_000)
            collectFinishedWorkers()
        }
        do {
            try policy.rebuild()
            queueIndexLost()
            turn { try scan(now: Clock.now()) }
        } catch {
            ServeLog.error("cannot create a fresh index: \(error); stopping")
            if !policy.hasIndex {
                stopping = true
                exitStatus = ReindexError.Code.ioError.exitCode
            }
        }
    }

    // MARK: Expiry

    /// Asks once for each item whose expiration falls within the bundle's refresh window (again
    /// only if the extension gives it a different expiration).
    private func refreshExpiring(now: Double) throws {
        for bundle in discovered where workers[bundle.key] == nil {
            let until = now + bundle.manifest.refreshBeforeExpirySeconds
            let ids = try store.expiringItems(bundle: bundle.key, after: now, until: until, limit: 10_000)
            guard !ids.isEmpty else { continue }
            try store.enqueue(bundleIdentifier: bundle.identifier, kind: .reindexItems, identifiers: ids, reason: .expiring,
                              maxAttempts: bundle.manifest.retry.maxAttempts)
            try store.markRefreshAsked(bundle: bundle.key, identifiers: ids)
            ServeLog.info("\(bundle.identifier): \(ids.count) item(s) expire within \(Int(bundle.manifest.refreshBeforeExpirySeconds)) s; queueing reindexItems (expiring)")
        }
    }

    // MARK: Running requests

    /// Bundles whose last request failed without its failure being recorded: the request is
    /// still marked running, so it is put back in the queue once the store takes writes again.
    private var unrecorded = Set<String>()
    /// How many requests of a bundle in a row failed unrecorded (reset by any recorded outcome):
    /// the wait before the next try grows with it, as a failed request's retries do, so a disk
    /// that stays full is not hammered every `--retry-base` seconds.
    private var unrecordedStreak: [String: Int] = [:]

    private func unrecordedDelay(_ key: String) -> Double {
        options.backoff.delay(afterAttempt: unrecordedStreak[key] ?? 1)
    }

    private func recoverUnrecorded(now: Double) {
        for key in unrecorded where workers[key] == nil && (cooldown[key] ?? 0) <= now {
            guard let bundle = discovered.first(where: { $0.key == key }) else { unrecorded.remove(key); unrecordedStreak[key] = nil; continue }
            do {
                guard try policy.recover(bundle) else { continue }
                unrecorded.remove(key)
                ServeLog.info("\(bundle.identifier): the request whose failure could not be recorded is queued again")
            } catch {
                cooldown[key] = now + unrecordedDelay(key)
            }
        }
    }

    private func dispatch(now: Double) throws {
        recoverUnrecorded(now: now)
        cooldown = cooldown.filter { $0.value > now }
        guard workers.count < options.concurrency else { return }
        let installed = Dictionary(discovered.map { ($0.key, $0) }, uniquingKeysWith: { a, _ in a })
        let busy = Set(workers.keys).union(cooldown.keys)
        var started = Set<String>()
        for request in try policy.candidates(now: now, busy: busy, installed: installed, room: options.concurrency - workers.count) {
            guard workers.count < options.concurrency else { return }
            guard started.insert(request.bundleKey).inserted, let bundle = installed[request.bundleKey] else { continue }
            start(bundle: bundle, request: request)
        }
    }

    private func start(bundle: DiscoveredBundle, request: QueuedRequest) {
        let worker = Worker(bundle: bundle, request: request)
        workers[bundle.key] = worker
        let paths = self.paths
        let options = self.options
        let open = policy.workerStore
        ServeLog.info("\(bundle.identifier): starting \(request.kind.rawValue) (\(request.reason)), request \(request.id), attempt \(request.attempts + 1) of \(request.maxAttempts)")
        worker.start(waking: wake) { Server.work(worker, paths: paths, options: options, open: open) }
    }

    /// Runs one request on a connection of its own, holding the bundle's lock (the policy's).
    private static func work(_ worker: Worker, paths: HostPaths, options: ServeOptions, open: WorkerStore) {
        let runner = RequestRunner(paths: paths, backoff: options.backoff)
        do {
            let (store, release) = try open(worker.bundle, runner)
            defer { release() }
            try store.recoverAbandoned(bundle: worker.bundle.identifier)
            let session = options.session(for: worker, paths: paths)
            let results = runner.run(bundle: worker.bundle, requests: [worker.request], store: store, options: session)
            worker.finish(results: results, error: nil)
        } catch let error as WorkerCannotStart {
            worker.finish(results: nil, error: error.description, busy: error.busy)
        } catch {
            worker.finish(results: nil, error: "\(error)")
        }
    }

    private func collectFinishedWorkers() {
        for (key, worker) in workers {
            guard let (results, error) = worker.finished else { continue }
            workers[key] = nil
            let id = worker.bundle.identifier
            if let error {
                if worker.busy {
                    // Another process running the bundle, or another worker of the fleet claiming
                    // the same request first, is the queue working as meant.
                    ServeLog.info("\(id): \(error)")
                } else {
                    ServeLog.warning("\(id): \(error)")
                }
                cooldown[key] = Clock.now() + (worker.busy ? 1 : policy.failedStartCooldown)
            }
            for result in results ?? [] {
                if let failure = result.failure {
                    let next: String
                    switch result.stateAfter {
                    case .failed: next = "failed for good after \(result.request.attempts) attempt(s)"
                    case .pending:
                        if failure.requeuesWithoutPenalty {
                            next = "back in the queue"
                        } else {
                            let retry = (try? store.request(result.request.id))??.nextAttempt ?? Clock.now()
                            next = "retry \(result.request.attempts + 1) of \(result.request.maxAttempts) in \(Int((retry - Clock.now()).rounded())) s"
                        }
                    case .running:
                        // Not even the failure could be written: put the request back once the
                        // store takes writes again (see recoverUnrecorded).
                        unrecorded.insert(key)
                        unrecordedStreak[key, default: 0] += 1
                        let delay = unrecordedDelay(key)
                        cooldown[key] = Clock.now() + delay
                        next = "its failure could not be recorded; it goes back in the queue once the index takes writes again (next try in \(Int(delay.rounded())) s)"
                    default: next = "request \(result.request.id) is \(result.stateAfter.rawValue)"
                    }
                    if result.stateAfter != .running { unrecordedStreak[key] = nil }
                    // Where to look next: the queue's id, the id on the wire, and the bundle's log.
                    let wire = failure.wireID.map { ", wire id \($0)" } ?? ""
                    ServeLog.warning("\(id): \(result.request.kind.rawValue) (\(result.request.reason)) \(failure.kind.rawValue): \(failure.message) — \(next) (request \(result.request.id)\(wire); the extension's stderr is in \(paths.logFile(for: id)))")
                } else {
                    unrecordedStreak[key] = nil
                    ServeLog.info("\(id): \(result.request.kind.rawValue) (\(result.request.reason)) acknowledged: put \(result.counts.put), deleted \(result.counts.deleted), rejected \(result.counts.rejected) in \(DurationText.milliseconds(result.durationSeconds)) s")
                }
            }
        }
    }
}
