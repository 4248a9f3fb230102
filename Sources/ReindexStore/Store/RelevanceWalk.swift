import ReindexSystem
import ReindexProtocol

// The relevance walk of a query with words (split from Queries.swift, which keeps the query's
// preparation, the filters, sorted pages, counts and facets): the score groups of
// Query/Ranking.swift from the best down, each ordered by rankingHint within its window, then
// newest first, keeping the visible items that pass the filters.
extension IndexStore {
    /// Relevance order (Query/Ranking.swift): walks the score groups from the best down, each
    /// by rankingHint (highest first, none counting as 0) then newest first, keeping the visible
    /// items that pass the filters.
    func ranked(_ q: PreparedQuery, limit: Int, cursor: Cursor?) throws(StoreError) -> QueryPage {
        let units = q.plan.units
        let check = try statement("""
            SELECT b.identifier, i.uid, i.domain, i.expires, i.attributes, i.id, IFNULL(i.ranking_hint, 0)
            FROM items i JOIN bundles b ON b.key = i.bundle AND b.live_gen = i.gen
            WHERE i.id = ?1 AND \(QueryPlan.forOneItem(filterSQL(q)))
            """)
        bindFilters(check, q)
        defer { check.reset() }
        var results: [SearchResult] = []
        var last: Cursor? = nil
        let hasPrefixPass = units.contains { $0.prefixable && !$0.starred }
        var start: (pass: Int, score: Double, hint: Double, row: Int64)? = nil
        if case .ranked(let pass, let score, let hint, let row)? = cursor { start = (pass, score, hint, row) }
        /// Whether (hint, row) comes at or before the cursor in its group (so is skipped).
        func seen(_ pass: Int, _ score: Double, _ hint: Double, _ row: Int64) -> Bool {
            guard let start, start.pass == pass else { return false }
            return score > start.score || (score == start.score && (hint > start.hint || (hint == start.hint && row >= start.row)))
        }
        /// Adds the row if visible and passing the filters; true when the page is full and one
        /// more match exists. `order` is the row's place in its group when it is not its own
        /// hint (`Self.beyondWindow` for a match older than its group's window).
        func take(_ row: Int64, score: Double, pass: Int, order: Double? = nil) throws(StoreError) -> Bool {
            check.bind(1, row)
            defer { sqlite3Reset(check) }
            guard try check.step() else { return false }
            let hint = order ?? check.double(6)
            if seen(pass, score, hint, row) { return false }
            if results.count == limit { return true }
            results.append(result(check, score: score))
            last = .ranked(pass: pass, score: score, hint: hint, row: row)
            return false
        }
        let hinted = try hasRankingHints()
        for pass in (hasPrefixPass ? [0, 1] : [0]) {
            if let start, pass < start.pass { continue }
            let prefix = pass == 1
            let exclusion = prefix ? " NOT (" + FullText.conjunction(units, prefix: false) + ")" : ""
            var possible: [UInt8] = []
            for unit in units { possible.append(try possibleColumns(unit, prefix: prefix)) }
            if let groups = Ranking.groups(units, possible: possible, prefix: prefix) {
                let stream = try statement("SELECT rowid FROM items_fts WHERE items_fts MATCH ?1 AND rowid < ?2 ORDER BY rowid DESC")
                for group in groups {
                    if let start, start.pass == pass, group.score > start.score { continue }
                    let expression = "(" + group.expression + ")" + exclusion
                    if hinted {
                        var resume: (hint: Double, row: Int64)? = nil
                        if let start, start.pass == pass, group.score == start.score { resume = (start.hint, start.row) }
                        if try hintedGroup(expression, score: group.score, pass: pass, resume: resume, take: take) {
                            return QueryPage(results: results, nextCursor: last?.encoded)
                        }
                        continue
                    }
                    var below = Int64.max
                    if let start, start.pass == pass, group.score == start.score { below = start.row }
                    stream.reset()
                    stream.bind(1, expression)
                    stream.bind(2, below)
                    while try stream.step() {
                        if try take(stream.int64(0), score: group.score, pass: pass) {
                            stream.reset()
                            return QueryPage(results: results, nextCursor: last?.encoded)
                        }
                    }
                    stream.reset()
                }
            } else {
                // Too many score groups to walk: one pass over every match, scored by column.
                let all = try statement("""
                    SELECT items_fts.rowid, reindex_rank(items_fts, ?2) AS s, IFNULL(i.ranking_hint, 0) AS h
                    FROM items_fts JOIN items i ON i.id = items_fts.rowid
                    WHERE items_fts MATCH ?1 ORDER BY s DESC, h DESC, items_fts.rowid DESC
                    """)
                all.bind(1, "(" + FullText.conjunction(units, prefix: prefix) + ")" + exclusion)
                all.bind(2, units.count)
                while try all.step() {
                    if try take(all.int64(0), score: all.double(1), pass: pass) {
                        all.reset()
                        return QueryPage(results: results, nextCursor: last?.encoded)
                    }
                }
                all.reset()
            }
        }
        return QueryPage(results: results, nextCursor: nil)
    }

