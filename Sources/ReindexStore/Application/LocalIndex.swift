import Foundation
import ReindexSystem
import ReindexProtocol

/// Direct indexing for applications that index their own content — the counterpart of Core
/// Spotlight's `CSSearchableIndex`, on either index: a SQLite file or a PostgreSQL database. It
/// speaks the vocabulary of the protocol and of the SDKs (`put`, `delete(identifiers:)`,
/// `delete(domainIdentifiers:)`, `deleteAll()`, as an extension's `SearchableIndex` does), where
/// Core Spotlight says `indexSearchableItems`, `deleteSearchableItems(withIdentifiers:)`,
/// `…(withDomainIdentifiers:)` and `deleteAllSearchableItems`; and its batches
/// (`beginBatch`, `endBatch(clientState:)`, `fetchLastClientState`) are Core Spotlight's
/// `beginIndexBatch`, `endIndexBatch(withClientState:)` and `fetchLastClientState`.
///
/// Outside a batch each call is one transaction against the bundle's live items: when it
/// returns, the change is durable and visible to searches; when it throws, nothing of it was
/// applied. Inside a batch, calls are held back until `endBatch`, which publishes all of them
/// with the client state in one transaction, or none of them (see `beginBatch`). Items of other
/// bundles are never touched.
///
/// One `LocalIndex` is one connection, used from one thread at a time.
public final class LocalIndex {
    /// The most bytes a client state may have (Core Spotlight's limit, and the protocol's).
    public static let maximumClientStateBytes = 250

    /// The index: `IndexStore` (SQLite) or `PostgresStore`.
    public let store: any IndexBackend
    public let bundleIdentifier: String
    private let bundleKey: String

    /// A batch's operations not yet written: held in order, written together in one group
    /// (one short transaction on SQLite) when they reach `bufferedOperations` operations or
    /// `bufferedBytes` bytes of items, and at `endBatch` — so a batch of one-item calls does not
    /// pay a commit per call, memory stays bounded, and no lock is held between calls.
    private enum Operation {
        case put([ValidatedItem])
        case delete([String])
        case deleteDomains([String])
        case deleteAll
    }
    static let bufferedOperations = 2_000
    static let bufferedBytes = 4 << 20
    private var buffered: [Operation] = []
    private var bufferedCount = 0
    private var bufferedSize = 0

    private enum Batch {
        case open(any IndexWriting)
        /// An operation of the batch failed and everything of it was discarded; every write
        /// until `endBatch` or `cancelBatch` is refused with this error.
        case discarded(ReindexError)
    }
    private var batch: Batch?

    /// Opens the index `path` names for writing the items of `bundleIdentifier`: a SQLite file
    /// (created if missing), or a PostgreSQL connection string (`postgresql://…`, `postgres://…`
    /// or libpq keywords; the schema from `REINDEX_PG_SCHEMA` in `environment` or the string's
    /// `options`), as `reindex --index` takes it.
    public init(path: String, bundleIdentifier: String,
                environment: [String: String] = ProcessInfo.processInfo.environment) throws(ReindexError) {
        guard Manifest.isValidBundleIdentifier(bundleIdentifier) else {
            throw ReindexError(.usage, "\(bundleIdentifier): not a valid bundle identifier")
        }
        self.store = try Index.open(path, environment: environment)
        self.bundleIdentifier = bundleIdentifier
        self.bundleKey = bundleIdentifier.lowercased()
    }

    /// Uses an already open index.
    public init(store: any IndexBackend, bundleIdentifier: String) {
        self.store = store
        self.bundleIdentifier = bundleIdentifier
        self.bundleKey = bundleIdentifier.lowercased()
    }

    deinit {
        if case .open(let writer) = batch { writer.rollback() }
    }

    // MARK: Items

    /// Adds or replaces items. Every item is validated first (custom attributes against the
    /// declarations in effect for the bundle); if any is invalid nothing is written (and an open
    /// batch is discarded).
    @discardableResult
    public func put(_ items: [SearchableItem]) throws(ReindexError) -> WriteCounts {
        let declarations: [String: AttributeDeclaration]
        switch batch {
        case .open(let writer)?: declarations = writer.declarations
        case .discarded(let failure)?: throw refusal(failure)
        case nil:
            do { declarations = try store.declarations(bundle: bundleKey) } catch { throw explain(error) }
        }
        var validated: [ValidatedItem] = []
        validated.reserveCapacity(items.count)
        for (n, item) in items.enumerated() {
            do {
                validated.append(try ItemValidator.validate(item.json, path: "items[\(n)]", declarations: declarations))
            } catch {
                throw discardingBatch(ReindexError(.invalidData, "\(bundleIdentifier): \(error)"))
            }
        }
        return try perform(.put(validated))
    }

    /// Adds or replaces items that were already validated.
    @discardableResult
    public func put(validated items: [ValidatedItem]) throws(ReindexError) -> WriteCounts {
        try perform(.put(items))
    }

