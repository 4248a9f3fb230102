import ReindexSystem
import ReindexProtocol

/// The statements behind `StagedWrites`: staging generations, batches, publication, and the
/// recovery of what a killed host left staged. Every one runs inside the caller's transaction
/// unless it says otherwise.
extension IndexStore {
    /// `column` is `?parameter` or one of its subdomains (`a.b` takes `a.b.c`, not `a.bc`):
    /// '/' sorts right after '.', so [d + ".", d + "/") is exactly the subdomains of d.
    static func domainCondition(column: String, parameter: Int) -> String {
        "(\(column) = ?\(parameter) OR (\(column) >= ?\(parameter) || '.' AND \(column) < ?\(parameter) || '/'))"
    }

    /// Runs `body` in one short write transaction (BEGIN IMMEDIATE … COMMIT), or inside the one
    /// already open.
    func writeTransaction(_ body: () throws(StoreError) -> Void) throws(StoreError) {
        try within("BEGIN IMMEDIATE", body)
    }

    /// The generation searches see for a bundle (0 before its first reindexAll).
    func liveGeneration(bundle key: String) throws(StoreError) -> Int64 {
        let select = try statement("SELECT live_gen FROM bundles WHERE key = ?1")
        select.bind(1, key)
        defer { select.reset() }
        return try select.step() ? select.int64(0) : 0
    }

    // MARK: Replacements (reindexAll)

    /// The last batch of a reindexAll that was committed with its client state (0 for none).
    func committedBatch(bundle key: String, generation: Int64) throws(StoreError) -> Int64 {
        let select = try statement("SELECT committed_batch FROM staged_generations WHERE bundle = ?1 AND gen = ?2")
        select.bind(1, key)
        select.bind(2, generation)
        defer { select.reset() }
        return try select.step() ? select.int64(0) : 0
    }

    /// Records a batch as committed: its rows survive a failure from now on.
    func markBatchCommitted(bundle key: String, generation: Int64, batch: Int64) throws(StoreError) {
        let update = try statement("INSERT OR REPLACE INTO staged_generations(bundle, gen, committed_batch) VALUES(?1, ?2, ?3)")
        update.bind(1, key)
        update.bind(2, generation)
        update.bind(3, batch)
        try update.run()
        try forgetKeptRows(request: generation)
    }

    /// Forgets the batches of a generation that became live or was discarded.
    func forgetStagedGeneration(bundle key: String, generation: Int64) throws(StoreError) {
        let forget = try statement("DELETE FROM staged_generations WHERE bundle = ?1 AND gen = ?2")
        forget.bind(1, key)
        forget.bind(2, generation)
        try forget.run()
        try forgetKeptRows(request: generation)
    }

    private func forgetKeptRows(request id: Int64) throws(StoreError) {
        let forget = try statement("DELETE FROM staged_undo WHERE request = ?1")
        forget.bind(1, id)
        try forget.run()
    }

    /// Discards what a reindexAll wrote after its last committed batch and restores the
    /// committed rows that writing replaced or deleted, in short transactions of 5,000 rows (so
    /// nobody waits long behind a large discard). With a `budget` in seconds it stops when that
    /// is spent and returns false: the rest stays invisible, and the next discard of the request
    /// (its next attempt, or recovery) finishes it.
    @discardableResult
    package func discardUncommitted(bundle key: String, request id: Int64, committedBatch: Int64, budget: Double? = nil) throws(StoreError) -> Bool {
        let started = Clock.monotonic()
        while true {
            var removed = 0
            try writeTransaction { () throws(StoreError) in
                removed = try deleteItems(where: "id IN (SELECT id FROM items WHERE bundle = ?1 AND gen = ?2 AND batch > ?3 LIMIT 5000)") {
                    $0.bind(1, key)
                    $0.bind(2, id)
                    $0.bind(3, committedBatch)
                }
            }
            if removed == 0 { break }
            if let budget, Clock.monotonic() - started >= budget { return false }
        }
        try writeTransaction { () throws(StoreError) in try restoreKeptRows(bundle: key, request: id) }
        return true
    }

