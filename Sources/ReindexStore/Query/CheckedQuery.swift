import ReindexProtocol

/// A parsed query checked once, for either backend: every attribute it names is known (built in
/// or declared), every value suits its attribute, every operator its value; and it is split the
/// one way both backends read it — the full-text units that drive and rank a search (the
/// top-level words, and `w` comparisons through the full-text index), and the conditions, every
/// other top-level conjunct, left to right.
///
/// Each backend only compiles it: `QueryPlan` to SQLite's SQL, `PostgresQueryCompiler` to
/// PostgreSQL's. So a malformed query gets the same error, at the same position, on both, and
/// neither compiler decides what a query means.
struct CheckedQuery {
    /// The query as parsed; nil for an empty one.
    let expression: QueryExpression?
    /// The full-text units, in the query's order; only the last bare word is `prefixable`.
    private(set) var units: [RankingUnit] = []
    /// The top-level conjuncts that are not units.
    private(set) var conditions: [QueryExpression] = []
    /// The custom attributes the query may name (the bundles' declarations in effect).
    let declared: [String: AttributeDeclaration]

    /// Checks `expression`; an error names the position of the part at fault (the first one,
    /// left to right).
    init(_ expression: QueryExpression?, declared: [String: AttributeDeclaration] = [:]) throws(QuerySyntaxError) {
        self.expression = expression
        self.declared = declared
        guard let expression else { return }
        var lastWords: Int? = nil
        for conjunct in QueryPlan.chain(expression, conjunction: true) {
            switch conjunct {
            case .words(let words):
                for word in words {
                    guard let unit = QueryPlan.unit(word, columns: QueryPlan.allColumns) else { continue }
                    units.append(unit)
                }
                lastWords = units.count - 1
                continue
            case .comparison(let c) where c.op == .equal && declared[c.attribute] == nil:
                if case .string(let text, let modifiers) = c.value, QueryPlan.fullTextWord(c, modifiers) {
                    let columns = try QueryPlan.searchedColumns(c)
                    guard var unit = QueryPlan.unit(text, columns: columns) else { continue }
                    unit.prefixable = false
                    units.append(unit)
                    continue
                }
            default:
                break
            }
            try check(conjunct)
            conditions.append(conjunct)
        }
        // Only the query's final bare word is still being typed.
        if let last = lastWords, last >= 0, last == units.count - 1, units.indices.contains(last) {
            units[last].prefixable = true
        }
    }

    /// The attribute `name` names, or an error listing the known ones.
    static func attribute(_ name: String, at position: Int, declared: [String: AttributeDeclaration]) throws(QuerySyntaxError) -> QueryAttribute {
        switch name {
        case "domainIdentifier": return .domain
        case "uniqueIdentifier": return .uniqueIdentifier
        case "bundleIdentifier": return .bundle
        default:
            if let kind = AttributeSchema.kinds[name] { return .item(kind) }
            if let declaration = declared[name] { return .custom(declaration) }
            throw QuerySyntaxError.unknownAttribute(name, at: position, declared: declared.keys.sorted())
        }
    }

    /// Checks every term of `expression`, left to right (the order both compilers write them).
    private func check(_ expression: QueryExpression) throws(QuerySyntaxError) {
        switch QueryPlan.flatten(expression, negated: false) {
        case .chain(let operands, _, _):
            for operand in operands { try check(operand) }
        case .term(let term, _):
            try checkTerm(term)
        }
    }

    private func checkTerm(_ expression: QueryExpression) throws(QuerySyntaxError) {
        switch expression {
        case .and, .or, .not: try check(expression)
        case .words, .restriction: return
        case .inRange(let name, _, _, let position):
            let kind: AttributeKind?
            switch try Self.attribute(name, at: position, declared: declared) {
            case .item(let k): kind = k
            case .custom(let declaration): kind = declaration.attributeKind
            default: kind = nil
            }
            guard kind == .number || kind == .date else {
                throw QuerySyntaxError(position: position, expected: "a number or date attribute in InRange (rating, rankingHint, latitude, longitude, startDate, endDate, contentCreationDate, contentModificationDate or a declared one)", got: "'\(name)'")
            }
        case .comparison(let c):
            try checkComparison(c)
        }
    }

