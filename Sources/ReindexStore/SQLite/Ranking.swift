import ReindexSystem
import CSQLite
import ReindexProtocol

/// The relevance of a search (docs/QUERIES.md, "Relevance"): BM25F, the weighted-field form
/// of BM25 that FTS5's `bm25()` and Lucene's `BM25` compute.
///
/// For each unit `u` of the query (a word, or the phrase of a `w` string) and item `d`:
///
/// - `f(u, d)` = Σ over the unit's occurrences in `d` of the weight of the attribute it occurs in —
///   title 10, displayName 8, alternateNames and keywords 5, authors 3, contentDescription 2,
///   textContent 1 (`weights`);
/// - `idf(u)` = ln(1 + (N − n + 0.5) / (n + 0.5)), `N` the rows of the full-text index, `n` those
///   matching the unit (always above 0, so a very common word still counts a little);
/// - `len(d)` the item's tokens over all its searched attributes, `avglen` their average over the
///   full-text index;
///
/// and score(d) = Σ_u idf(u) · f · (k1 + 1) / (f + k1 · (1 − b + b · len(d) / avglen)), with
/// k1 = 1.2 and b = 0.75. Equal scores are ordered by `rankingHint` (highest first, none
/// counting as 0), then by bundle and identifier. Items where every word matches whole come
/// before items that match only because the last word is also a prefix.
///
/// Exact over every match, and cheap: `rankFunction` (an FTS5 auxiliary function) reads each
/// match's occurrences from the full-text index, and the page is kept as the best `limit + 1`
/// matches so far (`IndexStore.ranked`). A match whose score cannot reach the worst of these —
/// bounded from its occurrences alone, taking its length as short as they allow — is passed
/// over without reading its length (its `docsize` row) or its item; only the matches that enter
/// the page (or tie with its worst) are looked up.
enum Ranking {
    /// Column weights in `AttributeSchema.searched` order.
    static let weights = AttributeSchema.searchWeights
    /// Term-frequency saturation: how fast further occurrences stop counting.
    static let k1 = 1.2
    /// Length normalisation: 0 ignores an item's length, 1 divides by it in full.
    static let b = 0.75

    /// A unit's term-frequency part of the score, `f · (k1 + 1) / (f + k1 · (1 − b + b · len / avglen))`:
    /// what a rank list orders by (`RankLists.swift`), and what the score sums, weighted by rarity.
    @inline(__always)
    static func impact(_ f: Double, length: Double, average: Double) -> Double {
        f * (k1 + 1) / (f + k1 * (1 - b + b * length / average))
    }

    /// A unit's rarity, `ln(1 + (N − n + 0.5) / (n + 0.5))`.
    static func rarity(rows: Double, matching n: Double) -> Double {
        log(1 + (rows - n + 0.5) / (n + 0.5))
    }

    /// The second argument of `reindex_rank`, as a blob of 8-byte doubles: the rows of the
    /// full-text index `N`, the average length `avglen` the score uses (`RankStatistics`), and
    /// each unit's document frequency.
    static func arguments(rows: Int64, average: Double, counts: [Int]) -> [UInt8] {
        blob([Double(rows), average] + counts.map(Double.init))
    }

    /// The weighted frequency `f` of `phrase` in the current row, and how many times it occurs.
    static func weightedFrequency(_ api: UnsafePointer<Fts5ExtensionApi>, _ context: OpaquePointer, phrase: Int32) -> (f: Double, occurrences: Int) {
        var iterator = Fts5PhraseIter()
        var column: Int32 = -1
        var offset: Int32 = -1
        guard api.pointee.xPhraseFirst(context, phrase, &iterator, &column, &offset) == SQLITE_OK else { return (0, 0) }
        var f = 0.0
        var occurrences = 0
        while column >= 0 {
            if Int(column) < weights.count { f += weights[Int(column)] }
            occurrences += 1
            api.pointee.xPhraseNext(context, &iterator, &column, &offset)
        }
        return (f, occurrences)
    }

