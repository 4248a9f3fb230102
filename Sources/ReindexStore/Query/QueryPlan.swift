import ReindexSystem
import ReindexProtocol

/// A value bound to a compiled query's SQL.
enum SQLValue: Equatable {
    case text(String)
    case double(Double)
    case int(Int64)
}

/// One group of words that must match through the full-text index, in some of its columns:
/// a bare word, or the string of a `w` comparison (`authors == "le guin"w` is one phrase).
/// The ranking scores each unit by the best column it is found in.
struct RankingUnit: Equatable {
    /// The text, handed to FTS5 inside quotes (so never as syntax).
    var text: String
    /// Columns (bits in `AttributeSchema.searched` order) the unit may match in.
    var columns: UInt8
    /// A trailing `*`: always a prefix.
    var starred: Bool
    /// The last bare word of the query: also a prefix, in the second pass.
    var prefixable: Bool
}

/// The kinds of the attributes a query can name.
enum QueryAttribute {
    case item(AttributeKind)
    /// A custom attribute a bundle declares.
    case custom(AttributeDeclaration)
    case domain, uniqueIdentifier, bundle
}

/// A checked query (`CheckedQuery`) compiled to SQLite's SQL: the full-text units that drive
/// and rank it, and an SQL condition over `items i` / `bundles b` for everything else. The
/// checks are the checked query's; an error here would be one it let through.
struct QueryPlan {
    var units: [RankingUnit] = []
    /// SQL condition (empty: none), its parameters numbered from `firstParameter`.
    var condition = ""
    var bindings: [SQLValue] = []
    /// The custom attributes the query may name (the bundles' declarations in effect).
    var declared: [String: AttributeDeclaration] = [:]
    static let firstParameter = 20
    static let allColumns: UInt8 = 0x7F

    /// Compiles a checked query to SQLite's SQL.
    static func compile(_ checked: CheckedQuery) throws(QuerySyntaxError) -> QueryPlan {
        var plan = QueryPlan()
        plan.declared = checked.declared
        plan.units = checked.units
        var conditions: [String] = []
        for condition in checked.conditions { conditions.append(try plan.sql(condition)) }
        plan.condition = conditions.joined(separator: " AND ")
        return plan
    }

    /// Checks (`CheckedQuery`) and compiles `expression`; errors name the position of the part at fault.
    static func compile(_ expression: QueryExpression?, declared: [String: AttributeDeclaration] = [:]) throws(QuerySyntaxError) -> QueryPlan {
        try compile(CheckedQuery(expression, declared: declared))
    }

    /// The operands of a chain of `&&` (`conjunction`) or of `||`, however it is nested, left
    /// to right; an expression of another kind is its own only operand. Iterative, so a long
    /// chain needs no deep stack.
    static func chain(_ expression: QueryExpression, conjunction: Bool) -> [QueryExpression] {
        var operands: [QueryExpression] = []
        var pending = [expression]
        while let next = pending.popLast() {
            switch next {
            case .and(let a, let b) where conjunction, .or(let a, let b) where !conjunction:
                pending.append(b)
                pending.append(a)
            default:
                operands.append(next)
            }
        }
        return operands
    }

    /// A unit for `text`, or nil when it holds nothing searchable (punctuation only).
    static func unit(_ text: String, columns: UInt8) -> RankingUnit? {
        var word = text
        let starred = word.hasSuffix("*")
        while word.hasSuffix("*") { word.removeLast() }
        guard word.unicodeScalars.contains(where: Folding.isWordCharacter) else { return nil }
        return RankingUnit(text: word, columns: columns, starred: starred, prefixable: false)
    }

    /// The full-text columns a `w` comparison searches; an error for attributes not searched.
    static func searchedColumns(_ c: QueryComparison) throws(QuerySyntaxError) -> UInt8 {
        if c.attribute == "*" { return allColumns }
        guard let column = AttributeSchema.searched.firstIndex(of: c.attribute) else {
            throw QuerySyntaxError(position: c.position, expected: "a full-text attribute for a word-based (w) comparison (\(AttributeSchema.searched.joined(separator: ", ")) or *)", got: "'\(c.attribute)'")
        }
        return 1 << UInt8(column)
    }

    func attribute(_ name: String, at position: Int) throws(QuerySyntaxError) -> QueryAttribute {
        try CheckedQuery.attribute(name, at: position, declared: declared)
    }

    // MARK: SQL

    mutating func bind(_ value: SQLValue) -> String {
        bindings.append(value)
        return "?\(Self.firstParameter + bindings.count - 1)"
    }

