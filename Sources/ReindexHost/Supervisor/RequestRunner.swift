import ReindexStore
import ReindexSystem
import ReindexProtocol

/// Runs queued requests of one bundle through one extension session and keeps the queue's books:
/// the bundle lock, recovering requests a dead host left running, marking attempts, backoff,
/// the run history. `reindex run`, `debug`, `validate --run` and `serve` all go through here.
public struct RequestRunner {
    public var paths: HostPaths
    public var backoff: Backoff

    public init(paths: HostPaths, backoff: Backoff = Backoff()) {
        self.paths = paths
        self.backoff = backoff
    }

    /// Takes the bundle's lock, or explains who holds it.
    public func lock(_ bundle: DiscoveredBundle) throws(ReindexError) -> BundleLock {
        let (lock, holder) = try BundleLock.acquire(name: bundle.key, index: paths.index)
        guard let lock else {
            let who = holder.map { "process \($0)" } ?? "another reindex process"
            throw ReindexError(.requestFailed, "\(bundle.identifier): \(who) is already running a request for this bundle; try again when it has finished")
        }
        return lock
    }

    /// Takes the bundle's lock for the index `store` is: the file lock beside a SQLite index, or
    /// for a PostgreSQL index one held by the store's connection across the whole fleet. Returns
    /// what releases it.
    /// On PostgreSQL, unless `renewingLeases` is false (a fleet worker renews its own), a
    /// heartbeat renews the lease of what this process runs, so a long forced run is not taken
    /// over by a fleet worker.
    public func hold(_ bundle: DiscoveredBundle, store: any IndexBackend, renewingLeases: Bool = true) throws(ReindexError) -> () -> Void {
        if let fleet = store.fleet {
            try fleet.lockBundle(key: bundle.key, identifier: bundle.identifier)
            let heartbeat = renewingLeases ? Heartbeat(location: fleet.location, workerID: fleet.workerID, leaseSeconds: fleet.leaseSeconds) : nil
            heartbeat?.start()
            return {
                heartbeat?.stop()
                fleet.unlockBundle(bundle.key)
            }
        }
        let lock = try lock(bundle)
        return { lock.release() }
    }

    /// The session `run` would make for `bundle` (the host's paths for its sandbox).
    public func session(bundle: DiscoveredBundle, store: any IndexBackend, options: SessionOptions, logPath: String? = nil) -> ExtensionSession {
        var options = options
        if options.sandbox.paths == nil { options.sandbox.paths = paths }
        return ExtensionSession(bundle: bundle, store: store, logPath: logPath ?? paths.logFile(for: bundle.identifier), options: options)
    }

    /// Runs `requests` (already in the queue) in order in one session — `prepared` (from
    /// `session(bundle:…)`, perhaps launched already) or a new one. The caller holds the
    /// bundle's lock. A failure to start fails every request; after another failure the session
    /// ends and the remaining requests stay pending.
    public func run(
        bundle: DiscoveredBundle, requests: [QueuedRequest], store: any IndexBackend, options: SessionOptions,
        logPath: String? = nil, session prepared: ExtensionSession? = nil
    ) -> [RequestResult] {
        var results: [RequestResult] = []
        let session = prepared ?? self.session(bundle: bundle, store: store, options: options, logPath: logPath)
        let options = session.options
        // Wait as long as it takes for another writer, unless this request is cancelled.
        store.prepareForSession(cancelFD: options.cancelFD)
        defer {
            session.shutdown()
            // The session is over (its last output drained): the recording's ending says how.
            let failure = results.first?.failure
            session.recorder?.finish(outcome: results.first.map { $0.failure?.kind.rawValue ?? "acknowledged" } ?? "unfinished",
                                     error: failure?.message)
        }
        var started = false
        for queued in requests {
            let begin = Clock.now()
            guard let request = (try? store.markRunning(queued.id)) ?? nil else { continue }
            if !started {
                session.recorder = recorder(bundle: bundle, request: request, options: options, log: session.log)
                do {
                    try session.start()
                    started = true
                } catch {
                    session.shutdown(graceful: false)
                    results.append(finish(request, store: store, counts: WriteCounts(), rejections: [], failure: withTail(error, session), started: begin))
                    return results
                }
            }
            let outcome = session.perform(request) { (store, counts) throws in
                try store.markDone(request.id)
                try store.recordSeen(key: bundle.key, identifier: bundle.identifier, version: bundle.manifest.version, fingerprint: bundle.executableFingerprint, now: Clock.now())
                try store.recordRun(RunRecord(
                    requestID: request.id, bundleIdentifier: bundle.identifier, kind: request.kind, reason: request.reason,
                    started: begin, ended: Clock.now(), outcome: "acknowledged", counts: counts, error: nil))
            }
            if let failure = outcome.failure {
                session.shutdown(graceful: false)
                var result = finish(request, store: store, counts: outcome.counts, rejections: outcome.rejections, failure: withTail(failure, session), started: begin)
                result.warnings += session.takeWarnings()
                results.append(result)
                return results
            }
            var result = RequestResult(request: request, counts: outcome.counts, failure: nil, started: begin, ended: Clock.now(),
                                       stateAfter: .done, rejections: outcome.rejections)
            result.warnings += session.takeWarnings()
            if request.kind == .reindexAll && outcome.counts.put == 0 && outcome.counts.removed > 0 {
                result.warnings.append("the reindexAll put no items and removed all \(outcome.counts.removed) the bundle had")
            }
            results.append(result)
        }
        if let late = session.takeLateViolation(), !results.isEmpty {
            results[results.count - 1].warnings.append("protocol violation: \(late); the request stands")
        }
        return results
    }

