import ReindexProtocol
import ReindexSystem

// Over 450 lines on purpose: `StagedWrites` is one state machine (a replacement's batches, a
// staging's tombstones, group commits, undo and publication) whose parts share its counters; the
// statements it runs live in IndexStore+Staging.swift and IndexStore+Attributes.swift.

/// The index operations of one request, held back until they may be seen.
///
/// No write transaction is held while the host waits for an extension: operations are written
/// in short *group* transactions (committed when the extension pauses, after `groupOperations`
/// operations or after `groupSeconds`, whichever comes first) into rows searches cannot see,
/// and published by one short transaction when the contract says they become visible:
/// - `.replacement` (a `reindexAll`) writes a new generation of the bundle's items, tagged with
///   the number of the batch they belong to. `commitBatch` records the batch as committed with
///   the client state (so a retry resumes); `acknowledge` swaps the generation in. A failure
///   discards the rows of the batch after the last `batch/commit` and restores any committed row
///   that batch replaced or deleted, so a resumed attempt sees exactly its committed batches.
/// - `.live` (a `reindexItems` request, or a stream of direct writes) writes puts into a private
///   staging generation and records deletions as tombstones; `commitBatch` and `acknowledge`
///   apply them to the live items in one transaction. A failure drops the staging.
/// - `.direct` (writes whose operations are all in hand, `LocalIndex`) changes the live items in
///   the one transaction `acknowledge` commits.
///
/// A bundle only ever touches rows keyed by its own identifier, whatever identifiers it sends.
public final class StagedWrites {
    /// Bounds of one group transaction while operations stream in: FTS5 writes a new segment at
    /// every commit, so groups are large while a stream flows, and committed as soon as it pauses
    /// (no input for `pauseMilliseconds`), so nobody waits behind an idle extension.
    public static let groupOperations = 25_000
    public static let groupSeconds = 0.25
    public static let pauseMilliseconds: Int32 = 10

    public let store: IndexStore
    public let bundleKey: String
    public let scope: WriteScope
    /// What this request has done so far (committed or not).
    /// Counts, pending operations and the batch number (the same bookkeeping on both backends).
    private var ledger = WriteLedger()
    public var counts: WriteCounts { ledger.counts }
    /// Operations received since the last commit.
    /// The generation rows are written to (for `.live`, the staging generation, below zero).
    private var generation: Int64 = 0
    /// `.live`: the staging's row; `.replacement`: the batch being written (committed + 1).
    private var stagingID: Int64 = 0
    private var groupOpen = false
    private var groupStarted = 0.0
    private var groupCount = 0
    // The hot path's statements, held directly (no cache lookup per item).
    private var insertStatement: SQLiteStatement?
    private var ftsStatement: SQLiteStatement?
    /// The custom attributes in effect for this request's writes: for a replacement, those it
    /// was given (the manifest's, recorded for the bundle at its acknowledgement); otherwise
    /// those recorded at the bundle's last acknowledged reindexAll. Items should be validated
    /// with these.
    public let declarations: [String: AttributeDeclaration]
    /// The searchable ones, sorted by name: an attribute's position is its slot in
    /// `attributes_fts` (row id = item id × 64 + slot).
    private let searchableNames: [String]
    /// Every declared attribute (each value has an `item_attributes` row).
    private let typedNames: [String]

    /// Prepares writes for `bundleIdentifier`; registers the bundle if the index has not seen it.
    /// A replacement first discards whatever an earlier attempt wrote after its last commit.
    /// `declarations` are the bundle's custom attributes as its manifest declares them now; only
    /// a replacement uses them (they take effect at its acknowledgement).
    public init(store: IndexStore, bundleIdentifier: String, scope: WriteScope, requestID: Int64? = nil,
                declarations: [String: AttributeDeclaration] = [:]) throws(StoreError) {
        self.store = store
        self.bundleKey = bundleIdentifier.lowercased()
        self.scope = scope
        let register = try store.statement("INSERT OR IGNORE INTO bundles(key, identifier, live_gen, first_seen) VALUES(?1, ?2, 0, ?3)")
        register.bind(1, bundleKey)
        register.bind(2, bundleIdentifier)
        register.bind(3, Clock.now())
        try register.run()
        if case .replacement = scope {
            self.declarations = declarations
        } else {
            self.declarations = try store.declarations(bundle: bundleKey)
        }
        searchableNames = self.declarations.filter { $0.value.searchable }.keys.sorted()
        typedNames = self.declarations.keys.sorted()
        switch scope {
        case .replacement(let g):
            generation = g
            ledger.batch = try store.committedBatch(bundle: bundleKey, generation: g) + 1
            try store.discardUncommitted(bundle: bundleKey, request: g, committedBatch: ledger.batch - 1)
        case .live:
            stagingID = try store.openStaging(bundle: bundleKey, requestID: requestID)
            generation = -stagingID
        case .direct:
            break
        }
    }

