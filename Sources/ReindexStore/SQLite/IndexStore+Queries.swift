import ReindexProtocol
import ReindexSystem
import Foundation

/// A compiled query with its options, as the engine runs it.
struct PreparedQuery {
    var plan: QueryPlan
    var options: QueryOptions
    var now: Double
    /// `options.after`, checked against the query's order.
    var cursor: Cursor?
}

extension IndexStore {
    /// Runs a query of the language in docs/QUERIES.md and returns one page, best first (or in
    /// `options.sort` order; ties by bundle and identifier). The page reads one snapshot; the
    /// cursor continues after its last result, so paging returns every match once while nothing
    /// changes, at a cost that does not grow with the page number.
    public func query(_ text: String, options: QueryOptions = QueryOptions()) throws(ReindexError) -> QueryPage {
        let prepared = try prepare(text, options: options)
        do {
            return try readingRankLists { () throws(StoreError) in try run(prepared) }
        } catch {
            throw error.explained(index: path, doing: "search failed", query: true)
        }
    }

    /// The exact number of live, unexpired items the query matches.
    public func count(_ text: String, options: QueryOptions = QueryOptions()) throws(ReindexError) -> Int {
        let prepared = try prepare(text, options: options)
        do {
            return try read { () throws(StoreError) in try count(prepared) }
        } catch {
            throw error.explained(index: path, doing: "count failed", query: true)
        }
    }

    /// The most common values of a string attribute (contentType, domainIdentifier,
    /// bundleIdentifier, keywords, …) among the query's matches, with their counts.
    public func facet(_ text: String, attribute: String, top: Int = 10, options: QueryOptions = QueryOptions()) throws(ReindexError) -> [(value: String, count: Int)] {
        let attribute = QueryParser.attributeName(attribute)  // a kMDItem… name is the index's own
        let prepared = try prepare(text, options: options)
        let expression: String
        var list = false
        switch attribute {
        case "bundle", "bundleIdentifier": expression = "b.identifier"
        case "domain", "domainIdentifier": expression = "i.domain"
        default:
            switch AttributeSchema.kinds[attribute] ?? prepared.plan.declared[attribute]?.attributeKind {
            case .string?: expression = QueryPlan.json(attribute)
            case .stringList?: expression = "v.value"; list = true
            default: throw ReindexError(.usage, "--facet \(attribute): expected a string attribute (contentType, domainIdentifier, bundleIdentifier, keywords, …)")
            }
        }
        do {
            return try read { () throws(StoreError) -> [(value: String, count: Int)] in
                // The query's functions (`reindex_match` for `c` and `d`, …), as for a page.
                try prepareQueries()
                let from = list ? "items i JOIN bundles b ON b.key = i.bundle AND b.live_gen = i.gen JOIN json_each(i.attributes, '$.\(attribute)') v" : nil
                let s = try matchStatement(prepared, select: "\(expression), count(*)", from: from,
                                           tail: " AND \(expression) IS NOT NULL GROUP BY 1 ORDER BY 2 DESC, 1 LIMIT ?5")
                s.bind(5, top)
                var result: [(value: String, count: Int)] = []
                while try s.step() { result.append((s.text(0) ?? "", s.int(1))) }
                s.reset()
                return result
            }
        } catch {
            throw error.explained(index: path, doing: "facet failed", query: true)
        }
    }

    /// Runs the query like `query(_:options:)` and returns SQLite's query plan (`EXPLAIN QUERY
    /// PLAN`, one line per step) of each statement it filtered and sorted with: which indexes a
    /// filter or sort uses. Relevance walks of words alone use no such statement.
    public func queryPlan(_ text: String, options: QueryOptions = QueryOptions()) throws(ReindexError) -> [String] {
        queryState.explained = []
        defer { queryState.explained = nil }
        _ = try query(text, options: options)
        return queryState.explained ?? []
    }

