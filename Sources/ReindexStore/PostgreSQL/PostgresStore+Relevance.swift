import ReindexProtocol

// The statistics of BM25F on PostgreSQL (SQLite/Ranking.swift, docs/QUERIES.md "Relevance"):
// the same N, n and average length SQLite's full-text index gives, so an item scores on both
// backends what it scores on the other.
//
// - N and the total length are each bundle's items of every generation, expired ones included
//   (the rows of SQLite's `items_fts`), counted by statement triggers into `full_text_totals`
//   (schema migration 12): one row per bundle, so the writers of two bundles never wait on each
//   other's count.
// - n is counted from the document's index, and kept in the process while `changes` (which every
//   write to the items moves on) stands still, as SQLite keeps its counts while its full-text
//   index's structure record does; kept in `unit_frequencies` with the snapshot it is of, for
//   every process, and brought up to date from the writes since (`frequencyChange`, schema
//   migration 14) rather than counted again.
// - The average length is pinned in `rank_statistics` when the first rank list is made (a list
//   holds impacts, which depend on it), and taken again, every list dropped, when the index's
//   own average moves from it by more than a fifth — SQLite's rule (`RankLists.drift`).
extension PostgresStore {
    /// The rows N, the average length the score uses (the pinned one if any), the index's
    /// write count, the snapshot and `resets` a count made in it is kept with, and whether an
    /// item's document leaves words out (`overflowed`); in the caller's snapshot. Notes when the
    /// pinned average has moved too far (`PostgresRankLists.repin`).
    func rankStatistics() throws -> (rows: Int64, average: Double, changes: Int64, snapshot: String, resets: Int64, overflowed: Bool) {
        let r = try query("""
            SELECT coalesce(sum(items), 0), coalesce(sum(tokens), 0), coalesce(sum(changes), 0), (SELECT average FROM rank_statistics LIMIT 1),
                pg_current_snapshot()::text, coalesce(sum(resets), 0), \(Self.overflowed)
            FROM full_text_totals
            """)
        let rows = r.int64(0, 0), tokens = r.int64(0, 1)
        let live = rows > 0 && tokens > 0 ? Double(tokens) / Double(rows) : 1
        let (snapshot, resets, overflowed) = (r.text(0, 4) ?? "", r.int64(0, 5), r.bool(0, 6))
        guard !r.isNull(0, 3) else { return (rows, live, r.int64(0, 2), snapshot, resets, overflowed) }
        let pinned = r.double(0, 3)
        if abs(live / pinned - 1) > RankLists.drift { rankLists.repin = true }
        return (rows, pinned, r.int64(0, 2), snapshot, resets, overflowed)
    }

    /// Whether some item's words did not all fit in its document (`PostgresDocument.overflowMark`),
    /// or one gone since is logged for the counts brought up to date: a lookup in an index of
    /// such items alone (`items_overflowed`, schema migration 16), and in the few items gone with
    /// exact positions (`items_gone_places`).
    static let overflowed = """
        (EXISTS (SELECT 1 FROM items WHERE doc @@ \(overflowMarkQuery)) OR EXISTS (SELECT 1 FROM items_gone WHERE places IS NOT NULL AND doc @@ \(overflowMarkQuery)))
        """

    /// The mark of a document that left words out, as a `tsquery` constant (the predicate of
    /// `items_overflowed`, which a query must spell the same way to read that index).
    static let overflowMarkQuery = PostgresQueryCompiler.literal(PostgresQueryCompiler.lexeme(PostgresDocument.overflowMark)) + "::tsquery"

    /// The query's scoring: each unit's rarity in each pass it has, by its phrase, and the
    /// average length.
    ///
    /// With `mayDefer`, one word that more items hold as typed than a page takes has no rarity
    /// in the prefix pass yet (`prefixDeferred`): the page is likely all of the first pass, and
    /// the prefix's count is the dearest there is (it reads the table's page of every item
    /// holding any word the prefix begins: 0.7 s for `engineer` at 1M items, more than its
    /// whole list). A read that does reach the prefix pass counts it then (`ranked`).
    func scoring(_ q: inout PreparedPostgresQuery, mayDefer: Bool = false) throws -> PostgresQueryCompiler.Scoring {
        let statistics = try rankStatistics()
        q.overflowed = statistics.overflowed
        countsAre(at: statistics.changes, snapshot: statistics.snapshot, resets: statistics.resets)
        if mayDefer, try countsWithLists(q) {
            return PostgresQueryCompiler.Scoring(rarities: [:], average: statistics.average, prefixDeferred: true, countsWithLists: true)
        }
        var rarities: [String: Double] = [:]
        var deferred = false
        for unit in q.units {
            for prefix in unit.prefixable && !unit.starred ? [false, true] : [false] {
                let phrase = FullText.phrase(unit, prefix: prefix)
                guard rarities[phrase] == nil else { continue }
                let n = try documentFrequency(unit, prefix: prefix, phrase: phrase, q)
                rarities[phrase] = Ranking.rarity(rows: Double(statistics.rows), matching: Double(n))
                if mayDefer, !prefix, q.units.count == 1, n > max(1, q.options.limit) + 1 {
                    if case .relevance(_, let pass, _, _, _, _)? = q.cursor, pass > 0 { continue }
                    deferred = true
                    break
                }
            }
        }
        return PostgresQueryCompiler.Scoring(rarities: rarities, average: statistics.average, prefixDeferred: deferred)
    }

