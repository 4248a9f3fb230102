import CSQLite
import ReindexProtocol

extension IndexStore {
    // MARK: Statistics

    /// The full-text index's rows and its average length in tokens, from FTS5's own record of
    /// them (the "averages" row of `items_fts_data`).
    func fullTextTotals() throws(StoreError) -> (rows: Int64, average: Double) {
        let select = try statement("SELECT block FROM items_fts_data WHERE id = 1")
        defer { select.reset() }
        guard try select.step() else { return (0, 1) }
        let bytes = select.bytes(0)
        var offset = 0
        func varint() -> Int64 {
            var value: UInt64 = 0
            for n in 0..<9 {
                guard offset < bytes.count else { break }
                let byte = bytes[offset]
                offset += 1
                if n == 8 { value = value << 8 | UInt64(byte); break }
                value = value << 7 | UInt64(byte & 0x7F)
                if byte & 0x80 == 0 { break }
            }
            return Int64(bitPattern: value)
        }
        let rows = varint()
        var tokens: Int64 = 0
        for _ in AttributeSchema.searched { tokens += varint() }
        return (rows, rows > 0 && tokens > 0 ? Double(tokens) / Double(rows) : 1)
    }

    /// The average length pinned in `rank_statistics`, if any.
    func storedAverage() throws(StoreError) -> Double? {
        let select = try statement("SELECT average FROM rank_statistics")
        defer { select.reset() }
        return try select.step() ? select.double(0) : nil
    }

    /// The full-text row `row`, its searched attributes in order, stepped to (false: none).
    /// The statement is the connection's cached one: read it before the next use.
    func fullTextRow(_ row: Int64) throws(StoreError) -> (statement: SQLiteStatement, found: Bool) {
        let texts = try statement("SELECT \(SQLiteSchema.fullTextColumns) FROM items_fts WHERE rowid = ?1")
        texts.reset()
        texts.bind(1, row)
        return (texts, try texts.step())
    }

    /// The rows `N` and the average length the score uses: the pinned one if any
    /// (`rank_statistics`), else the index's own. Notes when the pinned one has moved too far.
    func rankStatistics() throws(StoreError) -> (rows: Int64, average: Double, pinned: Bool) {
        let live = try fullTextTotals()
        guard let pinned = try storedAverage() else { return (live.rows, live.average, false) }
        if abs(live.average / pinned - 1) > RankLists.drift { queryState.upkeep.repin = true }
        return (live.rows, pinned, true)
    }

    /// The rank list key of `unit` in a pass: `=` and the word's one token, or `*` and the
    /// prefix's; nil when the unit is not one token of every attribute.
    func rankKey(_ unit: RankingUnit, prefix: Bool) throws(StoreError) -> String? {
        guard unit.columns == QueryPlan.allColumns else { return nil }
        let tokens = try fullTextTokenizer().tokens(of: unit.text)
        guard tokens.count == 1 else { return nil }
        return (unit.starred || (prefix && unit.prefixable) ? "*" : "=") + tokens[0]
    }

    // MARK: Reading

    /// The best `capacity` matches of one pass (in relevance order) read through the units' rank
    /// lists, or nil when that is not the way: a unit that is rare (read in full, cheaply), not
    /// one token, or without a list yet (then wanted, for `makeWantedRankLists`), or lists that
    /// run out before the page is proven.
    ///
    /// `excluding`: the pass leaves out the whole-word pass's matches; `average` is the length
    /// the score uses; `lookUp` looks an item up (live, unexpired, passing the filters, after the
    /// cursor) with its score.
    func bestFromRankLists(_ units: [RankingUnit], prefix: Bool, excluding: Bool, counts: [Int], rarities: [Double], capacity: Int,
                           average: Double,
                           lookUp: (Int64, Double) throws(StoreError) -> Ranked?) throws(StoreError) -> [Ranked]? {
        guard capacity > 0, let fewest = counts.min(), fewest > queryState.upkeep.commonWords else { return nil }
        var keys: [String] = []
        for unit in units {
            guard let key = try rankKey(unit, prefix: prefix) else { return nil }
            keys.append(key)
        }
        // Two words: their list together, when there is one made for the rarities of now. (A
        // pass that leaves out the items holding both words whole reads the same list, past them.)
        let together = RankLists.together(keys)
        var togetherIsWanted = false
        if let together {
            switch try bestFromTogether(together, keys: keys, rarities: rarities, capacity: capacity, average: average,
                                        excluding: excluding, lookUp: lookUp) {
            case .page(let best): return best
            case .wanted: togetherIsWanted = true
            case .unproven: break
            }
            // The second word typed one letter more than a pair with a list (`sales an` after
            // `sales a`): that list bounds the pair's items (`parentTogether`).
            if togetherIsWanted, let (parent, standsFor) = try parentTogether(keys),
               case .page(let best) = try bestFromTogether(parent, keys: keys, rarities: rarities, capacity: capacity, average: average,
                                                          excluding: excluding, standsFor: standsFor, lookUp: lookUp) {
                queryState.fromParentLists += 1
                return best
            }
        }
        // Two words without their list together, one of them without a list of its own either
        // (`sales a`, where `a*` is in 380,000 items and the pair in 48,000): the page is among
        // the items holding both, so only their list together is made, from a read of those.
        // The word's own list waits for a search that needs it.
        var ownListMissing = false
        if togetherIsWanted { for key in keys where try !rankListExists(key) { ownListMissing = true; break } }
        if ownListMissing, let together, try !generationsInFlux() {
            queryState.upkeep.wanted[together] = RankLists.phrase(together)
            return nil
        }
        // One word (or prefix) without a list of its own: a list of a shorter prefix of it holds
        // its best items (below).
        if units.count == 1, let parent = try parentList(of: keys[0]),
           let best = try bestFromWordLists(units, keys: keys, lists: [parent], prefix: prefix, excluding: excluding, rarities: rarities,
                                            capacity: capacity, average: average, lookUp: lookUp) {
            queryState.fromParentLists += 1
            return best
        }
        let best = try bestFromWordLists(units, keys: keys, prefix: prefix, excluding: excluding, rarities: rarities, capacity: capacity,
                                         average: average, lookUp: lookUp)
        // The words' own lists cannot prove the page (or are not made yet, and may not): it is
        // among the items holding both, which their list together finds, made with theirs — but
        // not while a reindexAll is staged or its old generation is being deleted, when rows come
        // and go at every batch and a list would be made for rarities already gone.
        if best == nil, togetherIsWanted, let together, try !generationsInFlux() {
            queryState.upkeep.wanted[together] = RankLists.phrase(together)
        }
        return best
    }