    /// One live item, whole.
    public func item(bundle: String, uniqueIdentifier: String, now: Double = Clock.now()) throws(ReindexError) -> ItemRecord? {
        do {
            return try read { () throws(StoreError) -> ItemRecord? in
                let s = try statement("""
                    SELECT b.identifier, i.uid, i.domain, i.expires, i.attributes, i.gen,
                        (SELECT max(r.ended) FROM runs r WHERE r.request_id = i.gen AND r.bundle = i.bundle)
                    FROM items i JOIN bundles b ON b.key = i.bundle AND b.live_gen = i.gen
                    WHERE i.bundle = ?1 AND i.uid = ?2
                    """)
                s.bind(1, bundle.lowercased())
                s.bind(2, uniqueIdentifier)
                defer { s.reset() }
                guard try s.step() else { return nil }
                let expires = s.optionalDouble(3)
                let result = SearchResult(bundleIdentifier: s.text(0) ?? "", uniqueIdentifier: s.text(1) ?? "", domainIdentifier: s.text(2),
                                          expiration: expires, score: nil, attributes: (try? JSONParser.parse(s.bytes(4))) ?? .object([]))
                return ItemRecord(result: result, generation: s.int64(5), generationCommitted: s.optionalDouble(6), expired: expires.map { $0 <= now } ?? false)
            }
        } catch {
            throw error.explained(index: path, doing: "show failed")
        }
    }

    func prepare(_ text: String, options: QueryOptions) throws(ReindexError) -> PreparedQuery {
        let now = options.now ?? Clock.now()
        let plan: QueryPlan
        let declared: [String: AttributeDeclaration]
        do throws(StoreError) {
            if let bundle = options.bundle { declared = try declarations(bundle: bundle) } else { declared = try allDeclarations() }
        } catch {
            throw error.explained(index: path, doing: "search failed")
        }
        do {
            plan = try QueryPlan.compile(try QueryParser.parse(text, now: now, timeZoneOffset: options.timeZoneOffset ?? Self.localTimeZoneOffset(),
                                                           firstWeekday: options.firstWeekday ?? Self.localFirstWeekday(for: text)), declared: declared)
        } catch {
            throw error.reindexError
        }
        for key in options.sort { _ = try Self.sortExpression(key.attribute, declared: declared) }
        // `sorted` orders by two keys per sort key, then bundle, generation and identifier.
        let ranked = !plan.units.isEmpty && options.sort.isEmpty
        let cursor = try Cursor.decode(options, ranked: ranked, keys: options.sort.count * 2 + 3, scoring: .bm25f)
        return PreparedQuery(plan: plan, options: options, now: now, cursor: cursor)
    }

    /// The locale's first day of the week (1 Sunday … 7 Saturday), for `$time.this_week`: only
    /// looked up for a query with a `$` in it, as the current calendar costs a search's process
    /// about a tenth of its time (the locale and time zone read from files).
    static func localFirstWeekday(for text: String) -> Int {
        text.utf8.contains(UInt8(ascii: "$")) ? Calendar.current.firstWeekday : 1
    }

    static func localTimeZoneOffset() -> Int {
        var t = time(nil)
        var parts = tm()
        localtime_r(&t, &parts)
        return parts.tm_gmtoff
    }

    // MARK: Running

    /// Words only (the meaning `search` always had), ranked as queries are.
    func wordsPlan(_ text: String) -> QueryPlan {
        (try? QueryPlan.compile(.words(QueryParser.splitWords(text)))) ?? QueryPlan()
    }

    func run(_ q: PreparedQuery) throws(StoreError) -> QueryPage {
        try prepareQueries()
        let limit = max(1, q.options.limit)
        var page: QueryPage
        if q.plan.units.isEmpty || !q.options.sort.isEmpty {
            page = try sorted(q, limit: limit, cursor: q.cursor)
        } else {
            page = try ranked(q, limit: limit, cursor: q.cursor)
        }
        if !q.plan.units.isEmpty {
            let terms = q.plan.units.flatMap { Folding.tokens($0.text) }
            for n in page.results.indices {
                page.results[n].snippet = Self.snippet(page.results[n].attributes, terms: terms, markers: q.options.snippetMarkers)
            }
        }
        return page
    }

    /// Attributes in the order a snippet is taken from: body text first (the title is shown anyway).
    static let snippetOrder = ["contentDescription", "textContent", "keywords", "alternateNames", "authors", "displayName", "title"]

