import ReindexProtocol
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#elseif canImport(Musl)
import Musl
#endif

/// The index in a PostgreSQL database: the same items, generations, queue and history as the
/// SQLite index, shared by any number of hosts (`reindex serve` workers and commands).
///
/// One `PostgresStore` is one connection, used from one thread at a time. A connection that is
/// lost (server restarted, backend terminated, network cut) fails the statement in progress —
/// the server rolls its transaction back, so nothing half-done stays — and is re-opened, with
/// backoff, by the next call made outside a transaction. Serialization failures and deadlocks of
/// the store's own short transactions are retried.
public final class PostgresStore {
    public let location: PostgresLocation
    public private(set) var connection: PGConnection
    /// The quoted schema name, for the statements that name it.
    let schema: String
    /// This process's identity in the fleet (`workers.id`).
    public private(set) var workerID: String
    public let hostName: String
    /// This open created the schema (a new index): the caller queues the rebuilds, and only one
    /// host of a fleet ever sees it, since migrations run under a lock.
    public private(set) var created = false
    private var reconnectDelay = 0.1
    private var nextReconnect = 0.0

    /// Seconds a claimed request's lease lasts without renewal (`REINDEX_PG_LEASE_SECONDS`, for
    /// fleets that want a dead worker's request taken over sooner; renewed every third of it).
    public var leaseSeconds = 30.0
    public static let defaultLeaseSeconds = 30.0

    /// Opens (creating or migrating the schema if needed) the index `location` names. A server
    /// that cannot be reached is `cannotStart` (exit 69), naming the host and port.
    public static func open(_ location: PostgresLocation) throws(ReindexError) -> PostgresStore {
        let connection: PGConnection
        do { connection = try PGConnection(location.connectionString) } catch {
            throw ReindexError(.cannotStart, "\(location.displayName): \(error.message)")
        }
        let store = PostgresStore(location: location, connection: connection)
        do {
            try store.migrate()
        } catch let error as PostgresError {
            throw ReindexError(error.connectionLost ? .cannotStart : .ioError, "\(location.displayName): cannot prepare the index schema \(location.schema): \(error)")
        } catch {
            throw ReindexError(.ioError, "\(location.displayName): cannot prepare the index schema \(location.schema): \(error)")
        }
        return store
    }

    private init(location: PostgresLocation, connection: PGConnection) {
        self.location = location
        self.connection = connection
        schema = PGConnection.quoteIdentifier(location.schema)
        var name = [UInt8](repeating: 0, count: 256)
        _ = name.withUnsafeMutableBufferPointer { gethostname(UnsafeMutableRawPointer($0.baseAddress!).assumingMemoryBound(to: CChar.self), 255) }
        hostName = String(decoding: name.prefix { $0 != 0 }, as: UTF8.self)
        workerID = "\(hostName):\(getpid()):\(UInt32.random(in: 0...UInt32.max))"
    }

    /// Takes the identity of the worker process this connection works for (its leases, its
    /// sessions' `application_name`).
    public func adoptWorkerID(_ id: String) {
        guard id != workerID else { return }
        workerID = id
        _ = try? connection.query("SELECT set_config('application_name', $1, false)", [String(id.prefix(63))])
    }

    /// Points the connection at the deployment's schema.
    private func useSchema() throws(PostgresError) {
        try connection.execute("SET search_path TO \(schema); SET statement_timeout = 0")
        // The worker's name on its connections, so a takeover ends only this worker's sessions.
        try connection.query("SELECT set_config('application_name', $1, false)", [String(workerID.prefix(63))])
    }

