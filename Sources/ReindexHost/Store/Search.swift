import ReindexProtocol

/// One item as searches and listings return it.
public struct SearchResult: Sendable, Equatable {
    public var bundleIdentifier: String
    public var uniqueIdentifier: String
    public var domainIdentifier: String?
    public var expiration: Double?
    /// Relevance, higher is better (the negated bm25 rank); nil for listings.
    public var score: Double?
    public var attributes: JSONValue

    public var title: String? { attributes["title"]?.stringValue ?? attributes["displayName"]?.stringValue }

    public var json: JSONValue {
        var members: [(String, JSONValue)] = [
            ("bundleIdentifier", .string(bundleIdentifier)),
            ("uniqueIdentifier", .string(uniqueIdentifier)),
            ("domainIdentifier", domainIdentifier.map(JSONValue.string) ?? .null),
            ("title", title.map(JSONValue.string) ?? .null),
        ]
        if let score { members.append(("score", .double((score * 1e6).rounded() / 1e6))) }
        if let expiration { members.append(("expirationDate", .string(RFC3339.format(expiration)))) }
        members.append(("attributes", attributes))
        return .object(members)
    }
}

/// What `status` reports for one bundle.
public struct BundleStatus: Sendable, Equatable {
    public var bundleIdentifier: String
    public var items: Int
    public var pending: Int
    public var running: Int
    /// Failed requests that no later success of the bundle superseded.
    public var failed: Int
    public var lastRun: RunRecord?
    public var failedReasons: [String]
    /// The requests running now, with their last progress.
    public var runningRequests: [RunningRequest] = []
    /// Failed requests a later acknowledged run made moot (`status --failed` lists them).
    public var superseded: Int = 0
    /// Since when the bundle is missing from the search path, as `serve` noticed it.
    public var missingSince: Double?
}

/// A request running now and what its extension last said of its progress.
public struct RunningRequest: Sendable, Equatable {
    public var id: Int64
    public var kind: RequestKind
    public var reason: ReindexReason
    public var since: Double
    public var progress: ProgressParams?
}

/// Turns what a person types into an FTS5 query: every word must match, and every word is also
/// a prefix (people type partial words), so `eng sta` finds "Engineering · Staff Engineer".
/// Quotes and FTS5 operators in the input are treated as text, never as syntax.
public enum SearchQuery {
    /// The FTS5 query for `text`: every word must match. A word written with a trailing `*`
    /// always matches as a prefix; with `prefix`, so does the last word — the one a person is
    /// still typing.
    public static func fts(_ text: String, prefix: Bool = true) -> String? {
        var terms: [String] = []
        let words = text.split(whereSeparator: { $0.isWhitespace })
        for (position, raw) in words.enumerated() {
            var word = String(raw)
            let starred = word.hasSuffix("*")
            while word.hasSuffix("*") { word.removeLast() }
            let asPrefix = starred || (prefix && position == words.count - 1)
            let cleaned = word.unicodeScalars.filter { $0.properties.isAlphabetic || $0.properties.numericType != nil || $0 == "-" || $0 == "'" || $0 == "." || $0 == "@" || $0 == "_" }
            let term = String(String.UnicodeScalarView(cleaned))
            guard term.unicodeScalars.contains(where: { $0.properties.isAlphabetic || $0.properties.numericType != nil }) else { continue }
            terms.append("\"" + term.split(separator: "\"").joined(separator: "\"\"") + (asPrefix ? "\"*" : "\""))
        }
        return terms.isEmpty ? nil : terms.joined(separator: " AND ")
    }
}

extension IndexStore {
    private static func domainCondition(_ alias: String) -> String {
        "(\(alias).domain = ?9 OR (\(alias).domain >= ?9 || '.' AND \(alias).domain < ?9 || '/'))"
    }

    /// How many matches a search ranks at first: the newest this many; see `search`.
    public static let searchCandidates = 500

    /// Full-text search over live, unexpired items, best first (bm25, title weighted highest).
    ///
    /// Ranking every match of a very common word would cost time in proportion to the index
    /// (hundreds of milliseconds at a million items), so a search first ranks the newest
    /// `searchCandidates` matches; only when those do not fill `limit` visible results (filters,
    /// staged or expired rows) does it look further, widening eightfold each time. A word that
    /// matches fewer items than that — most words — is ranked over all its matches.
    /// The whole search reads one snapshot of the index.
    public func search(_ text: String, bundle: String? = nil, domain: String? = nil, limit: Int = 20, now: Double = Clock.now()) throws(SQLiteError) -> [SearchResult] {
        try read { () throws(SQLiteError) in try searchSnapshot(text, bundle: bundle, domain: domain, limit: limit, now: now) }
    }