    static func snippet(_ attributes: JSONValue, terms: [String], markers: (open: String, close: String)) -> Snippet? {
        for name in snippetOrder {
            let texts: [String]
            switch attributes[name] {
            case .string(let s)?: texts = [s]
            case .array(let list)?: texts = list.compactMap(\.stringValue)
            default: continue
            }
            for text in texts {
                var shown = text
                if shown.count > 200, let hit = Folding.tokens(shown).firstIndex(where: { token in terms.contains { token.hasPrefix($0) } }) {
                    // Long text: a window around the first match.
                    let words = shown.split(separator: " ", omittingEmptySubsequences: false)
                    let start = max(0, min(hit, words.count) - 8)
                    shown = (start > 0 ? "… " : "") + words[start..<min(words.count, start + 30)].joined(separator: " ") + (start + 30 < words.count ? " …" : "")
                }
                if let marked = Folding.highlight(shown, terms: terms, open: markers.open, close: markers.close) {
                    return Snippet(attribute: name, text: marked)
                }
            }
        }
        return nil
    }

    /// The visibility test, the options' restrictions and the plan's condition, over `items i`
    /// joined to `bundles b` on the live generation. Parameters: ?2 now, ?3 bundle, ?9 domain,
    /// ?20… the plan's.
    func filterSQL(_ q: PreparedQuery) -> String {
        var sql = "(i.expires IS NULL OR i.expires > ?2)"
        if q.options.bundle != nil { sql += " AND i.bundle = ?3" }
        if q.options.domain != nil { sql += " AND " + Self.domainCondition("i") }
        if !q.plan.condition.isEmpty { sql += " AND " + q.plan.condition }
        return sql
    }

    func bindFilters(_ s: SQLiteStatement, _ q: PreparedQuery) {
        s.bind(2, q.now)
        if let bundle = q.options.bundle { s.bind(3, bundle.lowercased()) }
        if let domain = q.options.domain { s.bind(9, domain) }
        for (n, value) in q.plan.bindings.enumerated() {
            let index = Int32(QueryPlan.firstParameter + n)
            switch value {
            case .text(let t): s.bind(index, t)
            case .double(let d): s.bind(index, d)
            case .int(let i): s.bind(index, i)
            }
        }
    }

    /// `SELECT select FROM … WHERE <filters> [AND the words match] tail`, bound but for the
    /// tail's own parameters. The words' full-text query is ?4.
    func matchStatement(_ q: PreparedQuery, select: String, from: String? = nil, tail: String) throws(StoreError) -> SQLiteStatement {
        var sql = "SELECT \(select) FROM \(from ?? "items i JOIN bundles b ON b.key = i.bundle AND b.live_gen = i.gen") WHERE " + filterSQL(q)
        if !q.plan.units.isEmpty { sql += " AND i.id IN (SELECT rowid FROM items_fts WHERE items_fts MATCH ?4)" }
        let s = try statement(sql + tail)
        if queryState.explained != nil {
            let plan = try connection.prepare("EXPLAIN QUERY PLAN " + sql + tail)
            while try plan.step() { queryState.explained?.append(plan.text(3) ?? "") }
        }
        bindFilters(s, q)
        if !q.plan.units.isEmpty { s.bind(4, FullText.conjunction(q.plan.units, prefix: true)) }
        return s
    }

    func result(_ s: SQLiteStatement, score: Double?) -> SearchResult {
        var r = SearchResult(bundleIdentifier: s.text(0) ?? "", uniqueIdentifier: s.text(1) ?? "", domainIdentifier: s.text(2),
                             expiration: s.optionalDouble(3), score: score, attributes: (try? JSONParser.parse(s.bytes(4))) ?? .object([]))
        r.rowID = s.int64(5)
        return r
    }

