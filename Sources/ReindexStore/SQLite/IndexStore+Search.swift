import ReindexSystem
import ReindexProtocol

extension IndexStore {
    static func domainCondition(_ alias: String) -> String {
        "(\(alias).domain = ?9 OR (\(alias).domain >= ?9 || '.' AND \(alias).domain < ?9 || '/'))"
    }

    /// Full-text search over live, unexpired items, best first: `text` is words only (every
    /// word must match, the last also as a prefix), ranked exactly over all matches as
    /// docs/QUERIES.md describes. The query language is `query(_:options:)`.
    public func search(_ text: String, bundle: String? = nil, domain: String? = nil, limit: Int = 20, now: Double = Clock.now()) throws(StoreError) -> [SearchResult] {
        var options = QueryOptions(bundle: bundle, domain: domain, limit: limit)
        options.now = now
        let q = PreparedQuery(plan: wordsPlan(text), options: options, now: now)
        guard !q.plan.units.isEmpty else { return [] }
        return try readingRankLists { () throws(StoreError) in try run(q) }.results
    }

    /// The live, unexpired items of one bundle, by identifier.
    public func items(bundle: String, domain: String? = nil, limit: Int = 100, now: Double = Clock.now()) throws(StoreError) -> [SearchResult] {
        var sql = """
            SELECT b.identifier, i.uid, i.domain, i.expires, i.attributes
            FROM items i JOIN bundles b ON b.key = i.bundle AND b.live_gen = i.gen
            WHERE i.bundle = ?3 AND (i.expires IS NULL OR i.expires > ?2)
            """
        if domain != nil { sql += " AND " + Self.domainCondition("i") }
        sql += " ORDER BY i.uid LIMIT ?4"
        let s = try statement(sql)
        s.bind(2, now)
        s.bind(3, bundle.lowercased())
        s.bind(4, limit)
        if let domain { s.bind(9, domain) }
        return try collect(s, scored: false)
    }

    private func collect(_ s: SQLiteStatement, scored: Bool) throws(StoreError) -> [SearchResult] {
        var results: [SearchResult] = []
        while try s.step() {
            let attributes = (try? JSONParser.parse(s.bytes(4))) ?? .object([])
            results.append(SearchResult(
                bundleIdentifier: s.text(0) ?? "", uniqueIdentifier: s.text(1) ?? "", domainIdentifier: s.text(2),
                expiration: s.optionalDouble(3), score: scored ? -s.double(5) : nil, attributes: attributes))
        }
        s.reset()
        return results
    }

    /// How many live, unexpired items a bundle has.
    public func itemCount(bundle: String, now: Double = Clock.now()) throws(StoreError) -> Int {
        let s = try statement("""
            SELECT count(*) FROM items i JOIN bundles b ON b.key = i.bundle AND b.live_gen = i.gen
            WHERE i.bundle = ?1 AND (i.expires IS NULL OR i.expires > ?2)
            """)
        s.bind(1, bundle.lowercased())
        s.bind(2, now)
        defer { s.reset() }
        return try s.step() ? s.int(0) : 0
    }

    /// The identifiers of every bundle the index knows (items, requests or runs).
    public func knownBundles() throws(StoreError) -> [(key: String, identifier: String)] {
        let s = try statement("""
            SELECT key, identifier FROM bundles
            UNION SELECT bundle, bundle_identifier FROM requests WHERE bundle NOT IN (SELECT key FROM bundles)
            ORDER BY 1
            """)
        var result: [(key: String, identifier: String)] = []
        while try s.step() { result.append((s.text(0) ?? "", s.text(1) ?? "")) }
        s.reset()
        return result
    }

    /// Item counts, queue state and the last run of a bundle.
    public func status(bundle identifier: String) throws(StoreError) -> BundleStatus {
        try read { () throws(StoreError) in try statusSnapshot(bundle: identifier) }
    }

    private func statusSnapshot(bundle identifier: String) throws(StoreError) -> BundleStatus {
        let key = identifier.lowercased()
        let counts = try statement("SELECT state, count(*) FROM requests WHERE bundle = ?1 AND state IN ('pending', 'running', 'failed') GROUP BY state")
        counts.bind(1, key)
        var pending = 0, running = 0, failed = 0
        while try counts.step() {
            switch counts.text(0) {
            case "pending": pending = counts.int(1)
            case "running": running = counts.int(1)
            default: failed = counts.int(1)
            }
        }
        counts.reset()
        // A failure is moot once a later run of the bundle succeeded: any reindexAll, or a
        // reindexItems after a failed reindexItems.
        var reasons: [String] = []
        var superseded = 0
        let moot = try statement("""
            SELECT 1 FROM runs WHERE bundle = ?1 AND outcome = 'acknowledged' AND ended >= ?2 AND (kind = 'reindexAll' OR kind = ?3) LIMIT 1
            """)
        for request in try requests(bundle: key, state: .failed) {
            moot.reset()
            moot.bind(1, key)
            moot.bind(2, request.updated)
            moot.bind(3, request.kind.rawValue)
            if try moot.step() { superseded += 1 } else if let reason = request.lastError { reasons.append(reason) }
        }
        moot.reset()
        var runningNow: [RunningRequest] = []
        let progress = try statement("SELECT id, kind, reason, updated, progress FROM requests WHERE bundle = ?1 AND state = 'running' ORDER BY id")
        progress.bind(1, key)
        while try progress.step() {
            let last = progress.text(4).flatMap { try? JSONParser.parse(text: $0) }.flatMap { try? ProgressParams(json: $0) }
            runningNow.append(RunningRequest(id: progress.int64(0), kind: RequestKind(rawValue: progress.text(1) ?? "") ?? .reindexAll,
                                             reason: ReindexReason(progress.text(2) ?? ""), since: progress.double(3), progress: last))
        }
        progress.reset()
        let missing = try statement("SELECT missing_since FROM bundles WHERE key = ?1")
        missing.bind(1, key)
        let missingSince = try missing.step() ? missing.optionalDouble(0) : nil
        missing.reset()
        var status = BundleStatus(bundleIdentifier: identifier, items: try itemCount(bundle: key), pending: pending, running: running,
                                  failed: failed - superseded, lastRun: try lastRun(bundle: key), failedReasons: reasons)
        status.runningRequests = runningNow
        status.superseded = superseded
        status.missingSince = missingSince
        return status
    }
}
