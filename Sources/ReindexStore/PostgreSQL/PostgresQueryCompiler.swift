import ReindexProtocol

/// The query language (docs/QUERIES.md) compiled to PostgreSQL SQL, from the same checked
/// query (`CheckedQuery`) the SQLite index compiles: the full-text units that drive and rank a
/// search, and one boolean condition over `items i`, `bundles b` and the item's attributes as
/// `jsonb` (`x.j`) for everything else.
///
/// The checks — unknown attributes, values that do not suit an attribute, `w` on an attribute
/// that is not searched — are the checked query's, so a malformed query gets the same error,
/// with the same position, on both backends. Every value is a bound parameter; words are split
/// by the full-text index's own tokenizer (`FullTextWords`, the code that made the document) and
/// go to the server as a quoted `tsquery` literal, so no text-search operator in the input is
/// ever interpreted.
///
/// Where SQLite reads an attribute's own column or `item_attributes` row, PostgreSQL reads the
/// item's JSON, with the same meaning: a value of the wrong type (written before its attribute
/// was declared) counts as absent, dates compare as seconds since 1970 with their offsets
/// applied, strings compare byte by byte (`COLLATE "C"`, SQLite's `BINARY`).
struct PostgresQueryCompiler {
    /// Parameters bound so far ($1…).
    var parameters: [String?] = []
    let declared: [String: AttributeDeclaration]
    /// The schema of the `unaccent` function, quoted (for `d`), when the query needs it.
    let unaccentSchema: String?
    /// Whether an ICU collation is there to lowercase any script (else `lower` of the database's).
    let icu: Bool
    /// What a relevance score reads (`unitScore`); nil for a query without one.
    var scoring: Scoring?

    /// The statistics of one query's score: each unit's rarity in each pass, by its phrase
    /// (`FullText.phrase`), and the average length.
    struct Scoring {
        var rarities: [String: Double]
        var average: Double
        /// The prefix pass's rarity is not counted yet (`PostgresStore.scoring`): a page of the
        /// first pass alone does not read it.
        var prefixDeferred = false
        /// No rarity is counted yet: the query's one word has no lists and no count, and both are
        /// made in one read of its items before its page (`PostgresStore.countsWithLists`).
        var countsWithLists = false
    }

    /// Plain words must be rechecked against the built-in attributes' slots of the document when
    /// some bundle declares an attribute `searchable` but not `searchableByDefault`: the document
    /// holds its text (for `NAME == "…"w`), which plain words must not find.
    var recheckWords: Bool { recheckAlways || declared.values.contains { $0.searchable && !$0.searchableByDefault } }
    /// Recheck plain words whatever the declarations in effect (a word's count over every
    /// bundle, where any may hold such text: `PostgresStore.scoring`).
    var recheckAlways = false
    /// Some item's document holds not every word of the item (`PostgresDocument.overflowMark`):
    /// each unit is also looked for in such items' exact positions.
    var overflowed = false

    init(declared: [String: AttributeDeclaration], unaccentSchema: String? = nil, icu: Bool = false) {
        self.declared = declared
        self.unaccentSchema = unaccentSchema
        self.icu = icu
    }

    /// Whether the query compares strings with modifiers or wildcards (so needs `unaccent`,
    /// `lower` or the ICU collation).
    static func needsFolding(_ expression: QueryExpression?) -> Bool {
        anyTerm(expression) {
            guard case .comparison(let c) = $0, case .string(let text, let modifiers) = c.value else { return false }
            // `w` outside the full-text index needs the ICU collation's character classes.
            return !modifiers.intersection([.caseInsensitive, .diacriticInsensitive, .wordBased]).isEmpty || QueryPlan.hasWildcard(text)
        }
    }

    /// Whether the query looks for words (bare words, or a `w` comparison): what reads the
    /// documents (`overflowed`).
    static func looksForWords(_ expression: QueryExpression?) -> Bool {
        anyTerm(expression) {
            if case .words = $0 { return true }
            guard case .comparison(let c) = $0, case .string(_, let modifiers) = c.value else { return false }
            return modifiers.contains(.wordBased)
        }
    }

    /// Whether `test` holds for any term of the query (what `&&`, `||` and `!` join).
    private static func anyTerm(_ expression: QueryExpression?, _ test: (QueryExpression) -> Bool) -> Bool {
        switch expression {
        case nil: return false
        case .and?, .or?:
            guard let expression else { return false }
            let conjunction: Bool
            if case .and = expression { conjunction = true } else { conjunction = false }
            return QueryPlan.chain(expression, conjunction: conjunction).contains { anyTerm($0, test) }
        case .not(let a)?: return anyTerm(a, test)
        case let term?: return test(term)
        }
    }