    /// The SQL for an expression used as a condition, or for its negation (`negated`).
    mutating func sql(_ expression: QueryExpression, negated: Bool = false) throws(QuerySyntaxError) -> String {
        try nested(expression, negated: negated).sql
    }

    /// The SQL of a condition and how deep SQLite's parser stack grows reading it (in levels).
    ///
    /// That stack has 100 entries (SQLite 3.40), a few for each parenthesis left open, so the
    /// SQL is written to keep it shallow:
    /// - `!` is pushed down to the terms (`!(a || b)` is `!a && !b`: a term that is NULL counts
    ///   as false, so the usual laws hold), never wrapped around a group;
    /// - each chain of `&&` or of `||` is written flat, one group;
    /// - a group's deepest operand comes first: the parser holds one entry for a `(` that opens
    ///   a group's first operand, three for one after `… AND`. (Register allocation orders
    ///   subexpressions the same way, for the same reason.)
    /// A query within `QueryLimits.standard` then stays well inside the stack, however it nests.
    mutating func nested(_ expression: QueryExpression, negated: Bool) throws(QuerySyntaxError) -> (sql: String, depth: Int) {
        switch Self.flatten(expression, negated: negated) {
        case .chain(let operands, let all, let negated):
            var parts: [(sql: String, depth: Int, order: Int)] = []
            for operand in operands {
                let part = try nested(operand, negated: negated)
                parts.append((part.sql, part.depth, parts.count))
            }
            parts.sort { $0.depth != $1.depth ? $0.depth > $1.depth : $0.order < $1.order }
            var depth = 0
            for (n, part) in parts.enumerated() { depth = max(depth, part.depth + (n == 0 ? 1 : 3)) }
            return ("(" + parts.map(\.sql).joined(separator: all ? " AND " : " OR ") + ")", depth)
        case .term(let expression, let negated):
            let term = try self.term(expression)
            return (negated ? "NOT IFNULL(\(term), 0)" : term, 0)
        }
    }

    /// An expression with its `!`s pushed down (De Morgan), as both backends' compilers write
    /// it: a chain of `&&` or of `||` written flat, whose operands each carry `negated` and are
    /// joined by AND when `all` (an `&&` chain not negated, or an `||` chain negated); or one
    /// term, negated or not.
    enum Flattened {
        case chain([QueryExpression], all: Bool, negated: Bool)
        case term(QueryExpression, negated: Bool)
    }

    static func flatten(_ expression: QueryExpression, negated: Bool) -> Flattened {
        var expression = expression
        var negated = negated
        while case .not(let inner) = expression {
            expression = inner
            negated.toggle()
        }
        switch expression {
        case .and, .or:
            var conjunction = false
            if case .and = expression { conjunction = true }
            return .chain(chain(expression, conjunction: conjunction), all: conjunction != negated, negated: negated)
        default:
            return .term(expression, negated: negated)
        }
    }

    /// The SQL of one term: words, a restriction, `InRange` or a comparison.
    mutating func term(_ expression: QueryExpression) throws(QuerySyntaxError) -> String {
        switch expression {
        case .and, .or, .not: return try sql(expression)
        case .words(let words):
            let units = words.compactMap { Self.unit($0, columns: Self.allColumns) }
            guard !units.isEmpty else { return "1" }
            var prefixed = units
            prefixed[prefixed.count - 1].prefixable = true
            return "i.id IN (SELECT rowid FROM items_fts WHERE items_fts MATCH \(bind(.text(FullText.conjunction(prefixed, prefix: true)))))"
        case .restriction(.bundle(let identifier)):
            return "i.bundle = \(bind(.text(identifier.lowercased())))"
        case .restriction(.domain(let domain)):
            let p = bind(.text(domain))
            return "(i.domain = \(p) OR (i.domain >= \(p) || '.' AND i.domain < \(p) || '/'))"
        case .inRange(let name, let low, let high, let position):
            let attribute = try attribute(name, at: position)
            let kind: AttributeKind?
            switch attribute {
            case .item(let k): kind = k
            case .custom(let declaration): kind = declaration.attributeKind
            default: kind = nil
            }
            guard kind == .number || kind == .date else {
                throw CheckedQuery.unchecked(position)
            }
            if case .custom = attribute {
                return typed(name, "num BETWEEN \(bind(.double(low))) AND \(bind(.double(high)))")
            }
            // The dates all have columns of their own, in seconds.
            return "\(Self.value(name)) BETWEEN \(bind(.double(low))) AND \(bind(.double(high)))"
        case .comparison(let c):
            return try comparison(c)
        }
    }