    /// The recorder of a session that starts with `request`, when the command records and the
    /// manifest allows it (one recording per session: the requests after its first are not).
    private func recorder(bundle: DiscoveredBundle, request: QueuedRequest, options: SessionOptions, log: ExtensionLog) -> SessionRecorder? {
        guard let mode = options.recordsAs, bundle.manifest.record, options.replay == nil else { return nil }
        let header = Recording.Header(bundleIdentifier: bundle.identifier, requestID: request.id, request: request.kind,
                                      reason: request.reason.rawValue, started: Clock.now(), mode: mode)
        return SessionRecorder(directory: paths.recordingsDirectory(for: bundle.identifier), header: header,
                               maximumBytes: Recording.maximumBytes(options.environment), log: log)
    }

    /// The failure with the extension's latest stderr lines (after shutdown, they are complete).
    private func withTail(_ failure: RequestFailure, _ session: ExtensionSession) -> RequestFailure {
        var failure = failure
        let lines = session.log.lastLines
        if !lines.isEmpty { failure.stderrTail = lines }
        return failure
    }

    /// Books a failed attempt: requeued with backoff, or failed for good; recorded in the history.
    ///
    /// When the store cannot record it (a full disk, say), the request stays `running` — the state
    /// a killed host leaves — and the failure says so; the next `reindex run` of the bundle, or
    /// `reindex serve` (which retries the recovery), puts it back in the queue.
    private func finish(_ request: QueuedRequest, store: any IndexBackend, counts: WriteCounts, rejections: [Rejection], failure: RequestFailure, started: Double) -> RequestResult {
        var failure = failure
        var state: RequestState = .pending
        var stateWritten = false
        do {
            if failure.requeuesWithoutPenalty {
                try store.requeue(request.id, note: failure.message)
            } else if let updated = try store.markAttemptFailed(request.id, error: failure.message, backoff: backoff, now: Clock.now(),
                                                                final: failure.isFinal) {
                state = updated.state
            }
            stateWritten = true
            let ended = Clock.now()
            try store.recordRun(RunRecord(
                requestID: request.id, bundleIdentifier: request.bundleIdentifier, kind: request.kind, reason: request.reason,
                started: started, ended: ended, outcome: failure.kind.rawValue, counts: counts, error: failure.message))
        } catch let lost as StoreError where lost.code == .leaseLost {
            // Another worker took the request over while this one was frozen: its books are the
            // other worker's now, and this attempt leaves them alone.
            state = .running
            if !failure.message.contains("is no longer this worker's") { failure.message += "; \(lost)" }
        } catch {
            if !stateWritten { state = .running }
            failure.message += stateWritten
                ? "; its run history could not be written (\(error))" : "; the failure could not be recorded either (\(error))"
        }
        return RequestResult(request: request, counts: counts, failure: failure, started: started, ended: Clock.now(), stateAfter: state, rejections: rejections)
    }
}