    mutating func bind(_ value: String?, _ type: String) -> String {
        parameters.append(value)
        return "$\(parameters.count)::\(type)"
    }

    mutating func bind(_ value: Double) -> String { bind(String(value), "float8") }

    // MARK: Reading attributes from the item's JSON

    /// The attributes as `jsonb`: the items' stored column `j` (schema migration 3), parsed once
    /// when the item is written rather than at every query that reads an attribute.
    static let attributesJSONB = "i.j"
    static let from = "items i " + live
    /// What follows an item `i` in `from`: its bundle `b`, kept only in its live generation, and
    /// its attributes `x.j`.
    static let live = "JOIN bundles b ON b.key = i.bundle AND b.live_gen = i.gen CROSS JOIN LATERAL (SELECT \(attributesJSONB)) x(j)"

    static func literal(_ name: String) -> String { "'" + name.replacingAll("'", with: "''") + "'" }
    static func member(_ name: String) -> String { "x.j->\(literal(name))" }
    /// The attribute's value as text, whatever its JSON type (as `json_extract` gives it).
    static func text(_ name: String) -> String { "(x.j->>\(literal(name)))" }
    /// The attribute when it is a JSON string.
    static func string(_ name: String) -> String {
        "(CASE WHEN jsonb_typeof(\(member(name))) = 'string' THEN x.j->>\(literal(name)) END)"
    }
    static func number(_ name: String) -> String {
        "(CASE WHEN jsonb_typeof(\(member(name))) = 'number' THEN (x.j->>\(literal(name)))::float8 END)"
    }
    /// 1 or 0 for a JSON true or false, as SQLite reads a boolean.
    static func boolean(_ name: String) -> String {
        "(CASE \(member(name)) WHEN 'true'::jsonb THEN 1.0 WHEN 'false'::jsonb THEN 0.0 END)"
    }
    /// An RFC 3339 date as seconds since 1970 (null for anything else).
    static func seconds(_ text: String) -> String {
        "(CASE WHEN \(text) ~ '\(rfc3339)' THEN extract(epoch FROM (\(text))::timestamptz)::float8 END)"
    }
    /// A built-in date attribute as seconds since 1970: `reindex_seconds` (schema migration 6),
    /// immutable, so the expression the date's index is built on. (A declared date is read
    /// with `seconds`, inline.)
    static func builtInSeconds(_ name: String) -> String { "reindex_seconds(x.j->>\(literal(name)))" }
    static let rfc3339 = "^[0-9]{4}-(0[1-9]|1[0-2])-(0[1-9]|[12][0-9]|3[01])[Tt ]([01][0-9]|2[0-3]):[0-5][0-9]:([0-5][0-9]|60)(\\.[0-9]+)?([Zz]|[+-]([01][0-9]|2[0-3]):[0-5][0-9])$"
    /// The strings of a list attribute, as rows `v(value)`.
    static func elements(_ name: String) -> String {
        "jsonb_array_elements_text(CASE WHEN jsonb_typeof(\(member(name))) = 'array' THEN \(member(name)) END) v(value)"
    }
    /// A list attribute's strings joined by newlines (its full-text column's text).
    static func joined(_ name: String) -> String {
        "(SELECT string_agg(v.value, E'\\n') FROM \(elements(name)))"
    }

    /// How a sort key reads an attribute (and its SQL type, for the cursor); nil for one that
    /// cannot be sorted by (`IndexStore.sortExpression` has refused it already).
    static func sortKey(_ attribute: String, declared: [String: AttributeDeclaration]) -> (expression: String, type: String)? {
        switch attribute {
        case "bundleIdentifier": return ("i.bundle COLLATE \"C\"", "text")
        case "domainIdentifier": return ("i.domain COLLATE \"C\"", "text")
        case "uniqueIdentifier": return ("i.uid COLLATE \"C\"", "text")
        case "expirationDate": return ("i.expires", "float8")
        default: break
        }
        if let kind = AttributeSchema.kinds[attribute] {
            switch kind {
            case .string: return ("\(text(attribute)) COLLATE \"C\"", "text")
            case .stringList: return ("(x.j->\(literal(attribute))->>0) COLLATE \"C\"", "text")
            case .number: return (number(attribute), "float8")
            case .date: return (builtInSeconds(attribute), "float8")
            case .boolean: return (boolean(attribute), "float8")
            case .base64: return nil
            }
        }
        guard let declaration = declared[attribute] else { return nil }
        switch declaration.attributeKind {
        case .string: return ("\(string(attribute)) COLLATE \"C\"", "text")
        case .stringList: return ("(x.j->\(literal(attribute))->>0) COLLATE \"C\"", "text")
        case .number: return (number(attribute), "float8")
        case .date: return (seconds(string(attribute)), "float8")
        case .boolean: return (boolean(attribute), "float8")
        case .base64: return nil
        }
    }

