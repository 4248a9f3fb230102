import ReindexProtocol
import ReindexSystem

/// `reindex check` and `reindex reset` on the PostgreSQL index.
///
/// There is no file to check: PostgreSQL keeps its own pages sound (checksums, WAL), so the
/// check is of what the host built in the database — the schema at this version with its
/// tables, its text-search configuration and a valid full-text index — and of the index's own
/// invariants, as on SQLite. Reset erases the deployment's tables in one transaction; the old
/// rows are not kept aside (the database's backups are the way back).
extension PostgresStore {
    /// The tables every deployment's schema has.
    static let tables = ["bundles", "items", "staged_generations", "requests", "runs", "workers", "bundle_hosts", "duties", "app_client_states", "rank_lists", "rank_entries", "full_text_totals", "rank_statistics", "unit_frequencies", "items_gone", "schema_version"]

    /// The index's structure and invariants, in one snapshot. `quick` leaves out the check of
    /// every item's document against its title (a read of every item).
    public func checkInvariants(quick: Bool = false) throws -> IndexInvariants {
        try snapshot { () throws -> IndexInvariants in
            var result = IndexInvariants()
            let present = try query("SELECT c.relname FROM pg_class c WHERE c.relnamespace = $1::regnamespace AND c.relkind = 'r'", [location.schema])
            let tables = Set((0..<present.rowCount).compactMap { present.text($0, 0) })
            let missing = Self.tables.filter { !tables.contains($0) }
            if !missing.isEmpty {
                result.problems.append("the schema \(location.schema) lacks the table(s) \(missing.joined(separator: ", "))")
                return result
            }
            let version = try query("SELECT max(version) FROM schema_version").int(0, 0)
            if version != PostgresSchema.migrations.count {
                result.problems.append("the schema is at version \(version), this reindex writes version \(PostgresSchema.migrations.count)")
            }
            for (function, what) in [("reindex_slots", "reads one attribute's words"), ("reindex_frequency", "counts a phrase's occurrences for the score"),
                                      ("reindex_count_items", "counts each bundle's items for the score")] {
                if try query("SELECT count(*) FROM pg_proc WHERE proname = $2 AND pronamespace = $1::regnamespace", [location.schema, function]).int(0, 0) != 1 {
                    result.problems.append("the function \(location.schema).\(function), which \(what), is missing")
                }
            }
            let triggers = try query("""
                SELECT count(*) FROM pg_trigger t JOIN pg_class c ON c.oid = t.tgrelid
                WHERE c.relname = 'items' AND c.relnamespace = $1::regnamespace AND t.tgname LIKE 'items_counted_%' AND t.tgenabled <> 'D'
                """, [location.schema]).int(0, 0)
            if triggers != 3 {
                result.problems.append("\(3 - triggers) of the 3 triggers that count each bundle's items for the score (items_counted_…) are missing or disabled")
            }
            let index = try query("""
                SELECT i.indisvalid AND i.indisready FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid
                WHERE c.relname = 'items_doc' AND c.relnamespace = $1::regnamespace
                """, [location.schema])
            if index.rowCount != 1 {
                result.problems.append("the full-text index items_doc is missing")
            } else if !index.bool(0, 0) {
                result.problems.append("the full-text index items_doc is not valid (an interrupted build); REINDEX INDEX \(location.schema).items_doc rebuilds it")
            }
            var counts: [(String, String)] = [
                ("SELECT count(*) FROM items WHERE bundle NOT IN (SELECT key FROM bundles)", "item(s) belong to a bundle the index does not know"),
                ("SELECT count(*) FROM staged_generations g WHERE NOT EXISTS (SELECT 1 FROM requests r WHERE r.id = g.gen AND r.bundle = g.bundle)",
                 "staged generation(s) belong to no request"),
            ]
            if !quick {
                // A title holding a word the document certainly keeps (a run of 1 to 20 ASCII
                // letters and digits) has a position in the title's slot (`PostgresDocument`). The
                // document, the cheaper test on a healthy index, is read first.
                counts.append(("""
                    SELECT count(*) FROM items i
                    WHERE CASE WHEN EXISTS (SELECT 1 FROM unnest(ts_filter(i.doc, '{a}')) u, unnest(u.positions) p WHERE p < \(PostgresDocument.slotWidth))
                        THEN false
                        ELSE jsonb_typeof(i.j->'title') = 'string' AND i.j->>'title' ~ '(^|[^[:alnum:]])[[:alnum:]]{1,20}([^[:alnum:]]|$)' END
                    """, "item(s) have a full-text document without their title's words"))
                // BM25F's figures: each bundle's count of items and tokens, kept by the triggers.
                counts.append(("""
                    SELECT count(*) FROM (SELECT bundle, count(*) AS items, sum(length) AS tokens FROM items GROUP BY bundle) c
                    FULL JOIN full_text_totals t USING (bundle)
                    WHERE coalesce(c.items, 0) <> coalesce(t.items, 0) OR coalesce(c.tokens, 0) <> coalesce(t.tokens, 0)
                    """, "bundle(s) whose count of items or tokens for the score (full_text_totals) is not their items'"))
            }
            for (sql, what) in counts {
                let n = try query(sql).int(0, 0)
                if n > 0 { result.problems.append("\(n) \(what)") }
            }
            if !quick {
                result.problems += try rankListProblems()
                let places = try placesProblems()
                if places > 0 {
                    result.problems.append("\(places) item(s) whose full-text document leaves positions or words out lack their exact positions (items.places) or the mark of words left out, or hold others than their text's")
                }
            }
            let lives = try query("""
                SELECT b.identifier, b.live_gen FROM bundles b WHERE b.live_gen <> 0
                AND NOT EXISTS (SELECT 1 FROM requests r WHERE r.id = b.live_gen AND r.bundle = b.key AND r.kind = 'reindexAll')
                AND NOT EXISTS (SELECT 1 FROM runs r WHERE r.request_id = b.live_gen AND r.bundle = b.key)
                ORDER BY b.key
                """)
            for row in 0..<lives.rowCount {
                result.problems.append("\(lives.text(row, 0) ?? "?"): its live generation \(lives.int64(row, 1)) was made by no reindexAll of the bundle")
            }
            // Rows of a generation that is not live: a replacement being written (its request
            // pending or running) is fine; a replaced generation whose deletion was interrupted
            // is a leftover the next run or serve sweeps.
            let groups = try query("""
                SELECT i.bundle, i.gen, count(*), g.gen IS NOT NULL,
                    (SELECT r.state FROM requests r WHERE r.id = i.gen AND r.bundle = i.bundle AND r.kind = 'reindexAll')
                FROM items i JOIN bundles b ON b.key = i.bundle
                LEFT JOIN staged_generations g ON g.bundle = i.bundle AND g.gen = i.gen
                WHERE i.gen <> b.live_gen
                GROUP BY i.bundle, i.gen, g.gen ORDER BY 1, 2
                """)
            for row in 0..<groups.rowCount {
                let bundle = groups.text(row, 0) ?? "?", generation = groups.int64(row, 1), rows = groups.int(row, 2)
                let staged = groups.bool(row, 3), state = groups.text(row, 4)
                if staged && (state == "pending" || state == "running") { continue }
                if staged {
                    result.leftovers.append("\(bundle): \(rows) staged row(s) of request \(generation), which is \(state ?? "gone")")
                } else {
                    result.leftovers.append("\(bundle): \(rows) row(s) of replaced generation \(generation), not yet deleted")
                }
            }
            return result
        }
    }

