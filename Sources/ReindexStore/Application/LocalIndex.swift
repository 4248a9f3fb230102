import ReindexSystem
import ReindexProtocol

/// Direct indexing for applications that index their own content — the counterpart of Core
/// Spotlight's `CSSearchableIndex`. It speaks the vocabulary of the protocol and of the SDKs
/// (`put`, `delete(identifiers:)`, `delete(domainIdentifiers:)`, `deleteAll()`, as an extension's
/// `SearchableIndex` does), where Core Spotlight says `indexSearchableItems`,
/// `deleteSearchableItems(withIdentifiers:)`, `…(withDomainIdentifiers:)` and `deleteAllSearchableItems`.
///
/// Each call is one transaction against the bundle's live items: when it returns, the change is
/// durable and visible to searches; when it throws, nothing of it was applied. Items of other
/// bundles are never touched.
public final class LocalIndex {
    public let store: IndexStore
    public let bundleIdentifier: String

    /// Opens the index at `path` for writing the items of `bundleIdentifier`.
    public init(path: String, bundleIdentifier: String) throws(ReindexError) {
        guard Manifest.isValidBundleIdentifier(bundleIdentifier) else {
            throw ReindexError(.usage, "\(bundleIdentifier): not a valid bundle identifier")
        }
        self.store = try IndexStore.open(path: path)
        self.bundleIdentifier = bundleIdentifier
    }

    /// Uses an already open store.
    public init(store: IndexStore, bundleIdentifier: String) {
        self.store = store
        self.bundleIdentifier = bundleIdentifier
    }

    private func write(_ body: (StagedWrites) throws(SQLiteError) -> Void) throws(ReindexError) -> WriteCounts {
        do throws(SQLiteError) {
            let writes = try StagedWrites(store: store, bundleIdentifier: bundleIdentifier, scope: .direct)
            do throws(SQLiteError) {
                try body(writes)
                return try writes.acknowledge()
            } catch {
                writes.rollback()
                throw error
            }
        } catch {
            throw IndexStore.explain(error, index: store.path, doing: bundleIdentifier)
        }
    }

    /// Adds or replaces items. Every item is validated first (custom attributes against the
    /// declarations in effect for the bundle); if any is invalid nothing is written.
    @discardableResult
    public func put(_ items: [SearchableItem]) throws(ReindexError) -> WriteCounts {
        var validated: [ValidatedItem] = []
        validated.reserveCapacity(items.count)
        let declarations: [String: AttributeDeclaration]
        do { declarations = try store.declarations(bundle: bundleIdentifier) } catch {
            throw IndexStore.explain(error, index: store.path, doing: bundleIdentifier)
        }
        for (n, item) in items.enumerated() {
            do {
                validated.append(try ItemValidator.validate(item.json, path: "items[\(n)]", declarations: declarations))
            } catch {
                throw ReindexError(.invalidData, "\(bundleIdentifier): \(error)")
            }
        }
        return try put(validated: validated)
    }

    /// Adds or replaces items that were already validated.
    @discardableResult
    public func put(validated items: [ValidatedItem]) throws(ReindexError) -> WriteCounts {
        try write { (writes) throws(SQLiteError) in
            for item in items { try writes.put(item) }
        }
    }

    /// Removes items by identifier; returns how many existed.
    @discardableResult
    public func delete(identifiers: [String]) throws(ReindexError) -> Int {
        try write { (writes) throws(SQLiteError) in try writes.delete(identifiers: identifiers) }.deleted
    }

    /// Removes every item in these domains and their subdomains; returns how many.
    @discardableResult
    public func delete(domainIdentifiers domains: [String]) throws(ReindexError) -> Int {
        try write { (writes) throws(SQLiteError) in try writes.delete(domains: domains) }.deleted
    }

    /// Removes every item of this bundle; returns how many.
    @discardableResult
    public func deleteAll() throws(ReindexError) -> Int {
        try write { (writes) throws(SQLiteError) in try writes.deleteAll() }.deleted
    }

    /// Searches this bundle's items.
    public func search(_ query: String, limit: Int = 20) throws(ReindexError) -> [SearchResult] {
        do { return try store.search(query, bundle: bundleIdentifier, limit: limit) } catch {
            throw IndexStore.explain(error, index: store.path, doing: "\(bundleIdentifier): search failed")
        }
    }
}