    /// Sort expressions for an attribute a query may sort by.
    static func sortExpression(_ attribute: String, declared: [String: AttributeDeclaration] = [:]) throws(ReindexError) -> String {
        switch attribute {
        case "bundleIdentifier": return "b.key"
        case "domainIdentifier": return "i.domain"
        case "uniqueIdentifier": return "i.uid"
        case "expirationDate": return "i.expires"
        default:
            if let column = QueryPlan.column(attribute) { return column }
            if AttributeSchema.kinds[attribute] == nil, let kind = declared[attribute]?.attributeKind, kind != .stringList {
                return QueryPlan.typedValue(attribute, kind)
            }
            switch AttributeSchema.kinds[attribute] ?? declared[attribute]?.attributeKind {
            case .date?: return "reindex_seconds(\(QueryPlan.json(attribute)))"
            case .stringList?: return "json_extract(i.attributes, '$.\(attribute)[0]')"
            case .base64?, nil:
                throw ReindexError(.usage, "--sort \(attribute): expected a known attribute (title, rating, startDate, contentType, domainIdentifier, …)")
            default: return QueryPlan.json(attribute)
            }
        }
    }

    /// Sorted by `options.sort` (then bundle and identifier), or, without words, by bundle and
    /// identifier alone; keyset paging on those values.
    func sorted(_ q: PreparedQuery, limit: Int, cursor: Cursor?) throws(StoreError) -> QueryPage {
        var keys: [(expression: String, descending: Bool)] = []
        for key in q.options.sort {
            guard let expression = try? Self.sortExpression(key.attribute, declared: q.plan.declared) else { continue }
            keys.append(("(\(expression) IS NULL)", false))
            keys.append((expression, key.descending))
        }
        // Ties by bundle and identifier: (bundle, gen, uid) is the order of the items' unique
        // index, and every visible row of a bundle has its live gen, so a query without sort
        // keys reads its first page in index order instead of sorting every match.
        keys.append(("i.bundle", false))
        keys.append(("i.gen", false))
        keys.append(("i.uid", false))
        // Keyset: (k1, k2, …) after the cursor's values, key by key, each in its direction.
        var after = ""
        var cursorValues: [JSONValue] = []
        if case .sorted(_, let values)? = cursor, values.count == keys.count {
            cursorValues = values
            var chain = ""
            for n in stride(from: keys.count - 1, through: 0, by: -1) {
                let p = "?\(100 + n)"
                let beyond = "\(keys[n].expression) \(keys[n].descending ? "<" : ">") \(p)"
                chain = chain.isEmpty ? beyond : "(\(beyond) OR (\(keys[n].expression) IS \(p) AND \(chain)))"
            }
            after = " AND " + chain
        }
        let select = "b.identifier, i.uid, i.domain, i.expires, i.attributes, i.id, " + keys.map(\.expression).joined(separator: ", ")
        // When the first sort key is an indexed column, the items that have it and those that do
        // not are read apart, each in an order its index can give (`x` alone, where `(x IS NULL)`
        // is constant): the first page walks the index instead of sorting every match.
        var phases: [(condition: String, keys: ArraySlice<(expression: String, descending: Bool)>)] = [("", keys[...])]
        var phaseAfter: String? = nil
        // The generation is left out of that order: every visible row of a bundle has its live
        // generation, so it changes nothing, and the indexes do not hold it.
        // A declared single-valued attribute first: the items with it are read from its
        // `item_attributes` index in value order (joined as `a`), then those without.
        var from: [String?] = [nil, nil]
        if let first = q.options.sort.first, let column = QueryPlan.column(first.attribute), keys.count >= 2 {
            let withoutGeneration = keys.filter { $0.expression != "i.gen" }
            phases = [(" AND \(column) IS NOT NULL", withoutGeneration.dropFirst()), (" AND \(column) IS NULL", withoutGeneration.dropFirst(2))]
        } else if let first = q.options.sort.first, AttributeSchema.kinds[first.attribute] == nil,
                  let kind = q.plan.declared[first.attribute]?.attributeKind, kind != .stringList, keys.count >= 2 {
            let expression = keys[1].expression
            let value = "a.\(kind == .string ? "text" : "num")"
            let withoutGeneration = keys.filter { $0.expression != "i.gen" }
            var present = Array(withoutGeneration.dropFirst())
            present[0].expression = value
            phases = [(" AND a.name = '\(first.attribute)' AND \(value) IS NOT NULL", present[...]), (" AND \(expression) IS NULL", withoutGeneration.dropFirst(2))]
            from = ["item_attributes a JOIN items i ON i.id = a.item JOIN bundles b ON b.key = i.bundle AND b.live_gen = i.gen", nil]
            if !after.isEmpty { phaseAfter = after.replacingOccurrences(of: expression, with: value) }
        }
        var results: [SearchResult] = []
        var last: [JSONValue] = []
        for (n, phase) in phases.enumerated() {
            let order = phase.keys.map { $0.expression + ($0.descending ? " DESC" : "") }.joined(separator: ", ")
            let joined = n == 0 && from[0] != nil
            let s = try matchStatement(q, select: joined ? select.replacingOccurrences(of: keys[1].expression, with: phase.keys.first?.expression ?? "") : select,
                                       from: from[n], tail: phase.condition + ((joined ? phaseAfter : nil) ?? after) + " ORDER BY \(order) LIMIT ?5")
            for (n, value) in cursorValues.enumerated() {
                let index = Int32(100 + n)
                switch value {
                case .string(let t): s.bind(index, t)
                case .integer(let i): s.bind(index, i)
                case .double(let d): s.bind(index, d)
                default: s.bind(index, nil as String?)
                }
            }
            s.bind(5, limit + 1 - results.count)
            defer { s.reset() }
            while try s.step() {
                if results.count == limit { return QueryPage(results: results, nextCursor: Cursor.sorted(ordering: Cursor.ordering(q.options.sort), values: last).encoded) }
                results.append(result(s, score: nil))
                last = (0..<keys.count).map { n in
                    let column = Int32(6 + n)
                    if s.isNull(column) { return .null }
                    switch s.columnType(column) {
                    case .integer: return .integer(s.int64(column))
                    case .double: return .double(s.double(column))
                    default: return .string(s.text(column) ?? "")
                    }
                }
            }
        }
        return QueryPage(results: results, nextCursor: nil)
    }

