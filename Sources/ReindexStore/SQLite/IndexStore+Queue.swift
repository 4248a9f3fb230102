import ReindexSystem
import ReindexProtocol

extension IndexStore {
    private static let requestColumns =
        "id, bundle, bundle_identifier, kind, identifiers, reason, state, attempts, max_attempts, next_attempt, last_error, client_state, created, updated"

    private func readRequest(_ s: SQLiteStatement) -> QueuedRequest {
        var identifiers: [String] = []
        if let text = s.text(4), let value = try? JSONParser.parse(text: text), let list = value.arrayValue {
            identifiers = list.compactMap(\.stringValue)
        }
        return QueuedRequest(
            id: s.int64(0), bundleKey: s.text(1) ?? "", bundleIdentifier: s.text(2) ?? "",
            kind: RequestKind(rawValue: s.text(3) ?? "") ?? .reindexAll, identifiers: identifiers,
            reason: ReindexReason(s.text(5) ?? "forced"), state: RequestState(rawValue: s.text(6) ?? "") ?? .pending,
            attempts: s.int(7), maxAttempts: s.int(8), nextAttempt: s.double(9), lastError: s.text(10),
            clientState: s.text(11), created: s.double(12), updated: s.double(13))
    }

    private func requests(_ whereClause: String, _ bind: (SQLiteStatement) -> Void) throws(StoreError) -> [QueuedRequest] {
        let s = try statement("SELECT \(Self.requestColumns) FROM requests WHERE \(whereClause)")
        bind(s)
        var result: [QueuedRequest] = []
        while try s.step() { result.append(readRequest(s)) }
        s.reset()
        return result
    }

    /// One request by id.
    public func request(_ id: Int64) throws(StoreError) -> QueuedRequest? {
        try requests("id = ?1") { $0.bind(1, id) }.first
    }

    /// The requests of one bundle in a state, oldest first.
    public func requests(bundle identifier: String, state: RequestState) throws(StoreError) -> [QueuedRequest] {
        try requests("bundle = ?1 AND state = ?2 ORDER BY id") {
            $0.bind(1, identifier.lowercased())
            $0.bind(2, state.rawValue)
        }
    }

    /// Every request in a state, oldest first.
    public func requests(state: RequestState) throws(StoreError) -> [QueuedRequest] {
        try requests("state = ?1 ORDER BY id") { $0.bind(1, state.rawValue) }
    }

    static func identifiersJSON(_ identifiers: [String]) -> String {
        JSONWriter.string(.array(identifiers.map(JSONValue.string)))
    }

    /// Queues a request, coalescing with what is already pending for the bundle: a pending
    /// `reindexAll` absorbs any `reindexItems`; pending `reindexItems` merge their identifiers.
    /// Returns the request that now carries the work.
    @discardableResult
    public func enqueue(
        bundleIdentifier: String, kind: RequestKind, identifiers: [String] = [], reason: ReindexReason,
        maxAttempts: Int = 5, notBefore: Double? = nil, coalesce: Bool = true
    ) throws -> QueuedRequest {
        try transaction { () throws -> QueuedRequest in
            let key = bundleIdentifier.lowercased()
            let now = Clock.now()
            let pending = coalesce ? try requests(bundle: key, state: .pending) : []
            let plan = Coalescing(pending: pending, kind: kind, identifiers: identifiers, coalesce: coalesce)
            if plan.dropsPendingItems {
                let drop = try statement("DELETE FROM requests WHERE bundle = ?1 AND state = 'pending' AND kind = 'reindexItems'")
                drop.bind(1, key)
                try drop.run()
            }
            switch plan.outcome {
            case .carriedBy(let request):
                return request
            case .merged(let request):
                let update = try statement("UPDATE requests SET identifiers = ?2, updated = ?3 WHERE id = ?1")
                update.bind(1, request.id)
                update.bind(2, Self.identifiersJSON(request.identifiers))
                update.bind(3, now)
                try update.run()
                return request
            case .new:
                break
            }
            let insert = try statement("""
                INSERT INTO requests(bundle, bundle_identifier, kind, identifiers, reason, state, attempts, max_attempts, next_attempt, created, updated)
                VALUES(?1, ?2, ?3, ?4, ?5, 'pending', 0, ?6, ?7, ?8, ?8)
                """)
            insert.bind(1, key)
            insert.bind(2, bundleIdentifier)
            insert.bind(3, kind.rawValue)
            insert.bind(4, kind == .reindexItems ? Self.identifiersJSON(identifiers) : nil)
            insert.bind(5, reason.rawValue)
            insert.bind(6, maxAttempts)
            insert.bind(7, notBefore ?? now)
            insert.bind(8, now)
            try insert.run()
            let id = connection.lastInsertRowID
            return QueuedRequest(id: id, bundleKey: key, bundleIdentifier: bundleIdentifier, kind: kind, identifiers: kind == .reindexItems ? identifiers : [],
                                 reason: reason, state: .pending, attempts: 0, maxAttempts: maxAttempts, nextAttempt: notBefore ?? now,
                                 lastError: nil, clientState: nil, created: now, updated: now)
        }
    }