    /// Whether operations are written but not yet committed (the caller flushes before waiting).
    public var hasOpenGroup: Bool { groupOpen }

    /// Opens a group transaction if none is open.
    private func begin() throws(StoreError) {
        guard !groupOpen else { return }
        try store.connection.execute("BEGIN IMMEDIATE")
        store.queryState.upkeep.fresh = false
        groupOpen = true
        groupStarted = Clock.monotonic()
        groupCount = 0
        if case .direct = scope { generation = try store.liveGeneration(bundle: bundleKey) }
    }

    /// Counts one operation into the group, committing it when it reaches its bounds.
    private func operationDone() throws(StoreError) {
        ledger.noteOperations()
        groupCount += 1
        if case .direct = scope { return }
        if groupCount >= Self.groupOperations || Clock.monotonic() - groupStarted >= Self.groupSeconds { try flush() }
    }

    /// Commits the open group transaction: the rows become durable, still invisible.
    public func flush() throws(StoreError) {
        guard groupOpen else { return }
        if case .direct = scope { return }
        try store.connection.execute("COMMIT")
        groupOpen = false
    }

    /// Adds or replaces one item. A partial update (`item.isUpdate`) is merged into the existing
    /// item of its identifier as this request sees it (see `existing(_:)`) and written whole; with
    /// no such item it is ignored and counted in `ignoredUpdates`.
    public func put(_ item: ValidatedItem) throws(StoreError) {
        try begin()
        var item = item
        if item.isUpdate {
            guard let existing = try existing(item.uniqueIdentifier),
                  let merged = try? item.merged(intoAttributes: existing.attributes, domainIdentifier: existing.domain,
                                              expiration: existing.expires, declarations: declarations)
            else {
                ledger.counts.ignoredUpdates += 1
                try operationDone()
                return
            }
            item = merged
        }
        let insert: SQLiteStatement
        if let cached = insertStatement { insert = cached } else {
            insert = try store.connection.prepare(Self.insertItem)
            insertStatement = insert
        }
        bindRow(insert, item)
        try insert.run()
        let rowID: Int64
        if store.connection.changes == 1 {
            rowID = store.connection.lastInsertRowID
        } else {
            // Replacing an item. A committed row of a replacement is kept aside first, so a
            // failure of this batch can bring it back.
            if case .replacement = scope {
                try keepCommittedRows(where: "bundle = ?1 AND gen = ?2 AND uid = ?3") { statement in
                    statement.bind(1, bundleKey)
                    statement.bind(2, generation)
                    item.withField(.uniqueIdentifier) { statement.bindText(3, $0) }
                }
            }
            let update = try store.statement(Self.updateItem)
            bindRow(update, item)
            guard try update.step() else { update.reset(); return }
            rowID = update.int64(0)
            update.reset()
            let remove = try store.statement("DELETE FROM items_fts WHERE rowid = ?1")
            remove.bind(1, rowID)
            try remove.run()
            try store.forgetRankedItem(rowID)
            try store.deleteAttributeText(item: rowID)
            if !typedNames.isEmpty { try store.deleteTypedAttributes(item: rowID) }
        }
        let fts: SQLiteStatement
        if let cached = ftsStatement { fts = cached } else {
            fts = try store.connection.prepare("INSERT INTO items_fts(rowid, \(SQLiteSchema.fullTextColumns)) VALUES(?1, \(SQLiteSchema.fullTextParameters))")
            ftsStatement = fts
        }
        fts.bind(1, rowID)
        for (n, field) in ValidatedItem.Field.searched.enumerated() {
            item.withField(field) { fts.bindText(Int32(n + 2), $0) }
        }
        try fts.run()
        try store.noteFullTextRow(rowID, item: item, bundle: bundleKey)
        if !searchableNames.isEmpty || !typedNames.isEmpty { try writeCustomAttributes(item, rowID: rowID) }
        ledger.counts.put += 1
        try operationDone()
    }

