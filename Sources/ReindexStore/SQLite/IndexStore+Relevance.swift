import ReindexSystem
import CSQLite
import ReindexProtocol

// The relevance order of a query with words (IndexStore+Queries.swift keeps the query's
// preparation, the filters, sorted pages, counts and facets): BM25F (Ranking.swift), then
// rankingHint, then bundle and identifier; whole words before prefixes.
extension IndexStore {
    /// One match in relevance order.
    struct Ranked: RelevancePlace {
        var row: Int64
        var score: Double
        var hint: Double
        var bundle: String
        var uid: String

        /// Whether `self` comes before `other`: higher score, then higher hint, then bundle and
        /// identifier.
        func precedes(_ other: Ranked) -> Bool { order(other) ?? false }
    }

    /// Relevance order (SQLite/Ranking.swift): the best `limit` visible matches that pass the
    /// filters, by score (highest first), rankingHint (highest first, none counting as 0), bundle
    /// and identifier. Items where every word matches whole (pass 0) come before items that match
    /// only because the last word is also a prefix (pass 1).
    ///
    /// Every match of a pass is scored in one read of the full-text index; the best `limit + 1`
    /// so far are kept, best first. A match is looked up (visibility, filters, hint, identifier)
    /// only when its score reaches the worst kept one, and `reindex_rank` skips reading the
    /// length of a match that cannot (`RankThreshold`), so the cost is one pass over the
    /// matches' postings plus a few lookups, and the memory the page's.
    func ranked(_ q: PreparedQuery, limit: Int, cursor: Cursor?) throws(StoreError) -> QueryPage {
        let units = q.plan.units
        let hasPrefixPass = units.contains { $0.prefixable && !$0.starred }
        var start: (pass: Int, entry: Ranked)? = nil
        if case .relevance(_, let pass, let score, let hint, let bundle, let uid)? = cursor {
            start = (pass, Ranked(row: 0, score: score, hint: hint, bundle: bundle, uid: uid))
        }
        let check = try statement("""
            SELECT IFNULL(i.ranking_hint, 0), b.key, i.uid
            FROM items i JOIN bundles b ON b.key = i.bundle AND b.live_gen = i.gen
            WHERE i.id = ?1 AND \(QueryPlan.forOneItem(filterSQL(q)))
            """)
        bindFilters(check, q)
        defer { check.reset() }
        let stream = try statement("SELECT rowid, reindex_rank(items_fts, ?2) FROM items_fts WHERE items_fts MATCH ?1")
        let threshold = queryState.threshold
        defer {
            stream.reset()
            threshold.value = -.infinity
        }
        let statistics = try rankStatistics()
        var picked: [(entry: Ranked, pass: Int)] = []
        for pass in (hasPrefixPass ? [0, 1] : [0]) where picked.count <= limit {
            if let start, pass < start.pass { continue }
            let prefix = pass == 1
            let after = start.flatMap { $0.pass == pass ? $0.entry : nil }
            var counts: [Int] = []
            for unit in units { counts.append(try documentFrequency(unit, prefix: prefix)) }
            // A unit in no row: the pass has no match (FTS5 would still walk the other units'
            // postings to find that out: `support lea` typed on the way to `support lead`).
            if counts.contains(0) { continue }
            // The prefix pass leaves out the whole-word pass's matches, unless a word is in no row.
            var excluding = prefix
            for unit in units where excluding { excluding = try documentFrequency(unit, prefix: false) > 0 }
            let exclusion = excluding ? " NOT (" + FullText.conjunction(units, prefix: false) + ")" : ""
            let capacity = limit + 1 - picked.count
            let match = "(" + FullText.conjunction(units, prefix: prefix) + ")" + exclusion
            let arguments = Ranking.arguments(rows: statistics.rows, average: statistics.average, counts: counts)
            func lookUp(_ row: Int64, _ score: Double) throws(StoreError) -> Ranked? {
                check.rewind()
                check.bind(1, row)
                guard try check.step() else { return nil }
                let entry = Ranked(row: row, score: score, hint: check.double(0), bundle: check.text(1) ?? "", uid: check.text(2) ?? "")
                if let after, !after.precedes(entry) { return nil }
                return entry
            }
            // Common words: through their rank lists (RankLists.swift), when they have them.
            threshold.value = -.infinity
            let rarities = counts.map { Ranking.rarity(rows: Double(statistics.rows), matching: Double($0)) }
            if let listed = try bestFromRankLists(units, prefix: prefix, excluding: excluding, counts: counts, rarities: rarities,
                                                  capacity: capacity, average: statistics.average, lookUp: lookUp) {
                picked += listed.map { ($0, pass) }
                continue
            }
            // Lists wanted and missing: made before the page is read (`readingRankLists`).
            if queryState.makeFirst, !queryState.upkeep.wanted.isEmpty {
                queryState.pageWaits = true
                return QueryPage(results: [], nextCursor: nil)
            }
            // Best first; at most `capacity`.
            queryState.fullReads += 1
            var best: [Ranked] = []
            best.reserveCapacity(min(capacity, 1024))
            stream.reset()
            stream.bind(1, match)
            stream.bind(2, blob: arguments)
            // Matches that tie with the worst kept score once the page is full: not looked up
            // yet (row ids only); resolved at the end if that score is still the page's last.
            var tied: [Int64] = []
            while try stream.step() {
                guard !stream.isNull(1) else { continue }
                let score = stream.double(1)
                if let after, score > after.score { continue }
                if best.count == capacity, let worst = best.last {
                    if score < worst.score { continue }
                    if score == worst.score {
                        tied.append(stream.int64(0))
                        continue
                    }
                }
                guard let entry = try lookUp(stream.int64(0), score) else { continue }
                Self.insert(entry, into: &best)
                if best.count > capacity {
                    let dropped = best.removeLast()
                    if let worst = best.last, worst.score == dropped.score { tied.append(dropped.row) } else { tied.removeAll() }
                }
                if best.count == capacity, let worst = best.last { threshold.value = worst.score }
            }
            stream.reset()
            threshold.value = -.infinity
            if !tied.isEmpty, let worst = best.last {
                // The page's last score is shared by more matches than fit: order the whole tie.
                let boundary = worst.score
                tied += best.filter { $0.score == boundary }.map(\.row)
                best.removeAll { $0.score == boundary }
                let wanted = capacity - best.count
                for entry in try resolveTie(tied, score: boundary, wanted: wanted, lookUp: lookUp) { Self.insert(entry, into: &best) }
            }
            picked += best.map { ($0, pass) }
        }
        let fetch = try statement("""
            SELECT b.identifier, i.uid, i.domain, i.expires, i.attributes, i.id
            FROM items i JOIN bundles b ON b.key = i.bundle AND b.live_gen = i.gen WHERE i.id = ?1
            """)
        var results: [SearchResult] = []
        for choice in picked.prefix(limit) {
            fetch.reset()
            fetch.bind(1, choice.entry.row)
            if try fetch.step() { results.append(result(fetch, score: choice.entry.score)) }
        }
        fetch.reset()
        guard picked.count > limit, let last = picked.prefix(limit).last else { return QueryPage(results: results, nextCursor: nil) }
        let next = Cursor.relevance(scoring: .bm25f, pass: last.pass, score: last.entry.score, hint: last.entry.hint, bundle: last.entry.bundle, uid: last.entry.uid)
        return QueryPage(results: results, nextCursor: next.encoded)
    }