    /// For a key without a list of its own, the list of the longest shorter prefix of its word
    /// that has one (`*sup` for `*supp` or `=support`; `*support` too for `=support`), if any.
    ///
    /// A word typed one letter more at a time is a new prefix at every key, and its first search
    /// would read every match to make its list. But every token the longer prefix (or the word)
    /// matches, the shorter one matches too, so an item's weighted frequency for the longer is at
    /// most its frequency for the shorter, and so is its impact (the same length): the shorter
    /// prefix's list, read in its order with each item scored exactly from its row, bounds every
    /// item not met yet by the impact last read, as a list of the word's own would. The page is
    /// proven as one word's is (`bestFromWordLists`); when the shorter prefix's best items seldom
    /// hold the longer one, the walk stops at `RankLists.maximumParentDepth` and the word's own
    /// list is made as before.
    private func parentList(of key: String) throws(StoreError) -> String? {
        guard try !rankListExists(key) else { return nil }
        for candidate in RankLists.shorterPrefixes(of: key) where try rankListExists(candidate) { return candidate }
        return nil
    }

    /// For two words without a list together, the list together of the first and a shorter
    /// prefix of the second (`&*a =sales` for `sales an`), the longest there is, with the query's
    /// key each of its parts stands for. An item's impact for the longer prefix is at most its
    /// impact for the shorter (`parentList`), so every item of the pair is in that list's domain
    /// with impacts no higher, and `bestFromTogether` bounds the items not met yet as it does once
    /// a list's rarities have moved.
    private func parentTogether(_ keys: [String]) throws(StoreError) -> (key: String, standsFor: [String: String])? {
        guard keys.count == 2 else { return nil }
        let typed = keys[1], other = keys[0]
        for candidate in RankLists.shorterPrefixes(of: typed) where candidate != other {
            guard let key = RankLists.together([other, candidate]), try rankListExists(key) else { continue }
            return (key, [candidate: typed, other: other])
        }
        return nil
    }

    private func rankListExists(_ key: String) throws(StoreError) -> Bool {
        let select = try statement("SELECT 1 FROM rank_lists WHERE key = ?1")
        select.bind(1, key)
        defer { select.reset() }
        return try select.step()
    }

    /// Whether a generation is staged or retired (its rows still being written or deleted).
    private func generationsInFlux() throws(StoreError) -> Bool {
        try (connection.scalar("SELECT EXISTS (SELECT 1 FROM staged_generations) OR EXISTS (SELECT 1 FROM retired_generations)") ?? 0) != 0
    }

    private enum TogetherRead {
        case page([Ranked])
        /// No list of the two words, or one made for other rarities that cannot prove the page.
        case wanted
        /// A list that runs out before the page is full (a selective filter).
        case unproven
    }