    /// Erases the index: every item, staged generation, request, run, bundle record and
    /// application client state, in one transaction (other sessions see the old index or the
    /// empty one). Returns how many items there were. Waits at most `lockSeconds` for transactions in progress (a worker's batch):
    /// then it fails with SQLSTATE 55P03 and nothing is erased.
    @discardableResult
    public func erase(lockSeconds: Int = 10) throws -> Int {
        try transaction { () throws -> Int in
            try query("SELECT set_config('lock_timeout', $1, true)", ["\(lockSeconds)s"])
            try connection.execute("LOCK TABLE items, staged_generations, requests, runs, bundles, bundle_hosts, duties, app_client_states, rank_lists, rank_entries, full_text_totals, rank_statistics, unit_frequencies, items_gone IN ACCESS EXCLUSIVE MODE")
            let count = try query("SELECT count(*) FROM items").int(0, 0)
            try connection.execute("TRUNCATE items, staged_generations, requests, runs, bundles, bundle_hosts, duties, app_client_states, rank_lists, rank_entries, rank_statistics, unit_frequencies, items_gone")
            // (Counted on: `changes` only grows, so a word's count kept before is never taken for
            // one of the empty index.)
            try connection.execute("UPDATE full_text_totals SET items = 0, tokens = 0, changes = changes + 1, resets = resets + 1")
            return count
        }
    }
}

