import ReindexProtocol

/// Counts of what a request (or a direct write) did.
public struct WriteCounts: Sendable, Equatable {
    public var put = 0
    public var deleted = 0
    public var rejected = 0
    public init(put: Int = 0, deleted: Int = 0, rejected: Int = 0) {
        self.put = put
        self.deleted = deleted
        self.rejected = rejected
    }
}

/// The index operations of one request, held back until they may be seen.
///
/// Operations go into one open write transaction, so nothing is visible to other connections
/// until it commits, and a failure rolls back exactly what was not committed:
/// - `.live` (a `reindexItems` request, or a direct write) changes the bundle's live items;
///   `commitBatch` and `acknowledge` make them visible.
/// - `.replacement` (a `reindexAll`) writes a new generation of the bundle's items that searches
///   do not see; `commitBatch` makes it durable (so a retry can resume) but still invisible;
///   `acknowledge` swaps it in and removes every item the request did not put, in one transaction.
///
/// A bundle only ever touches rows keyed by its own identifier, whatever identifiers it sends.
public final class StagedWrites {
    public enum Scope: Sendable, Equatable {
        case live
        case replacement(generation: Int64)
    }

    public let store: IndexStore
    public let bundleKey: String
    public let scope: Scope
    /// What this request has done so far (committed or not).
    public private(set) var counts = WriteCounts()
    /// Operations received since the last commit.
    public private(set) var pendingOperations = 0
    private var generation: Int64 = 0
    private var countsAtCommit = WriteCounts()
    // The hot path's statements, held directly (no cache lookup per item).
    private var insertStatement: SQLiteStatement?
    private var ftsStatement: SQLiteStatement?

    /// Prepares writes for `bundleIdentifier`; registers the bundle if the index has not seen it.
    public init(store: IndexStore, bundleIdentifier: String, scope: Scope) throws(SQLiteError) {
        self.store = store
        self.bundleKey = bundleIdentifier.lowercased()
        self.scope = scope
        let register = try store.statement("INSERT OR IGNORE INTO bundles(key, identifier, live_gen, first_seen) VALUES(?1, ?2, 0, ?3)")
        register.bind(1, bundleKey)
        register.bind(2, bundleIdentifier)
        register.bind(3, Clock.now())
        try register.run()
    }

    /// Opens the write transaction if none is open, and fixes the generation written to.
    private func begin() throws(SQLiteError) {
        guard !store.connection.isInTransaction else { return }
        try store.connection.execute("BEGIN IMMEDIATE")
        switch scope {
        case .live: generation = try liveGeneration()
        case .replacement(let g): generation = g
        }
    }

    private func liveGeneration() throws(SQLiteError) -> Int64 {
        let select = try store.statement("SELECT live_gen FROM bundles WHERE key = ?1")
        select.bind(1, bundleKey)
        defer { select.reset() }
        return try select.step() ? select.int64(0) : 0
    }

    /// Adds or replaces one item.
    public func put(_ item: ValidatedItem) throws(SQLiteError) {
        try begin()
        let insert: SQLiteStatement
        if let cached = insertStatement { insert = cached } else {
            insert = try store.connection.prepare("INSERT OR IGNORE INTO items(bundle, gen, uid, domain, expires, attributes) VALUES(?1, ?2, ?3, ?4, ?5, ?6)")
            insertStatement = insert
        }
        bindRow(insert, item)
        try insert.run()
        let rowID: Int64
        if store.connection.changes == 1 {
            rowID = store.connection.lastInsertRowID
        } else {
            // Replacing an item: update the row, then its full-text entry.
            let update = try store.statement(
                "UPDATE items SET domain = ?4, expires = ?5, attributes = ?6 WHERE bundle = ?1 AND gen = ?2 AND uid = ?3 RETURNING id")
            bindRow(update, item)
            guard try update.step() else { update.reset(); return }
            rowID = update.int64(0)
            update.reset()
            let remove = try store.statement("DELETE FROM items_fts WHERE rowid = ?1")
            remove.bind(1, rowID)
            try remove.run()
        }
        let fts: SQLiteStatement
        if let cached = ftsStatement { fts = cached } else {
            fts = try store.connection.prepare("INSERT INTO items_fts(rowid, title, displayName, alternateNames, contentDescription, textContent, keywords, authors) VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)")
            ftsStatement = fts
        }
        fts.bind(1, rowID)
        for (n, field) in ValidatedItem.Field.searched.enumerated() {
            item.withField(field) { fts.bindText(Int32(n + 2), $0) }
        }
        try fts.run()
        counts.put += 1
        pendingOperations += 1
    }

    /// Binds ?1 bundle, ?2 generation, ?3 uid, ?4 domain, ?5 expiration, ?6 attributes: the
    /// parameters the insert and the update of an item share.
    private func bindRow(_ statement: SQLiteStatement, _ item: ValidatedItem) {
        statement.bind(1, bundleKey)
        statement.bind(2, generation)
        item.withField(.uniqueIdentifier) { statement.bindText(3, $0) }
        item.withField(.domainIdentifier) { statement.bindText(4, $0) }
        statement.bind(5, item.expiration)
        item.withField(.attributes) { statement.bindText(6, $0) }
    }

