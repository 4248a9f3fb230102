import ReindexProtocol
import ReindexSystem

/// The query language on the PostgreSQL index: pages by relevance or by sort keys, counts,
/// facets and one item whole — what `IndexStore` answers for the SQLite index, with the same
/// options, results and errors. Each call reads one `REPEATABLE READ` read-only snapshot (the
/// declarations in effect and the page together), so a page never mixes generations.
///
/// A page by relevance is the query's matches ordered as on SQLite (whole words before
/// prefixes, BM25F, rankingHint, bundle, identifier), from the same statistics
/// (PostgresStore+Relevance.swift), so both backends give the same page.
extension PostgresStore {
    /// A query parsed, checked and ready to compile, with what it reads in its snapshot.
    struct PreparedPostgresQuery {
        var checked: CheckedQuery
        var options: QueryOptions
        var now: Double
        var declared: [String: AttributeDeclaration] { checked.declared }
        var units: [RankingUnit] { checked.units }
        /// The unit that is also a prefix, in the second pass: the last bare word.
        var prefixable: Int? { units.firstIndex { $0.prefixable && !$0.starred } }
        var unaccentSchema: String?
        var icu: Bool
        /// Some item's document holds not every word (`PostgresQueryCompiler.overflowed`).
        var overflowed = false
        /// `options.after`, checked against the query's order.
        var cursor: Cursor?
        /// The statistics of its score, when it is ranked (`PostgresStore.scoring`).
        var scoring: PostgresQueryCompiler.Scoring?

        func compiler() -> PostgresQueryCompiler {
            var compiler = PostgresQueryCompiler(declared: declared, unaccentSchema: unaccentSchema, icu: icu)
            compiler.scoring = scoring
            compiler.overflowed = overflowed
            return compiler
        }
    }

    /// One page of the query's matches, best first (or in `options.sort` order; ties by bundle
    /// and identifier); `nextCursor` continues after its last result. (`options` has no default
    /// here: `query(_:)` alone is the store's statement runner.)
    public func query(_ text: String, options: QueryOptions) throws(ReindexError) -> QueryPage {
        try query(text, wordsOnly: false, options: options)
    }

    /// `query(_:options:)`, of `text` as words only when `wordsOnly` (no query language: what
    /// `search` reads, as SQLite's `search` does).
    func query(_ text: String, wordsOnly: Bool, options: QueryOptions) throws(ReindexError) -> QueryPage {
        defer {
            repinIfWanted()
            keepFrequencies()
            recordListUse()
            makeWantedRankLists()
        }
        var page = try page(text, wordsOnly: wordsOnly, options: options)
        // Its words are common and their lists missing: a full read would score every match,
        // and making the lists after it would read them all again. So the lists are made first,
        // each in its own transaction, and the page is read from them in a new snapshot. When
        // several words' own lists, so made, cannot prove the page, their list together is made
        // the same way, in a second round; for a pair typed halfway whose first pass that list
        // shows to be small, the list of its words with the last as a prefix in a third.
        defer {
            rankLists.makeFirst = true
            rankLists.makeTogetherFirst = true
        }
        var round = 0
        while rankLists.pageWaitsForLists {
            rankLists.pageWaitsForLists = false
            makeWantedRankLists()
            round += 1
            rankLists.makeFirst = false
            rankLists.makeTogetherFirst = round < 3
            page = try self.page(text, wordsOnly: wordsOnly, options: options)
        }
        return page
    }

    /// One page of `query(_:options:)`, in one snapshot.
    private func page(_ text: String, wordsOnly: Bool, options: QueryOptions) throws(ReindexError) -> QueryPage {
        try reading("search failed", query: true) { () throws -> QueryPage in
            let q = try prepare(text, wordsOnly: wordsOnly, options: options)
            var page = try run(q)
            if !q.units.isEmpty {
                let terms = q.units.flatMap { Folding.tokens($0.text) }
                for n in page.results.indices {
                    page.results[n].snippet = IndexStore.snippet(page.results[n].attributes, terms: terms, markers: options.snippetMarkers)
                }
            }
            return page
        }
    }

