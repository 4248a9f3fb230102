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
    /// narrowed to earlier results (Store/Refinement.swift).
    func refine(_ candidates: [ItemKey], words: String, now: Double) throws(ReindexError) -> [SearchResult]
}

extension IndexStore: IndexQueries {}
extension PostgresStore: IndexQueries {}

extension Index {
    /// Opens the index `index` names for queries: a PostgreSQL connection string or a SQLite path.
    public static func openForQueries(_ index: String, environment: [String: String]) throws(ReindexError) -> any IndexQueries {
        let opened = try open(index, environment: environment)
        guard let queries = opened as? any IndexQueries else {
            throw ReindexError(.internal, "\(opened.displayLocation): this index does not answer queries")
        }
        return queries
    }
}