    /// The item's declared attributes: one `item_attributes` row per value (the filters' and
    /// sorts' index), and one `attributes_fts` row per searchable attribute it has.
    private func writeCustomAttributes(_ item: ValidatedItem, rowID: Int64) throws(StoreError) {
        guard let attributes = try? JSONParser.parse(item.attributesJSON), case .object(let members) = attributes else { return }
        var values: [String: JSONValue] = [:]
        for (key, value) in members where declarations[key] != nil { values[key] = value }
        guard !values.isEmpty else { return }
        let typed = try store.statement("INSERT INTO item_attributes(item, name, num, text) VALUES(?1, ?2, ?3, ?4)")
        for (name, value) in values {
            guard let declaration = declarations[name] else { continue }
            for row in IndexStore.typedValues(value, declaration) {
                typed.reset()
                typed.bind(1, rowID)
                typed.bind(2, name)
                typed.bind(3, row.num)
                typed.bind(4, row.text)
                try typed.run()
            }
        }
        guard !searchableNames.isEmpty else { return }
        let insert = try store.statement("INSERT INTO attributes_fts(rowid, name, value) VALUES(?1, ?2, ?3)")
        for (slot, name) in searchableNames.enumerated() {
            let text: String
            switch values[name] {
            case .string(let s)?: text = WordParts.expanded(s)
            case .array(let list)?: text = WordParts.expanded(list.compactMap(\.stringValue).joined(separator: "\n"))
            default: continue
            }
            insert.reset()
            insert.bind(1, rowID << 6 | Int64(slot))
            insert.bind(2, name)
            insert.bind(3, text)
            try insert.run()
        }
    }

    /// The item of `uid` that a partial update merges into, as this request sees it: for a
    /// replacement, the one already put in the new generation, else the live one; for a live
    /// staging, the staged one, else the live one unless the staging deleted it; for direct
    /// writes, the live one.
    private func existing(_ uid: String) throws(StoreError) -> (domain: String?, expires: Double?, attributes: [UInt8])? {
        let select = try store.statement("SELECT domain, expires, attributes FROM items WHERE bundle = ?1 AND gen = ?2 AND uid = ?3")
        func row(generation: Int64) throws(StoreError) -> (domain: String?, expires: Double?, attributes: [UInt8])? {
            select.bind(1, bundleKey)
            select.bind(2, generation)
            select.bind(3, uid)
            defer { select.reset() }
            guard try select.step() else { return nil }
            return (select.text(0), select.optionalDouble(1), select.bytes(2))
        }
        if let own = try row(generation: generation) { return own }
        if case .direct = scope { return nil }
        guard let live = try row(generation: try store.liveGeneration(bundle: bundleKey)) else { return nil }
        if case .live = scope {
            let deleted = try store.statement("""
                SELECT 1 FROM staged_deletes d WHERE d.staging = ?1 AND (d.kind = 'all' OR (d.kind = 'uid' AND d.value = ?2)
                    OR (d.kind = 'domain' AND (?3 = d.value OR (?3 >= d.value || '.' AND ?3 < d.value || '/'))))
                """)
            deleted.bind(1, stagingID)
            deleted.bind(2, uid)
            deleted.bind(3, live.domain)
            defer { deleted.reset() }
            if try deleted.step() { return nil }
        }
        return live
    }

    /// The insert and the update of an item, with the parameters `bindRow` binds.
    private static let insertItem = """
        INSERT OR IGNORE INTO items(bundle, gen, uid, domain, expires, attributes, batch, \(SQLiteSchema.filterColumns))
        VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7, \(SQLiteSchema.parameters(from: 8, count: AttributeSchema.filterColumns.count)))
        """
    private static let updateItem = """
        UPDATE items SET domain = ?4, expires = ?5, attributes = ?6, batch = ?7,
            \(AttributeSchema.filterColumns.enumerated().map { "\($1) = ?\(8 + $0)" }.joined(separator: ", "))
        WHERE bundle = ?1 AND gen = ?2 AND uid = ?3 RETURNING id
        """