    // MARK: Full text

    /// The words of `text` as the index splits and folds them: the tokens of the full-text
    /// index's tokenizer, which made the document (`PostgresDocument`), each in the form the
    /// document holds it (`PostgresDocument.storedWord`).
    static func tokens(_ text: String) -> [String] { FullTextWords.tokens(text).map(PostgresDocument.storedWord) }

    /// A unit as a `tsquery` phrase (`'le' <-> 'guin'`), its last word a prefix when asked,
    /// restricted to the document's `weights` when given, its words as marked with `slot` when
    /// given (`PostgresDocument.marked`).
    static func phrase(_ unit: RankingUnit, prefix: Bool, weights: String = "", markedIn slot: Int? = nil) -> String? {
        let words = tokens(unit.text)
        guard !words.isEmpty else { return nil }
        let asPrefix = unit.starred || (prefix && unit.prefixable)
        return words.enumerated().map { n, word in
            let word = slot.map { PostgresDocument.marked(word, slot: $0) } ?? word
            let quoted = lexeme(word)
            let last = n == words.count - 1
            let flags = (last && asPrefix ? "*" : "") + weights
            return quoted + (flags.isEmpty ? "" : ":" + flags)
        }.joined(separator: " <-> ")
    }

    /// A word as a quoted lexeme of a `tsquery` literal (`'o''brien'`).
    static func lexeme(_ word: String) -> String {
        "'" + word.replacingAll("\\", with: "\\\\").replacingAll("'", with: "''") + "'"
    }

    /// A text-search query, bound as a `tsquery` literal: its words are the document's tokens
    /// already, so no dictionary runs on them.
    mutating func tsquery(_ text: String) -> String { bind(text, "tsquery") }

    /// A declared attribute's text: a string, or a list's strings.
    func customText(_ name: String) -> String {
        declared[name]?.attributeKind == .stringList ? Self.joined(name) : Self.string(name)
    }

    /// `unit` found in these searched attributes' own words. In the title alone, or in authors
    /// alone, it is the document's words marked with their slot (`'#0word'`). Else the
    /// document's weight classes narrow it (`'word':C`):
    /// where those classes hold no other attribute the item has, that is the answer; else the
    /// attributes' slots decide (`reindex_slots`, which reads every word it is given, so only
    /// for the items that have such another attribute — an item with authors, for
    /// `contentDescription`, which shares class C — and only the words of those classes).
    mutating func inAttributes(_ names: [String], _ unit: RankingUnit, prefix: Bool) -> String {
        if names.count == 1, let slot = PostgresDocument.slots(names).first, PostgresDocument.markedSlots.contains(slot),
           let marked = Self.phrase(unit, prefix: prefix, markedIn: slot) {
            return "i.doc @@ \(tsquery(marked))"
        }
        let classes = Set(names.compactMap(PostgresDocument.weightClass))
        guard let weighted = Self.phrase(unit, prefix: prefix, weights: String(classes.sorted())) else { return "false" }
        var sharing = AttributeSchema.searched.filter { !names.contains($0) && PostgresDocument.weightClass($0).map(classes.contains) == true }
        if classes.contains(Self.customClass) { sharing += declared.filter { $0.value.searchable }.keys.sorted() }
        let test = "i.doc @@ \(tsquery(weighted))"
        guard !sharing.isEmpty else { return test }
        guard let plain = Self.phrase(unit, prefix: prefix) else { return "false" }
        let query = tsquery(plain)
        let slots = PostgresDocument.slots(names).map(String.init).joined(separator: ",")
        // The document cut to those weight classes first (`ts_filter`, in C): only their words,
        // not the whole text, go through `reindex_slots`.
        let cut = "ts_filter(i.doc, '{\(classes.sorted().map { String($0).lowercased() }.joined(separator: ","))}')"
        return "(\(test) AND (NOT x.j ?| ARRAY[\(sharing.map(Self.literal).joined(separator: ", "))] OR reindex_slots(\(cut), '{\(slots)}') @@ \(query)))"
    }

    /// The slots of the searched attributes a unit is of (`unit.columns`).
    static func slots(_ unit: RankingUnit) -> [Int] {
        AttributeSchema.searched.indices.filter { unit.columns & (1 << UInt8($0)) != 0 }
    }

