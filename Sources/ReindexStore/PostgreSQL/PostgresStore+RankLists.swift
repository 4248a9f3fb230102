import ReindexProtocol

// Rank lists on PostgreSQL: a page of common words (the first, or one after a cursor) without
// scoring every item that holds them.
//
// A page is ordered by pass, score, rankingHint, bundle and identifier (PostgresStore+Queries);
// a word that 150,000 of a million items hold had all of them scored to find the best 20. So for
// a one-word query whose word (or prefix) more than `commonWords` items hold, the index keeps a
// *rank list* per pass: the best `size` items of the pass in that order, with their places,
// made in one snapshot. Every item has `tx`, the transaction that last wrote its text,
// attributes or expiration (schema migrations 7 and 9), so the items that may have changed since a list was made are
// exactly those whose `tx` is at or past the list's *horizon*, the oldest transaction still
// running when its snapshot was taken. Every other item is as it was, so **every unchanged item
// that comes before a list's k-th entry is among its first k entries.**
//
// A page is then read from the candidates: the first k entries of each pass's list and every
// changed item (of any generation; the live ones are kept), scored and ordered by the same
// statement as a full read. It is the page of a full read when each of its rows (the `limit + 1`
// it reads) comes no later than the k-th entry of its pass's list — or when the lists hold every
// item of their passes — and a row of the second pass comes only after a first pass whose items
// are all among the candidates. A later page reads only rows after its cursor and is proven the
// same way. One word's list is *walked* (`walk`): its unchanged entries in list order, each
// item tested against the page's filters as it is met, until `limit + 1` are kept — so the bound
// is the list's last entry, and a filter costs the entries it skips, in one statement. A query
// of several common words reads each word's list of the
// first pass: an item in none of the lists' first k entries scores, for each word, no more than
// its k-th entry, and on that score comes after it in the tie order, so a row that scores more
// than the entries' sum, or as much and no later than the last of them in the tie order, is
// proven (`provesSum`; the tie order is one order for every word). Otherwise k grows (to 512,
// then the list's end). Then, when the words'
// best items seldom hold the others, the page is among the items holding them all: the list of
// the words *together* (`rankListSpecs`, made like one word's, first when missing) is walked as
// one word's list is, and tried first by later searches of those words. Only then is the page
// read in full.
//
// The score is BM25F (PostgresStore+Relevance.swift): each word's rarity times its impact. A
// word's list holds impacts, which do not depend on the rarities that every write moves (the
// average length they do depend on is pinned): its order stands, and an entry's place in the
// page is its impact times the word's rarity now. A list together holds the page's scores, for
// the rarities it keeps (`rank_lists.rarities`); once they moved, its entries are read to a depth
// and bound what lies past them scaled by the most any rarity grew (`scale`), or it is made
// again. Lists hold the live generations' unexpired items; an item that expires later stays
// (expiry is one of the page's filters), and the transaction that makes a reindexAll's
// generation live drops every list (`dropRankLists`), as does a list with more than
// `changedRows` changed items since its horizon: the next search that wants one makes it again.
// That search counts its words first; when each is common it makes the lists before it reads its
// page (`PostgresStore.query`), a word's second pass only once its first is whole, in a short
// transaction of its own, and then reads the page from them in a new snapshot. When a list
// cannot be made (a role that may only read, another session making it), it reads every match.
// Before all that, one word without lists is read from a shorter prefix's lists when they prove
// its page (`rankedFromParentLists`), and two words from the list together of the first and a
// shorter prefix of the second (`rankedFromParentTogether`): a search field's every key is a new
// prefix. Two words without a list together, one of them without a list of its own, want only
// their list together: the page is among the items holding both.
extension PostgresStore {
    /// A row's place in relevance order.
    struct RankPlace: RelevancePlace {
        var pass: Int
        var score: Double
        var hint: Double
        var bundle: String
        var uid: String

        /// Whether `self` comes before `other`, or is it.
        func isAtOrBefore(_ other: RankPlace) -> Bool { order(other) ?? true }

        /// The same place in another pass.
        func at(pass: Int) -> RankPlace { RankPlace(pass: pass, score: score, hint: hint, bundle: bundle, uid: uid) }
    }

    /// The rank lists of a query's words: each word (or prefix) in every searched attribute, or
    /// each in one attribute (`title == "word"cdw`: the attribute's name in every key, after
    /// `@`, which no token holds), at most `maximumWords` of them. One word has a list per pass
    /// (as typed; only as a prefix); several words have one each, of the pass that has every
    /// word as typed, and a list `together` of them all. Nil for any other query.
    func rankListSpecs(_ q: PreparedPostgresQuery) -> (words: [PostgresRankListSpec], together: PostgresRankListSpec?)? {
        guard rankLists.enabled, (1...PostgresRankLists.maximumWords).contains(q.units.count) else { return nil }
        let columns = q.units[0].columns
        var tokens: [String] = []
        for unit in q.units {
            guard unit.columns == columns, let token = Self.listToken(unit) else { return nil }
            tokens.append(token)
        }
        var attribute = ""
        if columns != QueryPlan.allColumns {
            guard columns.nonzeroBitCount == 1, AttributeSchema.searched.indices.contains(columns.trailingZeroBitCount) else { return nil }
            attribute = "@" + AttributeSchema.searched[columns.trailingZeroBitCount]
        }
        // The lists of one word differ with what scores and matches it: the declarations in
        // effect (custom attributes searched by default). Not the folding the server offers
        // (`unaccent`, ICU), which a unit's match never reads since the documents are the host's
        // (schema migration 11): a phrase typed bare (`purple-otter`) and asked as a `cdw`
        // comparison, which folds, share their lists.
        let context = q.declared.sorted { $0.key < $1.key }.map { key, d in
            "\(key)=\(d.kind.rawValue),\(d.searchable),\(d.searchableByDefault),\(d.multiValued)"
        }.joined(separator: ";")
        let suffix = attribute + "#" + String(RankKeyTable.hash(Array(context.utf8)), radix: 36)
        var specs: [PostgresRankListSpec] = []
        for (n, unit) in q.units.enumerated() {
            func spec(_ kind: PostgresRankListSpec.Kind, _ pass: Int) -> PostgresRankListSpec {
                PostgresRankListSpec(key: kind.rawValue + tokens[n] + suffix, pass: pass, query: q, unit: unit, kind: kind)
            }
            if unit.starred {
                specs.append(spec(.starred, 0))
            } else {
                specs.append(spec(.whole, 0))
                if unit.prefixable && q.units.count == 1 { specs.append(spec(.prefixOnly, 1)) }
            }
        }
        // Several words together: the items holding every word as the first pass has them, in
        // the page's order. The words in any order share it (the first pass, and the sum, do
        // not depend on it).
        guard q.units.count > 1 else { return (specs, nil) }
        return (specs, Self.together(q.units, tokens: tokens, suffix: suffix, pass: 0, q))
    }

    /// A unit's word as its lists' keys hold it: the word, or a phrase's words joined by
    /// `phraseJoiner` (a phrase whose last word is also a prefix, `purple-ott`, has the lists of
    /// one word that is: the phrase as typed, and only as a prefix).
    static func listToken(_ unit: RankingUnit) -> String? {
        let words = PostgresQueryCompiler.tokens(unit.text)
        guard !words.isEmpty else { return nil }
        return words.joined(separator: phraseJoiner)
    }