    /// Notes an item that was rejected (counted, not stored).
    public func reject(count: Int = 1) { counts.rejected += count }

    /// Removes items by identifier.
    public func delete(identifiers: [String]) throws(SQLiteError) {
        try begin()
        let delete = try store.statement("DELETE FROM items WHERE bundle = ?1 AND gen = ?2 AND uid = ?3 RETURNING id")
        let fts = try store.statement("DELETE FROM items_fts WHERE rowid = ?1")
        for identifier in identifiers {
            delete.reset()
            delete.bind(1, bundleKey)
            delete.bind(2, generation)
            delete.bind(3, identifier)
            var removed: [Int64] = []
            while try delete.step() { removed.append(delete.int64(0)) }
            for row in removed {
                fts.reset()
                fts.bind(1, row)
                try fts.run()
            }
            counts.deleted += removed.count
            pendingOperations += 1
        }
        delete.reset()
    }

    /// Removes every item in each domain and its subdomains (`a.b` takes `a.b.c`, not `a.bc`).
    public func delete(domains: [String]) throws(SQLiteError) {
        try begin()
        // '/' sorts right after '.', so [d + ".", d + "/") is exactly the subdomains of d.
        let condition = "bundle = ?1 AND gen = ?2 AND (domain = ?3 OR (domain >= ?3 || '.' AND domain < ?3 || '/'))"
        for domain in domains {
            counts.deleted += try store.deleteItems(where: condition) {
                $0.bind(1, bundleKey)
                $0.bind(2, generation)
                $0.bind(3, domain)
            }
            pendingOperations += 1
        }
    }

    /// Removes every item of the bundle (in this request's generation).
    public func deleteAll() throws(SQLiteError) {
        try begin()
        counts.deleted += try removeGeneration(generation)
        pendingOperations += 1
    }

    /// Deletes every row of one generation of this bundle; returns how many.
    private func removeGeneration(_ generation: Int64) throws(SQLiteError) -> Int {
        try store.deleteItems(where: "bundle = ?1 AND gen = ?2") {
            $0.bind(1, bundleKey)
            $0.bind(2, generation)
        }
    }

    /// Durably commits every operation since the last commit, together with `extra` (the
    /// request's client state, for instance), and returns how many operations that was.
    @discardableResult
    public func commitBatch(_ extra: (IndexStore) throws(SQLiteError) -> Void = { _ throws(SQLiteError) in }) throws(SQLiteError) -> Int {
        try begin()
        try extra(store)
        try store.connection.execute("COMMIT")
        let committed = pendingOperations
        pendingOperations = 0
        countsAtCommit = counts
        return committed
    }

    /// Ends the request successfully: commits what remains and, for a replacement, swaps the new
    /// generation in and removes every item it did not put — all in one transaction, together
    /// with `extra` (marking the request done, recording the run).
    public func acknowledge(_ extra: (IndexStore) throws(SQLiteError) -> Void = { _ throws(SQLiteError) in }) throws(SQLiteError) -> WriteCounts {
        try begin()
        if case .replacement(let newGeneration) = scope {
            let old = try liveGeneration()
            if old != newGeneration {
                let gone = try store.statement("""
                    SELECT count(*) FROM items o WHERE o.bundle = ?1 AND o.gen = ?2
                    AND NOT EXISTS (SELECT 1 FROM items n WHERE n.bundle = ?1 AND n.gen = ?3 AND n.uid = o.uid)
                    """)
                gone.bind(1, bundleKey)
                gone.bind(2, old)
                gone.bind(3, newGeneration)
                if try gone.step() { counts.deleted += gone.int(0) }
                gone.reset()
                _ = try removeGeneration(old)
                let swap = try store.statement("UPDATE bundles SET live_gen = ?2 WHERE key = ?1")
                swap.bind(1, bundleKey)
                swap.bind(2, newGeneration)
                try swap.run()
            }
        }
        try extra(store)
        try store.connection.execute("COMMIT")
        pendingOperations = 0
        countsAtCommit = counts
        return counts
    }

    /// Discards everything since the last commit. Committed batches stay (for a replacement,
    /// still invisible, ready for a resumed attempt).
    public func rollback() {
        if store.connection.isInTransaction { try? store.connection.execute("ROLLBACK") }
        counts.put = countsAtCommit.put
        counts.deleted = countsAtCommit.deleted
        pendingOperations = 0
    }
}

/// Wall-clock time as seconds since 1970.
public enum Clock {
    public static func now() -> Double {
        var spec = timespec()
        clock_gettime(CLOCK_REALTIME, &spec)
        return Double(spec.tv_sec) + Double(spec.tv_nsec) / 1e9
    }

    /// A monotonic clock in seconds, for timeouts and durations.
    public static func monotonic() -> Double {
        var spec = timespec()
        clock_gettime(CLOCK_MONOTONIC, &spec)
        return Double(spec.tv_sec) + Double(spec.tv_nsec) / 1e9
    }
}

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#elseif canImport(Musl)
import Musl
#endif