    /// Binds ?1 bundle, ?2 generation, ?3 uid, ?4 domain, ?5 expiration, ?6 attributes, ?7 batch,
    /// ?8 contentType, ?9… the filter values (`AttributeSchema.filtered`): the parameters the
    /// insert and the update of an item share.
    private func bindRow(_ statement: SQLiteStatement, _ item: ValidatedItem) {
        statement.bind(1, bundleKey)
        statement.bind(2, generation)
        item.withField(.uniqueIdentifier) { statement.bindText(3, $0) }
        item.withField(.domainIdentifier) { statement.bindText(4, $0) }
        statement.bind(5, item.expiration)
        item.withField(.attributes) { statement.bindText(6, $0) }
        if case .replacement = scope { statement.bind(7, ledger.batch) } else { statement.bind(7, nil as Int64?) }
        item.withField(.contentType) { statement.bindText(8, $0) }
        for n in 0..<FilterValues.count { statement.bind(Int32(9 + n), item.filters[n]) }
    }

    /// Notes an item that was rejected (counted, not stored).
    public func reject(count: Int = 1) { ledger.counts.rejected += count }

    /// Removes items by identifier.
    public func delete(identifiers: [String]) throws(StoreError) {
        try begin()
        for identifier in identifiers {
            try remove(where: "bundle = ?1 AND gen = ?2 AND uid = ?3", value: identifier, tombstone: "uid")
            try operationDone()
        }
    }

    /// Removes every item in each domain and its subdomains (`a.b` takes `a.b.c`, not `a.bc`).
    public func delete(domains: [String]) throws(StoreError) {
        try begin()
        for domain in domains {
            try remove(where: "bundle = ?1 AND gen = ?2 AND " + IndexStore.domainCondition(column: "domain", parameter: 3),
                       value: domain, tombstone: "domain")
            try operationDone()
        }
    }

    /// Removes every item of the bundle (in this request's generation).
    public func deleteAll() throws(StoreError) {
        try begin()
        try remove(where: "bundle = ?1 AND gen = ?2", value: nil, tombstone: "all")
        try operationDone()
    }

    /// Deletes the matching rows of this request's generation. For `.live`, those are staged
    /// puts: each removed one leaves a tombstone for its identifier (the live item it would have
    /// replaced goes too), counted now, and the deletion itself is recorded to apply to the live
    /// items at publication. For `.replacement`, committed rows are kept aside first.
    /// `?3` in `condition` is `value`.
    private func remove(where condition: String, value: String?, tombstone kind: String) throws(StoreError) {
        let bindAll: (SQLiteStatement) -> Void = { [bundleKey, generation] in
            $0.bind(1, bundleKey)
            $0.bind(2, generation)
            if let value { $0.bind(3, value) }
        }
        switch scope {
        case .replacement:
            try keepCommittedRows(where: condition, bindAll)
        case .live:
            let marks = try store.statement("INSERT INTO staged_deletes(staging, kind, value, counted) SELECT ?8, 'uid', uid, 1 FROM items WHERE \(condition)")
            bindAll(marks)
            marks.bind(8, stagingID)
            try marks.run()
            let record = try store.statement("INSERT INTO staged_deletes(staging, kind, value, counted) VALUES(?1, ?2, ?3, 0)")
            record.bind(1, stagingID)
            record.bind(2, kind)
            record.bind(3, value)
            try record.run()
        case .direct:
            break
        }
        ledger.counts.deleted += try store.deleteItems(where: condition, bindAll)
    }

