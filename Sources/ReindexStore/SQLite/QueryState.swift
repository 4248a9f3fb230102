import ReindexSystem
import CSQLite
import ReindexProtocol

/// The lowest score the page being ranked can still take (−∞: any).
final class RankThreshold {
    var value = -Double.infinity
}

/// What a connection keeps for queries: whether its functions are registered, and how many
/// rows of the full-text index each unit matches, valid while the full-text index is unchanged.
final class QueryState {
    var registered = false
    var ftsVersion: [UInt8] = []
    var frequencies: [String: Int] = [:]
    /// Whether `unit_frequencies` holds counts for `ftsVersion` (nil: not looked yet).
    var keptForVersion: Bool? = nil
    /// Counts made by this connection that `unit_frequencies` does not hold yet (for `ftsVersion`).
    var unkept: [String: Int] = [:]
    /// How many document frequencies this connection has counted from the postings.
    var counted = 0
    /// How many passes this connection has read in full (every match scored).
    var fullReads = 0
    /// How many passes this connection has read from a shorter prefix's list (`parentList`).
    var fromParentLists = 0
    /// The score a match must reach to matter to the page being read (`reindex_rank`'s user data).
    let threshold = RankThreshold()
    /// While `IndexStore.queryPlan` runs a query: SQLite's plan of each statement it filters with.
    var explained: [String]? = nil
    /// The full-text index's own tokenizer, made on first use (`IndexStore+Refinement.swift`).
    var tokenizer: FullTextTokenizer? = nil
    /// The rank lists, as writes keep them and searches want them (`RankLists.swift`).
    let upkeep = RankUpkeep()
    /// A search of common words whose lists are missing makes them before it reads its page
    /// (`IndexStore.readingRankLists`), when it is no caller's transaction and the lists are
    /// not being tried already; `pageWaits`: the page just read is empty for that.
    var makeFirst = false
    var pageWaits = false
}