    /// Creates the schema, the `unaccent` extension (in this schema unless the database has it
    /// already) and the text-search configuration, and applies the migrations, under an
    /// advisory lock so hosts opening a new index at once wait for each other.
    private func migrate() throws {
        // The common case, an index already at this version, takes no lock.
        let known = try connection.query("SELECT to_regclass($1) IS NOT NULL", ["\(schema).schema_version"])
        if known.bool(0, 0), try connection.query("SELECT max(version) FROM \(schema).schema_version").int(0, 0) == PostgresSchema.migrations.count {
            try useSchema()
            return
        }
        try connection.transaction { () throws in
            try connection.query("SELECT pg_advisory_xact_lock(hashtext('reindex migrate'))")
            try connection.execute("CREATE SCHEMA IF NOT EXISTS \(schema)")
            try connection.execute("CREATE TABLE IF NOT EXISTS \(schema).schema_version(version integer NOT NULL)")
            let current = try connection.query("SELECT max(version) FROM \(schema).schema_version")
            let version = current.isNull(0, 0) ? 0 : current.int(0, 0)
            if version > PostgresSchema.migrations.count {
                throw PostgresError(sqlState: nil, message: "the index was written by a newer reindex (schema \(version))", context: location.schema)
            }
            if version == 0 {
                created = true
                var unaccentSchema = try connection.query("SELECT n.nspname FROM pg_extension e JOIN pg_namespace n ON n.oid = e.extnamespace WHERE e.extname = 'unaccent'").text(0, 0)
                if unaccentSchema == nil {
                    try connection.execute("CREATE EXTENSION unaccent SCHEMA \(schema)")
                    unaccentSchema = location.schema
                }
                let configuration = PostgresSchema.searchConfiguration
                    .replacingAll("%S", with: schema).replacingAll("%U", with: PGConnection.quoteIdentifier(unaccentSchema ?? "public"))
                try connection.execute(configuration)
            }
            try useSchema()
            for migration in PostgresSchema.migrations.dropFirst(version) { try connection.execute(migration) }
            if version < PostgresSchema.migrations.count {
                try connection.execute("DELETE FROM schema_version")
                try connection.query("INSERT INTO schema_version(version) VALUES($1)", [String(PostgresSchema.migrations.count)])
            }
        }
        try useSchema()
    }

    // MARK: Connection

    private func bundleLockKey(_ key: String) -> String { "reindex bundle \(location.schema) \(key)" }

    /// Takes the fleet-wide lock of a bundle on this connection (a session advisory lock: the
    /// server drops it when the connection ends, so a dead worker never leaves it behind).
    public func lockBundle(key: String, identifier: String) throws(ReindexError) {
        let taken: Bool
        do { taken = try query("SELECT pg_try_advisory_lock(hashtext($1))", [bundleLockKey(key)]).bool(0, 0) } catch {
            throw ReindexError(.requestFailed, "\(identifier): cannot take the bundle's lock in \(location.displayName): \(error)")
        }
        guard taken else {
            let holder = try? query("""
                SELECT r.lease_worker FROM requests r WHERE r.bundle = $1 AND r.state = 'running' AND r.lease_expires >= $2 LIMIT 1
                """, [key, String(Clock.now())]).text(0, 0)
            throw ReindexError(.requestFailed, "\(identifier): \((holder ?? nil).map { "worker \($0)" } ?? "another host of the fleet") is already running a request for this bundle; try again when it has finished")
        }
    }

    public func unlockBundle(_ key: String) {
        guard connection.isHealthy else { return }
        _ = try? query("SELECT pg_advisory_unlock(hashtext($1))", [bundleLockKey(key)])
    }

    /// Re-opens a lost connection (with backoff between attempts: 0.1 s doubling to 5 s).
    package func ensureConnected() throws(PostgresError) {
        if connection.isHealthy { return }
        let now = Clock.monotonic()
        if now < nextReconnect {
            throw PostgresError(sqlState: nil, message: "the connection to PostgreSQL at \(connection.hostDescription) is lost; reconnecting", context: "", connectionLost: true)
        }
        do {
            let fresh = try PGConnection(location.connectionString)
            connection = fresh
            try useSchema()
            reconnectDelay = 0.1
            nextReconnect = 0
        } catch {
            nextReconnect = now + reconnectDelay
            reconnectDelay = min(reconnectDelay * 2, 5)
            throw error
        }
    }

    /// Runs `body` in one short transaction, retried when PostgreSQL reports a serialization
    /// failure or a deadlock; inside a transaction already open, it just runs.
    func transaction<T>(_ body: () throws -> T) throws -> T {
        if connection.inTransaction { return try body() }
        try ensureConnected()
        var attempt = 0
        var reconnected = false
        while true {
            do {
                return try connection.transaction(body)
            } catch let error as PostgresError where error.isRetryable && attempt < 8 {
                attempt += 1
                usleep(useconds_t(1_000 * (1 << attempt)) + useconds_t.random(in: 0...5_000))
            } catch let error as PostgresError where error.connectionLost && !reconnected {
                // A connection found dead (the server ended it while idle) rolled back whatever
                // the transaction did: open a new one and run it again, once.
                reconnected = true
                try ensureConnected()
            }
        }
    }