    /// The items where `unit` matches: through the document's GIN index, then in the unit's
    /// own attributes when it names some (or when plain words must not find text only a `w`
    /// comparison may).
    ///
    /// A phrase, or a word of some attributes, reads the document's positions, which an item
    /// whose document left some out (`items.places`) may miss: such an item is also found by its
    /// exact positions (`exactly`).
    mutating func unitMatch(_ unit: RankingUnit, prefix: Bool) -> String {
        guard let text = Self.phrase(unit, prefix: prefix) else { return "false" }
        let query = tsquery(text)
        var test = "i.doc @@ \(query)"
        let slots: [Int]
        if unit.columns != QueryPlan.allColumns {
            slots = Self.slots(unit)
            test += " AND " + inAttributes(slots.map { AttributeSchema.searched[$0] }, unit, prefix: prefix)
        } else if recheckWords {
            test += " AND " + inAttributes(AttributeSchema.searched, unit, prefix: prefix)
            slots = Array(AttributeSchema.searched.indices)
        } else {
            slots = Array(0...PostgresDocument.customSlot)
        }
        if overflowed || Self.tokens(unit.text).count > 1 || slots.count != AttributeSchema.searched.count + 1 || Self.longPrefix(unit, prefix: prefix) != nil {
            test += " OR " + exactly(unit, prefix: prefix, slots: slots)
        }
        return "(" + test + ")"
    }

    /// The last word of a unit asked as a prefix, when it is longer than a stored word's head
    /// (`PostgresDocument.storedBytes`): the words it begins are longer still, and the
    /// document holds the longest of them in their stored form, which it does not begin. The
    /// items that hold such a word find it in their exact positions (`placesWords`).
    static func longPrefix(_ unit: RankingUnit, prefix: Bool) -> String? {
        guard unit.starred || (prefix && unit.prefixable), let last = FullTextWords.tokens(unit.text).last,
              last.utf8.count > PostgresDocument.storedBytes else { return nil }
        return last
    }

    /// A unit's words as an item's exact positions (`items.places`) hold them: as the document
    /// does, and a long prefix whole after its mark (`PostgresDocument.longWordMark`).
    static func placesWords(_ unit: RankingUnit, prefix: Bool) -> [String] {
        var words = tokens(unit.text)
        if let long = longPrefix(unit, prefix: prefix) { words[words.count - 1] = PostgresDocument.longWordMark + long }
        return words
    }

    /// The items whose document left positions out (`items.places`, schema migration 15) where
    /// `unit` is found by their exact positions in these slots: through the index of those
    /// items' documents (`items_places_doc`), by their words (a long prefix by its stored
    /// head), then by the positions. While some document left words out (`overflowed`), the
    /// items so marked too (`PostgresDocument.overflowMark`, schema migration 16).
    mutating func exactly(_ unit: RankingUnit, prefix: Bool, slots: [Int]) -> String {
        var words = Self.tokens(unit.text)
        let asPrefix = unit.starred || (prefix && unit.prefixable)
        if let long = Self.longPrefix(unit, prefix: prefix) { words[words.count - 1] = PostgresDocument.storedHead(long) }
        let every = words.enumerated().map { n, word in Self.lexeme(word) + (n == words.count - 1 && asPrefix ? ":*" : "") }
        let narrowed = "i.doc @@ \(tsquery(every.joined(separator: " & ")))"
        return "(i.places IS NOT NULL AND \(overflowed ? "(\(narrowed) OR i.doc @@ \(PostgresStore.overflowMarkQuery))" : narrowed) AND EXISTS (SELECT 1 FROM reindex_places(i.places, "
            + "\(bind(PGArray.literal(Self.placesWords(unit, prefix: prefix)), "text[]")), \(asPrefix), '{\(slots.map(String.init).joined(separator: ","))}')))"
    }

    /// For the unit that is also a prefix: its pass (0 where it matches as typed, 1 where only
    /// as a prefix) and its score in that pass — what a page orders by.
    mutating func passAndScore(_ unit: RankingUnit) -> (pass: String, score: String) {
        let whole = unitMatch(unit, prefix: false)
        return ("CASE WHEN \(whole) THEN 0 ELSE 1 END",
                "CASE WHEN \(whole) THEN \(unitScore(unit, prefix: false)) ELSE \(unitScore(unit, prefix: true)) END")
    }

    /// A unit's score in an item: BM25F's term (SQLite/Ranking.swift, docs/QUERIES.md
    /// "Relevance"), the unit's rarity times its impact, `f · (k1 + 1) / (f + k1 · (1 − b + b ·
    /// len / avglen))` — computed in the same order as `Ranking.impact`, so an item scores to
    /// the bit what it scores on SQLite. The rarity and the average length are the query's
    /// (`scoring`); 0 when the query has none for the unit.
    mutating func unitScore(_ unit: RankingUnit, prefix: Bool) -> String {
        guard let scoring, let rarity = scoring.rarities[FullText.phrase(unit, prefix: prefix)] else { return "0" }
        return "\(bind(rarity)) * \(impact(frequency(unit, prefix: prefix), average: scoring.average))"
    }