    /// Marks a pending request running and counts the attempt; nil when it is no longer pending
    /// (another host ran it, or it was absorbed). The caller holds the bundle's lock.
    public func markRunning(_ id: Int64) throws -> QueuedRequest? {
        try transaction { () throws -> QueuedRequest? in
            let update = try statement("UPDATE requests SET state = 'running', attempts = attempts + 1, updated = ?2 WHERE id = ?1 AND state = 'pending'")
            update.bind(1, id)
            update.bind(2, Clock.now())
            try update.run()
            guard connection.changes == 1 else { return nil }
            return try request(id)
        }
    }

    /// The oldest pending request that is due, skipping the given bundles.
    public func nextDueRequest(now: Double, excludingBundles: Set<String>) throws(StoreError) -> QueuedRequest? {
        for candidate in try requests("state = 'pending' AND next_attempt <= ?1 ORDER BY next_attempt, id LIMIT 64", { $0.bind(1, now) })
        where !excludingBundles.contains(candidate.bundleKey) {
            return candidate
        }
        return nil
    }

    /// The earliest time a pending request of a bundle not in `excludingBundles` (keys) becomes
    /// due, if any is pending.
    public func nextDueTime(excludingBundles: Set<String> = []) throws(StoreError) -> Double? {
        let s = try statement("SELECT bundle, min(next_attempt) FROM requests WHERE state = 'pending' GROUP BY bundle")
        defer { s.reset() }
        var earliest: Double?
        while try s.step() {
            guard let bundle = s.text(0), !excludingBundles.contains(bundle), let due = s.optionalDouble(1) else { continue }
            earliest = min(earliest ?? due, due)
        }
        return earliest
    }

    /// Requests left `running` by a process that is gone go back to `pending` (the caller holds
    /// the bundle's lock, so nobody else is running them).
    /// What they left staged is swept (`sweepLeftovers`).
    public func recoverAbandoned(bundle identifier: String) throws(StoreError) {
        let abandoned = try requests(bundle: identifier, state: .running)
        let update = try statement("UPDATE requests SET state = 'pending', last_error = coalesce(last_error, 'the host stopped while the request was running'), updated = ?2 WHERE bundle = ?1 AND state = 'running'")
        update.bind(1, identifier.lowercased())
        update.bind(2, Clock.now())
        try update.run()
        try sweepLeftovers(bundle: identifier, abandoned: abandoned)
    }

    /// Puts a request back to `pending` without counting the attempt (it was cancelled).
    public func requeue(_ id: Int64, note: String) throws(StoreError) {
        let update = try statement("UPDATE requests SET state = 'pending', attempts = max(attempts - 1, 0), last_error = ?2, updated = ?3 WHERE id = ?1")
        update.bind(1, id)
        update.bind(2, note)
        update.bind(3, Clock.now())
        try update.run()
    }

    /// Remembers the last progress of a running request, for `status`.
    public func saveProgress(_ id: Int64, _ progress: ProgressParams) throws(StoreError) {
        let update = try statement("UPDATE requests SET progress = ?2 WHERE id = ?1")
        update.bind(1, id)
        update.bind(2, JSONWriter.string(progress.json))
        try update.run()
    }