    /// Inserts `entry` into `list` (best first) in order.
    static func insert(_ entry: Ranked, into list: inout [Ranked]) {
        var low = 0, high = list.count
        while low < high {
            let middle = (low + high) / 2
            if list[middle].precedes(entry) { low = middle + 1 } else { high = middle }
        }
        list.insert(entry, at: low)
    }

    /// The first `wanted` of the matches `rows` (all of score `score`) in relevance order —
    /// hint, then bundle and identifier — that are visible, pass the filters and come after the
    /// cursor (`lookUp` tells, nil otherwise). A few are looked up one by one; many are found
    /// in the index's own orders instead of each being looked up: the items with a nonzero hint
    /// through `items_ranking_hint`, then the others by walking each bundle's live items in
    /// identifier order (the unique index) until enough of them are among `rows`.
    fileprivate func resolveTie(_ rows: [Int64], score: Double, wanted: Int,
                                lookUp: (Int64, Double) throws(StoreError) -> Ranked?) throws(StoreError) -> [Ranked] {
        guard wanted > 0 else { return [] }
        if rows.count <= 256 {
            var all: [Ranked] = []
            for row in rows { if let entry = try lookUp(row, score) { all.append(entry) } }
            return Array(all.sorted { $0.precedes($1) }.prefix(wanted))
        }
        let members = Set(rows)
        // Hinted items (the partial index holds only nonzero hints).
        var hinted: [Ranked] = []
        let withHint = try statement("SELECT id FROM items WHERE ranking_hint != 0")
        var hintedRows: [Int64] = []
        while try withHint.step() { if members.contains(withHint.int64(0)) { hintedRows.append(withHint.int64(0)) } }
        withHint.reset()
        for row in hintedRows { if let entry = try lookUp(row, score), entry.hint != 0 { hinted.append(entry) } }
        hinted.sort { $0.precedes($1) }
        var result = Array(hinted.filter { $0.hint > 0 }.prefix(wanted))
        guard result.count < wanted else { return result }
        // Hint 0: bundles by key, each one's live items by identifier.
        let bundles = try statement("SELECT key, live_gen FROM bundles ORDER BY key")
        var live: [(key: String, gen: Int64)] = []
        while try bundles.step() { live.append((bundles.text(0) ?? "", bundles.int64(1))) }
        bundles.reset()
        let walk = try statement("SELECT id FROM items WHERE bundle = ?1 AND gen = ?2 ORDER BY uid")
        defer { walk.reset() }
        outer: for bundle in live {
            walk.reset()
            walk.bind(1, bundle.key)
            walk.bind(2, bundle.gen)
            while try walk.step() {
                let row = walk.int64(0)
                guard members.contains(row), let entry = try lookUp(row, score), entry.hint == 0 else { continue }
                result.append(entry)
                if result.count == wanted { break outer }
            }
        }
        walk.reset()
        if result.count < wanted { result += hinted.filter { $0.hint < 0 }.prefix(wanted - result.count) }
        return result
    }
}