    /// The exact count. Words alone (no filters) are counted by the full-text index, less the
    /// matching rows searches cannot see (staged, replaced or expired), so a common word is
    /// counted without reading its items.
    func count(_ q: PreparedQuery) throws(StoreError) -> Int {
        try prepareQueries()
        if !q.plan.units.isEmpty && q.plan.condition.isEmpty && q.options.bundle == nil && q.options.domain == nil {
            let expression = FullText.conjunction(q.plan.units, prefix: true)
            let all = try fullTextCount(expression)
            // The rows searches cannot see (other generations of each bundle, expired items),
            // when there are few enough to check one by one. Each bundle's other generations
            // are two ranges of the items' unique index.
            var bundles: [(String, Int64)] = []
            let listBundles = try statement("SELECT key, live_gen FROM bundles")
            while try listBundles.step() { bundles.append((listBundles.text(0) ?? "", listBundles.int64(1))) }
            listBundles.reset()
            var rows = Set<Int64>()
            let others = try statement("SELECT id FROM items WHERE bundle = ?1 AND gen < ?2 UNION ALL SELECT id FROM items WHERE bundle = ?1 AND gen > ?2 LIMIT 20001")
            for (key, live) in bundles where rows.count <= 20_000 {
                others.reset()
                others.bind(1, key)
                others.bind(2, live)
                while try others.step() { rows.insert(others.int64(0)) }
            }
            others.reset()
            let expired = try statement("SELECT id FROM items WHERE expires <= ?1 LIMIT 20001")
            expired.bind(1, q.now)
            while try expired.step(), rows.count <= 20_000 { rows.insert(expired.int64(0)) }
            expired.reset()
            if rows.count <= 20_000 {
                let probe = try statement("SELECT 1 FROM items_fts WHERE items_fts MATCH ?1 AND rowid = ?2")
                var invisible = 0
                for row in rows {
                    probe.reset()
                    probe.bind(1, expression)
                    probe.bind(2, row)
                    if try probe.step() { invisible += 1 }
                }
                probe.reset()
                return all - invisible
            }
        }
        let s = try matchStatement(q, select: "count(*)", tail: "")
        defer { s.reset() }
        return try s.step() ? s.int(0) : 0
    }
}

extension IndexStore: IndexQueries {}