    /// `reindex_rank(items_fts, arguments)`: the BM25F score of the current row for the first
    /// phrases of the full-text query, one per unit (`arguments`: see `arguments(rows:average:counts:)`);
    /// NULL when the score is certainly below the connection's `RankThreshold` (the function's
    /// user data).
    static let rankFunction: fts5_extension_function = { api, context, result, count, arguments in
        guard let api, let context, let result else { return }
        let threshold = api.pointee.xUserData(context).map { Unmanaged<RankThreshold>.fromOpaque($0).takeUnretainedValue().value } ?? -.infinity
        guard count >= 1, let arguments, let blob = arguments[0], let base = sqlite3_value_blob(blob), sqlite3_value_bytes(blob) >= 16 else {
            sqlite3_result_double(result, 0)
            return
        }
        let rows = base.loadUnaligned(fromByteOffset: 0, as: Double.self)
        let average = base.loadUnaligned(fromByteOffset: 8, as: Double.self)
        let units = Int32(sqlite3_value_bytes(blob) / 8) - 2
        let phrases = min(api.pointee.xPhraseCount(context), units)
        // Each unit's weighted frequency, its rarity, and how many times it occurs (the row is
        // at least that many tokens long).
        var terms: [(f: Double, idf: Double)] = []
        terms.reserveCapacity(Int(max(0, phrases)))
        var shortest = 1
        for phrase in 0..<max(0, phrases) {
            let (f, occurrences) = weightedFrequency(api, context, phrase: phrase)
            guard f > 0 else { continue }
            shortest = max(shortest, occurrences)
            let n = base.loadUnaligned(fromByteOffset: Int(phrase + 2) * 8, as: Double.self)
            terms.append((f, rarity(rows: rows, matching: n)))
        }
        func score(length: Double) -> Double {
            var sum = 0.0
            for term in terms { sum += term.idf * impact(term.f, length: length, average: average) }
            return sum
        }
        // The score falls as the row grows longer: at its shortest possible length, an upper bound.
        if threshold > -.infinity, score(length: Double(shortest)) < threshold {
            sqlite3_result_null(result)
            return
        }
        var length: Int32 = 0
        _ = api.pointee.xColumnSize(context, -1, &length)
        sqlite3_result_double(result, score(length: Double(length)))
    }

    /// `reindex_impact(items_fts, average[, rarities])`: the current row's `impact` for the
    /// full-text query's first phrase (what a word's rank list is built from); with `rarities` (a
    /// blob of 8-byte doubles, one per phrase), the sum over the phrases, in order, of each one's
    /// rarity times its impact (what a list of words together is built from).
    static let impactFunction: fts5_extension_function = { api, context, result, count, arguments in
        guard let api, let context, let result else { return }
        guard count >= 1, let arguments, let value = arguments[0] else { sqlite3_result_null(result); return }
        let average = sqlite3_value_double(value)
        var length: Int32 = 0
        _ = api.pointee.xColumnSize(context, -1, &length)
        if count >= 2, let weights = arguments[1], let base = sqlite3_value_blob(weights), sqlite3_value_bytes(weights) >= 8 {
            var sum = 0.0
            for phrase in 0..<min(api.pointee.xPhraseCount(context), Int32(sqlite3_value_bytes(weights) / 8)) {
                let rarity = base.loadUnaligned(fromByteOffset: Int(phrase) * 8, as: Double.self)
                sum += rarity * impact(weightedFrequency(api, context, phrase: phrase).f, length: Double(length), average: average)
            }
            sqlite3_result_double(result, sum)
            return
        }
        let (f, _) = weightedFrequency(api, context, phrase: 0)
        sqlite3_result_double(result, impact(f, length: Double(length), average: average))
    }

    /// Doubles as the blob `reindex_impact` and `rank_lists.rarities` keep them in.
    static func blob(_ values: [Double]) -> [UInt8] {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(values.count * 8)
        for value in values { withUnsafeBytes(of: value) { bytes.append(contentsOf: $0) } }
        return bytes
    }

    static func doubles(_ blob: [UInt8]) -> [Double] {
        stride(from: 0, to: blob.count - 7, by: 8).map { offset in
            blob.withUnsafeBytes { $0.loadUnaligned(fromByteOffset: offset, as: Double.self) }
        }
    }
}