    /// The best `capacity` matches of two words from their list together (`key`; `keys` their
    /// own lists' keys, in the query's order, with their `rarities`). Made for the rarities of now,
    /// the list's order is the page's and its entries' scores are the items' own (two products
    /// summed, in either order the same double), so the page is its first entries that `lookUp`
    /// keeps — proven once it is full, or when the list holds every item of the two words.
    ///
    /// Once rows have come or gone, the rarities have moved and the order is no longer quite the
    /// page's, but an item's place still bounds its score: an item not met yet sums, with the
    /// rarities the list was made for, to no more than the entry being read (or the boundary), and
    /// each of its impacts is below k1 + 1 — so it scores at most the most those allow with the
    /// rarities of now (`most`). Each entry met is then scored from its row, and the page is
    /// proven once that most is below the page's last score. Where it is not (items that tie,
    /// rarities moved far), the list is wanted again, made for the rarities of now.
    ///
    /// `standsFor`: the list is another pair's, a part of which is a shorter prefix of a query word
    /// (`parentTogether`); it maps each of its parts to the query's key. Its order is not the
    /// page's then, whatever the rarities, so every entry met is scored from its row.
    ///
    /// `excluding`: the pass leaves out the items holding both words whole (`text e` after the
    /// items holding `text` and `e`): their entries are passed over, each entry's row split to
    /// tell. The items left out are not the pass's, so the bounds hold for the rest as they are.
    private func bestFromTogether(_ key: String, keys: [String], rarities: [Double], capacity: Int, average: Double,
                                  excluding: Bool = false, standsFor: [String: String]? = nil,
                                  lookUp: (Int64, Double) throws(StoreError) -> Ranked?) throws(StoreError) -> TogetherRead {
        let list = try statement("SELECT last_impact, rarities FROM rank_lists WHERE key = ?1")
        list.bind(1, key)
        defer { list.reset() }
        guard try list.step() else { return .wanted }
        let boundary: Double? = list.isNull(0) ? nil : list.double(0)
        let made = Ranking.doubles(list.blob(1))
        let now = RankLists.parts(key).map { part in keys.firstIndex(of: standsFor?[part] ?? part).map { rarities[$0] } ?? .nan }
        list.reset()
        guard made.count == 2, now.allSatisfy({ !$0.isNaN }) else { return .wanted }
        let reader = try statement("SELECT impact, item, hint, bundle, uid FROM rank_entries WHERE list = ?1 ORDER BY impact DESC, hint DESC, bundle, uid, item")
        reader.bind(1, key)
        defer { reader.reset() }
        var best: [Ranked] = []
        // Each entry met scored from its row, or (in the list's order) told apart from the items
        // the pass leaves out: `exactScore` is nil for them.
        let scoring = RankKeyTable(keys: keys + (excluding ? RankLists.whole(keys) : []))
        if made == now && standsFor == nil {
            while try reader.step() {
                if excluding, try exactScore(reader.int64(1), scoring, units: keys.count, rarities: rarities, average: average) == nil { continue }
                guard let ranked = try lookUp(reader.int64(1), reader.double(0)) else { continue }
                best.append(ranked)
                if best.count == capacity { break }
            }
            guard best.count == capacity || boundary == nil else { return .unproven }
            queryState.upkeep.answered += 1
            return .page(best)
        }
        // The most an item can score now whose sum with the rarities made for is `sum`: the sum
        // spent first on the word whose rarity rose the most, each impact below k1 + 1.
        let order = made.indices.sorted { now[$0] / made[$0] > now[$1] / made[$1] }
        func most(_ sum: Double) -> Double {
            var left = sum, total = 0.0
            for n in order {
                let impact = min(Ranking.k1 + 1, max(0, left / made[n]))
                total += now[n] * impact
                left -= made[n] * impact
            }
            return total
        }
        // (With room for the rounding of the sums kept.)
        func cannotReach(_ sum: Double) -> Bool {
            guard best.count == capacity, let worst = best.last else { return false }
            return most(sum) * (1 + 1e-9) < worst.score
        }
        // Another pair's list made with the rarities of now (`sales bud` read from `sales b*`'s
        // when every `b*` word is `budgeting`): an item not met yet sums there to no more than
        // the entry being read, in the list's order after it when as much, and scores for the
        // query no more than it sums there (each impact no higher, the same rarities). So an
        // entry that ties with the page's last exactly, after it in the tie order, proves the
        // page: the items that tie, as synthetic ones do, need not all be read.
        let sameRarities = standsFor != nil && made == now
        func tiesBehindLast(_ sum: Double) -> Bool {
            guard sameRarities, best.count == capacity, let worst = best.last, sum == worst.score else { return false }
            let entry = Ranked(row: reader.int64(1), score: sum, hint: reader.double(2), bundle: reader.text(3) ?? "", uid: reader.text(4) ?? "")
            return worst.precedes(entry)
        }
        var read = 0
        var fullAt: Int? = nil
        while try reader.step() {
            if cannotReach(reader.double(0)) || tiesBehindLast(reader.double(0)) {
                queryState.upkeep.answered += 1
                return .page(best)
            }
            // Items that tie with the page's last (as many synthetic ones do) the bound cannot
            // part: a list made for the rarities of now gives that page at once.
            read += 1
            if let fullAt, read > fullAt + 4 * capacity + 64 { return .wanted }
            let item = reader.int64(1)
            guard let exact = try exactScore(item, scoring, units: keys.count, rarities: rarities, average: average),
                  let ranked = try lookUp(item, exact) else { continue }
            IndexStore.insert(ranked, into: &best)
            if best.count > capacity { best.removeLast() }
            if fullAt == nil, best.count == capacity { fullAt = read }
        }
        // A page at the list's end (a filter, a later page) is no better read from a list made again.
        guard boundary == nil || cannotReach(boundary ?? 0) else { return .unproven }
        queryState.upkeep.answered += 1
        return .page(best)
    }

