import ReindexProtocol
import ReindexSystem

/// The query language (docs/QUERIES.md), which both index backends answer with the same
/// options, results and errors: the SQLite file (`IndexStore`) and the PostgreSQL database
/// (`PostgresStore`). The same items match on both; relevance scores (and so the order of
/// results without `sort`) may differ, an order by sort keys does not. Every call reads one
/// snapshot. Errors are the host's: a malformed query is `invalidData` with its position.
public protocol IndexQueries: IndexBackend {
    /// One page of matches, best first or in `options.sort` order; `nextCursor` continues it.
    func query(_ text: String, options: QueryOptions) throws(ReindexError) -> QueryPage
    /// The exact number of live, unexpired matches.
    func count(_ text: String, options: QueryOptions) throws(ReindexError) -> Int
    /// The most common values of a string attribute among the matches, with their counts.
    func facet(_ text: String, attribute: String, top: Int, options: QueryOptions) throws(ReindexError) -> [(value: String, count: Int)]
    /// One live item, whole.
    func item(bundle: String, uniqueIdentifier: String, now: Double) throws(ReindexError) -> ItemRecord?
    /// The items of `candidates`, in their order, that match `words` as plain words: a search
    /// narrowed to earlier results (SQLite/IndexStore+Refinement.swift).
    func refine(_ candidates: [ItemKey], words: String, now: Double) throws(ReindexError) -> [SearchResult]
}

extension IndexQueries {
    /// `refine` by a search of `words` among its first matches (at least 200, as many as
    /// there are candidates up to 1,000), keeping the candidates found, in their order.
    public func refineBySearching(_ candidates: [ItemKey], words: String, now: Double) throws(ReindexError) -> [SearchResult] {
        let limit = max(200, min(candidates.count, 1000))
        var options = QueryOptions(limit: limit)
        options.now = now
        let found = try query(words, options: options).results
        var byKey: [ItemKey: SearchResult] = [:]
        for result in found { byKey[ItemKey(bundle: result.bundleIdentifier.lowercased(), uniqueIdentifier: result.uniqueIdentifier)] = result }
        var seen = Set<ItemKey>()
        return candidates.compactMap { candidate in
            let key = ItemKey(bundle: candidate.bundle.lowercased(), uniqueIdentifier: candidate.uniqueIdentifier)
            guard seen.insert(key).inserted else { return nil }
            return byKey[key]
        }
    }
}