    /// Puts back the committed rows a discarded batch had replaced or deleted.
    private func restoreKeptRows(bundle key: String, request id: Int64) throws(StoreError) {
        let kept = try statement("""
            SELECT uid, domain, expires, attributes, refresh_asked_for, batch,
                \(SQLiteSchema.fullTextColumns), custom, typed
            FROM staged_undo WHERE request = ?1
            """)
        kept.bind(1, id)
        let searched = AttributeSchema.searched.count
        var rows: [[String?]] = []
        var numbers: [(expires: Double?, refresh: Double?, batch: Int64?)] = []
        while try kept.step() {
            // uid, domain, attributes, then the full-text columns, custom and typed.
            rows.append([kept.text(0), kept.text(1), kept.text(3)] + (6..<8 + searched).map { kept.text(Int32($0)) })
            numbers.append((kept.optionalDouble(2), kept.optionalDouble(4), kept.isNull(5) ? nil : kept.int64(5)))
        }
        kept.reset()
        let restore = try statement("""
            INSERT OR IGNORE INTO items(bundle, gen, uid, domain, expires, attributes, refresh_asked_for, batch)
            VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)
            """)
        let fts = try statement("""
            INSERT INTO items_fts(rowid, \(SQLiteSchema.fullTextColumns))
            VALUES(?1, \(SQLiteSchema.fullTextParameters))
            """)
        for (row, number) in zip(rows, numbers) {
            restore.reset()
            restore.bind(1, key)
            restore.bind(2, id)
            restore.bind(3, row[0])
            restore.bind(4, row[1])
            restore.bind(5, number.expires)
            restore.bind(6, row[2] ?? "{}")
            restore.bind(7, number.refresh)
            restore.bind(8, number.batch)
            try restore.run()
            guard connection.changes == 1 else { continue }
            let restored = connection.lastInsertRowID
            fts.reset()
            fts.bind(1, restored)
            for column in 0..<searched { fts.bind(Int32(column + 2), row[column + 3]) }
            try fts.run()
            try restoreAttributeText(row[3 + searched], item: restored)
            try restoreTypedAttributes(row[4 + searched], item: restored)
            try fillFilterColumns(item: restored)
            // After the filter columns: the row's rank-list entries take its rankingHint from them.
            try noteFullTextRow(restored)
        }
        try forgetKeptRows(request: id)
    }

    /// How many live items of a bundle a new generation does not have (they go at the swap).
    func countReplaced(bundle key: String, old: Int64, new: Int64) throws(StoreError) -> Int {
        let gone = try statement("""
            SELECT count(*) FROM items o WHERE o.bundle = ?1 AND o.gen = ?2
            AND NOT EXISTS (SELECT 1 FROM items n WHERE n.bundle = ?1 AND n.gen = ?3 AND n.uid = o.uid)
            """)
        gone.bind(1, key)
        gone.bind(2, old)
        gone.bind(3, new)
        defer { gone.reset() }
        return try gone.step() ? gone.int(0) : 0
    }

    /// Makes `generation` the bundle's live one; the previous one is retired (invisible, its rows
    /// deleted by `dropGeneration` after the commit, or by recovery).
    func swapGeneration(bundle key: String, to generation: Int64, request id: Int64) throws(StoreError) {
        let old = try liveGeneration(bundle: key)
        let swap = try statement("UPDATE bundles SET live_gen = ?2 WHERE key = ?1")
        swap.bind(1, key)
        swap.bind(2, generation)
        try swap.run()
        try retire(bundle: key, generation: old)
        try forgetStagedGeneration(bundle: key, generation: generation)
    }

    func retire(bundle key: String, generation: Int64) throws(StoreError) {
        let retire = try statement("INSERT OR IGNORE INTO retired_generations(bundle, gen) VALUES(?1, ?2)")
        retire.bind(1, key)
        retire.bind(2, generation)
        try retire.run()
    }