    /// `bestFromRankLists` through the words' own lists (`keys`), or through `lists`, one list
    /// of a shorter prefix of one word (`parentList`), each item met scored from its row.
    private func bestFromWordLists(_ units: [RankingUnit], keys: [String], lists: [String]? = nil, prefix: Bool, excluding: Bool,
                                   rarities: [Double], capacity: Int, average: Double,
                                   lookUp: (Int64, Double) throws(StoreError) -> Ranked?) throws(StoreError) -> [Ranked]? {
        let ownLists = lists == nil
        let lists = lists ?? keys
        // Each list's boundary.
        let boundarySelect = try statement("SELECT last_impact, last_hint, last_bundle, last_uid, last_item FROM rank_lists WHERE key = ?1")
        var boundaries: [RankEntry?] = []
        var missing = false
        for (n, key) in lists.enumerated() {
            boundarySelect.reset()
            boundarySelect.bind(1, key)
            guard try boundarySelect.step() else {
                if ownLists { queryState.upkeep.wanted[key] = FullText.phrase(units[n], prefix: prefix, columns: QueryPlan.allColumns) }
                missing = true
                continue
            }
            boundaries.append(boundarySelect.isNull(0) ? nil : RankEntry(
                impact: boundarySelect.double(0), hint: boundarySelect.double(1),
                bundle: boundarySelect.text(2) ?? "", uid: boundarySelect.text(3) ?? "", item: boundarySelect.int64(4)))
        }
        boundarySelect.reset()
        guard !missing else { return nil }
        // One statement per list, read as far as needed.
        var readers: [SQLiteStatement] = []
        for key in lists {
            let reader = try connection.prepare("SELECT impact, hint, bundle, uid, item FROM rank_entries WHERE list = ?1 ORDER BY impact DESC, hint DESC, bundle, uid, item")
            reader.bind(1, key)
            readers.append(reader)
        }
        // Scoring one item exactly, for a query whose score the lists alone do not give: its
        // full-text row split as the index splits it, each word's weighted frequency counted (and,
        // when the pass leaves them out, whether every word is also there whole).
        let scoring = RankKeyTable(keys: keys + (excluding ? RankLists.whole(keys) : []))
        // One word's score is its rarity times the impact its list keeps; several words', or an
        // item the pass may leave out, are read from the full-text index.
        let fromListAlone = units.count == 1 && !excluding && ownLists
        // Several words, none left out by the pass (`excluding`): an item met is looked up in the
        // other lists at once (`impacts`, an index lookup each), and when every list holds it, it
        // is scored from its entries (each the impact its list keeps, exact). One that a list with
        // a boundary lacks waits in `partial`, and at the end is set aside unread when it cannot
        // reach the page, or else scored from its row (`resolvePartial`).
        let fromEntries = units.count > 1 && !excluding && ownLists
        var partial: [(item: Int64, impacts: [Double?], place: RankEntry)] = []
        var last: [RankEntry?] = Array(repeating: nil, count: keys.count)
        var exhausted = Array(repeating: false, count: keys.count)
        var seen = Set<Int64>()
        var best: [Ranked] = []
        var depth = 0
        let maximumDepth = !ownLists ? RankLists.maximumParentDepth
            : units.count == 1 ? RankLists.maximumDepth
            : fromEntries ? 2 * keys.count * queryState.upkeep.size : RankLists.maximumDepthOfSeveral
        func score(_ impacts: [Double?]) -> Double {
            var sum = 0.0
            for n in impacts.indices { sum += rarities[n] * (impacts[n] ?? 0) }
            return sum
        }
        func keep(_ item: Int64, _ score: Double) throws(StoreError) {
            guard let ranked = try lookUp(item, score) else { return }
            IndexStore.insert(ranked, into: &best)
            if best.count > capacity { best.removeLast() }
        }
        /// The item's impact in each list, met in list `n` with `impact` and looked up in the
        /// others: nil where a list with a boundary lacks it (its impact there is below the
        /// boundary's); no impacts at all when a list that holds every item of its word lacks it
        /// (the item lacks the word).
        let entryOfItem = fromEntries ? try statement("SELECT impact FROM rank_entries WHERE item = ?1 AND list = ?2") : nil
        func impacts(of item: Int64, met n: Int, impact: Double) throws(StoreError) -> [Double?]? {
            var impacts = [Double?](repeating: nil, count: keys.count)
            impacts[n] = impact
            guard let entryOfItem else { return impacts }
            for m in keys.indices where m != n {
                entryOfItem.reset()
                entryOfItem.bind(1, item)
                entryOfItem.bind(2, keys[m])
                impacts[m] = try entryOfItem.step() ? entryOfItem.double(0) : nil
                entryOfItem.reset()
                if impacts[m] == nil && boundaries[m] == nil { return nil }
            }
            return impacts
        }
        /// Scores or sets aside every item still waiting. Its impact in a list that lacks it is
        /// below the list's boundary, and strictly below when the boundary comes after the item
        /// in the tie order (else the list would hold it): at most the next double down, so the
        /// bound holds as the score itself is computed, rounding included. An item whose bound
        /// cannot reach the page's worst is set aside unread; the others are scored from their rows.
        func resolvePartial() throws(StoreError) {
            for waiting in partial {
                var bound = 0.0
                for n in keys.indices {
                    if let impact = waiting.impacts[n] {
                        bound += rarities[n] * impact
                    } else if let boundary = boundaries[n] {
                        bound += rarities[n] * (waiting.place.tiePrecedes(boundary) ? boundary.impact.nextDown : boundary.impact)
                    }
                }
                if best.count == capacity, let worst = best.last {
                    let place = Ranked(row: waiting.item, score: bound, hint: waiting.place.hint, bundle: waiting.place.bundle, uid: waiting.place.uid)
                    if !place.precedes(worst) { continue }
                }
                if let exact = try exactScore(waiting.item, scoring, units: units.count, rarities: rarities, average: average) {
                    try keep(waiting.item, exact)
                }
            }
            partial.removeAll()
        }
        var checkpoint = RankLists.maximumDepthOfSeveral
        while depth < maximumDepth {
            for (n, reader) in readers.enumerated() where !exhausted[n] {
                for _ in 0..<8 {
                    guard try reader.step() else {
                        exhausted[n] = true
                        if let boundary = boundaries[n] { last[n] = boundary }
                        break
                    }
                    depth += 1
                    let entry = RankEntry(impact: reader.double(0), hint: reader.double(1), bundle: reader.text(2) ?? "",
                                          uid: reader.text(3) ?? "", item: reader.int64(4))
                    last[n] = entry
                    guard seen.insert(entry.item).inserted else { continue }
                    if fromEntries {
                        guard let impacts = try impacts(of: entry.item, met: n, impact: entry.impact) else { continue }
                        if impacts.contains(where: { $0 == nil }) {
                            partial.append((entry.item, impacts, entry))
                        } else {
                            try keep(entry.item, score(impacts))
                        }
                    } else if fromListAlone {
                        try keep(entry.item, rarities[0] * entry.impact)
                    } else if let exact = try exactScore(entry.item, scoring, units: units.count, rarities: rarities, average: average) {
                        try keep(entry.item, exact)
                    }
                }
            }
            // The best an item not met yet can be.
            if best.count == capacity, let worst = best.last, last.allSatisfy({ $0 != nil }) {
                var bound = 0.0
                var latest: RankEntry? = nil
                for (n, entry) in last.enumerated() {
                    guard let entry else { continue }
                    bound += rarities[n] * entry.impact
                    if latest.map({ $0.tiePrecedes(entry) }) ?? true { latest = entry }
                }
                if let latest {
                    let frontier = Ranked(row: latest.item, score: bound, hint: latest.hint, bundle: latest.bundle, uid: latest.uid)
                    if !frontier.precedes(worst) {
                        try resolvePartial()
                        queryState.upkeep.answered += 1
                        return best
                    }
                }
            }
            // Items met in every list too seldom to fill the page before the lists end: their
            // best items rarely hold the other words, and a full read is the way.
            if fromEntries, depth >= checkpoint {
                checkpoint *= 2
                if best.count < capacity, best.count * keys.count * queryState.upkeep.size < capacity * depth { return nil }
            }
            if exhausted.allSatisfy({ $0 }) {
                // A list that holds every item of its word has been read whole.
                guard boundaries.contains(where: { $0 == nil }) else { return nil }
                try resolvePartial()
                queryState.upkeep.answered += 1
                return best
            }
        }
        return nil
    }

    /// The score of `row` for `units` words read through `table` (their keys, then, when the pass
    /// leaves out items holding every word whole, the words whole): as `reindex_rank` computes it,
    /// or nil when the row does not hold every word, or is left out.
    private func exactScore(_ row: Int64, _ table: RankKeyTable, units: Int, rarities: [Double], average: Double) throws(StoreError) -> Double? {
        let (texts, found) = try fullTextRow(row)
        defer { texts.reset() }
        guard found else { return nil }
        try scan(texts, into: table)
        let f = table.frequencies
        guard f.prefix(units).allSatisfy({ $0 > 0 }) else { return nil }
        if table.names.count > units, f[units...].allSatisfy({ $0 > 0 }) { return nil }
        var sum = 0.0
        for n in 0..<units { sum += rarities[n] * Ranking.impact(f[n], length: Double(table.length), average: average) }
        return sum
    }