    /// Runs the query like `query(_:options:)` and returns PostgreSQL's plan (`EXPLAIN`, one
    /// line per step) of the statement of each page: which indexes a filter or sort uses.
    public func queryPlan(_ text: String, options: QueryOptions = QueryOptions()) throws(ReindexError) -> [String] {
        explained = []
        defer { explained = nil }
        _ = try query(text, options: options)
        return explained ?? []
    }

    /// Runs a page's statement (explaining it first while `queryPlan` asks), without parallel
    /// workers: a page stops after a few rows, and starting the workers and merging their streams
    /// cost 10 ms of a date filter's 14 (0.3 ms alone) at 1M items. Counts and facets, which
    /// read every match, keep them.
    private func page(_ sql: String, _ parameters: [String?]) throws -> PGResult {
        try connection.execute("SET LOCAL max_parallel_workers_per_gather = 0")
        if explained != nil {
            let plan = try query("EXPLAIN " + sql, parameters)
            explained?.append(contentsOf: (0..<plan.rowCount).compactMap { plan.text($0, 0) })
        }
        return try query(sql, parameters)
    }

    /// The exact number of live, unexpired items the query matches.
    public func count(_ text: String, options: QueryOptions = QueryOptions()) throws(ReindexError) -> Int {
        try reading("count failed", query: true) { () throws -> Int in
            let q = try prepare(text, scored: false, options: options)
            var compiler = q.compiler()
            let filters = try self.filters(q, &compiler)
            return try query("SELECT count(*) FROM \(PostgresQueryCompiler.from) WHERE \(filters)", compiler.parameters).int(0, 0)
        }
    }

    /// The most common values of a string attribute among the query's matches, with their
    /// counts, most common first (ties by value).
    public func facet(_ text: String, attribute: String, top: Int = 10, options: QueryOptions = QueryOptions()) throws(ReindexError) -> [(value: String, count: Int)] {
        let attribute = QueryParser.attributeName(attribute)  // a kMDItem… name is the index's own
        return try reading("facet failed", query: true) { () throws -> [(value: String, count: Int)] in
            let q = try prepare(text, scored: false, options: options)
            var expression: String
            var from = PostgresQueryCompiler.from
            switch attribute {
            case "bundle", "bundleIdentifier": expression = "b.identifier"
            case "domain", "domainIdentifier": expression = "i.domain"
            default:
                switch AttributeSchema.kinds[attribute] ?? q.declared[attribute]?.attributeKind {
                case .string?: expression = PostgresQueryCompiler.text(attribute)
                case .stringList?:
                    expression = "v.value"
                    from += " CROSS JOIN LATERAL " + PostgresQueryCompiler.elements(attribute)
                default:
                    throw ReindexError(.usage, "--facet \(attribute): expected a string attribute (contentType, domainIdentifier, bundleIdentifier, keywords, …)")
                }
            }
            var compiler = q.compiler()
            let filters = try self.filters(q, &compiler)
            let limit = compiler.bind(String(max(0, top)), "bigint")
            let r = try query("""
                SELECT (\(expression)) COLLATE "C", count(*) FROM \(from)
                WHERE \(filters) AND \(expression) IS NOT NULL GROUP BY 1 ORDER BY 2 DESC, 1 LIMIT \(limit)
                """, compiler.parameters)
            return (0..<r.rowCount).map { (r.text($0, 0) ?? "", r.int($0, 1)) }
        }
    }

    /// One live item, whole, with its generation and when that generation was made live.
    public func item(bundle: String, uniqueIdentifier: String, now: Double = Clock.now()) throws(ReindexError) -> ItemRecord? {
        try reading("show failed") { () throws -> ItemRecord? in
            let r = try query("""
                SELECT b.identifier, i.uid, i.domain, i.expires, i.attributes, i.gen,
                    (SELECT max(r.ended) FROM runs r WHERE r.request_id = i.gen AND r.bundle = i.bundle)
                FROM items i JOIN bundles b ON b.key = i.bundle AND b.live_gen = i.gen
                WHERE i.bundle = $1 AND i.uid = $2
                """, [bundle.lowercased(), uniqueIdentifier])
            guard r.rowCount == 1 else { return nil }
            let expires = r.optionalDouble(0, 3)
            let result = SearchResult(bundleIdentifier: r.text(0, 0) ?? "", uniqueIdentifier: r.text(0, 1) ?? "", domainIdentifier: r.text(0, 2),
                                      expiration: expires, score: nil, attributes: r.text(0, 4).flatMap { try? JSONParser.parse(text: $0) } ?? .object([]))
            return ItemRecord(result: result, generation: r.int64(0, 5), generationCommitted: r.optionalDouble(0, 6), expired: expires.map { $0 <= now } ?? false)
        }
    }