    /// Copies the rows matching `condition` that an earlier, committed batch wrote (with their
    /// full-text columns) aside, so `rollback` can restore them; the current batch's own rows
    /// need no copy, since a failure discards them anyway.
    private func keepCommittedRows(where condition: String, _ bind: (SQLiteStatement) -> Void) throws(StoreError) {
        let keep = try store.statement("""
            INSERT INTO staged_undo(request, uid, domain, expires, attributes, refresh_asked_for, batch,
                \(SQLiteSchema.fullTextColumns), custom, typed)
            SELECT ?8, i.uid, i.domain, i.expires, i.attributes, i.refresh_asked_for, i.batch,
                \(SQLiteSchema.fullTextColumnsOfF),
                (SELECT json_group_array(json_array(a.rowid & 63, a.name, a.value)) FROM attributes_fts a
                 WHERE a.rowid BETWEEN i.id * 64 AND i.id * 64 + 63),
                (SELECT json_group_array(json_array(t.name, t.num, t.text)) FROM item_attributes t WHERE t.item = i.id)
            FROM items i JOIN items_fts f ON f.rowid = i.id
            WHERE i.id IN (SELECT id FROM items WHERE \(condition)) AND i.batch IS NOT ?7
            """)
        bind(keep)
        keep.bind(7, ledger.batch)
        keep.bind(8, generation)
        try keep.run()
    }

    /// Durably commits every operation since the last commit, together with `extra` (the
    /// request's client state, for instance), and returns how many operations that was. For
    /// `.live` the operations become visible; for `.replacement` they stay invisible until the
    /// acknowledgement but survive a failure.
    @discardableResult
    public func commitBatch(_ extra: (IndexStore) throws -> Void = { _ in }) throws -> Int {
        try begin()
        switch scope {
        case .replacement(let g):
            try store.markBatchCommitted(bundle: bundleKey, generation: g, batch: ledger.batch)
        case .live:
            ledger.counts.deleted += try store.publishStaging(stagingID, bundle: bundleKey)
        case .direct:
            break
        }
        try extra(store)
        try store.connection.execute("COMMIT")
        groupOpen = false
        return ledger.batchCommitted(scope)
    }

    /// Ends the request successfully: commits what remains and makes it visible — for a
    /// replacement, swaps the new generation in, so every item it did not put is gone — all in
    /// one transaction, together with `extra` (marking the request done, recording the run).
    /// The replaced generation's rows are deleted afterwards in short transactions.
    public func acknowledge(_ extra: (IndexStore) throws -> Void = { _ in }) throws -> WriteCounts {
        try begin()
        var retired: Int64?
        switch scope {
        case .replacement(let newGeneration):
            try store.recordDeclarations(declarations, bundle: bundleKey)
            let old = try store.liveGeneration(bundle: bundleKey)
            if old != newGeneration {
                let gone = try store.countReplaced(bundle: bundleKey, old: old, new: newGeneration)
                ledger.counts.deleted += gone
                ledger.counts.removed += gone
                try store.swapGeneration(bundle: bundleKey, to: newGeneration, request: newGeneration)
                retired = old
            }
            try store.clearApplicationClientState(bundle: bundleKey, replacedBy: newGeneration)
        case .live:
            ledger.counts.deleted += try store.publishStaging(stagingID, bundle: bundleKey)
            try store.closeStaging(stagingID)
        case .direct:
            break
        }
        try extra(store)
        try store.connection.execute("COMMIT")
        groupOpen = false
        ledger.committedAll()
        if let retired {
            // Invisible from now on; a failure here leaves rows that recovery sweeps.
            try? store.dropGeneration(bundle: bundleKey, generation: retired)
        }
        return counts
    }

    /// Discards everything since the last commit. Committed batches stay (for a replacement,
    /// still invisible, ready for a resumed attempt). What cannot be undone now (the index went
    /// away, say) is swept by the next recovery of the bundle.
    public func rollback() {
        if groupOpen {
            try? store.connection.execute("ROLLBACK")
            groupOpen = false
        }
        switch scope {
        case .replacement(let g):
            // Half a second at most, so a cancelled run exits promptly; what is left is invisible
            // and finished by the next attempt or recovery.
            _ = try? store.discardUncommitted(bundle: bundleKey, request: g, committedBatch: ledger.batch - 1, budget: 0.5)
        case .live:
            try? store.writeTransaction { () throws(StoreError) in try store.dropStaging(stagingID, bundle: bundleKey) }
        case .direct:
            break
        }
        ledger.rolledBack()
    }
}

extension StagedWrites: IndexWriting {
    public func commitBatch(with extra: (any IndexBackend) throws -> Void) throws -> Int {
        try commitBatch { (store: IndexStore) throws in try extra(store) }
    }

    public func acknowledge(with extra: (any IndexBackend) throws -> Void) throws -> WriteCounts {
        try acknowledge { (store: IndexStore) throws in try extra(store) }
    }
}
