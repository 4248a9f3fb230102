import CSQLite
import ReindexProtocol
import ReindexSystem

extension PostgresStore {
    /// On PostgreSQL, a search among the first matches (`refineBySearching`).
    public func refine(_ candidates: [ItemKey], words: String, now: Double) throws(ReindexError) -> [SearchResult] {
        try refineBySearching(candidates, words: words, now: now)
    }
}
