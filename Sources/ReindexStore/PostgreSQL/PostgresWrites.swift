import ReindexProtocol

/// The index operations of one request against the PostgreSQL index, held back until they may
/// be seen.
///
/// PostgreSQL has many writers and snapshots, so a batch is simply one transaction: it is opened
/// at the batch's first operation and committed at `batch/commit` or the acknowledgement; until
/// then no other session sees any of it (READ COMMITTED), and a failure — an error reply, a
/// crash, a lost connection — rolls it back, by the host or by the server. Puts are sent in
/// groups of up to `groupRows` rows, one statement each.
/// - `.replacement` (a `reindexAll`) writes generation `request id`; each committed batch is
///   recorded with the client state (`staged_generations`, `requests.client_state`), so a retry,
///   on this worker or another, resumes; the acknowledgement makes the generation live in one
///   transaction. The replaced generation's rows are deleted right after, in their own.
/// - `.live` (`reindexItems`, `reindex put`) and `.direct` change the live generation inside the
///   open transaction: visible when it commits.
///
/// Every statement is keyed by the bundle, so nothing a bundle sends reaches another's items.
public final class PostgresWrites {
    public static let groupRows = 2_000

    public let store: PostgresStore
    public let bundleKey: String
    public let scope: WriteScope
    /// Counts, pending operations and the batch number (the same bookkeeping on both backends).
    private var ledger = WriteLedger()
    public var counts: WriteCounts { ledger.counts }
    public let declarations: [String: AttributeDeclaration]
    /// The declarations of the searchable attributes, whose text the document also holds.
    private let searchable: [String: AttributeDeclaration]
    /// Makes each item's full-text document.
    private let document: PostgresDocument
    private var generation: Int64 = 0
    private var open = false
    /// Puts not sent yet, at most one per identifier (a later put of the same identifier
    /// replaces an earlier one in place, as it would in the table).
    private var buffer: [ValidatedItem] = []
    private var bufferIndex: [String: Int] = [:]
    /// The queued request these writes belong to, fenced by its lease at every publication.
    private let requestID: Int64?

    public init(store: PostgresStore, bundleIdentifier: String, scope: WriteScope, requestID: Int64? = nil,
                declarations: [String: AttributeDeclaration] = [:]) throws {
        self.store = store
        bundleKey = bundleIdentifier.lowercased()
        self.scope = scope
        self.requestID = requestID
        try store.query("INSERT INTO bundles(key, identifier, live_gen, first_seen) VALUES($1, $2, 0, $3) ON CONFLICT(key) DO NOTHING",
                        [bundleKey, bundleIdentifier, String(Clock.now())])
        if case .replacement = scope {
            self.declarations = declarations
        } else {
            self.declarations = try store.declarations(bundle: bundleKey)
        }
        searchable = self.declarations.filter { $0.value.searchable }
        document = try PostgresDocument()
        if case .replacement(let g) = scope {
            generation = g
            let committed = try store.query("""
                INSERT INTO staged_generations(bundle, gen, committed_batch) VALUES($1, $2, 0)
                ON CONFLICT(bundle, gen) DO UPDATE SET committed_batch = staged_generations.committed_batch
                RETURNING committed_batch
                """, [bundleKey, String(g)])
            ledger.batch = committed.int64(0, 0) + 1
            // No batch of this generation was committed: it has no rows yet.
            if ledger.batch == 1 { written = IdentifierFilter() }
        }
    }

    /// The identifiers this writer sent, when it writes a generation that started empty: a
    /// group none of whose identifiers it may have sent already is inserted without the
    /// conflict check (about a tenth of the server's work per row).
    private var written: IdentifierFilter?

    /// Whether operations are waiting in memory (the caller sends them before it waits).
    public var hasOpenGroup: Bool { !buffer.isEmpty }

    private func begin() throws {
        guard !open else { return }
        try store.ensureConnected()
        try store.connection.begin()
        open = true
        if case .replacement = scope { return }
        generation = try store.query("SELECT live_gen FROM bundles WHERE key = $1 FOR SHARE", [bundleKey]).int64(0, 0)
    }

