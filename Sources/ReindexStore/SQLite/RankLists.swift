import CSQLite
import ReindexProtocol

// Rank lists: the first page of a common word without reading every item that holds it.
//
// A search's score (SQLite/Ranking.swift) sums, over the query's units, the unit's rarity times its
// *impact* in the item — its weighted frequency saturated and normalised by the item's length. A
// word in 100,000 items would have all 100,000 read to find the best 20. So for a word (or a
// prefix) that more than `RankLists.commonWords` rows hold, the index keeps a *rank list*: its
// items in relevance order — impact (highest first), then rankingHint (highest first), bundle and
// identifier — from the best down to a *boundary* entry, `RankLists.size` long when made. The
// rule every write keeps (`noteFullTextRow`): **every item whose order for the word precedes the
// boundary is in the list.** So the best items of a word are its list's first entries, and a
// query of several common words reads their lists side by side (Fagin's threshold algorithm):
// each item met is scored exactly, and reading stops when the page's last item comes before the
// best any item not met yet could be (the sum of the impacts last read, and, on a tie, the
// latest tie order last read). When the pass leaves no item out, an item met is looked up in
// the other lists (an index lookup each) and, held by all, scored from its entries alone; one
// that a list cut at its boundary lacks waits, and is set aside unread when its bound cannot
// reach the page (a list that has passed the item's place in the tie order at its last impact
// holds it lower, if at all), else scored from its row. So words whose items tie, and the many
// items holding one word only, cost entries read and lookups, not rows scored. Lists are made
// by the first search that needs one (before it reads its page, in a short write transaction of
// its own that never waits for a writer: `readingRankLists`), and kept up by every write after
// that; an item's entries go with it.
//
// Two common words whose best items seldom hold each other (`support lead`: the items with the
// keyword `Support` never mention a lead) defeat this: the page is among the items holding both,
// past both lists. For them the index keeps a list of the two words *together*: the items holding
// both, ordered by the score as it was when the list was made — each word's rarity then (kept in
// `rank_lists.rarities`) times its impact, summed — and by the tie order, down to a boundary, kept
// by every write under the same rule. While the rarities are still those (no row holding either
// word, and none at all, came or went since), that order is the page's, scores included to the
// bit, so a page is the list's first entries that pass the page's filters. Once they have moved,
// an entry's place still bounds its item's score, and the entries are scored from their rows until
// that bound falls below the page's; where it does not soon (ties), the list is made again.
//
// Impacts depend on the average item length, so the score uses the average *pinned* in
// `rank_statistics` when the first list was made, taken again (and every list dropped, to be
// made anew) when the full-text index's own average moves from it by more than a fifth.

enum RankLists {
    /// Entries a list is made with: enough for a page whose filters pass one item in a hundred.
    static let size = 4_000
    /// A unit matching at most this many rows is read in full (cheaply); above, through its list.
    static let commonWords = 2_000
    /// How far the index's average length may move from the pinned one before it is pinned again.
    static let drift = 0.2
    /// List entries read for one page of one word before a full read is the better way.
    static let maximumDepth = 20_000
    /// List entries of a shorter prefix read for one page of a word without a list of its own
    /// (`parentList`), each scored from its row, before its own list is made instead.
    static let maximumParentDepth = 1_000
    /// The same for several words when the pass leaves items out (each item met is scored from
    /// its row): when the best items of each rarely hold the others (words found together less
    /// often than apart), the lists cannot prove a page soon, and a full read of the items
    /// holding them all costs less than scoring the lists' items one by one. Otherwise their
    /// items are scored from their entries, and the lists are read up to twice their made
    /// length each, unless too few of the items met are in every list (`bestFromRankLists`).
    static let maximumDepthOfSeveral = 512
    /// Lists of two words together kept at most: making one more drops another.
    static let maximumTogether = 64

    /// The key of two words' list together (`&` and their lists' keys in order), or nil for any
    /// other number of words.
    static func together(_ keys: [String]) -> String? {
        guard keys.count == 2, keys[0] != keys[1] else { return nil }
        return "&" + keys.sorted().joined(separator: " ")
    }

    /// The keys of the words whole (`=lead`, `=s` for `=lead`, `*s`): a pass that reads a
    /// prefix leaves out the items holding every one of them.
    static func whole(_ keys: [String]) -> [String] {
        keys.map { "=" + $0.dropFirst() }
    }

    /// The keys of the prefixes whose lists hold every item of `key`'s word with no higher
    /// impact, longest first: the word as a prefix (for a whole word), then each shorter prefix —
    /// `*suppor`, … `*s` for `=support`. Whole characters only: a prefix that ends inside a UTF-8
    /// sequence is no key.
    static func shorterPrefixes(of key: String) -> [String] {
        let token = Array(key.utf8.dropFirst())
        var prefixes: [String] = []
        if key.hasPrefix("=") { prefixes.append("*" + String(decoding: token, as: UTF8.self)) }
        var end = token.count - 1
        while end > 0 {
            if token[end] & 0xC0 != 0x80 { prefixes.append("*" + String(decoding: token[..<end], as: UTF8.self)) }
            end -= 1
        }
        return prefixes
    }

    /// The words' keys of a list (one, or a list together's two).
    static func parts(_ key: String) -> [String] {
        key.hasPrefix("&") ? key.dropFirst().split(separator: " ").map(String.init) : [key]
    }

    /// The full-text query of a list's items: its word, or its prefix, or both words together.
    static func phrase(_ key: String) -> String {
        parts(key).map { part in
            "(" + FullText.quoted(String(part.dropFirst())) + (part.hasPrefix("*") ? "*" : "") + ")"
        }.joined(separator: " AND ")
    }

    /// How `check` names a list: its words quoted, a prefix marked.
    static func shown(_ key: String) -> String {
        "'" + parts(key).map { String($0.dropFirst()) }.joined(separator: " ") + "'" + (key.hasPrefix("*") ? " (prefix)" : "")
    }
}

/// A list entry, or a boundary: an item's place in a word's relevance order (its impact as
/// the score).
struct RankEntry: RelevancePlace {
    var impact: Double
    var hint: Double
    var bundle: String
    var uid: String
    var item: Int64

    var score: Double { impact }

    func precedes(_ other: RankEntry) -> Bool { order(other) ?? (item < other.item) }
}

/// What a writing connection knows of the rank lists: read again in each write transaction in
/// which another connection has committed since (`PRAGMA data_version`).
final class RankUpkeep {
    /// Checked in the current write transaction.
    var fresh = false
    var stamp: Int64 = -1
    var average = 1.0
    /// Each list's boundary (nil: the list holds every item of its word).
    var lists: [String: RankEntry?] = [:]
    /// The lists' words, to find them in a written row's tokens (a list together's too).
    var table = RankKeyTable(keys: [])
    /// The lists of two words together: each word's place in `table`, and its rarity in the order.
    var together: [(key: String, parts: [Int], rarities: [Double])] = []
    /// Lists the searches of this connection wanted and did not find: key → full-text phrase.
    var wanted: [String: String] = [:]
    /// The pinned average has moved too far: pin it again after the read.
    var repin = false
    /// `RankLists.size` and `.commonWords` for this connection (smaller in tests).
    var size = RankLists.size
    var commonWords = RankLists.commonWords
    /// Passes answered from the lists (and not by a full read), for tests.
    var answered = 0
}