    /// The declarations in effect for a query over every bundle: the union of the bundles'
    /// (where two declare a name differently, the bundle whose identifier sorts first wins).
    func allDeclarations() throws -> [String: AttributeDeclaration] {
        var result: [String: AttributeDeclaration] = [:]
        for declared in try everyBundlesDeclarations() { result.merge(declared) { first, _ in first } }
        return result
    }

    /// Each bundle's declarations, bundles in byte order of their keys.
    func everyBundlesDeclarations() throws -> [[String: AttributeDeclaration]] {
        let r = try query("SELECT attributes FROM bundles WHERE attributes IS NOT NULL ORDER BY key COLLATE \"C\"")
        return (0..<r.rowCount).compactMap { row in
            guard let text = r.text(row, 0), let json = try? JSONParser.parse(text: text) else { return nil }
            return try? AttributeDeclaration.parseAll(json)
        }
    }

    /// Runs `body` in one read-only snapshot; errors of the database become the host's
    /// (`StoreError.explained`, as from a query when `query`).
    private func reading<T>(_ what: String, query: Bool = false, _ body: () throws -> T) throws(ReindexError) -> T {
        do {
            return try snapshot(body)
        } catch let error as ReindexError {
            throw error
        } catch let error as StoreError {
            throw error.explained(index: displayLocation, doing: what, query: query)
        } catch {
            throw explain(error, doing: what)
        }
    }

    // MARK: Running

    /// (`scored`: false for a count or a facet, which read no score and so count no word's items.)
    func prepare(_ text: String, wordsOnly: Bool = false, scored: Bool = true, options: QueryOptions) throws -> PreparedPostgresQuery {
        let now = options.now ?? Clock.now()
        let declared = try options.bundle.map { try declarations(bundle: $0) } ?? allDeclarations()
        let expression: QueryExpression?
        let checked: CheckedQuery
        do {
            let words = wordsOnly ? QueryParser.splitWords(text) : []
            expression = wordsOnly ? (words.isEmpty ? nil : .words(words))
                : try QueryParser.parse(text, now: now, timeZoneOffset: options.timeZoneOffset ?? IndexStore.localTimeZoneOffset(),
                                        firstWeekday: options.firstWeekday ?? IndexStore.localFirstWeekday(for: text))
            // Checked as for SQLite: the same errors on both backends.
            checked = try CheckedQuery(expression, declared: declared)
        } catch {
            throw error.reindexError
        }
        for key in options.sort { _ = try IndexStore.sortExpression(key.attribute, declared: declared) }
        // `sorted` orders by two keys per sort key it can read, then bundle, generation and
        // identifier.
        let ranked = !checked.units.isEmpty && options.sort.isEmpty
        let sortable = options.sort.filter { PostgresQueryCompiler.sortKey($0.attribute, declared: declared) != nil }.count
        let cursor = try Cursor.decode(options, ranked: ranked, keys: sortable * 2 + 3, scoring: .bm25f)
        var q = PreparedPostgresQuery(checked: checked, options: options, now: now, unaccentSchema: nil, icu: false,
                                      cursor: cursor)
        // `unaccent` and ICU's character classes for folding and for `w` outside the full-text
        // index (words restricted to attributes read the document's slots, split by the host).
        if PostgresQueryCompiler.needsFolding(expression) {
            let r = try query("""
                SELECT (SELECT quote_ident(n.nspname) FROM pg_extension e JOIN pg_namespace n ON n.oid = e.extnamespace WHERE e.extname = 'unaccent'),
                    EXISTS (SELECT 1 FROM pg_collation WHERE collname = 'und-x-icu')
                """)
            q.unaccentSchema = r.text(0, 0)
            q.icu = r.bool(0, 1)
        }
        // Whether an item's words did not all fit in its document (`overflowed`), read with the
        // statistics of the score when the query is ranked.
        if ranked && scored {
            q.scoring = try scoring(&q, mayDefer: true)
        } else if PostgresQueryCompiler.looksForWords(expression) {
            q.overflowed = try query("SELECT \(Self.overflowed)").bool(0, 0)
        }
        return q
    }