    /// Splits the full-text row `texts` has stepped to, counting into `table`.
    private func scan(_ texts: SQLiteStatement, into table: RankKeyTable) throws(StoreError) {
        try scan(into: table) { column, split in _ = texts.withText(Int32(column)) { split($0, $1) } }
    }

    /// Splits a row's full-text columns, each handed to `split` by `column` (nothing for an
    /// empty one), counting into `table`.
    private func scan(into table: RankKeyTable,
                      _ column: (Int, (UnsafePointer<UInt8>, Int) -> Void) -> Void) throws(StoreError) {
        let tokenizer = try fullTextTokenizer()
        table.startRow()
        let context = Unmanaged.passUnretained(table).toOpaque()
        for n in AttributeSchema.searched.indices {
            table.weight = n < Ranking.weights.count ? Ranking.weights[n] : 0
            column(n) { text, count in tokenizer.scan(text, count: count, context: context, RankKeyTable.token) }
        }
    }

    // MARK: Making

    /// Reads a page in a snapshot of its own, making the rank lists it wants first: a search of
    /// common words whose lists are missing would otherwise score every match, and then read
    /// them all again to make the lists. So its page is set aside (`ranked`), the lists are
    /// made in their own short write transaction (`makeWantedRankLists`), and the page is read
    /// again, from them — or in full, when they could not be made (a writer holds the index, or it
    /// is read-only). Inside a caller's transaction the page is read in full and the lists are
    /// made after it.
    func readingRankLists(_ page: () throws(StoreError) -> QueryPage) throws(StoreError) -> QueryPage {
        defer {
            queryState.makeFirst = false
            queryState.pageWaits = false
            makeWantedRankLists()
            keepFrequencies()
        }
        queryState.makeFirst = !connection.isInTransaction
        let first = try read(page)
        guard queryState.pageWaits else { return first }
        queryState.pageWaits = false
        queryState.makeFirst = false
        makeWantedRankLists()
        return try read(page)
    }

    /// Makes the rank lists this connection's searches wanted, and pins the average length again
    /// if it moved: in one short write transaction that does not wait for a writer (busy, or an
    /// index opened read-only: the searches go on reading in full).
    func makeWantedRankLists() {
        let upkeep = queryState.upkeep
        guard !upkeep.wanted.isEmpty || upkeep.repin, !connection.isInTransaction else { return }
        let wanted = upkeep.wanted
        upkeep.wanted.removeAll()
        upkeep.repin = false
        connection.setBusyTimeout(milliseconds: 0)
        defer { connection.setBusyTimeout(milliseconds: busyTimeout) }
        try? within("BEGIN IMMEDIATE") { () throws(StoreError) in
            let average = try pinnedAverage()
            for (key, phrase) in wanted.sorted(by: { $0.key < $1.key }) { try makeRankList(key, phrase: phrase, average: average) }
        }
        upkeep.stamp = -1
    }

    /// The pinned average length, pinned now if there is none or it moved by more than
    /// `RankLists.drift` (dropping every list, made for the old one).
    private func pinnedAverage() throws(StoreError) -> Double {
        let live = try fullTextTotals().average
        if let pinned = try storedAverage(), abs(live / pinned - 1) <= RankLists.drift { return pinned }
        try connection.execute("DELETE FROM rank_entries; DELETE FROM rank_lists; DELETE FROM rank_statistics;")
        let insert = try statement("INSERT INTO rank_statistics(average) VALUES(?1)")
        insert.bind(1, live)
        try insert.run()
        return live
    }

    /// Makes one list from a full read of its word's matches (or of both words' together),
    /// unless it exists (a list together: made for the rarities of now).
    private func makeRankList(_ key: String, phrase: String, average: Double) throws(StoreError) {
        // A list together is ordered by its words' rarities as they are now.
        var rarities: [Double]? = nil
        if key.hasPrefix("&") {
            let rows = Double(try fullTextTotals().rows)
            var now: [Double] = []
            for part in RankLists.parts(key) {
                now.append(Ranking.rarity(rows: rows, matching: Double(try documentFrequency(phrase: RankLists.phrase(part)))))
            }
            rarities = now
        }
        let exists = try statement("SELECT rarities FROM rank_lists WHERE key = ?1")
        exists.bind(1, key)
        let found = try exists.step() ? Ranking.doubles(exists.blob(0)) : nil
        exists.reset()
        if let found {
            guard let rarities, found != rarities else { return }
            try dropRankList(key)
        }
        if rarities != nil {
            // At most `maximumTogether` lists together: one more drops others (the first by key).
            let others = try statement("SELECT key FROM rank_lists WHERE key LIKE '&%' ORDER BY key")
            var keys: [String] = []
            while try others.step() { keys.append(others.text(0) ?? "") }
            others.reset()
            for other in keys.prefix(max(0, keys.count - RankLists.maximumTogether + 1)) { try dropRankList(other) }
        }
        let insert = try statement("INSERT OR IGNORE INTO rank_entries(list, impact, hint, bundle, uid, item) VALUES(?1, ?2, ?3, ?4, ?5, ?6)")
        var last: RankEntry? = nil
        var count = 0
        for entry in try bestEntries(phrase: phrase, average: average, rarities: rarities) {
            try insertEntry(insert, key, entry)
            last = entry
            count += 1
        }
        let list = try statement("INSERT INTO rank_lists(key, last_impact, last_hint, last_bundle, last_uid, last_item, rarities) VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7)")
        list.bind(1, key)
        if let rarities { list.bind(7, blob: Ranking.blob(rarities)) } else { list.bind(7, nil as Double?) }
        // Fewer than a list's size: the list holds every item of its word (no boundary).
        let boundary = count < queryState.upkeep.size ? nil : last
        list.bind(2, boundary?.impact)
        list.bind(3, boundary?.hint)
        list.bind(4, boundary?.bundle)
        list.bind(5, boundary?.uid)
        list.bind(6, boundary?.item)
        try list.run()
    }