    /// Sends the puts waiting in memory (inside the open transaction: still invisible). The
    /// statement's arrays are built straight from each item's bytes (`PGArrayBuilder`): the
    /// validator already assembled the text (camel-case lines included), so this is copying
    /// and quoting, with no string per field.
    public func flush() throws {
        guard !buffer.isEmpty else { return }
        var uids = PGArrayBuilder(), domains = PGArrayBuilder(), expires = PGArrayBuilder(capacity: 1 << 10), attributes = PGArrayBuilder(capacity: 1 << 18)
        // The documents (`PostgresDocument`): each searched attribute's tokens in its slot.
        var made = PostgresDocument.Columns()
        var maySendTwice = written == nil
        for item in buffer {
            item.withField(.uniqueIdentifier) { uid in
                uids.append(uid)
                if let uid, written?.insert(uid) == false { maySendTwice = true }
            }
            item.withField(.domainIdentifier) { domains.append($0) }
            expires.append(item.expiration.map { String($0) })
            item.withField(.attributes) { json in
                if let json { attributes.append(json) } else { attributes.append("{}") }
            }
            made.append(document.make(item, searchable: searchable))
        }
        buffer.removeAll(keepingCapacity: true)
        bufferIndex.removeAll(keepingCapacity: true)
        func text(_ value: String) -> [UInt8] { Array(value.utf8) + [0] }
        // Sent without waiting: the server inserts this group while the host reads the next.
        try store.connection.send(maySendTwice ? Self.upsert : Self.insert, bytes: [
            text(bundleKey), text(String(generation)),
            uids.finish(), domains.finish(), expires.finish(), attributes.finish(), made.documents.finish(), made.lengths.finish(), made.frequencies.finish(), made.places.finish(),
        ])
    }

    private static let insert = """
            INSERT INTO items(bundle, gen, uid, domain, expires, attributes, doc, length, tf, places)
            SELECT $1, $2, u, d, e::double precision, a, w::tsvector, n, f::jsonb, p::jsonb
            FROM unnest($3::text[], $4::text[], $5::text[], $6::text[], $7::text[], $8::integer[], $9::text[], $10::text[]) AS x(u, d, e, a, w, n, f, p)
            """
    private static let upsert = insert + """

            ON CONFLICT(bundle, gen, uid) DO UPDATE SET domain = EXCLUDED.domain, expires = EXCLUDED.expires, attributes = EXCLUDED.attributes,
                doc = EXCLUDED.doc, length = EXCLUDED.length, tf = EXCLUDED.tf, places = EXCLUDED.places, refresh_asked_for = NULL
            """

    /// Adds or replaces one item. A partial update is merged into the item of its identifier as
    /// this request sees it (its own write, else the live item) and written whole.
    public func put(_ item: ValidatedItem) throws {
        try begin()
        var item = item
        ledger.noteOperations()
        if item.isUpdate {
            try flush()
            guard let existing = try existing(item.uniqueIdentifier),
                  let merged = try? item.merged(intoAttributes: Array(existing.attributes.utf8), domainIdentifier: existing.domain,
                                              expiration: existing.expires, declarations: declarations)
            else {
                ledger.counts.ignoredUpdates += 1
                return
            }
            item = merged
        }
        let uid = item.uniqueIdentifier
        if let index = bufferIndex[uid] {
            buffer[index] = item
        } else {
            bufferIndex[uid] = buffer.count
            buffer.append(item)
        }
        ledger.counts.put += 1
        if buffer.count >= Self.groupRows { try flush() }
    }

    private func existing(_ uid: String) throws -> (domain: String?, expires: Double?, attributes: String)? {
        func row(_ generation: Int64) throws -> (domain: String?, expires: Double?, attributes: String)? {
            let r = try store.query("SELECT domain, expires, attributes FROM items WHERE bundle = $1 AND gen = $2 AND uid = $3", [bundleKey, String(generation), uid])
            guard r.rowCount == 1 else { return nil }
            return (r.text(0, 0), r.optionalDouble(0, 1), r.text(0, 2) ?? "{}")
        }
        if let own = try row(generation) { return own }
        guard case .replacement = scope else { return nil }
        return try row(try store.query("SELECT live_gen FROM bundles WHERE key = $1", [bundleKey]).int64(0, 0))
    }

    public func reject(count: Int = 1) { ledger.counts.rejected += count }

    public func delete(identifiers: [String]) throws {
        try begin()
        try flush()
        ledger.noteOperations(identifiers.count)
        ledger.counts.deleted += try store.query("DELETE FROM items WHERE bundle = $1 AND gen = $2 AND uid = ANY($3::text[])",
                                          [bundleKey, String(generation), PGArray.literal(identifiers)]).affected
    }

    public func delete(domains: [String]) throws {
        try begin()
        try flush()
        for domain in domains {
            ledger.noteOperations()
            ledger.counts.deleted += try store.query("DELETE FROM items WHERE bundle = $1 AND gen = $2 AND (domain = $3 OR starts_with(domain, $3 || '.'))",
                                              [bundleKey, String(generation), domain]).affected
        }
    }

