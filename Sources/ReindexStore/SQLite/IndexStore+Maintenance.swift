import ReindexProtocol
import ReindexSystem

extension IndexStore {
    /// SQLite's integrity check (`quick`: its quick check, without the full-text index's), then,
    /// if the file is sound, the index's own invariants; and whether the file was found lost.
    public func health(quick: Bool) throws(ReindexError) -> IndexHealth {
        var health = IndexHealth(lostReason: openReport.lostReason, keptAs: openReport.movedAsideTo)
        do throws(StoreError) {
            // FTS5 checks itself through a write statement, which a read-only index refuses.
            let fullText = !quick && !connection.isReadOnly
            if !quick && !fullText {
                health.unchecked.append("the full-text index's own integrity check, which SQLite runs as a write, and this user may not write the index (or its directory)")
            }
            health.problems = try integrityCheck(quick: quick, fullText: fullText)
            guard health.problems.isEmpty else { return health }
            do throws(StoreError) {
                let invariants = try checkInvariants()
                health.problems = invariants.problems
                health.leftovers = invariants.leftovers
                if !quick { health.problems += try rankListProblems() }
            } catch {
                guard error.code == .damaged else { throw error }
                health.problems.append(error.message)
            }
        } catch {
            throw error.explained(index: path, doing: "check failed")
        }
        return health
    }
}

extension IndexStore {
    /// Checks the index's own invariants in one snapshot: every item has its full-text row and
    /// its searched columns match, no full-text row is orphaned, every item belongs to a known
    /// bundle, every bundle's live generation was made live by a reindexAll of that bundle, and
    /// every invisible row belongs to a running or resumable writer (else it is a leftover).
    public func checkInvariants() throws(StoreError) -> IndexInvariants {
        try read { () throws(StoreError) -> IndexInvariants in
            var result = IndexInvariants()
            let counts: [(String, String)] = [
                ("SELECT count(*) FROM items i WHERE NOT EXISTS (SELECT 1 FROM items_fts f WHERE f.rowid = i.id)",
                 "item(s) have no full-text row"),
                ("SELECT count(*) FROM items_fts_docsize d WHERE NOT EXISTS (SELECT 1 FROM items i WHERE i.id = d.id)",
                 "full-text row(s) belong to no item"),
                // The title, or the title followed by its `WordParts` line.
                ("""
                 SELECT count(*) FROM items i JOIN items_fts f ON f.rowid = i.id WHERE f.title IS NOT json_extract(i.attributes, '$.title')
                 AND substr(f.title, 1, length(json_extract(i.attributes, '$.title')) + 1) IS NOT json_extract(i.attributes, '$.title') || char(10)
                 """,
                 "full-text row(s) do not match their item's title"),
                ("SELECT count(*) FROM item_attributes t WHERE NOT EXISTS (SELECT 1 FROM items i WHERE i.id = t.item)",
                 "declared attribute value(s) belong to no item"),
                ("SELECT count(*) FROM items WHERE bundle NOT IN (SELECT key FROM bundles)",
                 "item(s) belong to a bundle the index does not know"),
            ]
            for (sql, what) in counts {
                let n = try connection.scalar(sql) ?? 0
                if n > 0 { result.problems.append("\(n) \(what)") }
            }
            let lives = try statement("""
                SELECT b.identifier, b.live_gen FROM bundles b WHERE b.live_gen != 0
                AND NOT EXISTS (SELECT 1 FROM requests r WHERE r.id = b.live_gen AND r.bundle = b.key AND r.kind = 'reindexAll')
                AND NOT EXISTS (SELECT 1 FROM runs r WHERE r.request_id = b.live_gen AND r.bundle = b.key)
                """)
            while try lives.step() {
                result.problems.append("\(lives.text(0) ?? "?"): its live generation \(lives.int64(1)) was made by no reindexAll of the bundle")
            }
            lives.reset()
            let staged = Dictionary(uniqueKeysWithValues: try stagings().map { ($0.id, $0) })
            let groups = try statement("""
                SELECT i.bundle, i.gen, count(*), sum(i.batch > coalesce(g.committed_batch, 0)), b.live_gen,
                    (SELECT r.state FROM requests r WHERE r.id = i.gen AND r.bundle = i.bundle AND r.kind = 'reindexAll'),
                    EXISTS (SELECT 1 FROM retired_generations t WHERE t.bundle = i.bundle AND t.gen = i.gen)
                FROM items i JOIN bundles b ON b.key = i.bundle
                LEFT JOIN staged_generations g ON g.bundle = i.bundle AND g.gen = i.gen
                GROUP BY i.bundle, i.gen
                """)
            while try groups.step() {
                let bundle = groups.text(0) ?? "?", generation = groups.int64(1), rows = groups.int(2), uncommitted = groups.int(3)
                if generation == groups.int64(4) { continue }
                let state = groups.text(5)
                if groups.int(6) != 0 {
                    result.leftovers.append("\(bundle): \(rows) row(s) of replaced generation \(generation), not yet deleted")
                } else if generation < 0 {
                    switch staged[-generation] {
                    case let staging? where staging.owner.isAlive: continue
                    case _?: result.leftovers.append("\(bundle): \(rows) staged row(s) of a writer that is gone (pid \(staged[-generation]?.owner.pid ?? 0))")
                    case nil: result.problems.append("\(bundle): \(rows) staged row(s) of staging \(-generation), which no writer owns")
                    }
                } else if state == "running" {
                    continue
                } else if state == "pending" {
                    if uncommitted > 0 {
                        result.leftovers.append("\(bundle): \(uncommitted) uncommitted row(s) of request \(generation), written after its last batch/commit")
                    }
                } else {
                    result.problems.append("\(bundle): \(rows) row(s) of generation \(generation) belong to no running or resumable reindexAll (request \(state ?? "gone"))")
                }
            }
            groups.reset()
            return result
        }
    }
}