    /// The best `upkeep.size` matches of `phrase` in list order: impact (the sum of the
    /// `rarities` times each word's impact, for a list together), then hint, bundle, identifier
    /// and row. Every match's impact is read first, without its item; only the matches that can
    /// still make the list — at least the list-size-th best impact met so far — are kept, and
    /// only those are looked up for their hint, bundle and identifier, in row order. (A word that
    /// 125,000 items hold had each of them looked up in the items table.) When more matches tie
    /// at the boundary than `tiesKept` lists hold, the items are read beside every match and
    /// ordered by SQLite's sorter instead, which keeps only the list's size.
    func bestEntries(phrase: String, average: Double, rarities: [Double]?) throws(StoreError) -> [RankEntry] {
        let size = queryState.upkeep.size
        let impacts = try statement("SELECT rowid, reindex_impact(items_fts, ?2, ?3) FROM items_fts WHERE items_fts MATCH ?1")
        impacts.bind(1, phrase)
        impacts.bind(2, average)
        if let rarities { impacts.bind(3, blob: Ranking.blob(rarities)) } else { impacts.bind(3, nil as Double?) }
        var kept: [(row: Int64, impact: Double)] = []
        var threshold = -Double.infinity
        /// Raises the threshold to the list-size-th best impact kept, and drops what is below it.
        func narrow() {
            guard kept.count > size else { return }
            var values = kept.map(\.impact)
            values.sort(by: >)
            threshold = values[size - 1]
            kept.removeAll { $0.impact < threshold }
        }
        var tooManyTies = false
        // Narrowed each time what is kept has doubled since (ties at the threshold stay).
        var next = 2 * size
        while try impacts.step() {
            let impact = impacts.double(1)
            guard impact >= threshold else { continue }
            kept.append((impacts.int64(0), impact))
            if kept.count >= next {
                narrow()
                if kept.count > Self.tiesKept * size {
                    tooManyTies = true
                    break
                }
                next = max(2 * size, 2 * kept.count)
            }
        }
        impacts.reset()
        if tooManyTies { return try bestEntriesSorted(phrase: phrase, average: average, rarities: rarities) }
        narrow()
        kept.sort { $0.row < $1.row }
        // Looked up in one statement, the rows sent as one JSON array (each row read by its id,
        // without a statement run per row; `j.key` is its place in `kept`). At most twice the
        // list's size of entries are held (the best `size` kept each time that fills), however
        // many tie; once `size` are held, a row that cannot come before the last of them is
        // passed over by its impact, hint and bytes, without making an entry of it.
        var entries: [RankEntry] = []
        entries.reserveCapacity(min(kept.count, 2 * size))
        var worst: RankEntry? = nil
        func keepBest() {
            entries.sort { $0.precedes($1) }
            if entries.count > size { entries.removeLast(entries.count - size) }
            if entries.count == size { worst = entries.last }
        }
        var rows = "["
        rows.reserveCapacity(kept.count * 8 + 2)
        for (n, entry) in kept.enumerated() {
            if n > 0 { rows += "," }
            rows += String(entry.row)
        }
        rows += "]"
        let item = try statement("SELECT j.key, IFNULL(i.ranking_hint, 0), i.bundle, i.uid FROM json_each(?1) AS j JOIN items i ON i.id = j.value")
        defer { item.reset() }
        item.bind(1, rows)
        while try item.step() {
            let place = item.int(0)
            guard kept.indices.contains(place) else { continue }
            let (row, impact) = kept[place]
            let hint = item.double(1)
            if let worst, !Self.mayPrecede(item, row: row, impact: impact, hint: hint, worst) { continue }
            entries.append(RankEntry(impact: impact, hint: hint, bundle: item.text(2) ?? "", uid: item.text(3) ?? "", item: row))
            if entries.count >= 2 * size { keepBest() }
        }
        keepBest()
        return entries
    }

    /// Whether the item row `item` has just read (bundle and identifier as columns 2 and 3), of
    /// `impact` and `hint`, may come before `worst`: false only when it certainly does not.
    private static func mayPrecede(_ item: SQLiteStatement, row: Int64, impact: Double, hint: Double, _ worst: RankEntry) -> Bool {
        if impact != worst.impact { return impact > worst.impact }
        if hint != worst.hint { return hint > worst.hint }
        // The bytes, as `TieOrder` compares them (bundle, then identifier, then the row); text
        // that is not ASCII is left to it (it takes canonically equal text for the same).
        for (column, text) in [(Int32(2), worst.bundle), (Int32(3), worst.uid)] {
            let order = item.withText(column) { bytes, count -> Int? in
                var text = text
                return text.withUTF8 { other -> Int? in
                    let ascii = !UnsafeBufferPointer(start: bytes, count: count).contains { $0 >= 0x80 } && !other.contains { $0 >= 0x80 }
                    guard ascii else { return nil }
                    let common = min(count, other.count)
                    let compared = common == 0 ? 0 : memcmp(bytes, other.baseAddress!, common)
                    return compared != 0 ? Int(compared) : count - other.count
                }
            } ?? (text.isEmpty ? 0 : -1)
            guard let order else { return true }
            if order != 0 { return order < 0 }
        }
        return row < worst.item
    }

    /// Lists of matches tied at their boundary beyond this many list sizes are ordered by SQLite
    /// (`bestEntries`). Below it, the tied matches are kept as row ids and impacts (16 bytes
    /// each: 4 MB for a list of 4,000) and looked up once: above it, SQLite's sorter reads every
    /// match again.
    static let tiesKept = 64