    /// With hints in the index, the newest this many matches of a score group are ordered by
    /// hint; the group's older matches follow, newest first (docs/QUERIES.md, "Relevance").
    static let hintWindow = 200
    /// The place in its group of a match older than the group's window: after every match of
    /// the window, whatever its hint (hints are finite JSON numbers), and among these by row.
    static let beyondWindow = -Double.greatestFiniteMagnitude

    /// Whether any item has a nonzero rankingHint (one lookup in `items_ranking_hint`); when
    /// none has, groups are read newest first straight from the full-text index.
    func hasRankingHints() throws(StoreError) -> Bool {
        let any = try statement("SELECT 1 FROM items WHERE ranking_hint != 0 LIMIT 1")
        defer { any.reset() }
        return try any.step()
    }

    /// One score group when the index holds hints: its newest `hintWindow` matches (before
    /// the filters) ordered by hint, highest first, then newest first; then its older matches,
    /// newest first. A cursor past the window (`resume` with `beyondWindow`) goes straight to
    /// the rows below it, so a deep page does not read the window again. True when the page
    /// is full.
    fileprivate func hintedGroup(_ expression: String, score: Double, pass: Int, resume: (hint: Double, row: Int64)?,
                             take: (Int64, Double, Int, Double?) throws(StoreError) -> Bool) throws(StoreError) -> Bool {
        let stream = try statement("SELECT rowid FROM items_fts WHERE items_fts MATCH ?1 AND rowid < ?2 ORDER BY rowid DESC")
        defer { stream.reset() }
        var below = Int64.max
        if let resume, resume.hint == Self.beyondWindow {
            below = resume.row
        } else {
            stream.reset()
            stream.bind(1, expression)
            stream.bind(2, Int64.max)
            var window: [Int64] = []
            while window.count < Self.hintWindow, try stream.step() { window.append(stream.int64(0)) }
            stream.reset()
            let hintOf = try statement("SELECT IFNULL(ranking_hint, 0) FROM items WHERE id = ?1")
            var ordered: [(row: Int64, hint: Double)] = []
            ordered.reserveCapacity(window.count)
            for row in window {
                hintOf.reset()
                hintOf.bind(1, row)
                ordered.append((row, try hintOf.step() ? hintOf.double(0) : 0))
            }
            hintOf.reset()
            ordered.sort { $0.hint != $1.hint ? $0.hint > $1.hint : $0.row > $1.row }
            for entry in ordered where try take(entry.row, score, pass, entry.hint) { return true }
            guard window.count == Self.hintWindow, let oldest = window.last else { return false }
            below = oldest
        }
        stream.reset()
        stream.bind(1, expression)
        stream.bind(2, below)
        while try stream.step() {
            if try take(stream.int64(0), score, pass, Self.beyondWindow) { return true }
        }
        return false
    }

    fileprivate func sqlite3Reset(_ s: SQLiteStatement) {
        // Keeps the bindings (the filters) and rewinds the statement.
        s.rewind()
    }
}