    /// Between a phrase's words in its lists' keys (U+0003: no token holds it).
    static let phraseJoiner = "\u{3}"

    /// The list of `units` together (its key: their tokens sorted, a `*` word marked).
    private static func together(_ units: [RankingUnit], tokens: [String], suffix: String, pass: Int, _ q: PreparedPostgresQuery) -> PostgresRankListSpec {
        let words = units.indices.map { tokens[$0] + (units[$0].starred ? "*" : "") }.sorted()
        return PostgresRankListSpec(key: PostgresRankListSpec.Kind.together.rawValue + words.joined(separator: " ") + suffix,
                                    pass: pass, query: q, unit: units[0], kind: .together, together: units, tokens: tokens)
    }

    /// For several words the last of which is also a prefix (`support le`, typed on the way to
    /// `support lead`): the list of the words together with that one as a prefix — the list of
    /// `support le*`, which holds the second pass's items in its order (their score is the one
    /// they have there) beside the first pass's. Nil for any other query.
    func prefixedSpec(_ q: PreparedPostgresQuery, _ together: PostgresRankListSpec) -> PostgresRankListSpec? {
        guard let last = q.prefixable, q.units.count > 1 else { return nil }
        var units = q.units
        units[last].starred = true
        let tokens = units.map { Self.listToken($0) ?? "" }
        guard let suffix = Self.keySuffix(together.key) else { return nil }
        return Self.together(units, tokens: tokens, suffix: suffix, pass: 1, q)
    }

    /// What follows a list key's words: the attribute they are of (`@title`), if any, and the
    /// hash of the context (`#…`). The lists a key is made from share it.
    static func keySuffix(_ key: String) -> String? {
        key.firstIndex { $0 == "@" || $0 == "#" }.map { String(key[$0...]) }
    }

    /// The page read through the query's rank lists, or nil when that is not the way: words
    /// without lists, a list missing or made too long ago (then wanted), or lists that cannot
    /// prove the page. A later page (after `cursor`) is proven as a first one: each row it reads
    /// after the cursor comes no later than its pass's bound, so every unchanged item between
    /// the cursor and that row is among the candidates.
    func rankedFromLists(_ q: PreparedPostgresQuery, limit: Int, cursor: Cursor?) throws -> RankedRead? {
        rankLists.togetherMissing = nil
        guard let (allSpecs, together) = rankListSpecs(q) else { return nil }
        // Several words: their list together first, when there is one. It is walked as one
        // word's list is.
        var togetherIsMissing = false
        var togetherState: (horizon: String, changed: Int, longest: Int, bounds: [String: RankPlace?])? = nil
        if let together {
            if let state = try rankListState([together], depth: Self.wholeList) {
                togetherState = (state.horizon, state.changed, state.longest, state.bounds)
                if state.changed > rankLists.changedRows {
                    rankLists.wanted[together.key] = together
                } else if state.moved.contains(together.key) {
                    // Made for other rarities (items came and went since), its order is no longer
                    // quite the page's, but its entries still bound the items past them.
                    // Where it cannot prove the page (the rarities moved more than the scores of
                    // its first entries lie apart), it is made again for the rarities of now,
                    // before the page is read.
                    if let read = try rankedFromMovedTogether(q, together, limit: limit, cursor: cursor) { return read }
                    rankLists.togetherMissing = together
                    return nil
                } else {
                    let read = try rankedRows(q, limit: limit, cursor: cursor) { compiler in
                        try self.walk(together, q, horizon: state.horizon, limit: limit, cursor: cursor, &compiler)
                            + Self.changedItems(since: state.horizon, state.changed, &compiler)
                    }
                    if Self.provesSum(read.places, bounds: [state.bounds[together.key] ?? nil], secondPass: q.prefixable != nil, limit: limit) {
                        rankLists.answered += 1
                        return read
                    }
                }
            } else {
                togetherIsMissing = true
            }
        }
        if togetherIsMissing, let together, let read = try rankedFromParentTogether(q, together, limit: limit, cursor: cursor) { return read }
        if let together, let first = togetherState, let prefixed = prefixedSpec(q, together) {
            switch try rankedFromPrefixedList(q, allSpecs, prefixed, pass0: together, first: first, limit: limit, cursor: cursor) {
            case .read(let read): return read
            case .missing:
                rankLists.togetherMissing = prefixed
                return nil
            case .notThisWay: break
            }
        }
        // One word's list is walked (`walk`): its bound is the list's last entry, read at once.
        let walks = q.units.count == 1
        // A word whose first pass is not whole in its list has no list of its second
        // (`makeRankLists`), which no page of it would read: its first pass's list alone.
        var specs = allSpecs
        if walks, specs.count == 2, try rankListState(specs, depth: Self.wholeList) == nil,
           let first = try rankListState([specs[0]], depth: Self.wholeList), case .some(.some) = first.bounds[specs[0].key] {
            specs = [specs[0]]
        }
        var depths = walks ? [Self.wholeList] : [max(4 * (limit + 1), 64), 512]
        var n = 0
        while true {
            let depth = depths[n]
            guard let state = try rankListState(specs, depth: depth) else {
                if walks, n == 0, let read = try rankedFromParentLists(q, specs, limit: limit, cursor: cursor) { return read }
                // Several words without their list together, a word without a list of its own
                // (`sales an`, typed): the page is among the items holding them all, so only
                // their list together is wanted, made from a read of those. A word's own list
                // waits for a search that needs it.
                if togetherIsMissing, try everyWordIsCommon(q, specs) {
                    rankLists.togetherMissing = together
                    return nil
                }
                rankLists.missing = true
                return nil
            }
            if state.changed > rankLists.changedRows {
                for spec in specs { rankLists.wanted[spec.key] = spec }
                return nil
            }
            if n == 0 && !walks { depths = depths.filter { $0 < state.longest } + [state.longest] }
            // A row of a later pass is proven only when every earlier pass's list was read whole,
            // so until then that pass's list is not read (half the lookups of a common word).
            let open = specs.filter { spec in
                !specs.contains { $0.pass < spec.pass && (state.bounds[$0.key] ?? nil) != nil }
            }
            let read = try rankedRows(q, limit: limit, cursor: cursor) { compiler in
                let entries = try open.map { spec in
                    walks ? try self.walk(spec, q, horizon: state.horizon, limit: limit, cursor: cursor, &compiler)
                        : "SELECT item FROM rank_entries WHERE list = \(compiler.bind(spec.key, "text")) AND n <= \(compiler.bind(String(depth), "integer"))"
                }
                return entries.joined(separator: " UNION ") + Self.changedItems(since: state.horizon, state.changed, &compiler)
            }
            let proven = q.units.count == 1
                ? Self.proves(read.places, bounds: Dictionary(uniqueKeysWithValues: specs.map { ($0.pass, state.bounds[$0.key] ?? nil) }), limit: limit)
                : Self.provesSum(read.places, bounds: specs.map { state.bounds[$0.key] ?? nil },
                                 secondPass: q.prefixable != nil, limit: limit)
            if proven {
                rankLists.answered += 1
                return read
            }
            n += 1
            guard n < depths.count, depths[n] > depth else {
                // The words' own lists do not prove the page: the list of the words together will.
                if togetherIsMissing { rankLists.togetherMissing = together }
                return nil
            }
        }
    }