    /// Deletes the rows of a retired generation in short transactions of `chunk` rows, so other
    /// writers never wait long behind it. Never touches the live generation.
    func dropGeneration(bundle key: String, generation: Int64, chunk: Int = 5000) throws(StoreError) {
        while true {
            var removed = 0
            try writeTransaction { () throws(StoreError) in
                guard try liveGeneration(bundle: key) != generation else { return }
                removed = try deleteItems(where: "id IN (SELECT id FROM items WHERE bundle = ?1 AND gen = ?2 LIMIT ?3)") {
                    $0.bind(1, key)
                    $0.bind(2, generation)
                    $0.bind(3, chunk)
                }
                if removed == 0 {
                    let done = try statement("DELETE FROM retired_generations WHERE bundle = ?1 AND gen = ?2")
                    done.bind(1, key)
                    done.bind(2, generation)
                    try done.run()
                }
            }
            if removed == 0 { return }
        }
    }

    // MARK: Live stagings (reindexItems, direct writes)

    /// Opens a staging for live writes of this process; its rows live in generation `-id`.
    func openStaging(bundle key: String, requestID: Int64?) throws(StoreError) -> Int64 {
        let me = ProcessIdentity.current
        let insert = try statement("INSERT INTO stagings(bundle, request_id, pid, pid_start, started) VALUES(?1, ?2, ?3, ?4, ?5)")
        insert.bind(1, key)
        insert.bind(2, requestID)
        insert.bind(3, Int64(me.pid))
        insert.bind(4, me.startTime)
        insert.bind(5, Clock.now())
        try insert.run()
        return connection.lastInsertRowID
    }

    /// Applies a staging to the bundle's live items: its deletions first, then its puts (each
    /// replacing the live item of its identifier). Returns how many live items the deletions
    /// removed that were not already counted when their staged put was deleted.
    func publishStaging(_ staging: Int64, bundle key: String) throws(StoreError) -> Int {
        let live = try liveGeneration(bundle: key)
        let list = try statement("SELECT kind, value, counted FROM staged_deletes WHERE staging = ?1 ORDER BY counted DESC, rowid")
        list.bind(1, staging)
        var deletions: [(kind: String, value: String?, counted: Bool)] = []
        while try list.step() { deletions.append((list.text(0) ?? "", list.text(1), list.int(2) != 0)) }
        list.reset()
        var deleted = 0
        for deletion in deletions {
            let condition: String
            switch deletion.kind {
            case "uid": condition = "bundle = ?1 AND gen = ?2 AND uid = ?4"
            case "domain": condition = "bundle = ?1 AND gen = ?2 AND " + Self.domainCondition(column: "domain", parameter: 4)
            default: condition = "bundle = ?1 AND gen = ?2"
            }
            let n = try deleteItems(where: condition) {
                $0.bind(1, key)
                $0.bind(2, live)
                if deletion.kind != "all" { $0.bind(4, deletion.value) }
            }
            if !deletion.counted { deleted += n }
        }
        let bindGenerations: (SQLiteStatement) -> Void = {
            $0.bind(1, key)
            $0.bind(2, live)
            $0.bind(3, -staging)
        }
        // A replaced item keeps the note that its refresh was asked for at its expiration.
        let carry = try statement("""
            UPDATE items SET refresh_asked_for = (SELECT l.refresh_asked_for FROM items l WHERE l.bundle = ?1 AND l.gen = ?2 AND l.uid = items.uid)
            WHERE bundle = ?1 AND gen = ?3
            """)
        bindGenerations(carry)
        try carry.run()
        try deleteItems(where: "bundle = ?1 AND gen = ?2 AND uid IN (SELECT uid FROM items WHERE bundle = ?1 AND gen = ?3)", bindGenerations)
        let move = try statement("UPDATE items SET gen = ?2 WHERE bundle = ?1 AND gen = ?3")
        bindGenerations(move)
        try move.run()
        let clear = try statement("DELETE FROM staged_deletes WHERE staging = ?1")
        clear.bind(1, staging)
        try clear.run()
        return deleted
    }