    static func json(_ name: String) -> String { "json_extract(i.attributes, '$.\(name)')" }

    /// The items' columns for `AttributeSchema.filtered`, in that order (the schema's migrations
    /// add them). Here rather than in `Schema` so the query compiler stands alone: the query
    /// fuzz target (Fuzz/Query) compiles it without the store.
    static let filterColumns = AttributeSchema.filterColumns

    /// The item's own indexed column for an attribute the store extracts (`contentType`,
    /// `rating`, `rankingHint` and the dates, as seconds), or nil.
    static func column(_ name: String) -> String? {
        AttributeSchema.filtered.firstIndex(of: name).map { "i." + filterColumns[$0] }
    }

    /// How a query reads an attribute: its column when it has one, else from the item's JSON.
    static func value(_ name: String) -> String { column(name) ?? json(name) }

    mutating func comparison(_ c: QueryComparison) throws(QuerySyntaxError) -> String {
        let op = c.op.rawValue == "==" ? "=" : c.op.rawValue
        if c.attribute == "*" {
            guard case .string(let text, let modifiers) = c.value, c.op == .equal || c.op == .notEqual else {
                throw CheckedQuery.unchecked(c.position)
            }
            if Self.fullTextWord(c, modifiers) { return try wordCondition(c, text: text, columns: Self.allColumns) }
            let any = AttributeSchema.searched.map { name -> String in
                AttributeSchema.kinds[name] == .stringList
                    ? "EXISTS (SELECT 1 FROM json_each(i.attributes, '$.\(name)') WHERE \(stringMatch("value", text, modifiers)))"
                    : stringMatch(Self.json(name), text, modifiers)
            }.joined(separator: " OR ")
            return c.op == .equal ? "(\(any))" : "NOT (\(any))"
        }
        let attribute = try attribute(c.attribute, at: c.position)
        if case .any = c.value { return try presence(c, attribute) }
        let column: String
        let kind: AttributeKind
        if case .custom(let declaration) = attribute, case .string(let text, let modifiers) = c.value, modifiers.contains(.wordBased) {
            return try customWordCondition(c, text: text, declaration)
        }
        if case .custom(let declaration) = attribute { return try customComparison(c, declaration) }
        switch attribute {
        case .custom(let declaration): column = Self.json(c.attribute); kind = declaration.attributeKind
        case .domain: column = "i.domain"; kind = .string
        case .uniqueIdentifier: column = "i.uid"; kind = .string
        case .bundle: column = "b.identifier"; kind = .string
        case .item(let k): column = Self.value(c.attribute); kind = k
        }
        // An extracted date column holds seconds already.
        let seconds = kind == .date && Self.column(c.attribute) != nil
        switch (kind, c.value) {
        case (.string, .string(let text, let modifiers)), (.stringList, .string(let text, let modifiers)):
            if Self.fullTextWord(c, modifiers) {
                return try wordCondition(c, text: text, columns: try Self.searchedColumns(c))
            }
            if c.op == .equal || c.op == .notEqual {
                let test = kind == .stringList
                    ? "EXISTS (SELECT 1 FROM json_each(i.attributes, '$.\(c.attribute)') WHERE \(stringMatch("value", text, modifiers)))"
                    : "IFNULL(\(stringMatch(column, text, modifiers)), 0)"
                return c.op == .equal ? test : "NOT \(test)"
            }
            guard kind == .string, modifiers.isEmpty else {
                throw CheckedQuery.unchecked(c.position)
            }
            return "\(column) \(op) \(bind(.text(text)))"
        case (.number, .number(let n)):
            return c.op == .notEqual ? "IFNULL(\(column) != \(bind(.double(n))), 1)" : "\(column) \(op) \(bind(.double(n)))"
        case (.date, .time(let t)):
            return dateComparison(column, op: c.op, t, seconds: seconds)
        case (.date, .string(let text, let modifiers)) where modifiers.isEmpty:
            guard let t = RFC3339.parse(text) else {
                throw CheckedQuery.unchecked(c.position)
            }
            return dateComparison(column, op: c.op, t, seconds: seconds)
        case (.boolean, .bool(let b)) where c.op == .equal || c.op == .notEqual:
            return c.op == .equal ? "\(column) = \(b ? 1 : 0)" : "IFNULL(\(column) != \(b ? 1 : 0), 1)"
        default:
            throw CheckedQuery.unchecked(c.position)
        }
    }

