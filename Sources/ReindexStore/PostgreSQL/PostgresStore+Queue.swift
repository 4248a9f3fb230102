import ReindexProtocol
import ReindexSystem

/// The durable request queue of the PostgreSQL index: coalescing, claims with leases, backoff,
/// run history.
extension PostgresStore {
    private static let requestColumns =
        "id, bundle, bundle_identifier, kind, identifiers, reason, state, attempts, max_attempts, next_attempt, last_error, client_state, created, updated"

    private func readRequests(_ r: PGResult) -> [QueuedRequest] {
        (0..<r.rowCount).map { row in
            var identifiers: [String] = []
            if let text = r.text(row, 4), let value = try? JSONParser.parse(text: text), let list = value.arrayValue {
                identifiers = list.compactMap(\.stringValue)
            }
            return QueuedRequest(
                id: r.int64(row, 0), bundleKey: r.text(row, 1) ?? "", bundleIdentifier: r.text(row, 2) ?? "",
                kind: RequestKind(rawValue: r.text(row, 3) ?? "") ?? .reindexAll, identifiers: identifiers,
                reason: ReindexReason(r.text(row, 5) ?? "forced"), state: RequestState(rawValue: r.text(row, 6) ?? "") ?? .pending,
                attempts: r.int(row, 7), maxAttempts: r.int(row, 8), nextAttempt: r.double(row, 9), lastError: r.text(row, 10),
                clientState: r.text(row, 11), created: r.double(row, 12), updated: r.double(row, 13))
        }
    }

    private func requests(_ whereClause: String, _ parameters: [String?]) throws -> [QueuedRequest] {
        readRequests(try query("SELECT \(Self.requestColumns) FROM requests WHERE \(whereClause)", parameters))
    }

    public func request(_ id: Int64) throws -> QueuedRequest? {
        try requests("id = $1", [String(id)]).first
    }

    public func requests(bundle identifier: String, state: RequestState) throws -> [QueuedRequest] {
        try requests("bundle = $1 AND state = $2 ORDER BY id", [identifier.lowercased(), state.rawValue])
    }

    public func requests(state: RequestState) throws -> [QueuedRequest] {
        try requests("state = $1 ORDER BY id", [state.rawValue])
    }

    /// The channel `enqueue` notifies and idle workers listen on.
    public var notificationChannel: String { "reindex_queue_\(location.schema)" }

    /// Queues a request, coalescing with what is pending for the bundle as the SQLite index does,
    /// and wakes idle workers (`NOTIFY`, delivered when the transaction commits).
    @discardableResult
    public func enqueue(
        bundleIdentifier: String, kind: RequestKind, identifiers: [String] = [], reason: ReindexReason,
        maxAttempts: Int = 5, notBefore: Double? = nil, coalesce: Bool = true
    ) throws -> QueuedRequest {
        try transaction { () throws -> QueuedRequest in
            let key = bundleIdentifier.lowercased()
            let now = Clock.now()
            // Two hosts queueing for one bundle at once coalesce one after the other.
            try query("SELECT pg_advisory_xact_lock(hashtext($1))", ["reindex enqueue \(location.schema) \(key)"])
            defer { _ = try? query("SELECT pg_notify($1, $2)", [notificationChannel, key]) }
            let pending = coalesce ? try requests(bundle: key, state: .pending) : []
            let plan = Coalescing(pending: pending, kind: kind, identifiers: identifiers, coalesce: coalesce)
            if plan.dropsPendingItems {
                try query("DELETE FROM requests WHERE bundle = $1 AND state = 'pending' AND kind = 'reindexItems'", [key])
            }
            switch plan.outcome {
            case .carriedBy(let request):
                return request
            case .merged(let request):
                try query("UPDATE requests SET identifiers = $2, updated = $3 WHERE id = $1",
                          [String(request.id), IndexStore.identifiersJSON(request.identifiers), String(now)])
                return request
            case .new:
                break
            }
            let inserted = try query("""
                INSERT INTO requests(bundle, bundle_identifier, kind, identifiers, reason, state, attempts, max_attempts, next_attempt, created, updated)
                VALUES($1, $2, $3, $4, $5, 'pending', 0, $6, $7, $8, $8) RETURNING id
                """, [key, bundleIdentifier, kind.rawValue, kind == .reindexItems ? IndexStore.identifiersJSON(identifiers) : nil,
                      reason.rawValue, String(maxAttempts), String(notBefore ?? now), String(now)])
            return QueuedRequest(id: inserted.int64(0, 0), bundleKey: key, bundleIdentifier: bundleIdentifier, kind: kind,
                                 identifiers: kind == .reindexItems ? identifiers : [], reason: reason, state: .pending, attempts: 0,
                                 maxAttempts: maxAttempts, nextAttempt: notBefore ?? now, lastError: nil, clientState: nil, created: now, updated: now)
        }
    }