    /// A unit's impact in an item (its score but the rarity): what a word's rank list holds.
    mutating func unitImpact(_ unit: RankingUnit, prefix: Bool) -> String {
        impact(frequency(unit, prefix: prefix), average: scoring?.average ?? 1)
    }

    /// `Ranking.impact` of the weighted frequency `f` (an SQL expression, read once) in the item.
    /// (`OFFSET 0` keeps the planner from writing `f` into the formula twice: a prefix's `f`,
    /// a sum over the item's words, was most of the time its list took to make.)
    mutating func impact(_ f: String, average: Double) -> String {
        let k1 = bind(Ranking.k1), k1Plus1 = bind(Ranking.k1 + 1), oneLessB = bind(1 - Ranking.b), b = bind(Ranking.b)
        return "(SELECT s.f * \(k1Plus1) / (s.f + \(k1) * (\(oneLessB) + \(b) * i.length::float8 / \(bind(average))))" +
            " FROM (SELECT \(f) AS f OFFSET 0) s)"
    }

    /// A unit's weighted frequency `f` in the item: Σ over its occurrences of their attribute's
    /// weight, as FTS5 finds them. One word in every attribute reads the item's frequencies
    /// (`items.tf`, exact); a prefix sums those of the words it begins; a phrase, or a unit of some
    /// attributes only, counts its occurrences in the document's positions (`reindex_frequency`),
    /// or in the item's exact positions where the document left some out
    /// (`reindex_places_frequency`).
    mutating func frequency(_ unit: RankingUnit, prefix: Bool) -> String {
        let words = Self.tokens(unit.text)
        let asPrefix = unit.starred || (prefix && unit.prefixable)
        let slots = "'{" + Self.slots(unit).map(String.init).joined(separator: ",") + "}'"
        func exact(_ compiler: inout PostgresQueryCompiler) -> String {
            "reindex_places_frequency(i.places, \(compiler.bind(PGArray.literal(Self.placesWords(unit, prefix: prefix)), "text[]")), \(asPrefix), \(slots))"
        }
        if words.count == 1, unit.columns == QueryPlan.allColumns {
            if Self.longPrefix(unit, prefix: prefix) != nil {
                // (Only an item with exact positions holds a word that long.)
                return "CASE WHEN i.places IS NULL THEN 0 ELSE \(exact(&self)) END"
            }
            let word = bind(words[0], "text")
            if asPrefix {
                return "coalesce((SELECT sum(e.value::float8) FROM jsonb_each_text(i.tf) e WHERE starts_with(e.key, \(word))), 0)"
            }
            return "coalesce((i.tf->>\(word))::float8, 0)"
        }
        return "CASE WHEN i.places IS NULL THEN reindex_frequency(i.doc, \(bind(PGArray.literal(words), "text[]")), \(asPrefix), \(slots)) ELSE \(exact(&self)) END"
    }

    /// The document's weight class that also holds the searchable custom attributes (`PostgresWrites`).
    static let customClass: Character = "C"

    // MARK: Conditions

    /// The condition of a checked query: its conditions (every top-level conjunct that is
    /// not one of its units), joined. Empty when there is none.
    mutating func condition(_ checked: CheckedQuery) throws(QuerySyntaxError) -> String {
        var conditions: [String] = []
        for condition in checked.conditions { conditions.append(try sql(condition)) }
        return conditions.joined(separator: " AND ")
    }

    /// The condition of an expression, or of its negation (`negated`): `!` pushed down to the
    /// terms and chains of `&&` or `||` written flat, as `QueryPlan.sql` does, so the SQL nests
    /// only as deep as the query alternates `&&` and `||`.
    mutating func sql(_ expression: QueryExpression, negated: Bool = false) throws(QuerySyntaxError) -> String {
        switch QueryPlan.flatten(expression, negated: negated) {
        case .chain(let operands, let all, let negated):
            var parts: [String] = []
            for operand in operands { parts.append(try sql(operand, negated: negated)) }
            return "(" + parts.joined(separator: all ? " AND " : " OR ") + ")"
        case .term(let expression, let negated):
            let term = try self.term(expression)
            return negated ? "NOT coalesce(\(term), false)" : term
        }
    }