    /// The counts kept in the process are of the items at write count `changes`, in `snapshot`
    /// (with the items' `resets` in it): those of any other write count go.
    func countsAre(at changes: Int64, snapshot: String, resets: Int64) {
        guard changes != rankLists.frequenciesAt else { return }
        rankLists.frequencies.removeAll(keepingCapacity: true)
        rankLists.unkept.removeAll()
        rankLists.hiddenText = nil
        rankLists.frequenciesAt = changes
        rankLists.countSnapshot = (snapshot, resets)
    }

    /// How many items of every generation (expired ones too: the rows of SQLite's full-text
    /// index) the unit matches, whole or as a prefix; kept while the items are unchanged.
    ///
    /// n is of the whole index, whatever bundle the query is restricted to: where any bundle
    /// declares an attribute searchable but not by default, whose text the documents hold
    /// (`hiddenText`, read with the first count while the items stand still: a declaration
    /// changes with a reindexAll's items), the matches are rechecked against the built-in
    /// attributes, as SQLite's full-text index never holds that text.
    private func documentFrequency(_ unit: RankingUnit, prefix: Bool, phrase: String, _ q: PreparedPostgresQuery) throws -> Int {
        var compiler = q.compiler()
        compiler.recheckAlways = try hidesText()
        // (Plain words rechecked against the built-in attributes count other items.)
        let key = phrase + (compiler.recheckWords ? "|checked" : "")
        if let kept = rankLists.frequencies[key] { return kept }
        // Counted by another process (or an earlier search of this one): for these items, or
        // for those of an earlier snapshot, brought up to date from the writes since.
        let stored = try query("SELECT n, changes, snapshot::text, resets FROM unit_frequencies WHERE phrase = $1", [key])
        if stored.rowCount == 1 {
            var n: Int? = nil
            if stored.int64(0, 1) == rankLists.frequenciesAt {
                n = stored.int(0, 0)
            } else if let then = stored.text(0, 2),
                      !stored.isNull(0, 3), stored.int64(0, 3) == rankLists.countSnapshot?.resets,
                      let since = try frequencyChange(unit, prefix: prefix, since: then, q) {
                n = stored.int(0, 0) + since
                rankLists.deltas += 1
                if rankLists.unkept.count < 256 { rankLists.unkept[key] = n }
            }
            if let n {
                rankLists.frequencies[key] = n
                return n
            }
        }
        // A count reads every match (the heap pages of the GIN index's matches): no JIT for it,
        // and room for an exact bitmap of a million items' pages, where the default 4 MB made a
        // common prefix's pages lossy and every item on them was matched again (1.15 s against
        // 0.5–0.75 s for a prefix 200,000 of 1M items hold).
        try connection.execute("SET LOCAL jit = off; SET LOCAL work_mem = '32MB'")
        let match = compiler.unitMatch(unit, prefix: prefix)
        let n = try query("SELECT count(*) FROM items i CROSS JOIN LATERAL (SELECT \(PostgresQueryCompiler.attributesJSONB)) x(j) WHERE \(match)",
                          compiler.parameters).int(0, 0)
        rankLists.counted += 1
        if rankLists.frequencies.count > 10_000 { rankLists.frequencies.removeAll() }
        rankLists.frequencies[key] = n
        if rankLists.unkept.count < 256 { rankLists.unkept[key] = n }
        return n
    }

    /// Whether some bundle declares an attribute searchable but not by default (whose text the
    /// documents hold, and a word's count rechecks against the built-in attributes): read with
    /// the first count while the items stand still (a declaration changes with a reindexAll's
    /// items).
    func hidesText() throws -> Bool {
        if let hidden = rankLists.hiddenText { return hidden }
        let hidden = try everyBundlesDeclarations().contains { $0.values.contains { $0.searchable && !$0.searchableByDefault } }
        rankLists.hiddenText = hidden
        return hidden
    }