extension IndexStore {
    /// Registers the query functions on this connection once: `reindex_rank` (an FTS5
    /// auxiliary function, through `fts5_api`), `reindex_match` and `reindex_seconds`.
    func prepareQueries() throws(StoreError) {
        guard !queryState.registered else { return }
        let db = connection.handle
        let api = try connection.fts5API()
        var rc = api.pointee.xCreateFunction(api, "reindex_rank", Unmanaged.passUnretained(queryState.threshold).toOpaque(), Ranking.rankFunction, nil)
        guard rc == SQLITE_OK else { throw connection.error(rc, "reindex_rank") }
        rc = api.pointee.xCreateFunction(api, "reindex_impact", nil, Ranking.impactFunction, nil)
        guard rc == SQLITE_OK else { throw connection.error(rc, "reindex_impact") }
        rc = sqlite3_create_function_v2(db, "reindex_seconds", 1, SQLITE_UTF8 | SQLITE_DETERMINISTIC, nil, { context, _, arguments in
            guard let arguments, let value = arguments[0], let text = sqlite3_value_text(value) else { sqlite3_result_null(context); return }
            let string = String(cString: text)
            if let seconds = RFC3339.parse(string) { sqlite3_result_double(context, seconds) } else { sqlite3_result_null(context) }
        }, nil, nil, nil)
        guard rc == SQLITE_OK else { throw connection.error(rc, "reindex_seconds") }
        rc = sqlite3_create_function_v2(db, "reindex_match", 3, SQLITE_UTF8 | SQLITE_DETERMINISTIC, nil, { context, _, arguments in
            guard let arguments, let value = arguments[0], let text = sqlite3_value_text(value),
                  let patternValue = arguments[1], let pattern = sqlite3_value_text(patternValue), let flags = arguments[2] else {
                sqlite3_result_null(context); return
            }
            let modifiers = StringModifiers(rawValue: UInt8(truncatingIfNeeded: sqlite3_value_int64(flags)))
            sqlite3_result_int(context, Folding.matches(String(cString: text), pattern: String(cString: pattern), modifiers: modifiers) ? 1 : 0)
        }, nil, nil, nil)
        guard rc == SQLITE_OK else { throw connection.error(rc, "reindex_match") }
        queryState.registered = true
    }