    /// Partial updates (Core Spotlight's `isUpdate`): the attributes each item sets are merged
    /// into the item already indexed under its identifier (one set to `.null` in `custom` is
    /// removed); an item with no such identifier is ignored and counted in `ignoredUpdates`
    /// (inside a batch, in `endBatch`'s result).
    @discardableResult
    public func update(_ items: [SearchableItem]) throws(ReindexError) -> WriteCounts {
        try put(items.map { item in
            var update = item
            update.isUpdate = true
            return update
        })
    }

    /// Removes items by identifier; returns how many existed (inside a batch, 0: the batch's
    /// deletions are counted in `endBatch`'s result).
    @discardableResult
    public func delete(identifiers: [String]) throws(ReindexError) -> Int {
        try perform(.delete(identifiers)).deleted
    }

    /// Removes every item in these domains and their subdomains (`a.b` takes `a.b.c`, not
    /// `a.bc`); returns how many (inside a batch, 0, as `delete(identifiers:)`).
    @discardableResult
    public func delete(domainIdentifiers domains: [String]) throws(ReindexError) -> Int {
        try perform(.deleteDomains(domains)).deleted
    }

    /// Removes every item of this bundle; returns how many (inside a batch, 0, as
    /// `delete(identifiers:)`). The client state stays what the application last made it.
    @discardableResult
    public func deleteAll() throws(ReindexError) -> Int {
        try perform(.deleteAll).deleted
    }

    /// Searches this bundle's live items. Refused while a batch is open (end or cancel it
    /// first): what a search would see of the batch's own writes differs between the indexes.
    public func search(_ query: String, limit: Int = 20) throws(ReindexError) -> [SearchResult] {
        if batch != nil {
            throw ReindexError(.usage, "\(bundleIdentifier): search while a batch is open; end or cancel the batch first")
        }
        do { return try store.search(query, bundle: bundleIdentifier, domain: nil, limit: limit, now: Clock.now()) } catch {
            throw store.explain(error, doing: "\(bundleIdentifier): search failed")
        }
    }

    /// Applies `operation` on a writer of its own, committed at once; or, in a batch, queues it
    /// (written with the others when the queue is full, or at `endBatch`). Inside a batch the
    /// result counts the call's own items as put and nothing else.
    private func perform(_ operation: Operation) throws(ReindexError) -> WriteCounts {
        switch batch {
        case .open?:
            buffered.append(operation)
            switch operation {
            case .put(let items):
                bufferedCount += items.count
                for item in items { bufferedSize += item.attributesJSON.count }
            case .delete(let values), .deleteDomains(let values): bufferedCount += values.count
            case .deleteAll: bufferedCount += 1
            }
            if bufferedCount >= Self.bufferedOperations || bufferedSize >= Self.bufferedBytes { try writeBuffered() }
            if case .put(let items) = operation { return WriteCounts(put: items.count) }
            return WriteCounts()
        case .discarded(let failure)?:
            throw refusal(failure)
        case nil:
            do {
                let writer = try store.makeWriter(bundleIdentifier: bundleIdentifier, scope: .direct, requestID: nil, declarations: [:])
                do {
                    try Self.apply(operation, to: writer)
                    return try writer.acknowledge(with: { _ in })
                } catch {
                    writer.rollback()
                    throw error
                }
            } catch {
                throw explain(error)
            }
        }
    }

    private static func apply(_ operation: Operation, to writer: any IndexWriting) throws {
        switch operation {
        case .put(let items): for item in items { try writer.put(item) }
        case .delete(let identifiers): try writer.delete(identifiers: identifiers)
        case .deleteDomains(let domains): try writer.delete(domains: domains)
        case .deleteAll: try writer.deleteAll()
        }
    }

    /// The batch's queued operations, the queue emptied.
    private func takeBuffered() -> [Operation] {
        defer { buffered = []; bufferedCount = 0; bufferedSize = 0 }
        return buffered
    }

    /// Writes the batch's queued operations in one group; on SQLite they are committed, still
    /// invisible, so nothing is held while the application works. A failure discards the batch.
    private func writeBuffered() throws(ReindexError) {
        guard case .open(let writer)? = batch else { return }
        let operations = takeBuffered()
        do {
            for operation in operations { try Self.apply(operation, to: writer) }
            try writer.flush()
        } catch {
            throw discardingBatch(explain(error))
        }
    }

    /// Discards the open batch (if any) after `failure`, which is returned to be thrown, saying so.
    private func discardingBatch(_ failure: ReindexError) -> ReindexError {
        guard case .open(let writer)? = batch else { return failure }
        writer.rollback()
        buffered = []
        bufferedCount = 0
        bufferedSize = 0
        batch = .discarded(failure)
        return ReindexError(failure.code, "\(failure.message); the batch was discarded: nothing of it will be applied, and the client state stays the previous one")
    }