    /// One word without lists of its own, read from the lists of the longest shorter prefix of
    /// it that has them (`en` for `eng`, `engi`, … `engineer`), as a search field sends a new
    /// prefix at every key. Every token the word (or its prefix) matches, the shorter prefix
    /// matches too, so an item's score for the word is at most its score for the shorter prefix,
    /// in either pass. The shorter prefix's second-pass list (items matching it only as a prefix)
    /// then bounds every item it holds; the items holding the shorter prefix as a whole word are
    /// its first-pass list, used only when that list holds all of them (at most
    /// `parentFirstPass`), every one a candidate. The word's own first pass (the word as typed) must
    /// be wholly among the candidates before a row of its second is proven: when at most
    /// `parentFirstPass` items hold it (as while it is typed, when it is no word yet), they are
    /// candidates too; otherwise its rows are proven by the bound. Candidates are those, the
    /// second-pass list's first entries (deeper until the page is proven) and the items changed
    /// since; rows are proven as one word's are against the entry where the read stopped. Nil
    /// when there are no such lists or they do not prove the page: then the word's own are made.
    private func rankedFromParentLists(_ q: PreparedPostgresQuery, _ specs: [PostgresRankListSpec], limit: Int, cursor: Cursor?) throws -> RankedRead? {
        guard let own = specs.first, own.kind == .whole, let keys = Self.shorterPrefixKeys(own) else { return nil }
        // The longest shorter prefix with both lists, the first pass's whole: every shorter
        // prefix's lists looked up at once.
        let r = try query("SELECT key, length, complete FROM rank_lists WHERE key = ANY($1::text[])", [PGArray.literal(keys.flatMap { $0 })])
        var lists: [String: (length: Int, complete: Bool)] = [:]
        for row in 0..<r.rowCount { lists[r.text(row, 0) ?? ""] = (r.int(row, 1), r.bool(row, 2)) }
        guard let pair = keys.first(where: { pair in
            guard let whole = lists[pair[0]], lists[pair[1]] != nil else { return false }
            return whole.complete && whole.length <= Self.parentFirstPass
        }) else { return nil }
        var wholeSpec = own, prefixSpec = own
        (wholeSpec.key, wholeSpec.pass, prefixSpec.key, prefixSpec.kind) = (pair[0], 0, pair[1], .prefixOnly)
        prefixSpec.pass = 1
        let parent = (whole: wholeSpec, prefix: prefixSpec)
        // The word as typed: every item holding it a candidate, when few do.
        let typedWhole = try matchCount(own.unit, prefix: false, q, atMost: Self.parentFirstPass + 1) <= Self.parentFirstPass
        let read = try readDeepening(q, lists: [parent.whole, parent.prefix], bounding: parent.prefix, limit: limit, cursor: cursor) { depth, compiler in
            var candidates = "SELECT item FROM rank_entries WHERE list = \(compiler.bind(parent.whole.key, "text"))"
                + " UNION SELECT item FROM rank_entries WHERE list = \(compiler.bind(parent.prefix.key, "text")) AND n <= \(compiler.bind(String(depth), "integer"))"
            if typedWhole {
                candidates += " UNION (SELECT i.id FROM items i CROSS JOIN LATERAL (SELECT i.j) x(j) WHERE \(compiler.unitMatch(own.unit, prefix: false)))"
            }
            return candidates
        } proves: { places, bound in
            var bounds: [Int: RankPlace?] = [:]
            for spec in specs { bounds[spec.pass] = .some(bound.map { $0.at(pass: spec.pass) }) }
            if typedWhole { bounds[0] = .some(nil) }
            return Self.proves(places, bounds: bounds, limit: limit)
        }
        if read != nil { rankLists.fromParentLists += 1 }
        return read
    }

    /// A page read from a list that is not walked (`bounding`, a shorter prefix's or one made for
    /// other rarities; `lists` every list read), its first entries and then more until the page
    /// is proven: the `candidates` at a depth, with the items changed since, proven against the
    /// entry at that depth (`proves`). Nil when the list cannot prove it.
    private func readDeepening(_ q: PreparedPostgresQuery, lists: [PostgresRankListSpec], bounding: PostgresRankListSpec, limit: Int, cursor: Cursor?,
                               candidates: @escaping (Int, inout PostgresQueryCompiler) -> String,
                               proves: ([RankPlace], RankPlace?) -> Bool) throws -> RankedRead? {
        for depth in [max(4 * (limit + 1), 64), 512, Self.wholeList] {
            guard let state = try rankListState(lists, depth: depth), state.changed <= rankLists.changedRows,
                  let bound = state.bounds[bounding.key] else { return nil }
            let read = try rankedRows(q, limit: limit, cursor: cursor) { compiler in
                candidates(depth, &compiler) + Self.changedItems(since: state.horizon, state.changed, &compiler)
            }
            if proves(read.places, bound) {
                rankLists.answered += 1
                return read
            }
            if bound == nil { return nil }
        }
        return nil
    }

    /// Two words without a list together, the second typed one letter more than a pair with
    /// one (`sales ana` after `sales an`), read from that pair's list with the shorter prefix
    /// (`&an* sales`, `prefixedSpec`). Every token the longer prefix matches the shorter matches
    /// too, so an item's score for the query is at most its score in that list, and the list's
    /// entry at a depth bounds every item of the second pass not among the entries before it,
    /// as a shorter prefix's own list does for one word (`rankedFromParentLists`). The first
    /// pass (the second word as typed) must be wholly among the candidates: when at most
    /// `parentFirstPass` items hold that word, they are. Candidates are those, the list's first
    /// entries (deeper until the page is proven) and the items changed since. Nil when there is
    /// no such list or it does not prove the page: then the pair's own lists are made.
    private func rankedFromParentTogether(_ q: PreparedPostgresQuery, _ together: PostgresRankListSpec, limit: Int, cursor: Cursor?) throws -> RankedRead? {
        guard q.units.count == 2, let last = q.prefixable, last == 1, !q.units[last].starred,
              let suffix = Self.keySuffix(together.key) else { return nil }
        var units = q.units
        units[last].starred = true
        let tokens = units.map { Self.listToken($0) ?? "" }
        // The longest shorter prefix of the typed word whose list together with the other is
        // made: every shorter prefix's list looked up at once.
        let specs = Self.shorterPrefixes(of: tokens[last]).map { prefix in
            var shorter = tokens
            shorter[last] = prefix
            return Self.together(units, tokens: shorter, suffix: suffix, pass: 1, q)
        }
        let r = try query("SELECT key FROM rank_lists WHERE key = ANY($1::text[])", [PGArray.literal(specs.map(\.key))])
        let made = Set((0..<r.rowCount).map { r.text($0, 0) ?? "" })
        guard let parent = specs.first(where: { made.contains($0.key) }) else { return nil }
        let typed = q.units[last]
        guard try matchCount(typed, prefix: false, q, atMost: Self.parentFirstPass + 1) <= Self.parentFirstPass else { return nil }
        let read = try readDeepening(q, lists: [parent], bounding: parent, limit: limit, cursor: cursor) { depth, compiler in
            "SELECT item FROM rank_entries WHERE list = \(compiler.bind(parent.key, "text")) AND n <= \(compiler.bind(String(depth), "integer"))"
                + " UNION (SELECT i.id FROM items i CROSS JOIN LATERAL (SELECT i.j) x(j) WHERE \(compiler.unitMatch(typed, prefix: false)))"
        } proves: { places, bound in
            // (Every item of the first pass is a candidate: no bound.)
            Self.proves(places, bounds: [0: nil, 1: bound.map { $0.at(pass: 1) }], limit: limit)
        }
        if read != nil { rankLists.fromParentLists += 1 }
        return read
    }