    /// The visibility test, the options' restrictions, the query's condition and — unless
    /// `matching` is false, for items known to match (a list's) — its words, as one condition
    /// (parameters bound in `compiler`).
    func filters(_ q: PreparedPostgresQuery, _ compiler: inout PostgresQueryCompiler, matching: Bool = true) throws -> String {
        var filters = ["(i.expires IS NULL OR i.expires > \(compiler.bind(q.now)))"]
        if let bundle = q.options.bundle { filters.append("i.bundle = \(compiler.bind(bundle.lowercased(), "text"))") }
        if let domain = q.options.domain {
            let p = compiler.bind(domain, "text")
            filters.append("(i.domain = \(p) OR starts_with(i.domain, \(p) || '.'))")
        }
        do {
            let condition = try compiler.condition(q.checked)
            if !condition.isEmpty { filters.append(condition) }
        } catch {
            throw error.reindexError
        }
        if matching { for unit in q.units { filters.append(compiler.unitMatch(unit, prefix: true)) } }
        return filters.joined(separator: " AND ")
    }

    func run(_ q: PreparedPostgresQuery) throws -> QueryPage {
        let limit = max(1, q.options.limit)
        if q.units.isEmpty || !q.options.sort.isEmpty { return try sorted(q, limit: limit, cursor: q.cursor) }
        return try ranked(q, limit: limit, cursor: q.cursor)
    }

    private func result(_ r: PGResult, _ row: Int, score: Double?) -> SearchResult {
        var result = SearchResult(bundleIdentifier: r.text(row, 0) ?? "", uniqueIdentifier: r.text(row, 1) ?? "", domainIdentifier: r.text(row, 2),
                                  expiration: r.optionalDouble(row, 3), score: score,
                                  attributes: r.text(row, 4).flatMap { try? JSONParser.parse(text: $0) } ?? .object([]))
        result.rowID = r.int64(row, 5)
        return result
    }

    /// Relevance order: items where every word matches as typed, then those where the last
    /// word matches only as a prefix; within each, by score, then as on SQLite (`TieOrder`):
    /// rankingHint (none counting as 0), then bundle and identifier in byte order. The cursor
    /// is that position, in the same form as SQLite's. A common word's page is read from its
    /// rank lists when they prove it (PostgresStore+RankLists.swift), else from every match.
    ///
    /// A read that reaches the prefix pass, or a list of it, while its rarity is deferred
    /// (`scoring(_:mayDefer:)`) is read again with it: no row's score or bound is ever of a
    /// rarity not counted.
    func ranked(_ q: PreparedPostgresQuery, limit: Int, cursor: Cursor?) throws -> QueryPage {
        if q.scoring?.countsWithLists == true, let specs = rankListSpecs(q)?.words {
            // The word's lists, and its counts with them, before any page: `query` makes them and
            // reads the page again (in a snapshot that finds the counts kept, unless the items
            // changed meanwhile: then it counts).
            for var spec in specs {
                spec.countsToo = true
                rankLists.wanted[spec.key] = spec
            }
            rankLists.pageWaitsForLists = true
            return QueryPage(results: [], nextCursor: nil)
        }
        guard q.scoring?.prefixDeferred == true else { return try rankedWithScoring(q, limit: limit, cursor: cursor) }
        do {
            var reached = false
            let page = try rankedWithScoring(q, limit: limit, cursor: cursor) { read in reached = read.places.contains { $0.pass > 0 } }
            if !reached { return page }
        } catch is PrefixRarityDeferred {}
        rankLists.prefixRereads += 1
        var q = q
        q.scoring = try scoring(&q)
        return try rankedWithScoring(q, limit: limit, cursor: cursor)
    }

