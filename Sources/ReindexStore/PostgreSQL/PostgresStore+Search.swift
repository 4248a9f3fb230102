import ReindexProtocol
import ReindexSystem

/// Searches, listings and status over the PostgreSQL index. Each is one statement, or a
/// `REPEATABLE READ` read-only transaction when it takes several, so an acknowledgement committed
/// meanwhile is seen whole or not at all.
extension PostgresStore {
    /// Full-text search over live, unexpired items, best first: `text` is words only (every word
    /// must match, the last also as a prefix), ranked as a query's words are (BM25F, the same
    /// page as SQLite's `search`). The query language is `query(_:options:)`.
    public func search(_ text: String, bundle: String? = nil, domain: String? = nil, limit: Int = 20, now: Double = Clock.now()) throws -> [SearchResult] {
        var options = QueryOptions(bundle: bundle, domain: domain, limit: limit)
        options.now = now
        guard !QueryParser.splitWords(text).isEmpty else { return [] }
        return try query(text, wordsOnly: true, options: options).results
    }

    /// The live, unexpired items of one bundle, by identifier.
    public func items(bundle: String, domain: String? = nil, limit: Int = 100, now: Double = Clock.now()) throws -> [SearchResult] {
        var sql = """
            SELECT b.identifier, i.uid, i.domain, i.expires, i.attributes
            FROM items i JOIN bundles b ON b.key = i.bundle AND b.live_gen = i.gen
            WHERE i.bundle = $1 AND (i.expires IS NULL OR i.expires > $2)
            """
        var parameters: [String?] = [bundle.lowercased(), String(now), String(limit)]
        if let domain {
            parameters.append(domain)
            sql += " AND (i.domain = $4 OR starts_with(i.domain, $4 || '.'))"
        }
        sql += " ORDER BY i.uid COLLATE \"C\" LIMIT $3"
        return collect(try query(sql, parameters))
    }

    private func collect(_ r: PGResult) -> [SearchResult] {
        (0..<r.rowCount).map { row in
            let attributes = r.text(row, 4).flatMap { try? JSONParser.parse(text: $0) } ?? .object([])
            return SearchResult(bundleIdentifier: r.text(row, 0) ?? "", uniqueIdentifier: r.text(row, 1) ?? "", domainIdentifier: r.text(row, 2),
                                expiration: r.optionalDouble(row, 3), score: nil, attributes: attributes)
        }
    }

    public func itemCount(bundle: String, now: Double = Clock.now()) throws -> Int {
        try query("""
            SELECT count(*) FROM items i JOIN bundles b ON b.key = i.bundle AND b.live_gen = i.gen
            WHERE i.bundle = $1 AND (i.expires IS NULL OR i.expires > $2)
            """, [bundle.lowercased(), String(now)]).int(0, 0)
    }

    public func knownBundles() throws -> [(key: String, identifier: String)] {
        let r = try query("""
            SELECT key, identifier FROM bundles
            UNION SELECT bundle, bundle_identifier FROM requests WHERE bundle NOT IN (SELECT key FROM bundles)
            ORDER BY 1
            """)
        return (0..<r.rowCount).map { (r.text($0, 0) ?? "", r.text($0, 1) ?? "") }
    }

    /// Runs `body` in one read-only snapshot.
    public func snapshot<T>(_ body: () throws -> T) throws -> T {
        if connection.inTransaction { return try body() }
        try ensureConnected()
        // Marked open on the connection, so the statements inside run in it as they are: none is
        // retried or moved to a new connection outside the snapshot.
        try connection.begin("ISOLATION LEVEL REPEATABLE READ READ ONLY")
        do {
            let result = try body()
            try? connection.commit()
            return result
        } catch {
            connection.rollback()
            throw error
        }
    }

    /// Item counts, queue state and the last run of a bundle.
    public func status(bundle identifier: String) throws -> BundleStatus {
        try snapshot { () throws -> BundleStatus in
            let key = identifier.lowercased()
            let counts = try query("SELECT state, count(*) FROM requests WHERE bundle = $1 AND state IN ('pending', 'running', 'failed') GROUP BY state", [key])
            var pending = 0, running = 0, failed = 0
            for row in 0..<counts.rowCount {
                switch counts.text(row, 0) {
                case "pending": pending = counts.int(row, 1)
                case "running": running = counts.int(row, 1)
                default: failed = counts.int(row, 1)
                }
            }
            var reasons: [String] = []
            var superseded = 0
            for request in try requests(bundle: key, state: .failed) {
                let moot = try query("""
                    SELECT 1 FROM runs WHERE bundle = $1 AND outcome = 'acknowledged' AND ended >= $2 AND (kind = 'reindexAll' OR kind = $3) LIMIT 1
                    """, [key, String(request.updated), request.kind.rawValue])
                if moot.rowCount > 0 { superseded += 1 } else if let reason = request.lastError { reasons.append(reason) }
            }
            let progress = try query("SELECT id, kind, reason, updated, progress FROM requests WHERE bundle = $1 AND state = 'running' ORDER BY id", [key])
            let runningNow = (0..<progress.rowCount).map { row in
                RunningRequest(id: progress.int64(row, 0), kind: RequestKind(rawValue: progress.text(row, 1) ?? "") ?? .reindexAll,
                               reason: ReindexReason(progress.text(row, 2) ?? ""), since: progress.double(row, 3),
                               progress: progress.text(row, 4).flatMap { try? JSONParser.parse(text: $0) }.flatMap { try? ProgressParams(json: $0) })
            }
            let missing = try query("SELECT missing_since FROM bundles WHERE key = $1", [key])
            var status = BundleStatus(bundleIdentifier: identifier, items: try itemCount(bundle: key), pending: pending, running: running,
                                      failed: failed - superseded, lastRun: try lastRun(bundle: key), failedReasons: reasons)
            status.runningRequests = runningNow
            status.superseded = superseded
            status.missingSince = missing.rowCount == 1 ? missing.optionalDouble(0, 0) : nil
            return status
        }
    }
}