    /// The condition of one term: words, a restriction, `InRange` or a comparison.
    mutating func term(_ expression: QueryExpression) throws(QuerySyntaxError) -> String {
        switch expression {
        case .and, .or, .not: return try sql(expression)
        case .words(let words):
            var units = words.compactMap { QueryPlan.unit($0, columns: QueryPlan.allColumns) }
            guard !units.isEmpty else { return "true" }
            units[units.count - 1].prefixable = true
            return "(" + units.map { unitMatch($0, prefix: true) }.joined(separator: " AND ") + ")"
        case .restriction(.bundle(let identifier)):
            return "i.bundle = \(bind(identifier.lowercased(), "text"))"
        case .restriction(.domain(let domain)):
            let p = bind(domain, "text")
            return "(i.domain = \(p) OR starts_with(i.domain, \(p) || '.'))"
        case .inRange(let name, let low, let high, let position):
            let kind: AttributeKind?
            if ["domainIdentifier", "uniqueIdentifier", "bundleIdentifier"].contains(name) {
                kind = .string
            } else if let k = AttributeSchema.kinds[name] {
                kind = k
            } else if let declaration = declared[name] {
                kind = declaration.attributeKind
            } else {
                throw CheckedQuery.unchecked(position)
            }
            let custom = AttributeSchema.kinds[name] == nil
            let value: String
            switch kind {
            case .number?: value = Self.number(name)
            case .date?: value = custom ? Self.seconds(Self.string(name)) : Self.builtInSeconds(name)
            default:
                throw CheckedQuery.unchecked(position)
            }
            return "\(value) BETWEEN \(bind(low)) AND \(bind(high))"
        case .comparison(let c):
            return try comparison(c)
        }
    }

    mutating func comparison(_ c: QueryComparison) throws(QuerySyntaxError) -> String {
        let op = c.op == .equal ? "=" : c.op.rawValue
        if c.attribute == "*" {
            guard case .string(let text, let modifiers) = c.value, c.op == .equal || c.op == .notEqual else {
                throw CheckedQuery.unchecked(c.position)
            }
            if QueryPlan.fullTextWord(c, modifiers) { return try wordCondition(c, text: text, columns: QueryPlan.allColumns) }
            let any = AttributeSchema.searched.map { name -> String in
                AttributeSchema.kinds[name] == .stringList
                    ? "EXISTS (SELECT 1 FROM \(Self.elements(name)) WHERE \(stringMatch("v.value", text, modifiers)))"
                    : stringMatch(Self.text(name), text, modifiers)
            }.joined(separator: " OR ")
            return c.op == .equal ? "(\(any))" : "NOT (\(any))"
        }
        if let declaration = declared[c.attribute], AttributeSchema.kinds[c.attribute] == nil,
           !["domainIdentifier", "uniqueIdentifier", "bundleIdentifier"].contains(c.attribute) {
            if case .any = c.value { return try presence(c) }
            if case .string(let text, let modifiers) = c.value, modifiers.contains(.wordBased) {
                return try customWordCondition(c, text: text, declaration)
            }
            return try customComparison(c, declaration)
        }
        if case .any = c.value { return try presence(c) }
        let column: String
        let kind: AttributeKind
        switch c.attribute {
        case "domainIdentifier": column = "i.domain"; kind = .string
        case "uniqueIdentifier": column = "i.uid"; kind = .string
        case "bundleIdentifier": column = "b.identifier"; kind = .string
        default:
            guard let k = AttributeSchema.kinds[c.attribute] else {
                throw CheckedQuery.unchecked(c.position)
            }
            kind = k
            switch k {
            case .number: column = Self.number(c.attribute)
            case .boolean: column = Self.boolean(c.attribute)
            case .date: column = Self.builtInSeconds(c.attribute)
            default: column = Self.text(c.attribute)
            }
        }
        switch (kind, c.value) {
        case (.string, .string(let text, let modifiers)), (.stringList, .string(let text, let modifiers)):
            if QueryPlan.fullTextWord(c, modifiers) {
                return try wordCondition(c, text: text, columns: try QueryPlan.searchedColumns(c))
            }
            if c.op == .equal || c.op == .notEqual {
                // A term is true or not (`sql` wraps a negated one in `coalesce`), so `==` is the
                // bare test, which an index on the attribute can serve.
                let test = kind == .stringList
                    ? "EXISTS (SELECT 1 FROM \(Self.elements(c.attribute)) WHERE \(stringMatch("v.value", text, modifiers)))"
                    : stringMatch(column, text, modifiers)
                return c.op == .equal ? test : "NOT coalesce(\(test), false)"
            }
            guard kind == .string, modifiers.isEmpty else {
                throw CheckedQuery.unchecked(c.position)
            }
            return "\(column) COLLATE \"C\" \(op) \(bind(text, "text"))"
        case (.number, .number(let n)):
            return c.op == .notEqual ? "coalesce(\(column) <> \(bind(n)), true)" : "\(column) \(op) \(bind(n))"
        case (.date, .time(let t)):
            return c.op == .notEqual ? "coalesce(\(column) <> \(bind(t)), true)" : "\(column) \(op) \(bind(t))"
        case (.date, .string(let text, let modifiers)) where modifiers.isEmpty:
            guard let t = RFC3339.parse(text) else {
                throw CheckedQuery.unchecked(c.position)
            }
            return c.op == .notEqual ? "coalesce(\(column) <> \(bind(t)), true)" : "\(column) \(op) \(bind(t))"
        case (.boolean, .bool(let b)) where c.op == .equal || c.op == .notEqual:
            return c.op == .equal ? "\(column) = \(b ? 1 : 0)" : "coalesce(\(column) <> \(b ? 1 : 0), true)"
        default:
            throw CheckedQuery.unchecked(c.position)
        }
    }