    /// `bestEntries` by one statement: every match joined to its item, through SQLite's sorter.
    func bestEntriesSorted(phrase: String, average: Double, rarities: [Double]?) throws(StoreError) -> [RankEntry] {
        let select = try statement("""
            SELECT items_fts.rowid, reindex_impact(items_fts, ?2, ?4) AS impact, IFNULL(i.ranking_hint, 0) AS hint, i.bundle, i.uid
            FROM items_fts JOIN items i ON i.id = items_fts.rowid WHERE items_fts MATCH ?1
            ORDER BY impact DESC, hint DESC, i.bundle, i.uid, items_fts.rowid LIMIT ?3
            """)
        select.bind(1, phrase)
        select.bind(2, average)
        select.bind(3, queryState.upkeep.size)
        if let rarities { select.bind(4, blob: Ranking.blob(rarities)) } else { select.bind(4, nil as Double?) }
        defer { select.reset() }
        var entries: [RankEntry] = []
        while try select.step() {
            entries.append(RankEntry(impact: select.double(1), hint: select.double(2), bundle: select.text(3) ?? "", uid: select.text(4) ?? "", item: select.int64(0)))
        }
        return entries
    }

    /// Drops one list and its entries.
    private func dropRankList(_ key: String) throws(StoreError) {
        for sql in ["DELETE FROM rank_entries WHERE list = ?1", "DELETE FROM rank_lists WHERE key = ?1"] {
            let drop = try statement(sql)
            drop.bind(1, key)
            try drop.run()
        }
    }

    private func insertEntry(_ insert: SQLiteStatement, _ key: String, _ entry: RankEntry) throws(StoreError) {
        insert.reset()
        insert.bind(1, key)
        insert.bind(2, entry.impact)
        insert.bind(3, entry.hint)
        insert.bind(4, entry.bundle)
        insert.bind(5, entry.uid)
        insert.bind(6, entry.item)
        try insert.run()
    }

    // MARK: Keeping them

    /// The rank lists as the current write transaction sees them.
    private func rankUpkeep() throws(StoreError) -> RankUpkeep {
        let upkeep = queryState.upkeep
        guard !upkeep.fresh else { return upkeep }
        let version = try connection.scalar("PRAGMA data_version") ?? 0
        if version != upkeep.stamp || upkeep.stamp < 0 {
            upkeep.lists.removeAll()
            var rarities: [String: [Double]] = [:]
            let lists = try statement("SELECT key, last_impact, last_hint, last_bundle, last_uid, last_item, rarities FROM rank_lists")
            while try lists.step() {
                let key = lists.text(0) ?? ""
                upkeep.lists[key] = lists.isNull(1) ? .some(nil) : RankEntry(
                    impact: lists.double(1), hint: lists.double(2), bundle: lists.text(3) ?? "", uid: lists.text(4) ?? "", item: lists.int64(5))
                if key.hasPrefix("&") { rarities[key] = Ranking.doubles(lists.blob(6)) }
            }
            lists.reset()
            // The words of every list, a list together's included (which may have no list of their own).
            var words: [String] = []
            for key in upkeep.lists.keys.sorted() {
                for part in RankLists.parts(key) where !words.contains(part) { words.append(part) }
            }
            upkeep.table = RankKeyTable(keys: words)
            upkeep.together = rarities.sorted { $0.key < $1.key }.compactMap { key, rarities in
                let parts = RankLists.parts(key).compactMap { words.firstIndex(of: $0) }
                return parts.count == rarities.count ? (key, parts, rarities) : nil
            }
            if !upkeep.lists.isEmpty { upkeep.average = try storedAverage() ?? 1 }
            upkeep.stamp = version
        }
        upkeep.fresh = true
        return upkeep
    }

    /// Keeps the rank lists' rule for a full-text row just written (inserted, or written again):
    /// its entry goes into each list of a word it holds whose boundary it precedes. The row is
    /// split by the full-text index's own tokenizer and its tokens are matched to the lists' words
    /// as bytes (`RankKeyTable`), without making strings of them.
    func noteFullTextRow(_ row: Int64) throws(StoreError) {
        let upkeep = try rankUpkeep()
        guard !upkeep.lists.isEmpty else { return }
        let (texts, found) = try fullTextRow(row)
        defer { texts.reset() }
        guard found else { return }
        let table = upkeep.table
        try scan(texts, into: table)
        guard !table.touched.isEmpty else { return }
        let item = try statement("SELECT IFNULL(ranking_hint, 0), bundle, uid FROM items WHERE id = ?1")
        item.bind(1, row)
        defer { item.reset() }
        guard try item.step() else { return }
        try addEntries(upkeep, row: row, hint: item.double(0), bundle: item.text(1) ?? "", uid: item.text(2) ?? "")
    }

    /// `noteFullTextRow` for the row just written from `item` in `bundle`: its texts, hint and
    /// identifier are in hand, so nothing is read back (the writer's case).
    func noteFullTextRow(_ row: Int64, item: ValidatedItem, bundle: String) throws(StoreError) {
        let upkeep = try rankUpkeep()
        guard !upkeep.lists.isEmpty else { return }
        let table = upkeep.table
        try scan(into: table) { column, split in
            item.withField(ValidatedItem.Field.searched[column]) { raw in
                guard let raw, let base = raw.baseAddress, raw.count > 0 else { return }
                split(base.assumingMemoryBound(to: UInt8.self), raw.count)
            }
        }
        guard !table.touched.isEmpty else { return }
        try addEntries(upkeep, row: row, hint: item.filters.rankingHint ?? 0, bundle: bundle, uid: item.text(.uniqueIdentifier) ?? "")
    }