    /// Claims a request for this worker: pending, or running under a lease that has expired (its
    /// worker died or lost the database). The row is taken `FOR UPDATE SKIP LOCKED`, so two
    /// workers never claim one request; the lease names this worker, its connection's server
    /// process and an expiry that `renewLeases` pushes on while the request runs. A request
    /// taken over from a dead worker has that worker's connection ended first, so nothing it
    /// still had open can commit. Nil when the request is not claimable (any more).
    public func markRunning(_ id: Int64) throws -> QueuedRequest? {
        try transaction { () throws -> QueuedRequest? in
            let now = Clock.now()
            let row = try query("""
                SELECT state, lease_backend, lease_worker FROM requests
                WHERE id = $1 AND (state = 'pending' OR (state = 'running' AND lease_expires < $2))
                FOR UPDATE SKIP LOCKED
                """, [String(id), String(now)])
            guard row.rowCount == 1 else { return nil }
            if row.text(0, 0) == "running", !row.isNull(0, 1) {
                try query("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE pid = $1 AND application_name = $2",
                          [row.text(0, 1), row.text(0, 2).map { String($0.prefix(63)) }])
            }
            try query("""
                UPDATE requests SET state = 'running', attempts = attempts + 1, updated = $2, lease_worker = $3,
                    lease_expires = $4, lease_backend = pg_backend_pid(), progress = NULL
                WHERE id = $1
                """, [String(id), String(now), workerID, String(now + leaseSeconds)])
            let claimed = try request(id)
            if let claimed { claims[id] = claimed.attempts }
            return claimed
        }
    }

    /// Claims the oldest due request of one of `bundles` (keys; nil: any) whose bundle no one in
    /// the fleet is running, `FOR UPDATE SKIP LOCKED`. Used by workers that pull work.
    public func claimNext(bundles: Set<String>?, excluding: Set<String> = [], now: Double = Clock.now()) throws -> QueuedRequest? {
        for candidate in try dueCandidates(now: now) where bundles?.contains(candidate.bundleKey) ?? true && !excluding.contains(candidate.bundleKey) {
            if let claimed = try markRunning(candidate.id) { return claimed }
        }
        return nil
    }

    /// Due requests (pending and due, or under an expired lease) of bundles no one in the fleet
    /// is running, oldest first, at most 64.
    public func dueCandidates(now: Double) throws -> [QueuedRequest] {
        // A bundle with a request running under a live lease is busy fleet-wide.
        try requests("""
            ((state = 'pending' AND next_attempt <= $1) OR (state = 'running' AND lease_expires < $1))
            AND bundle NOT IN (SELECT bundle FROM requests WHERE state = 'running' AND lease_expires >= $1)
            ORDER BY next_attempt, id LIMIT 64
            """, [String(now)])
    }

    public func nextDueRequest(now: Double, excludingBundles: Set<String>) throws -> QueuedRequest? {
        try dueCandidates(now: now).first { !excludingBundles.contains($0.bundleKey) }
    }

    public func nextDueTime(excludingBundles: Set<String> = []) throws -> Double? {
        let r = try query("SELECT bundle, min(next_attempt) FROM requests WHERE state = 'pending' GROUP BY bundle UNION ALL SELECT bundle, min(lease_expires) FROM requests WHERE state = 'running' GROUP BY bundle")
        var earliest: Double?
        for row in 0..<r.rowCount {
            guard let bundle = r.text(row, 0), !excludingBundles.contains(bundle), let due = r.optionalDouble(row, 1) else { continue }
            earliest = min(earliest ?? due, due)
        }
        return earliest
    }

    /// Pushes on the leases of the requests this worker runs, and its own `last_seen`.
    public func renewLeases(now: Double = Clock.now()) throws {
        try query("UPDATE requests SET lease_expires = $2 WHERE lease_worker = $1 AND state = 'running'", [workerID, String(now + leaseSeconds)])
        try query("UPDATE workers SET last_seen = $2 WHERE id = $1", [workerID, String(now)])
    }

    /// Requests of the bundle left running by a worker whose lease expired go back to pending.
    /// (Under a live lease another worker is running them: left alone.)
    public func recoverAbandoned(bundle identifier: String) throws {
        let now = Clock.now()
        try query("""
            UPDATE requests SET state = 'pending', last_error = coalesce(last_error, 'the worker stopped while the request was running'), updated = $2
            WHERE bundle = $1 AND state = 'running' AND (lease_expires IS NULL OR lease_expires < $2)
            """, [identifier.lowercased(), String(now)])
        try sweepLeftovers(bundle: identifier)
    }

    /// Deletes rows of generations that are neither live nor being written (a replaced
    /// generation whose deletion was interrupted).
    public func sweepLeftovers(bundle identifier: String) throws {
        try query("""
            DELETE FROM items WHERE bundle = $1 AND gen <> coalesce((SELECT live_gen FROM bundles WHERE key = $1), 0)
            AND gen NOT IN (SELECT gen FROM staged_generations WHERE bundle = $1)
            """, [identifier.lowercased()])
    }