    /// `ranked`, in `q`'s scoring; `inspect` sees each read before it is a page.
    private func rankedWithScoring(_ q: PreparedPostgresQuery, limit: Int, cursor: Cursor?,
                                   inspect: (RankedRead) -> Void = { _ in }) throws -> QueryPage {
        if let read = try rankedFromLists(q, limit: limit, cursor: cursor) {
            inspect(read)
            return page(of: read, limit: limit)
        }
        if let together = rankLists.togetherMissing {
            // The words' own lists could not prove the page: it is the items holding them all.
            rankLists.togetherMissing = nil
            rankLists.wanted[together.key] = together
            if rankLists.makeTogetherFirst, !rankLists.makingFailed {
                rankLists.pageWaitsForLists = true  // `query` makes the list and reads the page again
                return QueryPage(results: [], nextCursor: nil)
            }
        }
        if rankLists.missing, rankLists.makeFirst, !rankLists.makingFailed, try noteWantedRankLists(q) {
            rankLists.pageWaitsForLists = true  // `query` makes the lists and reads the page again
            return QueryPage(results: [], nextCursor: nil)
        }
        let read = try rankedRows(q, limit: limit, cursor: cursor, candidates: nil)
        inspect(read)
        if read.places.count > limit { try noteWantedRankLists(q) }
        rankLists.missing = false
        return page(of: read, limit: limit)
    }

    /// A ranked read's rows (at most `limit + 1`) with each one's place in the order.
    struct RankedRead {
        var results: [SearchResult]
        var places: [RankPlace]
    }

    /// The page of a ranked read: its first `limit` rows, and a cursor after the last when
    /// there is one more.
    func page(of read: RankedRead, limit: Int) -> QueryPage {
        let rows = min(limit, read.results.count)
        let results = Array(read.results.prefix(rows))
        guard read.results.count > limit, rows > 0 else { return QueryPage(results: results, nextCursor: nil) }
        let last = read.places[rows - 1]
        let next = Cursor.relevance(scoring: .bm25f, pass: last.pass, score: last.score, hint: last.hint, bundle: last.bundle, uid: last.uid)
        return QueryPage(results: results, nextCursor: next.encoded)
    }

    /// The first `limit + 1` matches in relevance order after `cursor`, among all items or only
    /// among the `candidates` (a statement that selects item ids, bound in the same compiler).
    /// Candidates are read first and each item looked up by its id: the planner cannot tell how
    /// many items hold a word, and left to itself it would read every match and test each
    /// against the candidates.
    func rankedRows(_ q: PreparedPostgresQuery, limit: Int, cursor: Cursor?,
                    candidates: ((inout PostgresQueryCompiler) throws -> String)?) throws -> RankedRead {
        var compiler = q.compiler()
        var from = PostgresQueryCompiler.from
        if let candidates {
            from = "(\(try candidates(&compiler))) c(item) CROSS JOIN LATERAL (SELECT * FROM items WHERE id = c.item OFFSET 0) i "
                + PostgresQueryCompiler.live
        }
        let filters = try self.filters(q, &compiler)
        let prefixable = q.prefixable
        var pass = "0"
        var scores: [String] = []
        for (n, unit) in q.units.enumerated() {
            if n == prefixable {
                let passed = compiler.passAndScore(unit)
                pass = passed.pass
                scores.append(passed.score)
            } else {
                scores.append(compiler.unitScore(unit, prefix: true))
            }
        }
        var after = ""
        if case .relevance(_, let cPass, let cScore, let cHint, let cBundle, let cUID)? = cursor {
            let p = compiler.bind(String(cPass), "integer")
            let place = (compiler.bind(cScore), compiler.bind(cHint), compiler.bind(cBundle, "text"), compiler.bind(cUID, "text"))
            after = "WHERE (m.pass > \(p) OR (m.pass = \(p) AND \(Self.after(("m.score", "m.hint", "m.bkey", "m.uid"), place))))"
        }
        let count = compiler.bind(String(limit + 1), "bigint")
        let r = try page("""
            SELECT m.identifier, m.uid, m.domain, m.expires, m.attributes, m.id, m.pass, m.score, m.hint, m.bkey FROM (
                SELECT b.identifier, i.uid, i.domain, i.expires, i.attributes, i.id, i.bundle AS bkey, (\(pass)) AS pass,
                    (\(scores.joined(separator: " + ")))::float8 AS score,
                    \(Self.hintExpression) AS hint
                FROM \(from) WHERE \(filters)) m
            \(after)
            ORDER BY m.pass, m.score DESC, m.hint DESC, m.bkey COLLATE "C", m.uid COLLATE "C" LIMIT \(count)
            """, compiler.parameters)
        var read = RankedRead(results: [], places: [])
        for row in 0..<r.rowCount {
            read.results.append(result(r, row, score: r.double(row, 7)))
            read.places.append(RankPlace(pass: r.int(row, 6), score: r.double(row, 7), hint: r.double(row, 8),
                                         bundle: r.text(row, 9) ?? "", uid: r.text(row, 1) ?? ""))
        }
        return read
    }