    /// The page of several words from their list together made for other rarities than the
    /// query's: its entry at a depth bounds, scaled (`scale`), every unchanged item not among
    /// the entries before it, so the first entries to that depth and the items changed since are
    /// the candidates, deeper until the page is proven (`provesSum`). Nil when it is not.
    private func rankedFromMovedTogether(_ q: PreparedPostgresQuery, _ together: PostgresRankListSpec, limit: Int, cursor: Cursor?) throws -> RankedRead? {
        try readDeepening(q, lists: [together], bounding: together, limit: limit, cursor: cursor) { depth, compiler in
            "SELECT item FROM rank_entries WHERE list = \(compiler.bind(together.key, "text")) AND n <= \(compiler.bind(String(depth), "integer"))"
        } proves: { places, bound in
            Self.provesSum(places, bounds: [bound], secondPass: q.prefixable != nil, limit: limit)
        }
    }

    /// The most items a shorter prefix's first pass, or a word's own, may hold for the word to
    /// be read from the shorter prefix's lists (`rankedFromParentLists`).
    static let parentFirstPass = 256

    /// The keys of the lists of each shorter prefix of the word of `own` (a word's list as
    /// typed), longest first: the prefix as typed and only as a prefix. Nil for a phrase.
    static func shorterPrefixKeys(_ own: PostgresRankListSpec) -> [[String]]? {
        guard let suffix = keySuffix(own.key), let token = listToken(own.unit), !token.contains(phraseJoiner) else { return nil }
        return shorterPrefixes(of: token).map { prefix in
            [PostgresRankListSpec.Kind.whole, .prefixOnly].map { $0.rawValue + prefix + suffix }
        }
    }

    /// The prefixes of `token` shorter than it, longest first, down to one character.
    static func shorterPrefixes(of token: String) -> [String] {
        let characters = Array(token)
        return characters.indices.dropFirst().reversed().map { String(characters[..<$0]) }
    }

    enum PrefixedRead {
        case read(RankedRead)
        /// The page needs the list, which is missing (and every word is common).
        case missing
        case notThisWay
    }

    /// The page of several words whose last is also a prefix, when the first pass (every word
    /// as typed) is small: its list together (`together`) holds every item of it, at most
    /// `firstPassWalked`. Those items are candidates whole, and the second pass's come from the
    /// list of the words with the last as a prefix (`prefixedSpec`), walked past the first
    /// pass's items it also holds (as many entries further as the first pass has items, changed
    /// ones included). Every unchanged item of the second pass that the walk stops before comes
    /// after `limit + 1` of them, so the page is proven as one word's: each row of the second
    /// pass no later than the list's bound. `.missing` when that list is wanted first;
    /// `.notThisWay` when the first pass's list is missing, not whole or too long (the words'
    /// own lists, or it, read the page), or a word is not common.
    private func rankedFromPrefixedList(_ q: PreparedPostgresQuery, _ specs: [PostgresRankListSpec], _ prefixed: PostgresRankListSpec,
                                        pass0 together: PostgresRankListSpec, first: (horizon: String, changed: Int, longest: Int, bounds: [String: RankPlace?]),
                                        limit: Int, cursor: Cursor?) throws -> PrefixedRead {
        // (`first`: the state of the list together alone, whose longest list is that one.)
        guard case .some(nil) = first.bounds[together.key], first.longest <= Self.firstPassWalked else { return .notThisWay }
        guard let state = try rankListState([together, prefixed], depth: Self.wholeList) else {
            // Wanted only when every word, the last as a prefix, is common.
            return try everyWordIsCommon(q, specs) ? .missing : .notThisWay
        }
        // (Made for other rarities: made again for those of now, first.)
        if !state.moved.isEmpty, state.changed <= rankLists.changedRows { return .missing }
        if state.changed > rankLists.changedRows {
            rankLists.wanted[prefixed.key] = prefixed
            return .notThisWay
        }
        let read = try rankedRows(q, limit: limit, cursor: cursor) { compiler in
            "SELECT item FROM rank_entries WHERE list = \(compiler.bind(together.key, "text")) UNION "
                + (try self.walk(prefixed, q, horizon: state.horizon, limit: limit, cursor: cursor, extra: first.longest + state.changed, &compiler))
                + Self.changedItems(since: state.horizon, state.changed, &compiler)
        }
        guard Self.proves(read.places, bounds: [0: nil, 1: state.bounds[prefixed.key] ?? nil], limit: limit) else { return .notThisWay }
        rankLists.answered += 1
        return .read(read)
    }

    /// The most items a first pass may have for its second to be read from a list.
    static let firstPassWalked = 256

    /// The candidates beside a list's entries: the `changed` items written since `horizon`.
    private static func changedItems(since horizon: String, _ changed: Int, _ compiler: inout PostgresQueryCompiler) -> String {
        " UNION (SELECT id FROM items WHERE tx >= \(compiler.bind(horizon, "xid8")) ORDER BY tx LIMIT \(changed))"
    }

    /// A depth past every list's end: its bound is the list's last entry (none when complete).
    static let wholeList = 1 << 30

    /// One word's candidates from `spec`'s list: its unchanged entries (`tx` before `horizon`,
    /// so each entry's place is its item's) in list order, after `cursor`, that the page's
    /// filters keep — the first `limit + 1` only. The list's order is the page's for them, so
    /// an unchanged item the walk stops before comes after `limit + 1` candidates, and the
    /// page needs it no more than an item past the list's bound: a filter costs the entries it
    /// skips, not the list's length. An unchanged entry's item holds the word, so the walk does
    /// not check it again.
    private func walk(_ spec: PostgresRankListSpec, _ q: PreparedPostgresQuery, horizon: String, limit: Int,
                      cursor: Cursor?, extra: Int = 0, _ compiler: inout PostgresQueryCompiler) throws -> String {
        // (A list wholly before the cursor gives nothing, and binds nothing: a parameter the
        // statement does not use has no type.)
        if case .relevance(_, let cPass, _, _, _, _)? = cursor, spec.pass < cPass { return "(SELECT NULL::bigint WHERE false)" }
        var entry = ["e.list = \(compiler.bind(spec.key, "text"))"]
        if case .relevance(_, let cPass, let cScore, let cHint, let cBundle, let cUID)? = cursor, spec.pass == cPass {
            // (An entry's place in the page: its impact times the word's rarity, for one word.)
            let score = try spec.rarity(q.scoring).map { "(\(compiler.bind($0)) * e.score)" } ?? "e.score"
            entry.append(Self.after((score, "e.hint", "e.bundle", "e.uid"),
                                    (compiler.bind(cScore), compiler.bind(cHint), compiler.bind(cBundle, "text"), compiler.bind(cUID, "text"))))
        }
        // The item's test is a subplan run per entry in list order (`OFFSET 0` keeps it one), so
        // the walk reads the list's index in order and stops at the limit, whatever the planner
        // thinks the filters keep.
        let kept = "EXISTS (SELECT 1 FROM items i \(PostgresQueryCompiler.live) WHERE i.id = e.item AND i.tx < \(compiler.bind(horizon, "xid8")) AND "
            + (try filters(q, &compiler, matching: false)) + " OFFSET 0)"
        return "(SELECT e.item FROM rank_entries e WHERE " + (entry + [kept]).joined(separator: " AND ")
            + " ORDER BY e.n LIMIT \(compiler.bind(String(limit + 1 + extra), "bigint")))"
    }