    /// How many more items `unit` matches in this snapshot than in `then`, an earlier one a
    /// count was kept for: the items written since (their `tx`, which `then` does not see)
    /// that match, less the items gone since (`items_gone`, schema migration 14: their document
    /// and their `tx` of before, which `then` saw; from migration 15 their exact positions and
    /// attributes too, which a word of some attributes reads) that matched. A few lookups of the `tx`
    /// indexes where a count reads every match's page. Nil when more than `changedRows` items
    /// came or went since: counting again is then as cheap.
    private func frequencyChange(_ unit: RankingUnit, prefix: Bool, since then: String, _ q: PreparedPostgresQuery) throws -> Int? {
        let limit = rankLists.changedRows
        let moved = try query("""
            SELECT (SELECT count(*) FROM (SELECT 1 FROM items WHERE tx >= pg_snapshot_xmin($1::pg_snapshot) LIMIT \(limit + 1)) s),
                (SELECT count(*) FROM (SELECT 1 FROM items_gone WHERE tx >= pg_snapshot_xmin($1::pg_snapshot) LIMIT \(limit + 1)) s)
            """, [then])
        guard moved.int(0, 0) <= limit, moved.int(0, 1) <= limit else { return nil }
        var compiler = q.compiler()
        compiler.recheckAlways = try hidesText()
        let snapshot = compiler.bind(then, "pg_snapshot")
        // (The unit's match reads the document, the exact positions and the attributes: `i` is
        // an item, or an item gone, which keeps them.)
        let match = compiler.unitMatch(unit, prefix: prefix)
        let since = "i.tx >= pg_snapshot_xmin(\(snapshot)) AND NOT pg_visible_in_snapshot(i.tx, \(snapshot))"
        let attributes = "CROSS JOIN LATERAL (SELECT \(PostgresQueryCompiler.attributesJSONB)) x(j)"
        return try query("""
            SELECT (SELECT count(*) FROM items i \(attributes) WHERE \(since) AND \(match))
                - (SELECT count(*) FROM items_gone i \(attributes) WHERE \(since) AND pg_visible_in_snapshot(i.old_tx, \(snapshot)) AND \(match))
            """, compiler.parameters).int(0, 0)
    }

    /// Writes the counts this process made (or brought up to date) into `unit_frequencies`, with
    /// their snapshot, for the searches of every process: in a short transaction of its own
    /// after the search, only while the items are still those they were counted for (counts
    /// kept under other `resets` go first, and all of them past `keptFrequencies`); then lets
    /// go of the items gone that no kept count's snapshot needs.
    /// Any failure (a role that may only read, a standby, a lock) leaves them uncounted there.
    func keepFrequencies() {
        guard !rankLists.unkept.isEmpty, !connection.inTransaction, let (snapshot, resets) = rankLists.countSnapshot else { return }
        let unkept = rankLists.unkept, counted = rankLists.frequenciesAt
        rankLists.unkept.removeAll()
        try? transaction { () throws in
            // (Counts are made again when lost: a crash may lose them, so the commit need not wait
            // for the disk.)
            try connection.execute("SET LOCAL lock_timeout = '100ms'; SET LOCAL synchronous_commit = off")
            // One process at a time keeps counts and lets go of the items gone that no kept
            // count needs: so none lets go of those a count kept meanwhile needs.
            try query("LOCK TABLE unit_frequencies IN SHARE ROW EXCLUSIVE MODE")
            guard try query("SELECT coalesce(sum(changes), 0) FROM full_text_totals").int64(0, 0) == counted else { return }
            try query("DELETE FROM unit_frequencies WHERE resets IS DISTINCT FROM $1 OR (SELECT count(*) FROM unit_frequencies) >= $2", [String(resets), String(Self.keptFrequencies)])
            let phrases = unkept.keys.sorted()
            try query("""
                INSERT INTO unit_frequencies(phrase, changes, n, snapshot, resets)
                SELECT p, $3, n, $4::pg_snapshot, $5 FROM unnest($1::text[], $2::bigint[]) AS x(p, n)
                ON CONFLICT (phrase) DO UPDATE SET changes = EXCLUDED.changes, n = EXCLUDED.n, snapshot = EXCLUDED.snapshot, resets = EXCLUDED.resets
                """, [PGArray.literal(phrases), PGArray.literal(phrases.map { String(unkept[$0] ?? 0) }), String(counted), snapshot, String(resets)])
            try query("""
                DELETE FROM items_gone WHERE tx < (SELECT coalesce(min(pg_snapshot_xmin(snapshot)), pg_snapshot_xmin(pg_current_snapshot())) FROM unit_frequencies)
                """)
        }
    }

    /// The log of items gone (`items_gone`) is let go of by the searches that keep counts, as
    /// the counts move on; a fleet that takes items away one by one and never searches would log
    /// them for as long as any count is kept. Past `rankLists.longestCountLog` of them, every
    /// kept count goes and the log with it (the next searches count again). A count made before
    /// and kept after needs none of the log: it is kept only while nothing was written since.
    func letGoOfALongCountLog() throws {
        let longest = rankLists.longestCountLog
        guard try query("SELECT count(*) FROM (SELECT 1 FROM items_gone LIMIT \(longest + 1)) s").int(0, 0) > longest else { return }
        try transaction { () throws in
            try query("LOCK TABLE unit_frequencies IN SHARE ROW EXCLUSIVE MODE")
            try query("DELETE FROM unit_frequencies")
            try query("DELETE FROM items_gone")
        }
    }

    /// At most this many counts are kept in the index (past it, they start again).
    static let keptFrequencies = 4_096

    /// Drops every list and the pinned average, when the index's own average has moved from
    /// it by more than `RankLists.drift`: the next list pins it again (in its own transaction,
    /// after the search).
    func repinIfWanted() {
        guard rankLists.repin, !connection.inTransaction else { return }
        rankLists.repin = false
        try? transaction { () throws in
            try query("SET LOCAL lock_timeout = '200ms'")
            try dropRankLists()
            try query("DELETE FROM rank_statistics")
        }
    }
}