    public func deleteAll() throws {
        try begin()
        buffer.removeAll()
        bufferIndex.removeAll()
        ledger.noteOperations()
        ledger.counts.deleted += try store.query("DELETE FROM items WHERE bundle = $1 AND gen = $2", [bundleKey, String(generation)]).affected
    }

    /// Commits every operation since the last commit, with `extra` (the client state), in one
    /// transaction; returns how many operations that was.
    @discardableResult
    public func commitBatch(_ extra: (PostgresStore) throws -> Void = { _ in }) throws -> Int {
        try begin()
        try flush()
        try store.checkLease(requestID)
        if case .replacement(let g) = scope {
            try store.query("UPDATE staged_generations SET committed_batch = $3 WHERE bundle = $1 AND gen = $2", [bundleKey, String(g), String(ledger.batch)])
        }
        try extra(store)
        open = false
        try store.connection.commit()
        return ledger.batchCommitted(scope)
    }

    /// Ends the request: commits what remains and makes it visible — a replacement's generation
    /// becomes live, so every item it did not put is gone — in one transaction with `extra`.
    public func acknowledge(_ extra: (PostgresStore) throws -> Void = { _ in }) throws -> WriteCounts {
        try begin()
        try flush()
        try store.checkLease(requestID)
        var retired: Int64?
        if case .replacement(let newGeneration) = scope {
            try store.recordDeclarations(declarations, bundle: bundleKey)
            let old = try store.query("SELECT live_gen FROM bundles WHERE key = $1 FOR UPDATE", [bundleKey]).int64(0, 0)
            if old != newGeneration {
                // The new generation's rows are not in the planner's statistics yet (nobody has
                // seen them): without this it may pick a nested loop, quadratic in the items.
                try store.query("SET LOCAL enable_nestloop = off")
                let gone = try store.query("""
                    SELECT count(*) FROM items o WHERE o.bundle = $1 AND o.gen = $2
                    AND NOT EXISTS (SELECT 1 FROM items n WHERE n.bundle = $1 AND n.gen = $3 AND n.uid = o.uid)
                    """, [bundleKey, String(old), String(newGeneration)]).int(0, 0)
                ledger.counts.deleted += gone
                ledger.counts.removed += gone
                try store.query("UPDATE bundles SET live_gen = $2 WHERE key = $1", [bundleKey, String(newGeneration)])
                try store.dropRankLists()
                retired = old
            }
            try store.query("DELETE FROM staged_generations WHERE bundle = $1 AND gen = $2", [bundleKey, String(newGeneration)])
            try store.clearApplicationClientState(bundle: bundleKey, replacedBy: newGeneration)
        }
        try extra(store)
        open = false
        try store.connection.commit()
        ledger.committedAll()
        if let retired {
            // Invisible from now on; if this fails, recovery sweeps the rows.
            _ = try? store.query("DELETE FROM items WHERE bundle = $1 AND gen = $2", [bundleKey, String(retired)])
        }
        store.analyzeBundlesIfNew()
        return counts
    }

    /// Discards everything since the last commit (committed batches of a replacement stay).
    public func rollback() {
        buffer.removeAll()
        bufferIndex.removeAll()
        if open {
            store.connection.rollback()
            open = false
        }
        ledger.rolledBack()
    }
}

/// A Bloom filter of identifiers (8 MiB, four probes): `insert` says false when the identifier
/// may have been inserted before — wrongly about once in 90,000 identifiers at a million, more
/// often beyond — and true only when it certainly was not.
struct IdentifierFilter {
    private static let bits = 1 << 26
    private var words = [UInt64](repeating: 0, count: IdentifierFilter.bits / 64)

    mutating func insert(_ identifier: UnsafeRawBufferPointer) -> Bool {
        var hasher = Hasher()
        hasher.combine(bytes: identifier)
        let hash = UInt64(bitPattern: Int64(hasher.finalize()))
        let first = hash & 0xffff_ffff, step = (hash >> 32) | 1
        var new = false
        for probe in 0..<UInt64(4) {
            let bit = Int((first &+ probe &* step) % UInt64(Self.bits))
            let mask = UInt64(1) << UInt64(bit & 63)
            if words[bit >> 6] & mask == 0 {
                new = true
                words[bit >> 6] |= mask
            }
        }
        return new
    }
}

extension PostgresWrites: IndexWriting {
    public func commitBatch(with extra: (any IndexBackend) throws -> Void) throws -> Int {
        try commitBatch { (store: PostgresStore) throws in try extra(store) }
    }

    public func acknowledge(with extra: (any IndexBackend) throws -> Void) throws -> WriteCounts {
        try acknowledge { (store: PostgresStore) throws in try extra(store) }
    }
}