    /// Rows of one pass whose place — `columns`: score, hint, bundle, identifier — comes after
    /// `place` (bound parameters): a lower score, then a lower hint, then bundle and identifier
    /// in byte order.
    static func after(_ columns: (score: String, hint: String, bundle: String, uid: String),
                      _ place: (score: String, hint: String, bundle: String, uid: String)) -> String {
        let tie = "(\(columns.bundle) COLLATE \"C\" > \(place.bundle) OR (\(columns.bundle) = \(place.bundle) AND \(columns.uid) COLLATE \"C\" > \(place.uid)))"
        return "(\(columns.score) < \(place.score) OR (\(columns.score) = \(place.score) AND (\(columns.hint) < \(place.hint) OR (\(columns.hint) = \(place.hint) AND \(tie)))))"
    }

    /// For several words, each list read to its bound: an item among none of the lists' read
    /// entries has, for each word, a score no higher than the bound's, and on an equal score a
    /// later tie place. So its score is at most the bounds' sum, and at that sum its tie place
    /// comes after every bound's. A row is proven when it scores more than that sum, or as much
    /// with a tie place no later than the last bound's; when a list was read whole, every
    /// match of the first pass is among the candidates. (A list of the words together is one
    /// such list, its bound the page's own.) Only rows of the first pass (every
    /// word as typed) are proven: no list holds the second's.
    static func provesSum(_ places: [RankPlace], bounds: [RankPlace?], secondPass: Bool, limit: Int) -> Bool {
        if bounds.contains(where: { $0 == nil }) {
            // Every match of the first pass is a candidate; of the second (the last word only
            // as a prefix, which no list holds), not.
            return !secondPass || (places.count > limit && places.allSatisfy { $0.pass == 0 })
        }
        guard places.count > limit else { return false }
        let bounds = bounds.compactMap { $0 }
        let sum = bounds.reduce(0) { $0 + $1.score }
        let lastTie = bounds.dropFirst().reduce(bounds[0]) { last, bound in last.tiePrecedes(bound) ? bound : last }
        for place in places {
            guard place.pass == 0 else { return false }
            if place.score > sum { continue }
            guard place.score == sum, !lastTie.tiePrecedes(place) else { return false }
        }
        return true
    }

    /// The lists of `specs` in one statement: the oldest horizon among them, the items changed
    /// since (at most `changedRows + 1` counted), the longest list, and each pass's bound at
    /// `depth` — nil when the list's first `depth` entries are all its unchanged items. Nil
    /// when a list is missing.
    private func rankListState(_ specs: [PostgresRankListSpec], depth: Int) throws
        -> (horizon: String, changed: Int, longest: Int, bounds: [String: RankPlace?], moved: Set<String>)? {
        var parameters: [String?] = [String(depth)]
        let keys = specs.map { spec -> String in
            parameters.append(spec.key)
            return "$\(parameters.count)::text"
        }.joined(separator: ", ")
        parameters.append(String(rankLists.useResolution))
        let resolution = "$\(parameters.count)::float8"
        // The changed items are read in `tx` order, so from its index whatever the statistics say
        // (a column they do not know yet reads as a third of the table). Whether the list's use
        // is to be recorded (`recordListUse`) comes with it.
        let r = try query("""
            SELECT l.key, l.length, l.complete, e.score, e.hint, e.bundle, e.uid, h.horizon::text,
                (SELECT count(*) FROM (SELECT 1 FROM items WHERE tx >= h.horizon ORDER BY tx LIMIT \(rankLists.changedRows + 1)) s), l.rarities::text,
                l.used < now() - \(resolution) * interval '1 second'
            FROM rank_lists l LEFT JOIN rank_entries e ON e.list = l.key AND e.n = least($1::integer, l.length)
            CROSS JOIN (SELECT min(horizon) AS horizon FROM rank_lists WHERE key IN (\(keys))) h
            WHERE l.key IN (\(keys))
            """, parameters)
        guard r.rowCount == Set(specs.map(\.key)).count, let horizon = r.text(0, 7) else { return nil }
        let now = Clock.monotonic()
        for row in 0..<r.rowCount where r.bool(row, 10) {
            guard let key = r.text(row, 0), now - (rankLists.useRecorded[key] ?? -.infinity) >= rankLists.useResolution else { continue }
            rankLists.used.insert(key)
        }
        var bounds: [String: RankPlace?] = [:]
        var moved = Set<String>()
        var longest = 0
        for row in 0..<r.rowCount {
            guard let spec = specs.first(where: { $0.key == r.text(row, 0) }) else { return nil }
            let length = r.int(row, 1)
            longest = max(longest, length)
            // The entry's place as the page's: a word's impact times its rarity now; words
            // together, the sum they were ordered by — or, the rarities moved since, a bound
            // on it (`scale`).
            var score = r.double(row, 3)
            if spec.kind != .together {
                // (A word without its rarity: a query not ranked, which reads no list.)
                guard let rarity = try spec.rarity(spec.query.scoring) else { return nil }
                score = rarity * score
            } else {
                let then = PGArray.parse(r.text(row, 9) ?? "{}").compactMap(Double.init)
                let now = spec.keyedRarities(spec.query.scoring)
                if then != now {
                    moved.insert(spec.key)
                    score *= Self.scale(from: then, to: now)
                }
            }
            if r.bool(row, 2) && length <= depth {
                bounds[spec.key] = .some(nil)
            } else if r.text(row, 3) != nil {
                bounds[spec.key] = RankPlace(pass: spec.pass, score: score, hint: r.double(row, 4), bundle: r.text(row, 5) ?? "", uid: r.text(row, 6) ?? "")
            } else {
                return nil
            }
        }
        return (horizon, r.int(0, 8), longest, bounds, moved)
    }

    /// How much more than its sum with the rarities `then` an item of a list together may score
    /// with the rarities `now` (both in the order of the list's key): each word's impact is
    /// what it was (or, for a longer prefix than the list's, no more), so the sum grows by the
    /// most any rarity grew, with a margin for rounding. The bound of its entries once the
    /// rarities moved.
    static func scale(from then: [Double], to now: [Double]) -> Double {
        guard then.count == now.count, !then.isEmpty else { return .infinity }
        var most = 0.0
        for (old, new) in zip(then, now) {
            guard old > 0, new.isFinite else { return .infinity }
            most = max(most, new / old)
        }
        return most * (1 + 1e-9)
    }