    /// Marks a request done (inside the acknowledgement's transaction).
    public func markDone(_ id: Int64) throws(StoreError) {
        let update = try statement("UPDATE requests SET state = 'done', last_error = NULL, updated = ?2 WHERE id = ?1")
        update.bind(1, id)
        update.bind(2, Clock.now())
        try update.run()
    }

    /// Stores the client state of a committed batch (inside the batch's transaction).
    public func saveClientState(_ id: Int64, _ clientState: String?) throws(StoreError) {
        let update = try statement("UPDATE requests SET client_state = ?2, updated = ?3 WHERE id = ?1")
        update.bind(1, id)
        update.bind(2, clientState)
        update.bind(3, Clock.now())
        try update.run()
    }

    /// Records a failed attempt: back to `pending` after a backoff delay, or `failed` once the
    /// attempts are used up (its staged generation is then discarded). Returns the new state.
    @discardableResult
    public func markAttemptFailed(_ id: Int64, error: String, backoff: Backoff, now: Double = Clock.now(), final: Bool) throws -> QueuedRequest? {
        try transaction { () throws -> QueuedRequest? in
            guard let current = try request(id) else { return nil }
            if current.attempts >= current.maxAttempts || final {
                let update = try statement("UPDATE requests SET state = 'failed', last_error = ?2, updated = ?3 WHERE id = ?1")
                update.bind(1, id)
                update.bind(2, error)
                update.bind(3, now)
                try update.run()
                if current.kind == .reindexAll { try discardGeneration(bundle: current.bundleKey, generation: id) }
            } else {
                let update = try statement("UPDATE requests SET state = 'pending', last_error = ?2, next_attempt = ?3, updated = ?4 WHERE id = ?1")
                update.bind(1, id)
                update.bind(2, error)
                update.bind(3, now + backoff.delay(afterAttempt: current.attempts))
                update.bind(4, now)
                try update.run()
            }
            return try request(id)
        }
    }

    /// Deletes the rows of a staged generation that never became live.
    func discardGeneration(bundle key: String, generation: Int64) throws(StoreError) {
        let live = try statement("SELECT live_gen FROM bundles WHERE key = ?1")
        live.bind(1, key)
        let liveGeneration = try live.step() ? live.int64(0) : -1
        live.reset()
        guard liveGeneration != generation else { return }
        try deleteItems(where: "bundle = ?1 AND gen = ?2") {
            $0.bind(1, key)
            $0.bind(2, generation)
        }
        try forgetStagedGeneration(bundle: key, generation: generation)
    }

    /// Appends one run to the bundle's history.
    public func recordRun(_ run: RunRecord) throws(StoreError) {
        let insert = try statement("""
            INSERT INTO runs(request_id, bundle, kind, reason, started, ended, outcome, put, deleted, rejected, error)
            VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11)
            """)
        insert.bind(1, run.requestID)
        insert.bind(2, run.bundleIdentifier.lowercased())
        insert.bind(3, run.kind.rawValue)
        insert.bind(4, run.reason.rawValue)
        insert.bind(5, run.started)
        insert.bind(6, run.ended)
        insert.bind(7, run.outcome)
        insert.bind(8, run.counts.put)
        insert.bind(9, run.counts.deleted)
        insert.bind(10, run.counts.rejected)
        insert.bind(11, run.error)
        try insert.run()
    }

    /// The most recent run of a bundle.
    public func lastRun(bundle identifier: String) throws(StoreError) -> RunRecord? {
        let s = try statement("SELECT request_id, bundle, kind, reason, started, ended, outcome, put, deleted, rejected, error FROM runs WHERE bundle = ?1 ORDER BY id DESC LIMIT 1")
        s.bind(1, identifier.lowercased())
        defer { s.reset() }
        guard try s.step() else { return nil }
        return RunRecord(
            requestID: s.isNull(0) ? nil : s.int64(0), bundleIdentifier: s.text(1) ?? "", kind: RequestKind(rawValue: s.text(2) ?? "") ?? .reindexAll,
            reason: ReindexReason(s.text(3) ?? ""), started: s.double(4), ended: s.double(5), outcome: s.text(6) ?? "",
            counts: WriteCounts(put: s.int(7), deleted: s.int(8), rejected: s.int(9)), error: s.text(10))
    }
}
