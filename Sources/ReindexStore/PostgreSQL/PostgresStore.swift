import ReindexProtocol
import ReindexSystem

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
    /// The host's name: what `bundle_hosts` records this host has, and part of `workerID`.
    /// (Settable inside the module, so one test process can play several hosts of a fleet.)
    public internal(set) var hostName: String
    /// This open created the schema (a new index): the caller queues the rebuilds, and only one
    /// host of a fleet ever sees it, since migrations run under a lock.
    public private(set) var created = false
    private var reconnectDelay = 0.1
    private var nextReconnect = 0.0

    /// Seconds a claimed request's lease lasts without renewal (`REINDEX_PG_LEASE_SECONDS`, for
    /// fleets that want a dead worker's request taken over sooner; renewed every third of it).
    public var leaseSeconds = 30.0
    /// The attempt number of each request this store claimed (`markRunning`): the epoch of its
    /// lease, which every publishing transaction checks (`checkLease`).
    var claims: [Int64: Int] = [:]
    /// While `queryPlan` runs: the plans of the statements a page ran.
    var explained: [String]?
    /// The rank lists this store's searches read and want (PostgresStore+RankLists.swift).
    let rankLists = PostgresRankLists()
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
        } catch let error as StoreError {
            throw ReindexError(error.code == .connectionLost ? .cannotStart : .ioError, "\(location.displayName): cannot prepare the index schema \(location.schema): \(error)")
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

    /// Points the connection at the deployment's schema. JIT compilation is off: the index's
    /// statements are short, and a page whose plan the planner costs high (a filter it cannot
    /// estimate) spent 12 ms compiling to run in 0.6 ms.
    private func useSchema() throws(StoreError) {
        try connection.execute("SET search_path TO \(schema); SET statement_timeout = 0; SET jit = off")
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
                throw StoreError(.newerSchema, "the index was written by a newer reindex (schema \(version))", context: location.schema)
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
            if version > 0 && version < PostgresSchema.scoredDocuments {
                try rewriteDocuments()
            } else if version > 0 && version < PostgresSchema.longWords {
                try rewriteDocuments(where: "octet_length(attributes::text) > \(PostgresDocument.longestWord) OR " + Self.clippedDocuments)
            } else if version > 0 && version < PostgresSchema.exactPlaces {
                try rewriteDocuments(where: Self.clippedDocuments)
            } else if version > 0 && version < PostgresSchema.overflowMarks {
                try rewriteDocuments(where: Self.overflowedDocuments)
            }
            if version > 0 && version < PostgresSchema.overflowMarks,
               try connection.query("SELECT EXISTS (SELECT 1 FROM items WHERE doc @@ \(Self.overflowMarkQuery))").bool(0, 0) {
                try connection.execute("DELETE FROM unit_frequencies; DELETE FROM rank_entries; DELETE FROM rank_lists")
            }
            if version < PostgresSchema.migrations.count {
                try connection.execute("DELETE FROM schema_version")
                try connection.query("INSERT INTO schema_version(version) VALUES($1)", [String(PostgresSchema.migrations.count)])
            }
        }
        try useSchema()
    }

    /// Makes every item's document again as the host makes it now (`PostgresDocument`, schema
    /// migration 11), from its stored attributes, in the migration's transaction: in groups by
    /// row id, with the full-text index dropped meanwhile and made once at the end (faster than
    /// updating it row by row). An item whose attributes no longer suit its bundle's
    /// declarations is made without them (its custom attributes are then not searched, as a
    /// bundle without declarations has them).
    ///
    /// With a condition, only the items it holds for (those that may hold a word longer than a
    /// lexeme, or need exact positions: `clippedDocuments`), with the full-text index kept.
    private func rewriteDocuments(where condition: String? = nil) throws {
        var remaker = try DocumentRemaker(self)
        if condition == nil { try connection.execute("DROP INDEX items_doc") }
        var last: Int64 = 0
        while true {
            let rows = try connection.query("SELECT id, bundle, uid, attributes FROM items WHERE id > $1"
                + (condition.map { " AND (\($0))" } ?? "") + " ORDER BY id LIMIT 2000", [String(last)])
            guard rows.rowCount > 0 else { break }
            var ids = PGArrayBuilder(), made = PostgresDocument.Columns()
            for row in 0..<rows.rowCount {
                last = rows.int64(row, 0)
                guard let again = try remaker.make(rows, row) else { continue }
                ids.append(String(last))
                made.append(again)
            }
            try connection.query("""
                UPDATE items SET doc = x.w::tsvector, length = x.n, tf = x.f::jsonb, places = x.p::jsonb
                FROM unnest($1::bigint[], $2::text[], $3::integer[], $4::text[], $5::text[]) AS x(id, w, n, f, p) WHERE items.id = x.id
                """, [ids.text(), made.documents.text(), made.lengths.text(), made.frequencies.text(), made.places.text()])
        }
        if condition == nil { try connection.execute("CREATE INDEX items_doc ON items USING gin(doc)") }
    }

    /// Makes items' documents again from rows of their `bundle`, `uid` and `attributes` (columns 1
    /// to 3), as the host makes them now, under their bundle's declarations. An item whose
    /// attributes no longer suit them is made without them; one no longer valid is not made.
    struct DocumentRemaker {
        let store: PostgresStore
        let document: PostgresDocument
        /// Each bundle's declarations, and those of them searchable.
        var declared: [String: (all: [String: AttributeDeclaration], searchable: [String: AttributeDeclaration])] = [:]

        init(_ store: PostgresStore) throws {
            self.store = store
            document = try PostgresDocument()
        }

        mutating func make(_ rows: PGResult, _ row: Int) throws -> PostgresDocument.Made? {
            let bundle = rows.text(row, 1) ?? ""
            if declared[bundle] == nil {
                let all = try store.declarations(bundle: bundle)
                declared[bundle] = (all, all.filter { $0.value.searchable })
            }
            let (bundleDeclarations, searchable) = declared[bundle] ?? ([:], [:])
            let attributes = (try? JSONParser.parse(text: rows.text(row, 3) ?? "{}")) ?? .object([])
            let json = JSONValue.object([("uniqueIdentifier", .string(rows.text(row, 2) ?? "?")), ("attributes", attributes)])
            guard let item = (try? ItemValidator.validate(json, declarations: bundleDeclarations)) ?? (try? ItemValidator.validate(json)) else { return nil }
            return document.make(item, searchable: searchable)
        }
    }

    /// The items whose document may have left a position out, or holds a word longer than a
    /// stored word's head (`PostgresDocument.Made.places`): a word with 256 positions, or one at
    /// an attribute's last (2,047th) position, or one that long — or attributes of over a
    /// megabyte. (Each takes more than 512 bytes of text: 257 tokens.)
    static let clippedDocuments = """
        octet_length(attributes::text) > 512 AND (octet_length(attributes::text) > \(PostgresDocument.lexemeBudget)
            OR EXISTS (SELECT 1 FROM unnest(doc) u WHERE cardinality(u.positions) >= \(PostgresDocument.positionsKept)
                OR octet_length(u.lexeme) > \(PostgresDocument.storedBytes)
                OR EXISTS (SELECT 1 FROM unnest(u.positions) x WHERE x % \(PostgresDocument.slotWidth) = \(PostgresDocument.slotWidth - 1))))
        """

    /// The items whose words may not all fit in their document (`PostgresDocument.overflowMark`):
    /// those with exact positions whose attributes are long enough. (A token takes at most 16
    /// times its bytes of text in the document, marked and with its camel-case parts.)
    static let overflowedDocuments = "places IS NOT NULL AND octet_length(attributes::text) > \(PostgresDocument.lexemeBudget / 16)"

    // MARK: Connection

    private func bundleLockKey(_ key: String) -> String { "reindex bundle \(location.schema) \(key)" }

    /// Takes the fleet-wide lock of a bundle on this connection (a session advisory lock: the
    /// server drops it when the connection ends, so a dead worker never leaves it behind).
    public func lockBundle(key: String, identifier: String) throws(ReindexError) {
        var taken: Bool
        do { taken = try query("SELECT pg_try_advisory_lock(hashtext($1))", [bundleLockKey(key)]).bool(0, 0) } catch {
            throw ReindexError(.requestFailed, "\(identifier): cannot take the bundle's lock in \(location.displayName): \(error)")
        }
        if !taken && endExpiredHolder(key: key) {
            // The holder's connection is being ended; the server drops its lock when it is gone.
            for _ in 0..<50 where !taken {
                usleep(100_000)
                taken = (try? query("SELECT pg_try_advisory_lock(hashtext($1))", [bundleLockKey(key)]).bool(0, 0)) ?? false
            }
        }
        guard taken else {
            let holder = try? query("""
                SELECT r.lease_worker FROM requests r WHERE r.bundle = $1 AND r.state = 'running' AND r.lease_expires >= $2 LIMIT 1
                """, [key, String(Clock.now())]).text(0, 0)
            throw ReindexError(.requestFailed, "\(identifier): \((holder ?? nil).map { "worker \($0)" } ?? "another host of the fleet") is already running a request for this bundle; try again when it has finished")
        }
    }

    /// Ends the session of a worker whose lease on one of the bundle's requests has expired
    /// (frozen by SIGSTOP, a long pause, a VM migration): while that session lives, it holds the
    /// bundle's lock and nobody could take the request over. Its request is fenced (its lease's
    /// epoch moves on when it is claimed again), so nothing it sends later is published.
    /// Returns whether a session was ended.
    private func endExpiredHolder(key: String) -> Bool {
        guard let expired = try? query("""
            SELECT lease_backend, lease_worker FROM requests
            WHERE bundle = $1 AND state = 'running' AND lease_expires < $2 AND lease_backend IS NOT NULL LIMIT 1
            """, [key, String(Clock.now())]), expired.rowCount == 1 else { return false }
        let ended = try? query("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE pid = $1 AND application_name = $2",
                               [expired.text(0, 0), expired.text(0, 1).map { String($0.prefix(63)) }])
        return (ended?.rowCount ?? 0) > 0
    }

    /// The request is still this store's to publish: running, under this worker's lease, at the
    /// attempt it claimed. Checked inside every publishing transaction (a batch commit, the
    /// acknowledgement, marking it done, failed or pending again), with the row locked, so a
    /// worker that lost its lease while frozen publishes nothing when it wakes up. Requests this
    /// store did not claim (writes without a queued request) are not fenced.
    public func checkLease(_ id: Int64?) throws {
        guard let id, let attempt = claims[id] else { return }
        let row = try query("SELECT state, lease_worker, attempts FROM requests WHERE id = $1 FOR UPDATE", [String(id)])
        guard row.rowCount == 1, row.text(0, 0) == "running", row.text(0, 1) == workerID, row.int64(0, 2) == Int64(attempt) else {
            let now = row.rowCount == 1 ? " (it is \(row.text(0, 0) ?? "?"), attempt \(row.int64(0, 2)), \(row.text(0, 1).map { "leased by \($0)" } ?? "not leased"))" : ""
            throw StoreError(.leaseLost, "request \(id) is no longer this worker's\(now): its lease expired while this worker was not renewing it and another worker took it over; nothing of attempt \(attempt) is published")
        }
    }

    public func unlockBundle(_ key: String) {
        guard connection.isHealthy else { return }
        _ = try? query("SELECT pg_advisory_unlock(hashtext($1))", [bundleLockKey(key)])
    }

    /// Re-opens a lost connection (with backoff between attempts: 0.1 s doubling to 5 s).
    package func ensureConnected() throws(StoreError) {
        if connection.isHealthy { return }
        let now = Clock.monotonic()
        if now < nextReconnect {
            throw StoreError(postgres: nil, message: "the connection to PostgreSQL at \(connection.hostDescription) is lost; reconnecting", context: "", connectionLost: true)
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
        return try retrying { try connection.transaction(body) }
    }

    /// Runs `attempt` — a statement or a transaction of its own, which the server rolled back
    /// whole when it failed — again when it failed to serialize or was a deadlock's victim (up to
    /// `retries` times), and once more on a new connection when the connection was found dead
    /// (the server ended it while idle).
    private func retrying<T>(_ attempt: () throws -> T) throws -> T {
        try ensureConnected()
        var retried = 0
        var reconnected = false
        while true {
            do {
                return try attempt()
            } catch let error as StoreError where error.isRetryable && retried < Self.retries {
                retried += 1
                Self.pauseBeforeRetry(retried)
            } catch let error as StoreError where error.code == .connectionLost && !reconnected {
                reconnected = true
                try ensureConnected()
            }
        }
    }

    /// How many times a transaction or statement that failed to serialize or was chosen as a
    /// deadlock's victim is run again before the error is reported.
    static let retries = 8

    /// A short pause, growing and jittered, so the transactions that collided do not collide again.
    static func pauseBeforeRetry(_ attempt: Int) {
        usleep(useconds_t(1_000 * (1 << attempt)) + useconds_t.random(in: 0...5_000))
    }

    /// One statement outside any explicit transaction (or inside the open one). Outside, the
    /// statement is a transaction of its own, which the server rolled back whole when it failed
    /// to serialize or was a deadlock's victim: it is run again, like `transaction`'s body.
    /// Inside, the transaction is aborted and only its owner can run it again.
    @discardableResult
    package func query(_ sql: String, _ parameters: [String?] = []) throws -> PGResult {
        guard !connection.inTransaction else { return try connection.query(sql, parameters) }
        return try retrying { try connection.query(sql, parameters) }
    }

    static func text(_ value: Double?) -> String? { value.map { String($0) } }
    static func text(_ value: Int64?) -> String? { value.map { String($0) } }
    static func text(_ value: Int) -> String { String(value) }

    // MARK: Bundles

    public func bundleRecords() throws -> [BundleRecord] {
        let r = try query("SELECT key, identifier, version, fingerprint, missing_since FROM bundles ORDER BY key")
        return (0..<r.rowCount).map {
            BundleRecord(key: r.text($0, 0) ?? "", identifier: r.text($0, 1) ?? "", version: r.text($0, 2), fingerprint: r.text($0, 3), missingSince: r.optionalDouble($0, 4))
        }
    }

    /// Records that this host has the bundle on its search path, at this version and executable.
    /// One transaction, which takes the bundle's row first: a removal (`removeBundle`) of the
    /// bundle by another host either sees this host has it, or ran wholly before.
    public func recordSeen(key: String, identifier: String, version: String?, fingerprint: String?, now: Double = Clock.now()) throws {
        try transaction { () throws in try recordSeenStatements(key: key, identifier: identifier, version: version, fingerprint: fingerprint, now: now) }
    }

    private func recordSeenStatements(key: String, identifier: String, version: String?, fingerprint: String?, now: Double) throws {
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

    /// Stops counting the hosts that stopped looking: a host's record of a bundle not refreshed
    /// since `before`, when no worker of that host has been seen since either (a machine gone
    /// for good keeps no bundle in the fleet). A bundle whose last host went this way is missing
    /// for the fleet from `now`, so its items go after the removal grace like any other's.
    /// Returns the bundles now on no host.
    @discardableResult
    public func forgetSilentHosts(before: Double, now: Double = Clock.now()) throws -> [String] {
        try transaction { () throws -> [String] in
            let gone = try query("""
                DELETE FROM bundle_hosts h WHERE h.last_seen < $1
                AND NOT EXISTS (SELECT 1 FROM workers w WHERE w.host = h.host AND w.last_seen >= $1)
                RETURNING h.bundle
                """, [String(before)])
            let keys = Set((0..<gone.rowCount).compactMap { gone.text($0, 0) }).sorted()
            guard !keys.isEmpty else { return [] }
            let missing = try query("""
                UPDATE bundles SET missing_since = coalesce(missing_since, $2)
                WHERE key = ANY($1::text[]) AND NOT EXISTS (SELECT 1 FROM bundle_hosts WHERE bundle = bundles.key)
                RETURNING key
                """, [PGArray.literal(keys), String(now)])
            return (0..<missing.rowCount).compactMap { missing.text($0, 0) }.sorted()
        }
    }

    /// Forgets a bundle no host of the fleet has any more: its items (every generation), its
    /// queued requests, its row. A bundle that some host still has (one host losing it only
    /// marks it missing there), or that a worker is running under a live lease, is left alone:
    /// nothing is removed and the result is 0. Returns how many live items went.
    @discardableResult
    public func removeBundle(_ key: String) throws -> Int {
        try transaction { () throws -> Int in
            // The bundle's row first: a host recording that it has the bundle waits, or is seen.
            try query("SELECT 1 FROM bundles WHERE key = $1 FOR UPDATE", [key])
            let held = try query("""
                SELECT EXISTS (SELECT 1 FROM bundle_hosts WHERE bundle = $1)
                    OR EXISTS (SELECT 1 FROM requests WHERE bundle = $1 AND state = 'running' AND lease_expires >= $2)
                """, [key, String(Clock.now())])
            if held.bool(0, 0) { return 0 }
            let count = try itemCount(bundle: key, now: 0)
            for sql in ["DELETE FROM items WHERE bundle = $1", "DELETE FROM staged_generations WHERE bundle = $1",
                        "DELETE FROM requests WHERE bundle = $1 AND state IN ('pending', 'running')",
                        "DELETE FROM bundle_hosts WHERE bundle = $1", "DELETE FROM app_client_states WHERE bundle = $1",
                        "DELETE FROM bundles WHERE key = $1"] {
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

    /// Takes the expired items away; and, past `rankLists.longestCountLog` items logged gone,
    /// lets go of that log (`letGoOfALongCountLog`): the fleet's purge duty runs it.
    @discardableResult
    public func purgeExpired(now: Double = Clock.now()) throws -> Int {
        let purged = try query("DELETE FROM items WHERE expires IS NOT NULL AND expires <= $1", [String(now)]).affected
        try letGoOfALongCountLog()
        return purged
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