    /// Whether rows read from the candidates are the page a full read gives: every item of
    /// every pass among them, or `limit + 1` rows each no later than its pass's bound, the
    /// first pass wholly known before a row of the second.
    static func proves(_ places: [RankPlace], bounds: [Int: RankPlace?], limit: Int) -> Bool {
        if bounds.values.allSatisfy({ $0 == nil }) { return true }
        guard places.count > limit else { return false }
        for place in places {
            guard let bound = bounds[place.pass] else { return false }
            if place.pass > 0, bounds.contains(where: { $0.key < place.pass && $0.value != nil }) { return false }
            if let bound, !place.isAtOrBefore(bound) { return false }
        }
        return true
    }

    /// When a read found a list of its query missing: wants the query's lists when more than
    /// `commonWords` items hold each word (counted once per process and word), and says whether
    /// it does. Lists that are there but could not prove a page (a selective filter) are not
    /// made again.
    @discardableResult
    func noteWantedRankLists(_ q: PreparedPostgresQuery) throws -> Bool {
        defer { rankLists.missing = false }
        guard rankLists.missing, let specs = rankListSpecs(q)?.words else { return false }
        // Lists help only when every word is common — a rare one is read in full, cheaply.
        guard try everyWordIsCommon(q, specs) else { return false }
        // Only those missing: a word's list made by an earlier search stays as it is.
        let made = try query("SELECT key FROM rank_lists WHERE key = ANY($1::text[])", [PGArray.literal(specs.map(\.key))])
        let present = Set((0..<made.rowCount).compactMap { made.text($0, 0) })
        for spec in specs where !present.contains(spec.key) { rankLists.wanted[spec.key] = spec }
        return true
    }

    /// Whether a first search of one common word makes its lists before its page and counts
    /// its document frequency in the same read (`PostgresRankListSpec.countsToo`): no rarity is
    /// then counted in the search's snapshot. The count reads the table's page of every match,
    /// as the list does; at 1M items each was half a first search. Only while nothing about the
    /// word is known: no count of it kept (in the process or in `unit_frequencies`), no list of
    /// it or of a shorter prefix of it (which may answer the page, `rankedFromParentLists`), no
    /// declaration that makes a count read other items than a list (`hidesText`), a first page.
    func countsWithLists(_ q: PreparedPostgresQuery) throws -> Bool {
        guard q.cursor == nil, q.units.count == 1, rankLists.makeFirst, !rankLists.makingFailed,
              let specs = rankListSpecs(q)?.words, let own = specs.first, own.kind == .whole,
              rankLists.frequencies[FullText.phrase(own.unit, prefix: false)] == nil, try !hidesText() else { return false }
        let keys = specs.map(\.key) + (Self.shorterPrefixKeys(own) ?? []).flatMap { $0 }
        let known = try query("""
            SELECT EXISTS (SELECT 1 FROM rank_lists WHERE key = ANY($1::text[])) OR EXISTS (SELECT 1 FROM unit_frequencies WHERE phrase = ANY($2::text[]))
            """, [PGArray.literal(keys), PGArray.literal(specs.map { FullText.phrase($0.unit, prefix: $0.kind != .whole) })])
        guard !known.bool(0, 0) else { return false }
        return try everyWordIsCommon(q, specs)
    }

    /// Whether more than `commonWords` items hold each word of `q` (the last as a prefix when
    /// it is one), counted once per process: a word's first list's key (of `specs`) notes what
    /// was found.
    private func everyWordIsCommon(_ q: PreparedPostgresQuery, _ specs: [PostgresRankListSpec]) throws -> Bool {
        let common = rankLists.commonWords
        for unit in q.units {
            guard let key = specs.first(where: { $0.unit == unit })?.key, !rankLists.uncommon.contains(key) else { return false }
            if rankLists.common.contains(key) { continue }
            guard try matchCount(unit, prefix: true, q, atMost: common + 1) > common else {
                rankLists.uncommon.insert(key)
                return false
            }
            rankLists.common.insert(key)
        }
        return true
    }

    /// How many items `unit` matches (as a prefix when `prefix`), counted up to `atMost`; or
    /// `atMost` at once when the server's statistics say far more items hold it
    /// (`commonByStatistics`). Every caller asks only to choose the cheaper way: the count
    /// builds the word's whole bitmap before its `LIMIT` applies (36 ms for a word 125,000 of
    /// 1M items hold), which a search read from a shorter prefix's lists paid at every search.
    private func matchCount(_ unit: RankingUnit, prefix: Bool, _ q: PreparedPostgresQuery, atMost: Int) throws -> Int {
        if try commonByStatistics(unit, prefix: prefix, atLeast: atMost) { return atMost }
        rankLists.exactCounts += 1
        var compiler = q.compiler()
        let match = compiler.unitMatch(unit, prefix: prefix)
        return try query("SELECT count(*) FROM (SELECT 1 FROM items i CROSS JOIN LATERAL (SELECT i.j) x(j) WHERE \(match) LIMIT \(atMost)) s",
                         compiler.parameters).int(0, 0)
    }

    /// Whether the server's statistics of the documents (`pg_stats.most_common_elems`, from its
    /// last `ANALYZE` of the items) say that at least `commonByStatistics` times `atLeast` items
    /// hold the one-word `unit` (as a prefix when `prefix`: some word it begins does). Read again
    /// after ten minutes in a long-lived process. Without statistics, or for a word they do not list, false: the caller counts.
    /// Statistics that are stale only choose a slower way, never a wrong page.
    private func commonByStatistics(_ unit: RankingUnit, prefix: Bool, atLeast: Int) throws -> Bool {
        let tokens = PostgresQueryCompiler.tokens(unit.text)
        guard tokens.count == 1, let token = tokens.first else { return false }
        if rankLists.documentStatistics == nil || Clock.monotonic() - rankLists.documentStatisticsRead > 600 {
            let r = try query("""
                SELECT e.word, e.freq * greatest(c.reltuples, 0)
                FROM pg_stats s CROSS JOIN pg_class c
                    CROSS JOIN LATERAL unnest(s.most_common_elems::text::text[], s.most_common_elem_freqs) AS e(word, freq)
                WHERE s.schemaname = current_schema() AND s.tablename = 'items' AND s.attname = 'doc'
                    AND c.oid = 'items'::regclass AND e.word IS NOT NULL
                """)
            rankLists.documentStatisticsRead = Clock.monotonic()
            rankLists.documentStatistics = Dictionary((0..<r.rowCount).map { (r.text($0, 0) ?? "", r.double($0, 1)) }) { max($0, $1) }
        }
        let estimates = rankLists.documentStatistics ?? [:]
        let enough = Double(atLeast) * Self.commonByStatistics
        if let whole = estimates[token], whole >= enough { return true }
        return prefix && estimates.contains { $0.key.hasPrefix(token) && $0.value >= enough }
    }

    /// How many times more items than asked the statistics must say hold a word: their estimate
    /// is from a sample of the items (30,000 rows at the default statistics target).
    static let commonByStatistics = 4.0