    /// An item's rankingHint as the order reads it (none counting as 0).
    static let hintExpression = "coalesce(\(PostgresQueryCompiler.number("rankingHint")), 0)::float8"

    /// By `options.sort` (items without a key's attribute after those with it), then bundle
    /// and identifier; keyset paging on those values, as on SQLite.
    func sorted(_ q: PreparedPostgresQuery, limit: Int, cursor: Cursor?) throws -> QueryPage {
        var compiler = q.compiler()
        let filters = try self.filters(q, &compiler)
        var keys: [(expression: String, type: String, descending: Bool)] = []
        for key in q.options.sort {
            guard let sort = PostgresQueryCompiler.sortKey(key.attribute, declared: q.declared) else { continue }
            keys.append(("(\(sort.expression) IS NULL)", "boolean", false))
            keys.append((sort.expression, sort.type, key.descending))
        }
        keys.append(("i.bundle COLLATE \"C\"", "text", false))
        keys.append(("i.gen", "bigint", false))
        keys.append(("i.uid COLLATE \"C\"", "text", false))
        var after = ""
        if case .sorted(_, let values)? = cursor, values.count == keys.count {
            var chain = ""
            for n in stride(from: keys.count - 1, through: 0, by: -1) {
                let p = compiler.bind(try Self.cursorText(values[n], keys[n].type), keys[n].type)
                let beyond = "\(keys[n].expression) \(keys[n].descending ? "<" : ">") \(p)"
                chain = chain.isEmpty ? beyond : "(\(beyond) OR (\(keys[n].expression) IS NOT DISTINCT FROM \(p) AND \(chain)))"
            }
            after = " AND " + chain
        }
        let order = keys.map { $0.expression + ($0.descending ? " DESC" : "") }.joined(separator: ", ")
        let count = compiler.bind(String(limit + 1), "bigint")
        let r = try page("""
            SELECT b.identifier, i.uid, i.domain, i.expires, i.attributes, i.id, \(keys.map(\.expression).joined(separator: ", "))
            FROM \(PostgresQueryCompiler.from) WHERE \(filters)\(after)
            ORDER BY \(order) LIMIT \(count)
            """, compiler.parameters)
        let rows = min(limit, r.rowCount)
        let results = (0..<rows).map { result(r, $0, score: nil) }
        guard r.rowCount > limit, rows > 0 else { return QueryPage(results: results, nextCursor: nil) }
        let values: [JSONValue] = keys.indices.map { n in
            let column = 6 + n
            guard let text = r.text(rows - 1, column) else { return .null }
            switch keys[n].type {
            case "boolean": return .bool(text == "t")
            case "bigint": return .integer(Int64(text) ?? 0)
            case "float8": return .double(Double(text) ?? 0)
            default: return .string(text)
            }
        }
        return QueryPage(results: results, nextCursor: Cursor.sorted(ordering: Cursor.ordering(q.options.sort), values: values).encoded)
    }

    /// A cursor's value as the text of a parameter of `type`; a value of another type is a
    /// cursor of another query.
    static func cursorText(_ value: JSONValue, _ type: String) throws -> String? {
        switch (value, type) {
        case (.null, _): return nil
        case (.bool(let b), "boolean"): return b ? "true" : "false"
        case (.integer(let i), "boolean"): return i != 0 ? "true" : "false"
        case (.integer(let i), "bigint"): return String(i)
        case (.integer(let i), "float8"): return String(Double(i))
        case (.double(let d), "float8"): return String(d)
        case (.string(let s), "text"): return s
        default:
            throw ReindexError(.invalidData, "cursor: it belongs to another query (a sort value of another type); \(Cursor.again)")
        }
    }
}

extension PostgresStore: IndexQueries {}