extension PostgresStore {
    /// The schema and the index's invariants (PostgreSQL keeps its own pages sound); `quick`
    /// leaves out reading every item's document.
    public func health(quick: Bool) throws(ReindexError) -> IndexHealth {
        do {
            let invariants = try checkInvariants(quick: quick)
            return IndexHealth(problems: invariants.problems, leftovers: invariants.leftovers)
        } catch {
            throw explain(error, doing: "check failed")
        }
    }

    /// How many items' exact positions (`items.places`) are not what the host makes of their
    /// text now: missing where the document leaves positions out, there where it does not, or
    /// others; or whose document's mark of words left out (`PostgresDocument.overflowMark`) is
    /// not. Only the items that may need them (`clippedDocuments`) and those that have them are
    /// made again.
    func placesProblems() throws -> Int {
        var remaker = try DocumentRemaker(self)
        var (last, wrong) = (Int64(0), 0)
        while true {
            let rows = try query("SELECT id, bundle, uid, attributes FROM items WHERE id > $1 AND (places IS NOT NULL OR \(Self.clippedDocuments)) ORDER BY id LIMIT 500",
                                 [String(last)])
            guard rows.rowCount > 0 else { break }
            var (ids, places, marked) = (PGArrayBuilder(), PGArrayBuilder(), PGArrayBuilder())
            for row in 0..<rows.rowCount {
                last = rows.int64(row, 0)
                guard let made = try remaker.make(rows, row) else { continue }
                ids.append(String(last))
                places.append(made.places)
                marked.append(made.overflowed ? "t" : "f")
            }
            wrong += try query("""
                SELECT count(*) FROM items i JOIN unnest($1::bigint[], $2::text[], $3::boolean[]) AS x(id, p, o) ON i.id = x.id
                WHERE i.places IS DISTINCT FROM x.p::jsonb OR (i.doc @@ \(Self.overflowMarkQuery)) <> x.o
                """, [ids.text(), places.text(), marked.text()]).int(0, 0)
        }
        return wrong
    }

    /// Gives the planner the bundles' statistics once a bundle it has none of has items live:
    /// every search joins an item to its live bundle, and judged without them (a table of a
    /// few rows that autovacuum would analyze only after 50 changes), that join seemed to keep
    /// one item in 200, so a filter without words sorted all its matches (31,000 at 1M items,
    /// 60–170 ms) where a read in page order stops at the page (about 1 ms). Later changes are
    /// analyzed by autovacuum (migration 18). Best effort, after the acknowledgement's commit: a
    /// role that does not own the table, or a moment's lock, leaves it to autovacuum.
    func analyzeBundlesIfNew() {
        guard !connection.inTransaction,
              (try? query("SELECT c.reltuples < (SELECT count(*) FROM bundles) FROM pg_class c WHERE c.oid = 'bundles'::regclass").bool(0, 0)) == true else { return }
        try? transaction { () throws in
            try query("SET LOCAL lock_timeout = '100ms'")
            try query("ANALYZE bundles")
        }
    }
}