    /// Makes the lists the searches wanted, each in a short transaction of its own (after the
    /// search's snapshot). A list another session is making, or any failure, leaves it for a
    /// later search: a search never fails for want of a list.
    func makeWantedRankLists() {
        guard !rankLists.wanted.isEmpty, !connection.inTransaction else { return }
        // A word's two passes (as typed, only as a prefix) are made together: the second only
        // when the first is whole (`makeRankLists`).
        let wanted = rankLists.wanted.values.sorted { $0.key < $1.key }
        rankLists.wanted = [:]
        // (Their keys differ only in the kind's first character.)
        let batches = Dictionary(grouping: wanted) { $0.kind == .starred || $0.kind == .together ? $0.key : String($0.key.dropFirst()) }
        for (_, specs) in batches.sorted(by: { $0.key < $1.key }) {
            do {
                try connection.begin("ISOLATION LEVEL REPEATABLE READ")
                try makeRankLists(specs.sorted { $0.pass < $1.pass })
                try connection.commit()
            } catch {
                connection.rollback()
                // A moment's contention (another session making a list, a reindexAll going live)
                // passes; a refusal to write (a role that may only read, a standby) does not.
                if (error as? StoreError)?.code != .busy { rankLists.makingFailed = true }
            }
        }
    }

    /// Records when the lists the search read were used (`rank_lists.used`, schema migration 17),
    /// which decides the list that goes past `maximumLists`: only a list whose record is older
    /// than `useResolution` (as the search read it), at most once per `useResolution` for one
    /// list in this process, in a short transaction of its own after the search that waits for
    /// no lock and not for the disk (a use lost in a crash only makes a list look older). So a
    /// list searched all day is written once a minute, by one of the processes that read it.
    /// Any failure (a role that may only read, a standby, a list being made) leaves the record
    /// as it was.
    func recordListUse() {
        guard !rankLists.used.isEmpty, !connection.inTransaction else { return }
        let keys = rankLists.used.sorted()
        rankLists.used.removeAll()
        let now = Clock.monotonic()
        for key in keys { rankLists.useRecorded[key] = now }
        if rankLists.useRecorded.count > 4 * rankLists.maximumLists { rankLists.useRecorded = rankLists.useRecorded.filter { now - $0.value < rankLists.useResolution } }
        try? transaction { () throws in
            try connection.execute("SET LOCAL lock_timeout = '100ms'; SET LOCAL synchronous_commit = off")
            try query("UPDATE rank_lists SET used = now() WHERE key = ANY($1::text[]) AND used < now() - $2::float8 * interval '1 second'",
                      [PGArray.literal(keys), String(rankLists.useResolution)])
        }
    }

    /// Drops every list, inside the transaction that makes a generation live (whose items no
    /// list holds). The lock keeps a list from being made meanwhile from the generations before.
    func dropRankLists() throws {
        try query("LOCK TABLE rank_lists IN SHARE ROW EXCLUSIVE MODE")
        guard try query("SELECT EXISTS (SELECT 1 FROM rank_lists)").bool(0, 0) else { return }
        try query("DELETE FROM rank_entries")
        try query("DELETE FROM rank_lists")
    }

    /// Makes one list, or a word's two (`specs`: as typed, then only as a prefix, as
    /// `makeWantedRankLists` groups them), each from a read of its own items, in the caller's
    /// transaction.
    private func makeRankLists(_ specs: [PostgresRankListSpec]) throws {
        // Before the snapshot (its first query): a generation made live meanwhile has dropped
        // the lists when this one is made, never after.
        try query("SET LOCAL lock_timeout = '200ms'")
        try query("LOCK TABLE rank_lists IN SHARE ROW EXCLUSIVE MODE")
        // The impacts are for the average the search read: the pinned one, or, the first list,
        // the index's own, pinned now. (Pinned again meanwhile: made by a later search.)
        let q = specs[0].query
        guard let average = q.scoring?.average else { return }
        let pinned = try query("SELECT average FROM rank_statistics LIMIT 1")
        if pinned.rowCount == 0 {
            try query("INSERT INTO rank_statistics(average) VALUES($1)", [String(average)])
        } else if pinned.double(0, 0) != average {
            return
        }
        // Making a list replaces one of that key, and past `maximumLists` the one used least
        // lately (`recordListUse`) — of words together first, which serve one query where a
        // word's serve every query of it.
        for spec in specs {
            try query("""
                WITH gone AS (
                    DELETE FROM rank_lists WHERE key = $1 OR key IN (
                        SELECT key FROM rank_lists WHERE key <> $1 ORDER BY key LIKE '&%' DESC, used, horizon, key
                        LIMIT greatest(0, (SELECT count(*) FROM rank_lists WHERE key <> $1) - $2::integer + 1))
                    RETURNING key)
                DELETE FROM rank_entries WHERE list IN (SELECT key FROM gone)
                """, [spec.key, String(rankLists.maximumLists - specs.count + 1)])
        }
        // Each list from a read of its own items. A word's second pass (its items that hold it
        // only as a prefix) is made only when its first pass is whole in its list: until then no
        // page reads it (`rankedFromLists`), and scoring its items — the frequencies of every
        // word the prefix begins, summed per item — was most of a common word's first search
        // (3.1 of 4.6 s for `design` at 1M items).
        var made: [(key: String, length: Int)] = []
        // Document frequencies counted as the lists are made (`countsToo`), by phrase: a word's
        // second pass adds the items it matches only as a prefix to those of its first.
        var counted: [String: Int] = [:]
        for spec in specs {
            if spec.kind == .prefixOnly, let first = made.first, first.length >= rankLists.size { continue }
            var compiler = q.compiler()
            let size = compiler.bind(String(rankLists.size), "bigint")
            let now = compiler.bind(Clock.now())
            let match = spec.match(&compiler)
            let score = spec.score(&compiler)
            let key = compiler.bind(spec.key, "text")
            let insert = """
                INSERT INTO rank_entries(list, n, score, hint, bundle, uid, item)
                SELECT \(key), row_number() OVER (ORDER BY m.score DESC, m.hint DESC, m.bundle COLLATE "C", m.uid COLLATE "C"),
                    m.score, m.hint, m.bundle, m.uid, m.id FROM
                """
            let whole = FullText.phrase(spec.unit, prefix: false)
            guard spec.countsToo, spec.kind == .whole || counted[whole] != nil else {
                let r = try query("""
                    WITH made AS (\(insert) (
                        \(Self.listedItems(score: score, match: match, now: now))
                        ORDER BY score DESC, hint DESC, i.bundle COLLATE "C", i.uid COLLATE "C" LIMIT \(size)) m
                    RETURNING 1)
                    SELECT count(*) FROM made
                    """, compiler.parameters)
                made.append((spec.key, r.int(0, 0)))
                continue
            }
            // Every item the pass matches counted, the listed ones listed. Room in memory for
            // the exact bitmap of a common word's pages and for its matches' places.
            try connection.execute("SET LOCAL jit = off; SET LOCAL work_mem = '64MB'")
            let r = try query("""
                WITH m AS MATERIALIZED (\(Self.listedItems(score: score, match: match, now: now, counting: true))),
                made AS (\(insert) (
                    SELECT * FROM m WHERE listed ORDER BY score DESC, hint DESC, bundle COLLATE "C", uid COLLATE "C" LIMIT \(size)) m
                    RETURNING 1)
                SELECT (SELECT count(*) FROM made), (SELECT count(*) FROM m)
                """, compiler.parameters)
            made.append((spec.key, r.int(0, 0)))
            counted[FullText.phrase(spec.unit, prefix: spec.kind != .whole)] = r.int(0, 1) + (spec.kind == .whole ? 0 : counted[whole] ?? 0)
        }
        if !counted.isEmpty { try keepCountedWithLists(counted) }
        for (key, length) in made {
            let rarities = specs.first { $0.key == key }.flatMap { $0.kind == .together ? $0.keyedRarities(q.scoring) : nil }
            try query("""
                INSERT INTO rank_lists(key, horizon, length, complete, rarities) VALUES($1, pg_snapshot_xmin(pg_current_snapshot()), $2, $3, $4::float8[])
                """, [key, String(length), length < rankLists.size ? "true" : "false", rarities.map { PGArray.literal($0.map { String($0) }) }])
        }
    }