    private func refusal(_ failure: ReindexError) -> ReindexError {
        ReindexError(failure.code, "\(bundleIdentifier): the open batch was discarded after an error (\(failure.message)); cancel it before writing again")
    }

    private func explain(_ error: any Error) -> ReindexError {
        store.explain(error, doing: bundleIdentifier)
    }

    // MARK: Batches

    /// Whether a batch is open (begun and not yet ended or cancelled).
    public var isBatchOpen: Bool { batch != nil }

    /// Begins a batch: every `put`, `update` and `delete` until `endBatch` is held back, and
    /// `endBatch` publishes all of them together with the application's client state, in one
    /// transaction. A batch is all or nothing: until it ends nothing of it is visible, and an
    /// error in any of its calls, `cancelBatch`, this `LocalIndex` going away or the process
    /// dying mid-batch leaves the items and the client state as they were before it. Each call
    /// is checked (its items validated) when it is made and queued; the queue is written in
    /// groups, so an error of the index itself may be reported by a later call or by `endBatch`.
    ///
    /// On SQLite the batch's writes go into a private staging in short transactions, so no
    /// write lock is held while the application works between calls; a staging a dead process
    /// left is swept by the next `beginBatch` of the bundle (or the host's next run of it). On
    /// PostgreSQL a batch is one transaction: keep batches short, since a replacement
    /// (`reindexAll`) of the same bundle waits for it before it is published.
    public func beginBatch() throws(ReindexError) {
        guard batch == nil else {
            throw ReindexError(.usage, "\(bundleIdentifier): a batch is already open; end or cancel it first")
        }
        do {
            try store.sweepAbandonedStagings(bundle: bundleKey)
            batch = .open(try store.makeWriter(bundleIdentifier: bundleIdentifier, scope: .live, requestID: nil, declarations: [:]))
        } catch {
            throw explain(error)
        }
    }

    /// Ends the open batch: publishes its writes and records `clientState` (at most
    /// `maximumClientStateBytes` bytes, whatever the application needs to resume: a position in
    /// its change log, a date) in one transaction, and returns what the batch did. A client state
    /// too large, or a batch an earlier error discarded, throws and applies nothing: the batch is
    /// over either way, and the previous items and client state stay.
    @discardableResult
    public func endBatch(clientState: [UInt8]) throws(ReindexError) -> WriteCounts {
        guard let open = batch else {
            throw ReindexError(.usage, "\(bundleIdentifier): endBatch without an open batch; beginBatch first")
        }
        batch = nil
        switch open {
        case .discarded(let failure):
            throw ReindexError(failure.code, "\(bundleIdentifier): the batch was discarded after an error (\(failure.message)); nothing of it was applied, and the client state is still the previous one")
        case .open(let writer):
            guard clientState.count <= Self.maximumClientStateBytes else {
                writer.rollback()
                buffered = []
                bufferedCount = 0
                bufferedSize = 0
                throw ReindexError(.invalidData, "\(bundleIdentifier): the client state is \(clientState.count) bytes, more than the \(Self.maximumClientStateBytes) allowed; the batch was discarded: nothing of it was applied, and the client state is still the previous one")
            }
            let key = bundleKey
            let operations = takeBuffered()
            do {
                for operation in operations { try Self.apply(operation, to: writer) }
                return try writer.acknowledge(with: { backend in try backend.saveApplicationClientState(clientState, bundle: key) })
            } catch {
                writer.rollback()
                let failure = explain(error)
                throw ReindexError(failure.code, "\(failure.message); the batch was not applied, and the client state is still the previous one")
            }
        }
    }

    /// Discards the open batch (if any): nothing of it is applied.
    public func cancelBatch() {
        if case .open(let writer) = batch { writer.rollback() }
        buffered = []
        bufferedCount = 0
        bufferedSize = 0
        batch = nil
    }

    /// Runs `body` as one batch, ended with the client state it returns; if it throws, the batch
    /// is cancelled and the error rethrown.
    @discardableResult
    public func batch(_ body: (LocalIndex) throws -> [UInt8]) throws -> WriteCounts {
        try beginBatch()
        let clientState: [UInt8]
        do { clientState = try body(self) } catch {
            cancelBatch()
            throw error
        }
        return try endBatch(clientState: clientState)
    }

    /// The client state the last successful `endBatch` of this bundle recorded — by this
    /// process or an earlier one — or nil if none did (or a replacement of the bundle cleared
    /// it: see docs/SDK.md, "Indexing from an application"). An application resumes its
    /// indexing from it.
    public func fetchLastClientState() throws(ReindexError) -> [UInt8]? {
        do { return try store.applicationClientState(bundle: bundleKey) } catch {
            throw store.explain(error, doing: "\(bundleIdentifier): reading the client state")
        }
    }
}