    /// How many rows of the full-text index `unit` matches (whole, or as a prefix in the prefix
    /// pass): its document frequency, for its rarity. Counted from the unit's postings, which
    /// costs a read of them all (tens of milliseconds for a word of 100,000 items), so a count
    /// is kept while the full-text index is unchanged: in the connection, and in the index
    /// (`unit_frequencies`, written by `keepFrequencies` after the search) for the processes
    /// that search next.
    func documentFrequency(_ unit: RankingUnit, prefix: Bool) throws(StoreError) -> Int {
        try documentFrequency(phrase: FullText.phrase(unit, prefix: prefix))
    }

    /// How many rows of the full-text index match `phrase`, kept as `documentFrequency(_:prefix:)`.
    func documentFrequency(phrase: String) throws(StoreError) -> Int {
        let current = try fullTextStructure()
        if current != queryState.ftsVersion {
            queryState.ftsVersion = current
            queryState.frequencies.removeAll(keepingCapacity: true)
            queryState.unkept.removeAll()
            queryState.keptForVersion = nil
        }
        if let cached = queryState.frequencies[phrase] { return cached }
        if queryState.keptForVersion == nil { queryState.keptForVersion = try keptStructure() == current }
        if queryState.keptForVersion == true {
            let kept = try statement("SELECT n FROM unit_frequencies WHERE phrase = ?1")
            kept.bind(1, phrase)
            defer { kept.reset() }
            if try kept.step() {
                let n = kept.int(0)
                queryState.frequencies[phrase] = n
                return n
            }
        }
        let n = try fullTextCount(phrase)
        queryState.counted += 1
        if queryState.frequencies.count > 10_000 { queryState.frequencies.removeAll() }
        queryState.frequencies[phrase] = n
        if queryState.unkept.count < 256 { queryState.unkept[phrase] = n }
        return n
    }

    /// How many rows of the full-text index match `expression`, from its postings.
    func fullTextCount(_ expression: String) throws(StoreError) -> Int {
        let count = try statement("SELECT count(*) FROM items_fts WHERE items_fts MATCH ?1")
        count.bind(1, expression)
        defer { count.reset() }
        return try count.step() ? count.int(0) : 0
    }

    /// The structure record the counts in `unit_frequencies` were counted under, if any.
    func keptStructure() throws(StoreError) -> [UInt8]? {
        let kept = try statement("SELECT structure FROM unit_frequencies_structure")
        defer { kept.reset() }
        return try kept.step() ? kept.blob(0) : nil
    }

    /// The full-text index's structure record (FTS5's `%_data` row 10), which every write to
    /// the index changes: what a kept count is valid for.
    func fullTextStructure() throws(StoreError) -> [UInt8] {
        let version = try statement("SELECT block FROM items_fts_data WHERE id = 10")
        defer { version.reset() }
        return try version.step() ? version.blob(0) : []
    }

    /// Writes the counts this connection made into `unit_frequencies`, in a short write
    /// transaction that does not wait for a writer (busy, or an index opened read-only: they are
    /// counted again next time), and only while the full-text index is still the one they were
    /// counted in. Counts kept for an older structure are dropped first.
    func keepFrequencies() {
        guard !queryState.unkept.isEmpty, !connection.isInTransaction else { return }
        let counted = queryState.ftsVersion
        let unkept = queryState.unkept
        connection.setBusyTimeout(milliseconds: 0)
        defer { connection.setBusyTimeout(milliseconds: busyTimeout) }
        try? within("BEGIN IMMEDIATE") { () throws(StoreError) in
            // (Counted for an older index: of no use to anyone.)
            defer { queryState.unkept.removeAll() }
            guard try fullTextStructure() == counted else { return }
            let stored = try keptStructure()
            let held = stored == counted ? try connection.scalar("SELECT count(*) FROM unit_frequencies") ?? 0 : 0
            if stored != counted || held > Self.keptFrequencies {
                try connection.execute("DELETE FROM unit_frequencies; DELETE FROM unit_frequencies_structure;")
                let structure = try statement("INSERT INTO unit_frequencies_structure(structure) VALUES(?1)")
                structure.bind(1, blob: counted)
                try structure.run()
            }
            let insert = try statement("INSERT OR REPLACE INTO unit_frequencies(phrase, n) VALUES(?1, ?2)")
            for (phrase, n) in unkept.sorted(by: { $0.key < $1.key }) {
                insert.bind(1, phrase)
                insert.bind(2, Int64(n))
                try insert.run()
            }
            queryState.keptForVersion = true
        }
    }

    /// At most this many counts are kept in the index (past it, they start again).
    static let keptFrequencies: Int64 = 4_096
}