    /// Keeps the document frequencies a list's read counted (`countsToo`) as a search's count
    /// is kept (`PostgresStore.documentFrequency`): for the items' write count and snapshot of
    /// this transaction, which the count read, and written to `unit_frequencies` after it.
    private func keepCountedWithLists(_ counted: [String: Int]) throws {
        let r = try query("SELECT coalesce(sum(changes), 0), pg_current_snapshot()::text, coalesce(sum(resets), 0) FROM full_text_totals")
        countsAre(at: r.int64(0, 0), snapshot: r.text(0, 1) ?? "", resets: r.int64(0, 2))
        for (phrase, n) in counted {
            rankLists.frequencies[phrase] = n
            if rankLists.unkept.count < 256 { rankLists.unkept[phrase] = n }
            rankLists.countedWithLists += 1
        }
    }

    /// The items a list holds, with their place (`id, bundle, uid, score, hint`): the live,
    /// unexpired items its `match` finds — what making a list orders and `check` reads again.
    /// Further conditions may follow (`AND …`). With `counting`, every item of every generation
    /// `match` finds, expired ones too (the rows a count reads, `documentFrequency`), each with
    /// whether the list holds it (`listed`).
    static func listedItems(score: String, match: String, now: String, counting: Bool = false) -> String {
        let place = "SELECT i.id, i.bundle, i.uid, (\(score))::float8 AS score, \(Self.hintExpression) AS hint"
        let unexpired = "(i.expires IS NULL OR i.expires > \(now))"
        guard counting else { return "\(place) FROM \(PostgresQueryCompiler.from) WHERE \(match) AND \(unexpired)" }
        return "\(place), b.key IS NOT NULL AND \(unexpired) AS listed FROM items i LEFT \(PostgresQueryCompiler.live) WHERE \(match)"
    }

    // MARK: Checking

    /// What `check` finds wrong with the lists (read in the check's snapshot): for each list of
    /// the declarations in effect, every unchanged item of its word that comes no later than its
    /// last entry — read in full — must be in it with its score and hint.
    func rankListProblems() throws -> [String] {
        let lists = try query("SELECT key, horizon::text, length, complete, rarities::text FROM rank_lists ORDER BY key")
        var problems: [String] = []
        for row in 0..<lists.rowCount {
            guard let key = lists.text(row, 0), let kind = key.first.flatMap({ PostgresRankListSpec.Kind(rawValue: String($0)) }),
                  let hash = key.firstIndex(of: "#") else { continue }
            var word = String(key[key.index(after: key.startIndex)..<hash])
            var attribute = "*"
            if let at = word.firstIndex(of: "@") {
                attribute = String(word[word.index(after: at)...])
                word = String(word[..<at])
            }
            // The query that made it: bare words (a phrase's joined by a hyphen, `purple-ott`), or
            // words of one attribute as `w` comparisons (a phrase's lists are the same either
            // way; a list of an earlier key, which held the server's folding, is no query's).
            let units = (kind == .starred ? word + "*" : word).split(separator: " ").map(String.init)
            var texts: [String] = []
            if attribute == "*" { texts.append(units.map { $0.replacingAll(Self.phraseJoiner, with: "-") }.joined(separator: " ")) }
            if kind != .prefixOnly && (attribute != "*" || word.contains(Self.phraseJoiner)) {
                texts.append(units.map { #"\#(attribute) == "\#($0.replacingAll(Self.phraseJoiner, with: " "))"cdw"# }.joined(separator: " && "))
            }
            word = word.replacingAll(Self.phraseJoiner, with: " ")
            // A list of other declarations (one bundle's) is not this context's to check.
            guard let (q, spec) = texts.lazy.compactMap({ text -> (PreparedPostgresQuery, PostgresRankListSpec)? in
                guard let q = try? self.prepare(text, options: QueryOptions()), let specs = self.rankListSpecs(q),
                      let spec = (specs.words + [specs.together].compactMap { $0 }).first(where: { $0.key == key }) else { return nil }
                return (q, spec)
            }).first else { continue }
            // A list together made for other rarities is not read as it is (`rankListState`).
            if spec.kind == .together, PGArray.parse(lists.text(row, 4) ?? "{}").compactMap(Double.init) != spec.keyedRarities(q.scoring) { continue }
            var compiler = q.compiler()
            let match = spec.match(&compiler)
            let score = spec.score(&compiler)
            let list = compiler.bind(key, "text")
            let horizon = compiler.bind(lists.text(row, 1), "xid8")
            let now = compiler.bind(Clock.now())
            var bound = "true"
            if !lists.bool(row, 3) {
                let n = compiler.bind(String(lists.int(row, 2)), "integer")
                func at(_ column: String) -> String { "(SELECT \(column) FROM rank_entries WHERE list = \(list) AND n = \(n))" }
                bound = """
                    (r.score > \(at("score")) OR (r.score = \(at("score")) AND (r.hint > \(at("hint")) OR (r.hint = \(at("hint"))
                    AND (r.bundle COLLATE "C" < \(at("bundle")) OR (r.bundle = \(at("bundle")) AND r.uid COLLATE "C" <= \(at("uid"))))))))
                    """
            }
            let r = try query("""
                WITH r AS (\(Self.listedItems(score: score, match: match, now: now)) AND i.tx < \(horizon))
                SELECT (SELECT count(*) FROM r WHERE \(bound) AND NOT EXISTS (SELECT 1 FROM rank_entries e WHERE e.list = \(list) AND e.item = r.id)),
                    (SELECT count(*) FROM r JOIN rank_entries e ON e.list = \(list) AND e.item = r.id WHERE e.score <> r.score OR e.hint <> r.hint)
                """, compiler.parameters)
            let shown = kind == .whole || kind == .together ? word : word + "*"
            if r.int(0, 0) > 0 { problems.append("the rank list of '\(shown)' misses \(r.int(0, 0)) item(s) it should hold") }
            if r.int(0, 1) > 0 { problems.append("the rank list of '\(shown)' gives \(r.int(0, 1)) item(s) a score or hint they do not have") }
        }
        return problems
    }
}