    public func requeue(_ id: Int64, note: String) throws {
        try transaction { try checkLease(id) }
        claims[id] = nil
        try query("UPDATE requests SET state = 'pending', attempts = greatest(attempts - 1, 0), last_error = $2, updated = $3, lease_worker = NULL, lease_expires = NULL WHERE id = $1",
                  [String(id), note, String(Clock.now())])
    }

    public func saveProgress(_ id: Int64, _ progress: ProgressParams) throws {
        try query("UPDATE requests SET progress = $2 WHERE id = $1", [String(id), JSONWriter.string(progress.json)])
    }

    public func markDone(_ id: Int64) throws {
        try checkLease(id)
        claims[id] = nil
        try query("UPDATE requests SET state = 'done', last_error = NULL, updated = $2, lease_worker = NULL, lease_expires = NULL WHERE id = $1", [String(id), String(Clock.now())])
    }

    public func saveClientState(_ id: Int64, _ clientState: String?) throws {
        try query("UPDATE requests SET client_state = $2, updated = $3 WHERE id = $1", [String(id), clientState, String(Clock.now())])
    }

    @discardableResult
    public func markAttemptFailed(_ id: Int64, error: String, backoff: Backoff, now: Double = Clock.now(), final: Bool) throws -> QueuedRequest? {
        try transaction { () throws -> QueuedRequest? in
            try checkLease(id)
            claims[id] = nil
            guard let current = try requests("id = $1 FOR UPDATE", [String(id)]).first else { return nil }
            if current.attempts >= current.maxAttempts || final {
                try query("UPDATE requests SET state = 'failed', last_error = $2, updated = $3, lease_worker = NULL, lease_expires = NULL WHERE id = $1", [String(id), error, String(now)])
                if current.kind == .reindexAll { try discardGeneration(bundle: current.bundleKey, generation: id) }
            } else {
                try query("UPDATE requests SET state = 'pending', last_error = $2, next_attempt = $3, updated = $4, lease_worker = NULL, lease_expires = NULL WHERE id = $1",
                          [String(id), error, String(now + backoff.delay(afterAttempt: current.attempts)), String(now)])
            }
            return try request(id)
        }
    }

    /// Deletes the rows of a staged generation that never became live.
    func discardGeneration(bundle key: String, generation: Int64) throws {
        let live = try query("SELECT live_gen FROM bundles WHERE key = $1", [key])
        if live.rowCount == 1 && live.int64(0, 0) == generation { return }
        try query("DELETE FROM items WHERE bundle = $1 AND gen = $2", [key, String(generation)])
        try query("DELETE FROM staged_generations WHERE bundle = $1 AND gen = $2", [key, String(generation)])
    }

    /// A replacement's committed but unacknowledged batches, discarded (a forced run that starts
    /// fresh); returns how many items they held, or nil when there were none.
    public func discardPartialReplacement(_ request: QueuedRequest) throws -> Int? {
        try transaction { () throws -> Int? in
            let staged = try query("SELECT committed_batch FROM staged_generations WHERE bundle = $1 AND gen = $2", [request.bundleKey, String(request.id)])
            guard staged.rowCount == 1, staged.int64(0, 0) > 0 else { return nil }
            let count = try query("SELECT count(*) FROM items WHERE bundle = $1 AND gen = $2", [request.bundleKey, String(request.id)]).int(0, 0)
            try discardGeneration(bundle: request.bundleKey, generation: request.id)
            try query("UPDATE requests SET client_state = NULL WHERE id = $1", [String(request.id)])
            return count
        }
    }

    public func recordRun(_ run: RunRecord) throws {
        try query("""
            INSERT INTO runs(request_id, bundle, kind, reason, started, ended, outcome, put, deleted, rejected, error, worker)
            VALUES($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)
            """, [Self.text(run.requestID), run.bundleIdentifier.lowercased(), run.kind.rawValue, run.reason.rawValue, String(run.started), String(run.ended),
                  run.outcome, String(run.counts.put), String(run.counts.deleted), String(run.counts.rejected), run.error, workerID])
    }

    public func lastRun(bundle identifier: String) throws -> RunRecord? {
        let r = try query("SELECT request_id, bundle, kind, reason, started, ended, outcome, put, deleted, rejected, error FROM runs WHERE bundle = $1 ORDER BY id DESC LIMIT 1",
                          [identifier.lowercased()])
        guard r.rowCount == 1 else { return nil }
        return RunRecord(
            requestID: r.isNull(0, 0) ? nil : r.int64(0, 0), bundleIdentifier: r.text(0, 1) ?? "", kind: RequestKind(rawValue: r.text(0, 2) ?? "") ?? .reindexAll,
            reason: ReindexReason(r.text(0, 3) ?? ""), started: r.double(0, 4), ended: r.double(0, 5), outcome: r.text(0, 6) ?? "",
            counts: WriteCounts(put: r.int(0, 7), deleted: r.int(0, 8), rejected: r.int(0, 9)), error: r.text(0, 10))
    }
}