    /// `ATTRIBUTE == *` (the item has the attribute) or `!= *` (it does not), as SQLite reads
    /// it: a built-in attribute is there when its key has a value that is not null; a declared
    /// one when it has a value of the declared type (a list, at least one string).
    mutating func presence(_ c: QueryComparison) throws(QuerySyntaxError) -> String {
        let name = c.attribute
        let test: String
        switch name {
        case "domainIdentifier": test = "coalesce(i.domain, '') <> ''"
        case "uniqueIdentifier", "bundleIdentifier": test = "true"
        default:
            if AttributeSchema.kinds[name] != nil {
                test = "coalesce(jsonb_typeof(\(Self.member(name))), 'null') <> 'null'"
            } else if let declaration = declared[name] {
                switch declaration.attributeKind {
                case .stringList: test = "EXISTS (SELECT 1 FROM \(Self.elements(name)))"
                case .number: test = "\(Self.number(name)) IS NOT NULL"
                case .date: test = "\(Self.seconds(Self.string(name))) IS NOT NULL"
                case .boolean: test = "\(Self.boolean(name)) IS NOT NULL"
                case .string, .base64: test = "\(Self.string(name)) IS NOT NULL"
                }
            } else {
                throw CheckedQuery.unchecked(c.position)
            }
        }
        return c.op == .equal ? test : "NOT \(test)"
    }

    /// A declared attribute: its values of the declared type (a list matches when any string
    /// does); `!=` is the negation of `==`, so an item without the attribute matches it.
    mutating func customComparison(_ c: QueryComparison, _ declaration: AttributeDeclaration) throws(QuerySyntaxError) -> String {
        let kind = declaration.attributeKind
        let op = c.op == .equal ? "=" : c.op.rawValue
        func negatable(_ equal: String) -> String { c.op == .notEqual ? "NOT coalesce(\(equal), false)" : equal }
        let name = c.attribute
        switch (kind, c.value) {
        case (.string, .string(let text, let modifiers)), (.stringList, .string(let text, let modifiers)):
            if c.op == .equal || c.op == .notEqual {
                let test = kind == .stringList
                    ? "EXISTS (SELECT 1 FROM \(Self.elements(name)) WHERE \(stringMatch("v.value", text, modifiers)))"
                    : stringMatch(Self.string(name), text, modifiers)
                return negatable(test)
            }
            guard kind == .string, modifiers.isEmpty else {
                throw CheckedQuery.unchecked(c.position)
            }
            return "\(Self.string(name)) COLLATE \"C\" \(op) \(bind(text, "text"))"
        case (.number, .number(let n)):
            return c.op == .notEqual ? negatable("\(Self.number(name)) = \(bind(n))") : "\(Self.number(name)) \(op) \(bind(n))"
        case (.date, .time(let t)):
            let value = Self.seconds(Self.string(name))
            return c.op == .notEqual ? negatable("\(value) = \(bind(t))") : "\(value) \(op) \(bind(t))"
        case (.date, .string(let text, let modifiers)) where modifiers.isEmpty:
            guard let t = RFC3339.parse(text) else {
                throw CheckedQuery.unchecked(c.position)
            }
            let value = Self.seconds(Self.string(name))
            return c.op == .notEqual ? negatable("\(value) = \(bind(t))") : "\(value) \(op) \(bind(t))"
        case (.boolean, .bool(let b)) where c.op == .equal || c.op == .notEqual:
            return negatable("\(Self.boolean(name)) = \(b ? 1 : 0)")
        default:
            throw CheckedQuery.unchecked(c.position)
        }
    }

    /// A `w` comparison under `||`, `!` or `!=`: the words, in order, in those attributes.
    mutating func wordCondition(_ c: QueryComparison, text: String, columns: UInt8) throws(QuerySyntaxError) -> String {
        guard let unit = QueryPlan.unit(text, columns: columns) else { return c.op == .equal ? "false" : "true" }
        let test = unitMatch(unit, prefix: false)
        return c.op == .equal ? test : "NOT \(test)"
    }