    private func checkComparison(_ c: QueryComparison) throws(QuerySyntaxError) {
        if c.attribute == "*" {
            guard case .string(_, let modifiers) = c.value, c.op == .equal || c.op == .notEqual else {
                throw QuerySyntaxError(position: c.position, expected: "== or != and a \"string\" after *", got: "'\(c.op.rawValue)'")
            }
            if modifiers.contains(.wordBased) { try Self.checkWordComparison(c) }
            return
        }
        let attribute = try Self.attribute(c.attribute, at: c.position, declared: declared)
        if case .any = c.value { return try Self.checkPresence(c) }
        let kind: AttributeKind
        switch attribute {
        case .custom(let declaration):
            if case .string(_, let modifiers) = c.value, modifiers.contains(.wordBased) {
                return try Self.checkWordComparison(c, declaration)
            }
            kind = declaration.attributeKind
        case .domain, .uniqueIdentifier, .bundle: kind = .string
        case .item(let k): kind = k
        }
        switch (kind, c.value) {
        case (.string, .string(_, let modifiers)), (.stringList, .string(_, let modifiers)):
            // A `w` comparison (through the full-text index or word by word) is `==` or `!=`.
            if modifiers.contains(.wordBased) { try Self.checkWordComparison(c) }
            if c.op == .equal || c.op == .notEqual { return }
            guard kind == .string, modifiers.isEmpty else {
                throw QuerySyntaxError(position: c.position, expected: "== or != for \(c.attribute) with modifiers or a list", got: "'\(c.op.rawValue)'")
            }
        case (.number, .number), (.date, .time):
            return
        case (.date, .string(let text, let modifiers)) where modifiers.isEmpty:
            guard RFC3339.parse(text) != nil else {
                throw QuerySyntaxError(position: c.position, expected: "an RFC 3339 date for \(c.attribute) (or $time.iso(…))", got: "\"\(text)\"")
            }
        case (.boolean, .bool) where c.op == .equal || c.op == .notEqual:
            return
        default:
            throw Self.mismatch(c, kind)
        }
    }

    /// The error a compiler gives for what the checked query would have refused: never, for a
    /// query that was checked.
    static func unchecked(_ position: Int) -> QuerySyntaxError {
        QuerySyntaxError(position: position, expected: "a query checked first (CheckedQuery)", got: "one that was not")
    }

    /// `*` as a value is for `==` and `!=` only, on both backends.
    static func checkPresence(_ c: QueryComparison) throws(QuerySyntaxError) {
        guard c.op == .equal || c.op == .notEqual else {
            throw QuerySyntaxError(position: c.position, expected: "== or != before * (whether \(c.attribute) is there)", got: "'\(c.op.rawValue)'")
        }
    }

    /// What a `w` comparison must be, on either backend: `==` or `!=`, and on a declared
    /// attribute, one declared `searchable`.
    static func checkWordComparison(_ c: QueryComparison, _ declaration: AttributeDeclaration? = nil) throws(QuerySyntaxError) {
        if let declaration, !declaration.searchable {
            throw QuerySyntaxError(position: c.position, expected: "a searchable attribute for a word-based (w) comparison (\(c.attribute) is declared without \"searchable\": true)", got: "'\(c.attribute)'")
        }
        guard c.op == .equal || c.op == .notEqual else {
            throw QuerySyntaxError(position: c.position, expected: "== or != for a word-based (w) comparison", got: "'\(c.op.rawValue)'")
        }
    }

    /// A comparison whose value does not suit its attribute's kind: what was expected instead.
    static func mismatch(_ c: QueryComparison, _ kind: AttributeKind) -> QuerySyntaxError {
        let wanted: String
        switch kind {
        case .string, .stringList: wanted = "a \"string\""
        case .number: wanted = "a number"
        case .date: wanted = "a date ($time.now, $time.today(N), $time.iso(DATE) or \"2026-01-01T00:00:00Z\")"
        case .boolean: wanted = "true or false with == or !="
        case .base64: wanted = "nothing: \(c.attribute) cannot be compared"
        }
        return QuerySyntaxError(position: c.position, expected: "\(wanted) for \(c.attribute)", got: QueryPlan.describe(c.value))
    }
}