    /// Forgets a published staging.
    func closeStaging(_ staging: Int64) throws(StoreError) {
        let close = try statement("DELETE FROM stagings WHERE id = ?1")
        close.bind(1, staging)
        try close.run()
    }

    /// Drops a staging and everything in it.
    func dropStaging(_ staging: Int64, bundle key: String) throws(StoreError) {
        try deleteItems(where: "bundle = ?1 AND gen = ?2") {
            $0.bind(1, key)
            $0.bind(2, -staging)
        }
        let clear = try statement("DELETE FROM staged_deletes WHERE staging = ?1")
        clear.bind(1, staging)
        try clear.run()
        try closeStaging(staging)
    }

    // MARK: Recovery

    /// Removes what writers that are gone left staged for a bundle: the uncommitted batch of
    /// each reindexAll in `abandoned` (requests a dead host left running), stagings whose
    /// process is gone, and retired generations not yet deleted. Committed batches of
    /// unfinished reindexAll requests stay, for their retry to resume.
    public func sweepLeftovers(bundle identifier: String, abandoned: [QueuedRequest] = []) throws(StoreError) {
        let key = identifier.lowercased()
        for request in abandoned where request.kind == .reindexAll {
            try discardUncommitted(bundle: key, request: request.id, committedBatch: try committedBatch(bundle: key, generation: request.id))
        }
        for staging in try stagings(bundle: key) where !staging.owner.isAlive {
            try writeTransaction { () throws(StoreError) in try dropStaging(staging.id, bundle: key) }
        }
        let retired = try statement("SELECT gen FROM retired_generations WHERE bundle = ?1")
        retired.bind(1, key)
        var generations: [Int64] = []
        while try retired.step() { generations.append(retired.int64(0)) }
        retired.reset()
        for generation in generations { try dropGeneration(bundle: key, generation: generation) }
    }

    /// The open stagings (of one bundle, or all) with the process that writes each.
    func stagings(bundle key: String? = nil) throws(StoreError) -> [(id: Int64, bundle: String, owner: ProcessIdentity)] {
        let select = try statement("SELECT id, bundle, pid, pid_start FROM stagings WHERE ?1 IS NULL OR bundle = ?1")
        select.bind(1, key)
        var result: [(id: Int64, bundle: String, owner: ProcessIdentity)] = []
        while try select.step() {
            result.append((select.int64(0), select.text(1) ?? "", ProcessIdentity(pid: Int32(truncatingIfNeeded: select.int64(2)), startTime: select.int64(3))))
        }
        select.reset()
        return result
    }
}

extension IndexStore {
    /// Discards what an unfinished reindexAll committed (its staged rows and client state), so
    /// its next attempt starts fresh. Returns how many committed items went, or nil when it had
    /// committed nothing.
    public func discardPartialReplacement(_ request: QueuedRequest) throws(StoreError) -> Int? {
        var discarded: Int?
        try writeTransaction { () throws(StoreError) in
            let count = try statement("SELECT count(*) FROM items WHERE bundle = ?1 AND gen = ?2")
            count.bind(1, request.bundleKey)
            count.bind(2, request.id)
            let rows = try count.step() ? count.int(0) : 0
            count.reset()
            let committed = try committedBatch(bundle: request.bundleKey, generation: request.id)
            guard rows > 0 || committed > 0 || request.clientState != nil else { return }
            try discardGeneration(bundle: request.bundleKey, generation: request.id)
            let clear = try statement("UPDATE requests SET client_state = NULL, updated = ?2 WHERE id = ?1")
            clear.bind(1, request.id)
            clear.bind(2, Clock.now())
            try clear.run()
            discarded = rows
        }
        return discarded
    }
}
