/// The order of equal scores (docs/QUERIES.md, "Relevance"): the higher rankingHint first, then
/// bundle and identifier in SQLite's order of text (bytes), which the unique index of
/// identifiers keeps. Nil when both are the same.
enum TieOrder {
    static func precedes(_ a: (hint: Double, bundle: String, uid: String), _ b: (hint: Double, bundle: String, uid: String)) -> Bool? {
        if a.hint != b.hint { return a.hint > b.hint }
        if a.bundle != b.bundle { return a.bundle.utf8.lexicographicallyPrecedes(b.bundle.utf8) }
        if a.uid != b.uid { return a.uid.utf8.lexicographicallyPrecedes(b.uid.utf8) }
        return nil
    }
}

/// A match's place in relevance order on either backend: score (highest first), then the tie
/// order. SQLite's matches (`IndexStore.Ranked`), its rank lists' entries (`RankEntry`) and
/// PostgreSQL's rows (`PostgresStore.RankPlace`) are places.
protocol RelevancePlace {
    var score: Double { get }
    var hint: Double { get }
    var bundle: String { get }
    var uid: String { get }
}

extension RelevancePlace {
    /// Whether `self` comes before `other`; nil when they have the same place.
    func order(_ other: some RelevancePlace) -> Bool? {
        if score != other.score { return score > other.score }
        return TieOrder.precedes((hint, bundle, uid), (other.hint, other.bundle, other.uid))
    }

    /// Whether `self` comes before `other` among items of equal score (false when they have
    /// the same place).
    func tiePrecedes(_ other: some RelevancePlace) -> Bool {
        TieOrder.precedes((hint, bundle, uid), (other.hint, other.bundle, other.uid)) ?? false
    }
}