    /// `ATTRIBUTE == *` (the item has the attribute) or `!= *` (it does not).
    mutating func presence(_ c: QueryComparison, _ attribute: QueryAttribute) throws(QuerySyntaxError) -> String {
        let test: String
        switch attribute {
        case .domain: test = "IFNULL(i.domain, '') != ''"
        case .uniqueIdentifier, .bundle: test = "1"
        case .custom: test = typed(c.attribute, "1")
        case .item: test = "\(Self.value(c.attribute)) IS NOT NULL"
        }
        return c.op == .equal ? test : "NOT \(test)"
    }


    /// The items with a value of the declared attribute `name` that passes `test` (SQL over
    /// `num` and `text`), through the `item_attributes` indexes on (name, value, item).
    mutating func typed(_ name: String, _ test: String) -> String {
        "\(Self.typedSet)name = \(bind(.text(name))) AND \(test))"
    }

    /// How `typed` begins: the set of items whose value passes, built once per statement — what
    /// a filter over many items wants (the index drives the walk).
    static let typedSet = "i.id IN (SELECT item FROM item_attributes WHERE "
    /// The same test for one item (`forOneItem`): a lookup of that item's values, for a
    /// statement run once per candidate, which would otherwise build the whole set every time.
    static let typedRow = "EXISTS (SELECT 1 FROM item_attributes WHERE item = i.id AND "

    /// `condition` for a statement that tests one item at a time (the relevance walk's check).
    static func forOneItem(_ condition: String) -> String {
        condition.replacing(typedSet, with: typedRow)
    }


    /// The sort expression of a declared attribute with a single value: its value from
    /// `item_attributes`, one index lookup per item.
    static func typedValue(_ name: String, _ kind: AttributeKind, alias: String = "t") -> String {
        "(SELECT \(alias).\(kind == .string ? "text" : "num") FROM item_attributes \(alias) WHERE \(alias).item = i.id AND \(alias).name = '\(name)')"
    }

    /// A comparison on a declared attribute, through `item_attributes` (not the item's JSON):
    /// numbers, dates (as seconds) and bools compare `num`, strings and lists `text` (a list
    /// matches when any element does). `!=` is the negation of `==`, so an item without the
    /// attribute matches it, as for built-in attributes.
    mutating func customComparison(_ c: QueryComparison, _ declaration: AttributeDeclaration) throws(QuerySyntaxError) -> String {
        let kind = declaration.attributeKind
        let op = c.op.rawValue == "==" ? "=" : c.op.rawValue
        func negatable(_ equal: String) -> String { c.op == .notEqual ? "NOT \(equal)" : equal }
        switch (kind, c.value) {
        case (.string, .string(let text, let modifiers)), (.stringList, .string(let text, let modifiers)):
            if c.op == .equal || c.op == .notEqual {
                return negatable(typed(c.attribute, stringMatch("text", text, modifiers)))
            }
            guard kind == .string, modifiers.isEmpty else {
                throw CheckedQuery.unchecked(c.position)
            }
            return typed(c.attribute, "text \(op) \(bind(.text(text)))")
        case (.number, .number(let n)):
            return c.op == .notEqual ? negatable(typed(c.attribute, "num = \(bind(.double(n)))")) : typed(c.attribute, "num \(op) \(bind(.double(n)))")
        case (.date, .time(let t)):
            return c.op == .notEqual ? negatable(typed(c.attribute, "num = \(bind(.double(t)))")) : typed(c.attribute, "num \(op) \(bind(.double(t)))")
        case (.date, .string(let text, let modifiers)) where modifiers.isEmpty:
            guard let t = RFC3339.parse(text) else {
                throw CheckedQuery.unchecked(c.position)
            }
            return c.op == .notEqual ? negatable(typed(c.attribute, "num = \(bind(.double(t)))")) : typed(c.attribute, "num \(op) \(bind(.double(t)))")
        case (.boolean, .bool(let b)) where c.op == .equal || c.op == .notEqual:
            return negatable(typed(c.attribute, "num = \(b ? 1 : 0)"))
        default:
            throw CheckedQuery.unchecked(c.position)
        }
    }

    mutating func dateComparison(_ column: String, op: QueryOperator, _ t: Double, seconds isSeconds: Bool = false) -> String {
        let seconds = isSeconds ? column : "reindex_seconds(\(column))"
        switch op {
        case .equal: return "\(seconds) = \(bind(.double(t)))"
        case .notEqual: return "IFNULL(\(seconds) != \(bind(.double(t))), 1)"
        default: return "\(seconds) \(op.rawValue) \(bind(.double(t)))"
        }
    }