    /// A `w` comparison on a searchable declared attribute: its words, in order, in that
    /// attribute's own text (the document holds it, for the index to narrow the rows).
    mutating func customWordCondition(_ c: QueryComparison, text: String, _ declaration: AttributeDeclaration) throws(QuerySyntaxError) -> String {
        guard let unit = QueryPlan.unit(text, columns: QueryPlan.allColumns), let phrase = Self.phrase(unit, prefix: false) else {
            return c.op == .equal ? "false" : "true"
        }
        // The document narrows the items (through its index); the attribute's own text, split
        // on what is not a letter or digit, decides: as written, or with its camel-case parts, as
        // the document holds both (`WordParts`).
        let words = Self.tokens(unit.text).joined(separator: " ")
        let text = customText(c.attribute)
        var found = "i.doc @@ \(tsquery(phrase))"
        if Self.tokens(unit.text).count > 1 {
            found = "(\(found) OR \(exactly(unit, prefix: false, slots: Array(0...PostgresDocument.customSlot))))"
        }
        if overflowed { found = "(\(found) OR i.doc @@ \(PostgresStore.overflowMarkQuery))" }
        let test = "(\(found) AND ("
            + wordMatch(text, words, [.caseInsensitive, .diacriticInsensitive], splittingCamelCase: false) + " OR "
            + wordMatch(text, words, [.caseInsensitive, .diacriticInsensitive]) + "))"
        return c.op == .equal ? test : "NOT \(test)"
    }

    /// `value` against a pattern: equality when it has no `*` and no `c`/`d` (which an index
    /// could serve), else `LIKE` over both sides folded — `lower` for `c`, `unaccent` for `d`.
    mutating func stringMatch(_ value: String, _ pattern: String, _ modifiers: StringModifiers) -> String {
        if modifiers.contains(.wordBased) { return wordMatch(value, pattern, modifiers) }
        let folding = modifiers.intersection([.caseInsensitive, .diacriticInsensitive])
        if folding.isEmpty && !QueryPlan.hasWildcard(pattern) {
            return "\(value) = \(bind(QueryPlan.literal(pattern), "text"))"
        }
        return "\(fold(value, modifiers)) LIKE \(fold(bind(Self.likePattern(pattern), "text"), modifiers)) ESCAPE '\\'"
    }

    /// Core Spotlight's word match (`Folding.wordMatches`): the value split into words at
    /// anything that is not a letter or a digit and where a lowercase letter meets an uppercase
    /// one, and the pattern's words matched, each whole, by consecutive words. The character
    /// classes are ICU's (Unicode's) when the server has ICU, as Swift's are on SQLite.
    mutating func wordMatch(_ value: String, _ pattern: String, _ modifiers: StringModifiers, splittingCamelCase: Bool = true) -> String {
        let words = Folding.patternWords(pattern)
        guard !words.isEmpty else { return "false" }
        let collated = icu ? "(\(value) COLLATE \"und-x-icu\")" : value
        let parted = splittingCamelCase ? "regexp_replace(\(collated), '([[:lower:]])([[:upper:]])', '\\1 \\2', 'g')" : collated
        let split = "regexp_split_to_array(\(parted), '[^[:alnum:]]+')"
        let tests = words.enumerated().map { n, word in
            let element = "s.a[k + \(n)]"
            return "\(element) <> '' AND \(fold(element, modifiers)) LIKE \(fold(bind(Self.likePattern(word), "text"), modifiers)) ESCAPE '\\'"
        }
        return "EXISTS (SELECT 1 FROM (SELECT \(split) AS a) s, generate_subscripts(s.a, 1) k WHERE \(tests.joined(separator: " AND ")))"
    }

    func fold(_ value: String, _ modifiers: StringModifiers) -> String {
        var folded = value
        if modifiers.contains(.diacriticInsensitive) { folded = "\(unaccentSchema.map { $0 + "." } ?? "")unaccent(\(folded))" }
        if modifiers.contains(.caseInsensitive) { folded = icu ? "lower(\(folded) COLLATE \"und-x-icu\")" : "lower(\(folded))" }
        return folded
    }

    /// The language's pattern (`*` any run, `?` one character, `\x` the character x) as a
    /// `LIKE` pattern with `\` as its escape.
    static func likePattern(_ pattern: String) -> String {
        var result = ""
        var characters = pattern.makeIterator()
        while let c = characters.next() {
            switch c {
            case "\\":
                if let d = characters.next() {
                    if d == "%" || d == "_" || d == "\\" { result.append("\\") }
                    result.append(d)
                }
            case "*": result.append("%")
            case "?": result.append("_")
            case "%", "_": result += "\\" + String(c)
            default: result.append(c)
            }
        }
        return result
    }
}
