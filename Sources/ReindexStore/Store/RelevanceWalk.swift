import ReindexSystem
import ReindexProtocol

// The relevance order of a query with words (split from Queries.swift, which keeps the query's
// preparation, the filters, sorted pages, counts and facets): BM25F (Query/Ranking.swift), then
// rankingHint, then bundle and identifier; whole words before prefixes.
extension IndexStore {
    /// One match in relevance order.
    fileprivate struct Ranked {
        var row: Int64
        var score: Double
        var hint: Double
        var bundle: String
        var uid: String

        /// Whether `self` comes before `other`: higher score, then higher hint, then bundle and
        /// identifier.
        func precedes(_ other: Ranked) -> Bool {
            if score != other.score { return score > other.score }
            if hint != other.hint { return hint > other.hint }
            if bundle != other.bundle { return bundle < other.bundle }
            return uid < other.uid
        }
    }

    /// Relevance order (Query/Ranking.swift): the best `limit` visible matches that pass the
    /// filters, by score (highest first), rankingHint (highest first, none counting as 0), bundle
    /// and identifier. Items where every word matches whole (pass 0) come before items that match
    /// only because the last word is also a prefix (pass 1).
    ///
    /// Every match of a pass is scored in one read of the full-text index; the best `limit + 1`
    /// so far are kept, best first. A match is looked up (visibility, filters, hint, identifier)
    /// only when its score reaches the worst kept one, and `reindex_rank` skips reading the
    /// length of a match that cannot (`RankThreshold`), so the cost is one pass over the
    /// matches' postings plus a few lookups, and the memory the page's.
    func ranked(_ q: PreparedQuery, limit: Int, cursor: Cursor?) throws(SQLiteError) -> QueryPage {
        let units = q.plan.units
        let hasPrefixPass = units.contains { $0.prefixable && !$0.starred }
        var start: (pass: Int, entry: Ranked)? = nil
        if case .relevance(let pass, let score, let hint, let bundle, let uid)? = cursor {
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
        var picked: [(entry: Ranked, pass: Int)] = []
        for pass in (hasPrefixPass ? [0, 1] : [0]) where picked.count <= limit {
            if let start, pass < start.pass { continue }
            let prefix = pass == 1
            let after = start.flatMap { $0.pass == pass ? $0.entry : nil }
            let exclusion = prefix ? " NOT (" + FullText.conjunction(units, prefix: false) + ")" : ""
            var counts: [Int] = []
            for unit in units { counts.append(try documentFrequency(unit, prefix: prefix)) }
            let capacity = limit + 1 - picked.count
            // Best first; at most `capacity`.
            var best: [Ranked] = []
            best.reserveCapacity(min(capacity, 1024))
            threshold.value = -.infinity
            stream.reset()
            stream.bind(1, "(" + FullText.conjunction(units, prefix: prefix) + ")" + exclusion)
            stream.bind(2, blob: Ranking.frequencies(counts))
            while try stream.step() {
                guard !stream.isNull(1) else { continue }
                let score = stream.double(1)
                if let after, score > after.score { continue }
                if best.count == capacity, let worst = best.last, score < worst.score { continue }
                check.rewind()
                check.bind(1, stream.int64(0))
                guard try check.step() else { continue }
                let entry = Ranked(row: stream.int64(0), score: score, hint: check.double(0), bundle: check.text(1) ?? "", uid: check.text(2) ?? "")
                if let after, !after.precedes(entry) { continue }
                if best.count == capacity, let worst = best.last, !entry.precedes(worst) { continue }
                // Insert in order (binary search), dropping the worst beyond capacity.
                var low = 0, high = best.count
                while low < high {
                    let middle = (low + high) / 2
                    if best[middle].precedes(entry) { low = middle + 1 } else { high = middle }
                }
                best.insert(entry, at: low)
                if best.count > capacity { best.removeLast() }
                if best.count == capacity, let worst = best.last { threshold.value = worst.score }
            }
            stream.reset()
            threshold.value = -.infinity
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
        let next = Cursor.relevance(pass: last.pass, score: last.entry.score, hint: last.entry.hint, bundle: last.entry.bundle, uid: last.entry.uid)
        return QueryPage(results: results, nextCursor: next.encoded)
    }
}