    /// Whether a `w` comparison goes through the full-text index: with `c` and `d` both (the
    /// index ignores case and accents) on a full-text attribute or `*`. Any other `w`
    /// comparison on a built-in attribute is Core Spotlight's word match, value by value
    /// (`Folding.wordMatches`): case and accents count unless `c` and `d`, and words split also
    /// where a lowercase letter meets an uppercase one.
    static func fullTextWord(_ c: QueryComparison, _ modifiers: StringModifiers) -> Bool {
        modifiers.isSuperset(of: [.wordBased, .caseInsensitive, .diacriticInsensitive])
            && (c.attribute == "*" || AttributeSchema.searched.contains(c.attribute))
    }


    mutating func wordCondition(_ c: QueryComparison, text: String, columns: UInt8) throws(QuerySyntaxError) -> String {
        guard let unit = Self.unit(text, columns: columns) else { return c.op == .equal ? "0" : "1" }
        let test = "i.id IN (SELECT rowid FROM items_fts WHERE items_fts MATCH \(bind(.text(FullText.phrase(unit, prefix: false)))))"
        return c.op == .equal ? test : "NOT \(test)"
    }

    /// A `w` comparison on a searchable custom attribute: its words, in order, in that
    /// attribute's full-text row (`attributes_fts`; row id = item id × 64 + slot).
    mutating func customWordCondition(_ c: QueryComparison, text: String, _ declaration: AttributeDeclaration) throws(QuerySyntaxError) -> String {
        guard let unit = Self.unit(text, columns: Self.allColumns) else { return c.op == .equal ? "0" : "1" }
        let phrase = FullText.quoted(unit.text) + (unit.starred ? "*" : "")
        let test = "i.id IN (SELECT rowid >> 6 FROM attributes_fts WHERE attributes_fts MATCH \(bind(.text("value : " + phrase))) AND name = \(bind(.text(c.attribute))))"
        return c.op == .equal ? test : "NOT \(test)"
    }

    /// `value` equals the pattern: exactly when it has no `*` and no modifiers (which an index
    /// can serve), else through `reindex_match`.
    mutating func stringMatch(_ value: String, _ pattern: String, _ modifiers: StringModifiers) -> String {
        if modifiers.isEmpty && !Self.hasWildcard(pattern) {
            return "\(value) = \(bind(.text(Self.literal(pattern))))"
        }
        return "reindex_match(\(value), \(bind(.text(pattern))), \(bind(.int(Int64(modifiers.rawValue)))))"
    }

    /// Whether a pattern has a `*` or `?` that is not escaped.
    static func hasWildcard(_ pattern: String) -> Bool {
        var escaped = false
        for c in pattern.unicodeScalars {
            if escaped { escaped = false } else if c == "\\" { escaped = true } else if c == "*" || c == "?" { return true }
        }
        return false
    }

    /// A pattern without wildcards as the text it matches: `\*` a star, `\?` a question mark.
    static func literal(_ pattern: String) -> String {
        pattern.replacingOccurrences(of: "\\*", with: "*").replacingOccurrences(of: "\\?", with: "?")
    }

    static func describe(_ value: QueryValue) -> String {
        switch value {
        case .any: return "*"
        case .string(let s, _): return "\"\(s)\""
        case .number(let n): return "the number \(n)"
        case .time: return "a $time value"
        case .bool(let b): return "\(b)"
        }
    }
}

/// FTS5 expressions built from ranking units. Every piece of user text is inside a quoted
/// FTS5 string (quotes doubled), so no FTS5 operator in the input is ever interpreted.
enum FullText {
    static let columnNames = AttributeSchema.searched

    static func quoted(_ text: String) -> String {
        "\"" + text.replacingOccurrences(of: "\"", with: "\"\"") + "\""
    }

    static func columnFilter(_ columns: UInt8) -> String {
        "{" + columnNames.indices.filter { columns & (1 << UInt8($0)) != 0 }.map { columnNames[$0] }.joined(separator: " ") + "}"
    }

    /// The unit as one phrase, restricted to `columns` (default: the unit's).
    static func phrase(_ unit: RankingUnit, prefix: Bool, columns: UInt8? = nil) -> String {
        let star = unit.starred || (prefix && unit.prefixable) ? "*" : ""
        let body = quoted(unit.text) + star
        let cols = columns ?? unit.columns
        return cols == QueryPlan.allColumns ? body : "\(columnFilter(cols)) : \(body)"
    }

    /// Every unit must match.
    static func conjunction(_ units: [RankingUnit], prefix: Bool) -> String {
        units.map { "(" + phrase($0, prefix: prefix) + ")" }.joined(separator: " AND ")
    }
}