    /// Adds the row to each list its scanned words touched, where its place precedes the
    /// list's boundary.
    private func addEntries(_ upkeep: RankUpkeep, row: Int64, hint: Double, bundle: String, uid: String) throws(StoreError) {
        let table = upkeep.table
        let insert = try statement("INSERT OR IGNORE INTO rank_entries(list, impact, hint, bundle, uid, item) VALUES(?1, ?2, ?3, ?4, ?5, ?6)")
        for index in table.touched {
            let key = table.names[index]
            // (A word of a list together may have no list of its own.)
            guard let boundary = upkeep.lists[key] else { continue }
            let entry = RankEntry(impact: Ranking.impact(table.frequencies[index], length: Double(table.length), average: upkeep.average),
                                  hint: hint, bundle: bundle, uid: uid, item: row)
            if let boundary, !entry.precedes(boundary) { continue }
            try insertEntry(insert, key, entry)
        }
        for together in upkeep.together where together.parts.allSatisfy({ table.frequencies[$0] > 0 }) {
            // Summed as `reindex_impact` sums it when the list is made, word by word in order.
            var score = 0.0
            for (n, part) in together.parts.enumerated() {
                score += together.rarities[n] * Ranking.impact(table.frequencies[part], length: Double(table.length), average: upkeep.average)
            }
            let entry = RankEntry(impact: score, hint: hint, bundle: bundle, uid: uid, item: row)
            if case .some(.some(let boundary)) = upkeep.lists[together.key], !entry.precedes(boundary) { continue }
            try insertEntry(insert, together.key, entry)
        }
    }

    /// Drops the list entries of the items matching `condition` (as `deleteItems` takes it),
    /// before they go.
    func forgetRankedItems(where condition: String, _ bind: (SQLiteStatement) -> Void) throws(StoreError) {
        guard !(try rankUpkeep().lists.isEmpty) else { return }
        // By the items' ids (`rank_entries_item`): a sweep deletes a generation in chunks, and
        // scanning every entry per chunk would cost the lists' size each time.
        let forget = try statement("DELETE FROM rank_entries WHERE item IN (SELECT id FROM items WHERE \(condition))")
        bind(forget)
        try forget.run()
    }

    /// Drops the list entries of one item, about to be written again.
    func forgetRankedItem(_ row: Int64) throws(StoreError) {
        guard !(try rankUpkeep().lists.isEmpty) else { return }
        let forget = try statement("DELETE FROM rank_entries WHERE item = ?1")
        forget.bind(1, row)
        try forget.run()
    }
}

extension IndexStore {
    /// The kept document frequencies (`unit_frequencies`) that are not what a count of their
    /// unit gives, while they are kept for the full-text index as it is.
    private func keptFrequencyProblems() throws(StoreError) -> [String] {
        guard let structure = try keptStructure(), structure == (try fullTextStructure()) else { return [] }
        let rows = try statement("SELECT phrase, n FROM unit_frequencies ORDER BY phrase")
        var all: [(phrase: String, n: Int)] = []
        while try rows.step() { all.append((rows.text(0) ?? "", rows.int(1))) }
        rows.reset()
        var wrong: [String] = []
        for (phrase, n) in all {
            // (A phrase FTS5 cannot read counts as none: it was never counted so.)
            let counted = (try? fullTextCount(phrase)) ?? 0
            if counted != n { wrong.append("\(phrase) (kept \(n), counted \(counted))") }
        }
        guard !wrong.isEmpty else { return [] }
        return ["\(wrong.count) kept document frequenc\(wrong.count == 1 ? "y is" : "ies are") wrong: " + wrong.prefix(5).joined(separator: ", ")]
    }

    /// What is wrong with the rank lists, from a full read of each list's word: an item that
    /// precedes the boundary but is not in the list, an entry whose impact is not the item's, or
    /// an entry of an item that no longer exists. Part of `check` (not `--quick`).
    func rankListProblems() throws(StoreError) -> [String] {
        try read { () throws(StoreError) -> [String] in
            try prepareQueries()
            var problems: [String] = []
            let orphans = try connection.scalar("SELECT count(*) FROM rank_entries e WHERE NOT EXISTS (SELECT 1 FROM items i WHERE i.id = e.item)") ?? 0
            if orphans > 0 { problems.append("\(orphans) rank list entr\(orphans == 1 ? "y belongs" : "ies belong") to no item") }
            problems += try keptFrequencyProblems()
            let average = try storedAverage()
            let lists = try statement("SELECT key, last_impact, last_hint, last_bundle, last_uid, last_item, rarities FROM rank_lists ORDER BY key")
            var all: [(key: String, boundary: RankEntry?, rarities: [UInt8])] = []
            while try lists.step() {
                all.append((lists.text(0) ?? "", lists.isNull(1) ? nil : RankEntry(
                    impact: lists.double(1), hint: lists.double(2), bundle: lists.text(3) ?? "", uid: lists.text(4) ?? "", item: lists.int64(5)),
                    lists.blob(6)))
            }
            lists.reset()
            guard !all.isEmpty else { return problems }
            guard let average else { return problems + ["rank lists exist without the average length they were made for"] }
            let entries = try statement("SELECT item, impact FROM rank_entries WHERE list = ?1")
            let matches = try statement("""
                SELECT items_fts.rowid, reindex_impact(items_fts, ?2, ?3), IFNULL(i.ranking_hint, 0), i.bundle, i.uid
                FROM items_fts JOIN items i ON i.id = items_fts.rowid WHERE items_fts MATCH ?1
                """)
            for list in all {
                entries.reset()
                entries.bind(1, list.key)
                var impacts: [Int64: Double] = [:]
                while try entries.step() { impacts[entries.int64(0)] = entries.double(1) }
                entries.reset()
                matches.reset()
                matches.bind(1, RankLists.phrase(list.key))
                matches.bind(2, average)
                // (A list together's entries are scored with the rarities it was made for.)
                if list.rarities.isEmpty { matches.bind(3, nil as Double?) } else { matches.bind(3, blob: list.rarities) }
                var missing = 0, wrong = 0
                while try matches.step() {
                    let entry = RankEntry(impact: matches.double(1), hint: matches.double(2), bundle: matches.text(3) ?? "", uid: matches.text(4) ?? "", item: matches.int64(0))
                    if let kept = impacts[entry.item] {
                        if kept != entry.impact { wrong += 1 }
                    } else if list.boundary.map({ entry.precedes($0) }) ?? true {
                        missing += 1
                    }
                }
                matches.reset()
                if missing > 0 { problems.append("the rank list of \(RankLists.shown(list.key)) misses \(missing) item(s) it should hold") }
                if wrong > 0 { problems.append("the rank list of \(RankLists.shown(list.key)) gives \(wrong) item(s) an impact they do not have") }
            }
            return problems
        }
    }
}
