import ReindexSystem
import CSQLite
import ReindexProtocol

/// The relevance of a search (docs/QUERIES.md, "Relevance"):
///
/// 1. every word of the query is scored by the most important attribute it is found in —
///    title 10, displayName 8, alternateNames and keywords 5, authors 3, contentDescription 2,
///    textContent 1 — and an item's score is the sum over the words;
/// 2. among equal scores, the higher `rankingHint` first (none counts as 0), within the
///    newest `IndexStore.hintWindow` matches of the score (older ones follow, newest first);
/// 3. then the item written most recently first.
///
/// Whole words come before matches of the last word as a prefix only. Because a word's score
/// depends only on which attributes hold it, the items of one score form a full-text query of
/// their own (`{title}: word`, `{keywords}: word NOT {title}: word`, …), so the best page is
/// read by walking those queries from the best score down, each newest first — exact over all
/// matches, at a cost that depends on the page and not on how many items match.
enum Ranking {
    /// Column weights in `AttributeSchema.searched` order.
    static let weights: [Double] = [10, 8, 5, 2, 1, 5, 3]
    /// More score groups than this are ranked by one pass over all matches instead.
    static let maximumCombinations = 64

    /// One score and the full-text query of exactly the items with that score.
    struct Group {
        var score: Double
        var expression: String
    }

    /// The score groups of `units`, best first, restricted to the columns each unit can
    /// possibly match in (`possible`); nil when there are too many to walk.
    static func groups(_ units: [RankingUnit], possible: [UInt8], prefix: Bool) -> [Group]? {
        // Per unit: its tiers (one weight each), best first.
        var tiers: [[(weight: Double, expression: String)]] = []
        var combinations = 1
        for (unit, columns) in zip(units, possible) {
            var byWeight: [Double: UInt8] = [:]
            for column in 0..<weights.count where columns & (1 << UInt8(column)) != 0 {
                byWeight[weights[column], default: 0] |= 1 << UInt8(column)
            }
            let ordered = byWeight.keys.sorted(by: >)
            var unitTiers: [(weight: Double, expression: String)] = []
            var higher: UInt8 = 0
            for weight in ordered {
                let cols = byWeight[weight] ?? 0
                var expression = "(" + FullText.phrase(unit, prefix: prefix, columns: cols) + ")"
                if higher != 0 { expression = "(" + expression + " NOT (" + FullText.phrase(unit, prefix: prefix, columns: higher) + "))" }
                unitTiers.append((weight, expression))
                higher |= cols
            }
            if unitTiers.isEmpty { return [] }
            tiers.append(unitTiers)
            combinations *= unitTiers.count
            if combinations > maximumCombinations { return nil }
        }
        // Every combination of tiers (at most `maximumCombinations`, counted like a number
        // whose digits are the units' tiers), grouped by the sum of their weights. A loop and
        // not a recursion over the units: units of one tier each do not multiply the
        // combinations, so there may be many of them.
        var byScore: [Double: [String]] = [:]
        var choice = [Int](repeating: 0, count: tiers.count)
        for _ in 0..<combinations {
            var score = 0.0
            var parts: [String] = []
            parts.reserveCapacity(tiers.count)
            for (unit, tier) in choice.enumerated() {
                score += tiers[unit][tier].weight
                parts.append(tiers[unit][tier].expression)
            }
            byScore[score, default: []].append(parts.joined(separator: " AND "))
            // The next combination: the last unit's tier moves fastest.
            var unit = tiers.count - 1
            while unit >= 0 {
                choice[unit] += 1
                if choice[unit] < tiers[unit].count { break }
                choice[unit] = 0
                unit -= 1
            }
        }
        return byScore.keys.sorted(by: >).map { score in
            let alternatives = byScore[score] ?? []
            return Group(score: score, expression: alternatives.count == 1 ? alternatives[0] : alternatives.map { "(" + $0 + ")" }.joined(separator: " OR "))
        }
    }

    /// The score of the current row for the first `units` phrases, from the columns each is
    /// found in (no document lengths: cheap enough for one pass over every match).
    static let rankFunction: fts5_extension_function = { api, context, result, count, arguments in
        guard let api, let context, let result else { return }
        var units = Int32.max
        if count >= 1, let arguments, let first = arguments[0] { units = Int32(truncatingIfNeeded: sqlite3_value_int64(first)) }
        let phrases = min(api.pointee.xPhraseCount(context), units)
        var score = 0.0
        var iterator = Fts5PhraseIter()
        for phrase in 0..<max(0, phrases) {
            var column: Int32 = -1
            var best = 0.0
            guard api.pointee.xPhraseFirstColumn(context, phrase, &iterator, &column) == SQLITE_OK else { continue }
            while column >= 0 {
                if Int(column) < weights.count { best = max(best, weights[Int(column)]) }
                api.pointee.xPhraseNextColumn(context, &iterator, &column)
            }
            score += best
        }
        sqlite3_result_double(result, score)
    }
}

/// What a connection keeps for queries: whether its functions are registered, and the columns
/// each full-text term occurs in, valid while the full-text index is unchanged.
final class QueryState {
    var registered = false
    var ftsVersion: [UInt8] = []
    var termColumns: [String: UInt8] = [:]
    /// While `IndexStore.queryPlan` runs a query: SQLite's plan of each statement it filters with.
    var explained: [String]? = nil
    /// The full-text index's own tokenizer, made on first use (`Refinement.swift`).
    var tokenizer: FullTextTokenizer? = nil
}