    private func searchSnapshot(_ text: String, bundle: String?, domain: String?, limit: Int, now: Double) throws(SQLiteError) -> [SearchResult] {
        // Whole words first: FTS5 streams a word's matches, while a prefix of four or more
        // letters (no prefix index) makes it gather every matching term's list first. People
        // typing partial words get the prefix search when the words alone do not fill the page,
        // ranked after the whole-word matches.
        guard let exactQuery = SearchQuery.fts(text, prefix: false), let prefixQuery = SearchQuery.fts(text, prefix: true) else { return [] }
        var results = try ranked(exactQuery, bundle: bundle, domain: domain, limit: limit, now: now)
        if results.count < limit && prefixQuery != exactQuery {
            var seen = Set(results.map { $0.bundleIdentifier + "\u{0}" + $0.uniqueIdentifier })
            for result in try ranked(prefixQuery, bundle: bundle, domain: domain, limit: limit, now: now)
            where results.count < limit && seen.insert(result.bundleIdentifier + "\u{0}" + result.uniqueIdentifier).inserted {
                results.append(result)
            }
        }
        return results
    }

    private func ranked(_ query: String, bundle: String?, domain: String?, limit: Int, now: Double) throws(SQLiteError) -> [SearchResult] {
        // 1. Rank a window of matches in the full-text index alone (no joins).
        let candidatesStatement = try statement("""
            SELECT rowid, bm25(items_fts, \(Schema.ftsWeights)) FROM items_fts WHERE items_fts MATCH ?1 LIMIT ?2
            """)
        // 2. Fetch the best ones that are visible: live generation, unexpired, inside the filters.
        var sql = """
            SELECT b.identifier, i.uid, i.domain, i.expires, i.attributes
            FROM items i JOIN bundles b ON b.key = i.bundle AND b.live_gen = i.gen
            WHERE i.id = ?1 AND (i.expires IS NULL OR i.expires > ?2)
            """
        if bundle != nil { sql += " AND i.bundle = ?3" }
        if domain != nil { sql += " AND " + Self.domainCondition("i") }
        let row = try statement(sql)
        var window = Self.searchCandidates
        var results: [SearchResult] = []
        while true {
            candidatesStatement.reset()
            candidatesStatement.bind(1, query)
            candidatesStatement.bind(2, window)
            var candidates: [(id: Int64, rank: Double)] = []
            candidates.reserveCapacity(min(window, 4096))
            while try candidatesStatement.step() { candidates.append((candidatesStatement.int64(0), candidatesStatement.double(1))) }
            candidatesStatement.reset()
            let exhausted = candidates.count < window
            candidates.sort { $0.rank < $1.rank }
            results.removeAll(keepingCapacity: true)
            for candidate in candidates where results.count < limit {
                row.reset()
                row.bind(1, candidate.id)
                row.bind(2, now)
                if let bundle { row.bind(3, bundle.lowercased()) }
                if let domain { row.bind(9, domain) }
                guard try row.step() else { continue }
                let attributes = (try? JSONParser.parse(row.bytes(4))) ?? .object([])
                results.append(SearchResult(
                    bundleIdentifier: row.text(0) ?? "", uniqueIdentifier: row.text(1) ?? "", domainIdentifier: row.text(2),
                    expiration: row.optionalDouble(3), score: -candidate.rank, attributes: attributes))
            }
            row.reset()
            // A full page, or every match ranked: done. Otherwise look at eight times as many.
            if results.count >= limit || exhausted || window >= Int(Int32.max) / 8 { return results }
            window *= 8
        }
    }

    /// The live, unexpired items of one bundle, by identifier.
    public func items(bundle: String, domain: String? = nil, limit: Int = 100, now: Double = Clock.now()) throws(SQLiteError) -> [SearchResult] {
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

    private func collect(_ s: SQLiteStatement, scored: Bool) throws(SQLiteError) -> [SearchResult] {
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
    public func itemCount(bundle: String, now: Double = Clock.now()) throws(SQLiteError) -> Int {
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
    public func knownBundles() throws(SQLiteError) -> [(key: String, identifier: String)] {
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
    public func status(bundle identifier: String) throws(SQLiteError) -> BundleStatus {
        try read { () throws(SQLiteError) in try statusSnapshot(bundle: identifier) }
    }

    private func statusSnapshot(bundle identifier: String) throws(SQLiteError) -> BundleStatus {
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