    /// One statement outside any explicit transaction (or inside the open one).
    @discardableResult
    package func query(_ sql: String, _ parameters: [String?] = []) throws -> PGResult {
        guard !connection.inTransaction else { return try connection.query(sql, parameters) }
        try ensureConnected()
        do {
            return try connection.query(sql, parameters)
        } catch where error.connectionLost {
            // Found dead on first use after idling: the statement did not run; once more on a new one.
            try ensureConnected()
            return try connection.query(sql, parameters)
        }
    }

    static func text(_ value: Double?) -> String? { value.map { String($0) } }
    static func text(_ value: Int64?) -> String? { value.map { String($0) } }
    static func text(_ value: Int) -> String { String(value) }

    // MARK: Requests

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
            if let all = pending.first(where: { $0.kind == .reindexAll }) {
                if kind == .reindexAll {
                    try query("DELETE FROM requests WHERE bundle = $1 AND state = 'pending' AND kind = 'reindexItems'", [key])
                }
                return all
            }
            if kind == .reindexAll && coalesce {
                try query("DELETE FROM requests WHERE bundle = $1 AND state = 'pending' AND kind = 'reindexItems'", [key])
            } else if let items = pending.first(where: { $0.kind == .reindexItems }) {
                var merged = items.identifiers
                var seen = Set(merged)
                for id in identifiers where seen.insert(id).inserted { merged.append(id) }
                try query("UPDATE requests SET identifiers = $2, updated = $3 WHERE id = $1",
                          [String(items.id), JSONWriter.string(.array(merged.map(JSONValue.string))), String(now)])
                var result = items
                result.identifiers = merged
                return result
            }
            let inserted = try query("""
                INSERT INTO requests(bundle, bundle_identifier, kind, identifiers, reason, state, attempts, max_attempts, next_attempt, created, updated)
                VALUES($1, $2, $3, $4, $5, 'pending', 0, $6, $7, $8, $8) RETURNING id
                """, [key, bundleIdentifier, kind.rawValue, kind == .reindexItems ? JSONWriter.string(.array(identifiers.map(JSONValue.string))) : nil,
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
            return try request(id)
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
        try query("UPDATE requests SET state = 'pending', attempts = greatest(attempts - 1, 0), last_error = $2, updated = $3, lease_worker = NULL, lease_expires = NULL WHERE id = $1",
                  [String(id), note, String(Clock.now())])
    }

    public func saveProgress(_ id: Int64, _ progress: ProgressParams) throws {
        try query("UPDATE requests SET progress = $2 WHERE id = $1", [String(id), JSONWriter.string(progress.json)])
    }

    public func markDone(_ id: Int64) throws {
        try query("UPDATE requests SET state = 'done', last_error = NULL, updated = $2, lease_worker = NULL, lease_expires = NULL WHERE id = $1", [String(id), String(Clock.now())])
    }

    public func saveClientState(_ id: Int64, _ clientState: String?) throws {
        try query("UPDATE requests SET client_state = $2, updated = $3 WHERE id = $1", [String(id), clientState, String(Clock.now())])
    }

    @discardableResult
    public func markAttemptFailed(_ id: Int64, error: String, backoff: Backoff, now: Double = Clock.now()) throws -> QueuedRequest? {
        try transaction { () throws -> QueuedRequest? in
            guard let current = try requests("id = $1 FOR UPDATE", [String(id)]).first else { return nil }
            if current.attempts >= current.maxAttempts {
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

    // MARK: Bundles

    public func bundleRecords() throws -> [BundleRecord] {
        let r = try query("SELECT key, identifier, version, fingerprint, missing_since FROM bundles ORDER BY key")
        return (0..<r.rowCount).map {
            BundleRecord(key: r.text($0, 0) ?? "", identifier: r.text($0, 1) ?? "", version: r.text($0, 2), fingerprint: r.text($0, 3), missingSince: r.optionalDouble($0, 4))
        }
    }

    /// Records that this host has the bundle on its search path, at this version and executable.
    public func recordSeen(key: String, identifier: String, version: String?, fingerprint: String?, now: Double = Clock.now()) throws {
        try query("""
            INSERT INTO bundles(key, identifier, live_gen, version, fingerprint, first_seen, last_seen, missing_since)
            VALUES($1, $2, 0, $3, $4, $5, $5, NULL)
            ON CONFLICT(key) DO UPDATE SET identifier = $2, version = $3, fingerprint = $4, last_seen = $5, missing_since = NULL
            """, [key, identifier, version, fingerprint, String(now)])
        try query("""
            INSERT INTO bundle_hosts(bundle, host, last_seen) VALUES($1, $2, $3)
            ON CONFLICT(bundle, host) DO UPDATE SET last_seen = $3
            """, [key, hostName, String(now)])
    }

    public func markMissing(_ key: String, now: Double = Clock.now()) throws {
        try query("DELETE FROM bundle_hosts WHERE bundle = $1 AND host = $2", [key, hostName])
        // Missing for the fleet only when no host has it any more.
        try query("UPDATE bundles SET missing_since = coalesce(missing_since, $2) WHERE key = $1 AND NOT EXISTS (SELECT 1 FROM bundle_hosts WHERE bundle = $1)",
                  [key, String(now)])
    }

    @discardableResult
    public func removeBundle(_ key: String) throws -> Int {
        try transaction { () throws -> Int in
            let count = try itemCount(bundle: key, now: 0)
            for sql in ["DELETE FROM items WHERE bundle = $1", "DELETE FROM staged_generations WHERE bundle = $1",
                        "DELETE FROM requests WHERE bundle = $1 AND state IN ('pending', 'running')",
                        "DELETE FROM bundle_hosts WHERE bundle = $1", "DELETE FROM bundles WHERE key = $1"] {
                try query(sql, [key])
            }
            return count
        }
    }

    public func expiringItems(bundle key: String, after: Double, until: Double, limit: Int = 10_000) throws -> [String] {
        let r = try query("""
            SELECT i.uid FROM items i JOIN bundles b ON b.key = i.bundle AND b.live_gen = i.gen
            WHERE i.bundle = $1 AND i.expires > $2 AND i.expires <= $3
            AND (i.refresh_asked_for IS NULL OR i.refresh_asked_for <> i.expires)
            ORDER BY i.expires LIMIT $4
            """, [key, String(after), String(until), String(limit)])
        return (0..<r.rowCount).compactMap { r.text($0, 0) }
    }

    public func markRefreshAsked(bundle key: String, identifiers: [String]) throws {
        try query("""
            UPDATE items SET refresh_asked_for = expires
            WHERE bundle = $1 AND uid = ANY($2::text[]) AND gen = (SELECT live_gen FROM bundles WHERE key = $1)
            """, [key, PGArray.literal(identifiers)])
    }

    @discardableResult
    public func purgeExpired(now: Double = Clock.now()) throws -> Int {
        try query("DELETE FROM items WHERE expires IS NOT NULL AND expires <= $1", [String(now)]).affected
    }

    /// Claims a duty of the whole fleet (expiry refreshes, purges) for this worker when nobody
    /// did it in the last `every` seconds: true for exactly one of the workers that ask at once.
    public func claimDuty(_ name: String, every seconds: Double, now: Double = Clock.now()) throws -> Bool {
        let r = try query("""
            INSERT INTO duties(name, last_done) VALUES($1, $2)
            ON CONFLICT(name) DO UPDATE SET last_done = $2 WHERE duties.last_done <= $3
            RETURNING name
            """, [name, String(now), String(now - seconds)])
        return r.rowCount == 1
    }

    // MARK: Custom attributes

    public func declarations(bundle key: String) throws -> [String: AttributeDeclaration] {
        let r = try query("SELECT attributes FROM bundles WHERE key = $1", [key.lowercased()])
        guard r.rowCount == 1, let text = r.text(0, 0), let json = try? JSONParser.parse(text: text) else { return [:] }
        return (try? AttributeDeclaration.parseAll(json)) ?? [:]
    }

    func recordDeclarations(_ declarations: [String: AttributeDeclaration], bundle key: String) throws {
        try query("UPDATE bundles SET attributes = $2 WHERE key = $1",
                  [key, declarations.isEmpty ? nil : String(decoding: JSONWriter.bytes(AttributeDeclaration.json(declarations)), as: UTF8.self)])
    }
}