extension IndexStore {
    /// Registers the query functions on this connection once: `reindex_rank` (an FTS5
    /// auxiliary function, through `fts5_api`), `reindex_match` and `reindex_seconds`.
    func prepareQueries() throws(StoreError) {
        guard !queryState.registered else { return }
        let db = connection.handle
        let api = try fts5API()
        var rc = api.pointee.xCreateFunction(api, "reindex_rank", nil, Ranking.rankFunction, nil)
        guard rc == SQLITE_OK else { throw connection.error(rc, "reindex_rank") }
        rc = sqlite3_create_function_v2(db, "reindex_seconds", 1, SQLITE_UTF8 | SQLITE_DETERMINISTIC, nil, { context, _, arguments in
            guard let arguments, let value = arguments[0], let text = sqlite3_value_text(value) else { sqlite3_result_null(context); return }
            let string = String(cString: text)
            if let seconds = RFC3339.parse(string) { sqlite3_result_double(context, seconds) } else { sqlite3_result_null(context) }
        }, nil, nil, nil)
        guard rc == SQLITE_OK else { throw connection.error(rc, "reindex_seconds") }
        rc = sqlite3_create_function_v2(db, "reindex_match", 3, SQLITE_UTF8 | SQLITE_DETERMINISTIC, nil, { context, _, arguments in
            guard let arguments, let value = arguments[0], let text = sqlite3_value_text(value),
                  let patternValue = arguments[1], let pattern = sqlite3_value_text(patternValue), let flags = arguments[2] else {
                sqlite3_result_null(context); return
            }
            let modifiers = StringModifiers(rawValue: UInt8(truncatingIfNeeded: sqlite3_value_int64(flags)))
            sqlite3_result_int(context, Folding.matches(String(cString: text), pattern: String(cString: pattern), modifiers: modifiers) ? 1 : 0)
        }, nil, nil, nil)
        guard rc == SQLITE_OK else { throw connection.error(rc, "reindex_match") }
        queryState.registered = true
    }

    /// This connection's FTS5 API (`SELECT fts5(?1)` with a pointer bound, as SQLite documents).
    func fts5API() throws(StoreError) -> UnsafeMutablePointer<fts5_api> {
        var api: UnsafeMutablePointer<fts5_api>? = nil
        var statement: OpaquePointer?
        guard sqlite3_prepare_v2(connection.handle, "SELECT fts5(?1)", -1, &statement, nil) == SQLITE_OK else { throw connection.error(SQLITE_ERROR, "fts5_api") }
        withUnsafeMutablePointer(to: &api) { pointer in
            _ = sqlite3_bind_pointer(statement, 1, pointer, "fts5_api_ptr", nil)
            _ = sqlite3_step(statement)
        }
        sqlite3_finalize(statement)
        guard let api, api.pointee.iVersion >= 2 else {
            throw StoreError(sqlite: SQLITE_ERROR, message: "this SQLite has no usable FTS5 API", context: path)
        }
        return api
    }

    /// The columns `unit` can match in at all, from the full-text index's vocabulary (cached
    /// until the index changes). A unit of several words can only be where all of them are.
    func possibleColumns(_ unit: RankingUnit, prefix: Bool) throws(StoreError) -> UInt8 {
        try refreshVocabularyCache()
        var columns = unit.columns
        let tokens = Folding.tokens(unit.text)
        guard !tokens.isEmpty else { return 0 }
        for (n, token) in tokens.enumerated() {
            let asPrefix = n == tokens.count - 1 && (unit.starred || (prefix && unit.prefixable))
            columns &= try termColumns(token, prefix: asPrefix)
        }
        return columns
    }

    private func refreshVocabularyCache() throws(StoreError) {
        let version = try statement("SELECT block FROM items_fts_data WHERE id = 10")
        defer { version.reset() }
        let current = try version.step() ? version.bytes(0) : []
        if current != queryState.ftsVersion {
            queryState.ftsVersion = current
            queryState.termColumns.removeAll(keepingCapacity: true)
        }
    }

    private func termColumns(_ term: String, prefix: Bool) throws(StoreError) -> UInt8 {
        let key = (prefix ? "*" : "=") + term
        if let cached = queryState.termColumns[key] { return cached }
        try connection.execute("CREATE VIRTUAL TABLE IF NOT EXISTS temp.reindex_vocabulary USING fts5vocab(main, items_fts, 'col')")
        let select = try statement(prefix
            ? "SELECT DISTINCT col FROM temp.reindex_vocabulary WHERE term >= ?1 AND term < ?1 || x'F48FBFBF'"
            : "SELECT DISTINCT col FROM temp.reindex_vocabulary WHERE term = ?1")
        select.bind(1, term)
        var columns: UInt8 = 0
        while try select.step() {
            if let name = select.text(0), let column = AttributeSchema.searched.firstIndex(of: name) { columns |= 1 << UInt8(column) }
        }
        select.reset()
        if queryState.termColumns.count > 10_000 { queryState.termColumns.removeAll() }
        queryState.termColumns[key] = columns
        return columns
    }
}
