import ReindexSystem
import ReindexProtocol

/// A parsed search query: the Core Spotlight–style language of docs/QUERIES.md.
///
/// Plain words keep their old meaning (every word must match, the last also as a prefix);
/// comparisons, `&&`, `||`, `!`, parentheses, `InRange(…)` and `bundle:`/`domain:` restrictions
/// add filters. Nothing a person types is ever handed to SQLite or FTS5 as syntax.
public indirect enum QueryExpression: Sendable, Equatable {
    /// Bare words: every one must match (full text); `prefixLast` when the last one is still
    /// being typed (it also matches as a prefix).
    case words([String])
    case comparison(QueryComparison)
    /// `InRange(attribute, low, high)`: low ≤ value ≤ high (dates as seconds since 1970);
    /// `position` is where it starts (1-based, in characters), for messages.
    case inRange(attribute: String, low: Double, high: Double, position: Int = 0)
    case restriction(QueryRestriction)
    case and(QueryExpression, QueryExpression)
    case or(QueryExpression, QueryExpression)
    case not(QueryExpression)
}

public enum QueryRestriction: Sendable, Equatable {
    case bundle(String)
    case domain(String)
}

public enum QueryOperator: String, Sendable, Equatable, CaseIterable {
    case equal = "==", notEqual = "!=", less = "<", greater = ">", lessOrEqual = "<=", greaterOrEqual = ">="
}

/// Modifiers of a string value: `c` case-insensitive, `d` diacritic-insensitive, `w` word-based
/// (through the full-text index).
public struct StringModifiers: OptionSet, Sendable, Hashable {
    public let rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }
    public static let caseInsensitive = StringModifiers(rawValue: 1)
    public static let diacriticInsensitive = StringModifiers(rawValue: 2)
    public static let wordBased = StringModifiers(rawValue: 4)
}

public enum QueryValue: Sendable, Equatable {
    case string(String, StringModifiers)
    case number(Double)
    /// Seconds since 1970 (from `$time.…` or a quoted RFC 3339 date compared with a date).
    case time(Double)
    case bool(Bool)
    /// `*` as the value: the attribute is present (`== *`) or absent (`!= *`).
    case any
}

/// `attribute op value`; `attribute` is `*` for any full-text attribute.
public struct QueryComparison: Sendable, Equatable {
    public var attribute: String
    public var op: QueryOperator
    public var value: QueryValue
    /// Where the comparison starts in the query (1-based, in characters), for messages.
    public var position: Int

    public init(attribute: String, op: QueryOperator, value: QueryValue, position: Int = 0) {
        self.attribute = attribute
        self.op = op
        self.value = value
        self.position = position
    }

    public static func == (a: QueryComparison, b: QueryComparison) -> Bool {
        a.attribute == b.attribute && a.op == b.op && a.value == b.value
    }
}

/// A malformed query: where (1-based character position) and what was expected there.
public struct QuerySyntaxError: Error, Sendable, Equatable, CustomStringConvertible {
    public var position: Int
    public var expected: String
    public var got: String
    /// The name the query probably meant ("did you mean …?"), when one is near what it said.
    public var suggestion: String? = nil

    public var description: String {
        "query: at \(position): expected \(expected), got \(got)" + (suggestion.map { " (did you mean '\($0)'?)" } ?? "")
    }

    /// An attribute name the query used that is neither built in nor declared, with the nearest
    /// of those (`ratng` → `rating`) as the suggestion.
    static func unknownAttribute(_ name: String, at position: Int, declared: some Sequence<String>) -> QuerySyntaxError {
        let known = ["domainIdentifier", "uniqueIdentifier", "bundleIdentifier"] + AttributeSchema.kinds.keys.sorted() + declared
        return QuerySyntaxError(position: position, expected: "a known attribute (e.g. title, contentType, rating, startDate, keywords, domainIdentifier) or *",
                                got: "'\(name)'", suggestion: Suggestion.nearest(to: name, among: known))
    }

    /// As the command reports it (exit 65).
    public var reindexError: ReindexError { ReindexError(.invalidData, description) }
}

/// The bounds of a query (docs/QUERIES.md, "Limits"): past any of them the parser answers
/// with a `QuerySyntaxError` at the place it was crossed, before anything is compiled or run.
///
/// `standard` is generous for queries people and programs write, and keeps what a query
/// compiles to inside what the stores accept: SQLite's parser stack (100 entries, a few per
/// nested parenthesis) and expression depth (1000), FTS5's expression depth (256), and
/// PostgreSQL's stack and parameter limits.
public struct QueryLimits: Sendable, Equatable {
    /// Bytes of UTF-8 in the query text.
    public var maximumLength: Int
    /// Levels of `(` and `!` around any part of the query (`InRange(…)` and `$time.…(…)` do
    /// not nest).
    public var maximumDepth: Int
    /// Terms: each word (also each word of a quoted string and of a `w` comparison's value),
    /// each comparison, each `InRange` and each `bundle:` / `domain:`.
    public var maximumTerms: Int

    public init(maximumLength: Int, maximumDepth: Int, maximumTerms: Int) {
        self.maximumLength = maximumLength
        self.maximumDepth = maximumDepth
        self.maximumTerms = maximumTerms
    }

    /// What every query of the store is held to: 16 KiB, 32 levels, 256 terms.
    public static let standard = QueryLimits(maximumLength: 16 * 1024, maximumDepth: 32, maximumTerms: 256)
}

/// Parses the query language. `now`, `timeZoneOffset` (seconds east of UTC) and `firstWeekday`
/// (1 Sunday … 7 Saturday) fix what the `$time` values mean (tests pass their own).
///
/// Parsing takes time and stack in proportion to the query, within `QueryLimits`.
public struct QueryParser {
    public static func parse(_ text: String, now: Double = Clock.now(), timeZoneOffset: Int = 0, firstWeekday: Int = 1,
                             limits: QueryLimits = .standard) throws(QuerySyntaxError) -> QueryExpression? {
        try checkLength(text, limit: limits.maximumLength)
        var parser = QueryParser(text: text, now: now, timeZoneOffset: timeZoneOffset)
        parser.firstWeekday = (1...7).contains(firstWeekday) ? firstWeekday : 1
        parser.limits = limits
        try parser.tokenize()
        return try parser.parseQuery()
    }

    /// A query longer than `limit` bytes fails at the first character past it.
    static func checkLength(_ text: String, limit: Int) throws(QuerySyntaxError) {
        let bytes = text.utf8.count
        guard bytes > limit else { return }
        var used = 0
        var position = 1
        for character in text {
            used += character.utf8.count
            if used > limit { break }
            position += 1
        }
        throw QuerySyntaxError(position: position, expected: "a query of at most \(limit) bytes", got: "\(bytes) bytes")
    }

    // MARK: Tokens

    enum Token: Equatable {
        case open, close, comma, and, or, not
        case op(QueryOperator)
        /// `[cdw]` right after an operator: modifiers for the string that follows.
        case bracket(StringModifiers)
        case string(String, StringModifiers)
        /// `$time.name` with the raw text of its argument list, if any.
        case function(String, String?)
        case word(String)
        case end

        var text: String {
            switch self {
            case .open: return "'('"
            case .close: return "')'"
            case .comma: return "','"
            case .and: return "'&&'"
            case .or: return "'||'"
            case .not: return "'!'"
            case .op(let op): return "'\(op.rawValue)'"
            case .bracket(let modifiers): return "'[\(QueryParser.describe(modifiers))]'"
            case .string(let s, _): return "\"\(s)\""
            case .function(let name, let argument): return "'$\(name)\(argument.map { "(\($0))" } ?? "")'"
            case .word(let w): return "'\(w)'"
            case .end: return "the end of the query"
            }
        }
    }

    let characters: [Character]
    let now: Double
    let timeZoneOffset: Int
    var tokens: [(token: Token, position: Int)] = []
    var index = 0
    /// The `(` and `!` open around the token being parsed.
    var depth = 0
    /// Terms parsed so far.
    var terms = 0
    var limits = QueryLimits.standard
    /// The first day of the week for `$time.this_week`: 1 Sunday … 7 Saturday.
    var firstWeekday = 1
    /// The first single quote found unclosed: none after it closes either.
    var unclosedFrom: Int? = nil

    init(text: String, now: Double, timeZoneOffset: Int) {
        characters = Array(text)
        self.now = now
        self.timeZoneOffset = timeZoneOffset
    }

    /// Characters that end a bare word.
    static func isDelimiter(_ c: Character) -> Bool {
        c.isWhitespace || "()\",!=<>&|".contains(c)
    }

    mutating func tokenize() throws(QuerySyntaxError) {
        var i = 0
        func next(_ offset: Int) -> Character? { i + offset < characters.count ? characters[i + offset] : nil }
        /// An operator, then Apple's bracket form of the modifiers (`==[cd]`) when it follows.
        func op(_ op: QueryOperator, length: Int, at position: Int) throws(QuerySyntaxError) {
            tokens.append((.op(op), position))
            i += length
            guard i < characters.count, characters[i] == "[" else { return }
            let open = i + 1
            i += 1
            var modifiers: StringModifiers = []
            while i < characters.count, characters[i] != "]" {
                guard let modifier = Self.modifier(characters[i]) else {
                    throw QuerySyntaxError(position: i + 1, expected: "a modifier (c, d or w) or ']' in the '[' at \(open)", got: Self.describe(characters[i]))
                }
                modifiers.insert(modifier)
                i += 1
            }
            guard i < characters.count else { throw QuerySyntaxError(position: i + 1, expected: "']' closing the '[' at \(open)", got: "the end of the query") }
            i += 1
            tokens.append((.bracket(modifiers), open))
        }
        while i < characters.count {
            let c = characters[i]
            let position = i + 1
            if c.isWhitespace { i += 1; continue }
            func word() {
                var word = ""
                while i < characters.count, !Self.isDelimiter(characters[i]) { word.append(characters[i]); i += 1 }
                tokens.append((.word(word), position))
            }
            // A single quote that is never closed is part of a word (`'tis`), as before
            // single-quoted strings.
            if c == "'", !closes(from: i) { word(); continue }
            switch c {
            case "(": tokens.append((.open, position)); i += 1
            case ")": tokens.append((.close, position)); i += 1
            case ",": tokens.append((.comma, position)); i += 1
            case "&":
                guard next(1) == "&" else { throw QuerySyntaxError(position: position, expected: "'&&'", got: "a single '&'") }
                tokens.append((.and, position)); i += 2
            case "|":
                guard next(1) == "|" else { throw QuerySyntaxError(position: position, expected: "'||'", got: "a single '|'") }
                tokens.append((.or, position)); i += 2
            case "!":
                if next(1) == "=" { try op(.notEqual, length: 2, at: position) } else { tokens.append((.not, position)); i += 1 }
            case "=":
                guard next(1) == "=" else { throw QuerySyntaxError(position: position, expected: "'==' (comparisons use two '=')", got: "a single '='") }
                try op(.equal, length: 2, at: position)
            case "<":
                if next(1) == "=" { try op(.lessOrEqual, length: 2, at: position) } else { try op(.less, length: 1, at: position) }
            case ">":
                if next(1) == "=" { try op(.greaterOrEqual, length: 2, at: position) } else { try op(.greater, length: 1, at: position) }
            case "\"", "'":
                // A string in double or single quotes.
                var text = ""
                i += 1
                var closed = false
                while i < characters.count {
                    let d = characters[i]
                    if d == "\\", i + 1 < characters.count {
                        // \" \' and \\ are the quote and the backslash, \n \t \r a newline, a
                        // tab and a return; \* and \? stay escaped: a literal star or question mark.
                        let e = characters[i + 1]
                        switch e {
                        case "*", "?": text.append("\\"); text.append(e)
                        case "n": text.append("\n")
                        case "t": text.append("\t")
                        case "r": text.append("\r")
                        default: text.append(e)
                        }
                        i += 2
                        continue
                    }
                    if d == c { closed = true; i += 1; break }
                    text.append(d)
                    i += 1
                }
                guard closed else { throw QuerySyntaxError(position: position, expected: "a closing '\(c)'", got: "the end of the query") }
                var modifiers: StringModifiers = []
                while i < characters.count, !Self.isDelimiter(characters[i]) {
                    guard let modifier = Self.modifier(characters[i]) else {
                        throw QuerySyntaxError(position: i + 1, expected: "a string modifier (c, d or w) or a space after the string", got: "'\(characters[i])'")
                    }
                    modifiers.insert(modifier)
                    i += 1
                }
                tokens.append((.string(text, modifiers), position))
            case "$":
                var name = ""
                i += 1
                while i < characters.count, characters[i].isLetter || characters[i] == "." || characters[i] == "_" {
                    name.append(characters[i]); i += 1
                }
                var argument: String? = nil
                if i < characters.count, characters[i] == "(" {
                    let open = i + 1
                    var text = ""
                    i += 1
                    while i < characters.count, characters[i] != ")" { text.append(characters[i]); i += 1 }
                    guard i < characters.count else { throw QuerySyntaxError(position: i + 1, expected: "a ')' closing the argument of $\(name) opened at \(open)", got: "the end of the query") }
                    i += 1
                    argument = text
                }
                tokens.append((.function(name, argument), position))
            default:
                word()
            }
        }
        tokens.append((.end, characters.count + 1))
    }

    /// Whether the single quote at `start` is closed before the end of the query (a
    /// backslash escapes the character after it). Each quote is looked for at most once from
    /// each opening quote, and an unclosed quote turns the rest into words, so the scan is linear
    /// overall: `unclosedFrom` remembers the answer for the rest of the text.
    mutating func closes(from start: Int) -> Bool {
        if let known = unclosedFrom, start >= known { return false }
        var j = start + 1
        while j < characters.count {
            if characters[j] == "\\" { j += 2; continue }
            if characters[j] == "'" { return true }
            j += 1
        }
        unclosedFrom = start
        return false
    }

    static func modifier(_ c: Character) -> StringModifiers? {
        switch c {
        case "c": return .caseInsensitive
        case "d": return .diacriticInsensitive
        case "w": return .wordBased
        default: return nil
        }
    }

    static func describe(_ c: Character) -> String { "'\(c)'" }

    var current: Token { tokens[index].token }
    var position: Int { tokens[index].position }

    mutating func advance() { if index < tokens.count - 1 { index += 1 } }

    func peek(_ offset: Int) -> Token { index + offset < tokens.count ? tokens[index + offset].token : .end }

    func error(_ expected: String) -> QuerySyntaxError {
        QuerySyntaxError(position: position, expected: expected, got: current.text)
    }

    /// One more level of `(` or `!`, at the current token.
    mutating func enter() throws(QuerySyntaxError) {
        depth += 1
        guard depth <= limits.maximumDepth else {
            throw QuerySyntaxError(position: position, expected: "at most \(limits.maximumDepth) levels of '(' and '!'", got: "\(current.text) nested deeper")
        }
    }

    /// `count` more terms, the first of them at `start`.
    mutating func count(_ count: Int, at start: Int) throws(QuerySyntaxError) {
        terms += count
        guard terms <= limits.maximumTerms else {
            throw QuerySyntaxError(position: start, expected: "at most \(limits.maximumTerms) terms (words, comparisons, InRange, bundle: and domain:)",
                                   got: "term \(terms)")
        }
    }

    // MARK: Grammar

    mutating func parseQuery() throws(QuerySyntaxError) -> QueryExpression? {
        if current == .end { return nil }
        let expression = try parseOr()
        guard current == .end else {
            if current == .close { throw error("an expression before ')' (no '(' is open)") }
            throw error("'&&', '||' or the end of the query")
        }
        return expression
    }

    mutating func parseOr() throws(QuerySyntaxError) -> QueryExpression {
        var left = try parseAnd()
        while current == .or {
            advance()
            left = .or(left, try parseAnd())
        }
        return left
    }

    /// `a && b`, and juxtaposition (`a b`) for the same. Adjacent bare words merge into one
    /// `.words`, so `eng sta` keeps its meaning: the operands are collected first and the run
    /// of words at the end grows in place, so many words cost what they are (merging each
    /// word into a copy of the words before it made a long query quadratic).
    mutating func parseAnd() throws(QuerySyntaxError) -> QueryExpression {
        var conjunction = Conjunction()
        conjunction.add(try parseUnary())
        while true {
            if current == .and {
                advance()
                conjunction.add(try parseUnary())
            } else if Self.startsOperand(current) {
                conjunction.add(try parseUnary())
            } else {
                return conjunction.expression
            }
        }
    }

    /// The operands of one `&&` chain, left to right, with the trailing run of words apart.
    struct Conjunction {
        var operands: [QueryExpression] = []
        var words: [String]? = nil

        mutating func add(_ operand: QueryExpression) {
            switch operand {
            case .words(let more):
                if words == nil { words = more } else { words?.append(contentsOf: more) }
            case .and(let left, .words(let more)) where operands.isEmpty && words == nil:
                // A parenthesized `(x && words)` first: later words join its words.
                operands.append(left)
                words = more
            default:
                if let pending = words { operands.append(.words(pending)) }
                words = nil
                operands.append(operand)
            }
        }

        /// The chain as `.and`s nested to the left, as the operators read.
        var expression: QueryExpression {
            var all = operands
            if let words { all.append(.words(words)) }
            var result = all[0]
            for operand in all.dropFirst() { result = .and(result, operand) }
            return result
        }
    }

    static func startsOperand(_ token: Token) -> Bool {
        switch token {
        case .open, .not, .string, .word: return true
        default: return false
        }
    }

    /// `!` before an operand, any number of times (each a level of nesting).
    mutating func parseUnary() throws(QuerySyntaxError) -> QueryExpression {
        var negations = 0
        while current == .not {
            try enter()
            negations += 1
            advance()
        }
        var operand = try parsePrimary()
        depth -= negations
        for _ in 0..<negations { operand = .not(operand) }
        return operand
    }

    mutating func parsePrimary() throws(QuerySyntaxError) -> QueryExpression {
        let start = position
        switch current {
        case .open:
            try enter()
            advance()
            if current == .close { throw error("an expression inside '( )'") }
            let inner = try parseOr()
            guard current == .close else { throw error("')' closing the '(' at \(start)") }
            advance()
            depth -= 1
            return inner
        case .string(let text, let modifiers):
            // A quoted string alone is words, as before the language existed.
            if case .op = peek(1) { throw QuerySyntaxError(position: tokens[index + 1].position, expected: "an attribute name before the operator", got: "a string") }
            advance()
            guard modifiers.isEmpty else { throw QuerySyntaxError(position: start, expected: "an attribute and an operator before a string with modifiers (e.g. title == \"\(text)\"\(Self.describe(modifiers)))", got: "a string alone") }
            let words = Self.splitWords(text)
            try count(words.count, at: start)
            return .words(words)
        case .word(let word):
            if case .op(let op) = peek(1) {
                guard word == "*" || Self.isAttributeName(word) else {
                    throw QuerySyntaxError(position: start, expected: "an attribute name (letters, digits, '_') or '*' before '\(op.rawValue)'", got: "'\(word)'")
                }
                advance()
                advance()
                var bracket: StringModifiers? = nil
                if case .bracket(let modifiers) = current { bracket = modifiers; advance() }
                let value = try parseValue(after: op, bracket: bracket)
                // A word-based string is a phrase: each of its words is a term.
                if case .string(let text, let modifiers) = value, modifiers.contains(.wordBased) {
                    try count(max(1, Self.splitWords(text).count), at: start)
                } else {
                    try count(1, at: start)
                }
                return .comparison(QueryComparison(attribute: Self.attributeName(word), op: op, value: value, position: start))
            }
            if word == "InRange", peek(1) == .open {
                try count(1, at: start)
                return try parseInRange()
            }
            if word.hasPrefix("bundle:") || word.hasPrefix("domain:") {
                let value = String(word.drop(while: { $0 != ":" }).dropFirst())
                guard !value.isEmpty else { throw QuerySyntaxError(position: start + 7, expected: "a \(word.hasPrefix("bundle") ? "bundle identifier" : "domain") after '\(word)'", got: "nothing") }
                try count(1, at: start)
                advance()
                return .restriction(word.hasPrefix("bundle:") ? .bundle(value) : .domain(value))
            }
            try count(1, at: start)
            advance()
            return .words([word])
        case .function:
            throw error("an attribute and an operator before a $time value")
        case .op(let op):
            throw error("an attribute name before '\(op.rawValue)'")
        case .end:
            throw error("a word, a comparison or '('")
        default:
            throw error("a word, a comparison or '('")
        }
    }

    mutating func parseInRange() throws(QuerySyntaxError) -> QueryExpression {
        let start = position
        advance()  // InRange
        advance()  // (
        guard case .word(let attribute) = current, Self.isAttributeName(attribute) else { throw error("an attribute name as the first argument of InRange") }
        advance()
        guard current == .comma else { throw error("',' after the attribute of InRange") }
        advance()
        let low = try parseBound("the lower bound of InRange (a number or a date)")
        guard current == .comma else { throw error("',' after the lower bound of InRange") }
        advance()
        let high = try parseBound("the upper bound of InRange (a number or a date)")
        guard current == .close else { throw error("')' closing InRange") }
        advance()
        return .inRange(attribute: Self.attributeName(attribute), low: low, high: high, position: start)
    }

    /// A bound of `InRange`: a number, or a date as seconds — a `$time` value or a quoted
    /// RFC 3339 date.
    mutating func parseBound(_ expected: String) throws(QuerySyntaxError) -> Double {
        switch current {
        case .function(let name, let argument):
            let at = position
            advance()
            return try time(name, argument, at: at)
        case .string(let text, let modifiers) where modifiers.isEmpty:
            guard let seconds = Self.date(text.trimmingSpaces, timeZoneOffset: timeZoneOffset) else { throw error(expected) }
            advance()
            return seconds
        default:
            return try parseNumber(expected)
        }
    }

    mutating func parseNumber(_ expected: String) throws(QuerySyntaxError) -> Double {
        guard case .word(let text) = current, let value = Double(text), value.isFinite else { throw error(expected) }
        advance()
        return value
    }

    mutating func parseValue(after op: QueryOperator, bracket: StringModifiers? = nil) throws(QuerySyntaxError) -> QueryValue {
        let expected = "a value after '\(op.rawValue)': a \"string\", a number, true, false, * or a $time value ($time.now, $time.today(N), $time.iso(DATE), …)"
        if let bracket {
            // `==[cd] "x"`: the modifiers of the string that follows (and a `*`, which has none).
            switch current {
            case .string(let text, let modifiers):
                advance()
                return .string(text, modifiers.union(bracket))
            case .word("*"):
                advance()
                return .any
            default:
                throw error("a \"string\" after '\(op.rawValue)[\(Self.describe(bracket))]'")
            }
        }
        switch current {
        case .string(let text, let modifiers):
            advance()
            return .string(text, modifiers)
        case .word(let text):
            if text == "*" { advance(); return .any }
            if text == "true" || text == "false" { advance(); return .bool(text == "true") }
            guard let number = Double(text), number.isFinite else { throw error(expected) }
            advance()
            return .number(number)
        case .function(let name, let argument):
            let at = position
            advance()
            return .time(try time(name, argument, at: at))
        default:
            throw error(expected)
        }
    }

    /// The `$time` names and what their whole-number argument counts.
    static let timeNames: [String: String] = [
        "time.now": "seconds", "time.today": "days", "time.yesterday": "days", "time.tomorrow": "days",
        "time.this_week": "weeks", "time.last_week": "weeks", "time.next_week": "weeks",
        "time.this_month": "months", "time.last_month": "months", "time.next_month": "months",
        "time.this_year": "years", "time.last_year": "years", "time.next_year": "years",
    ]

    /// A `$time` value as seconds since 1970 (docs/QUERIES.md, "Dates and times"): `now`
    /// plus seconds, or the local start of a day, week, month or year plus a number of them.
    func time(_ name: String, _ argument: String?, at position: Int) throws(QuerySyntaxError) -> Double {
        if name == "time.iso" {
            guard let argument, let seconds = Self.date(argument.trimmingSpaces, timeZoneOffset: timeZoneOffset) else {
                throw QuerySyntaxError(position: position, expected: "an RFC 3339 date, or a date alone, in $time.iso(…), e.g. $time.iso(2026-01-01T00:00:00Z) or $time.iso(2026-01-01)", got: "'\(argument ?? "")'")
            }
            return seconds
        }
        guard let unit = Self.timeNames[name] else {
            throw QuerySyntaxError(position: position, expected: "a $time value: $time.now(±SECONDS), $time.today(±DAYS), $time.yesterday, $time.tomorrow, $time.this_week(±N), $time.last_week, $time.next_week, $time.this_month(±N), $time.this_year(±N), … or $time.iso(DATE)",
                                   got: "'$\(name)'")
        }
        var n = 0
        if let argument, !argument.trimmingSpaces.isEmpty {
            var digits = Substring(argument.trimmingSpaces)
            if digits.first == "+" { digits.removeFirst() }
            // Bounded so the arithmetic below cannot overflow: ±100,000 years of seconds.
            guard let value = Int(digits), value.magnitude <= 3_200_000_000_000 else {
                throw QuerySyntaxError(position: position, expected: "a whole number of \(unit) in $\(name)(N)", got: "'\(argument)'")
            }
            n = value
        }
        if name.hasPrefix("time.last_") || name == "time.yesterday" { n -= 1 }
        if name.hasPrefix("time.next_") || name == "time.tomorrow" { n += 1 }
        let offset = Double(timeZoneOffset)
        // Days since 1970 and the civil date, in local time.
        let day = Int(((now + offset) / 86400).rounded(.down))
        func start(ofDay day: Int) -> Double { Double(day) * 86400 - offset }
        switch unit {
        case "seconds": return now + Double(n)
        case "days": return start(ofDay: day + min(max(n, -40_000_000), 40_000_000))
        case "weeks":
            // 1970-01-01 was a Thursday (weekday 5, Sunday being 1).
            let weekday = ((day + 4) % 7 + 7) % 7 + 1
            let back = (weekday - firstWeekday + 7) % 7
            return start(ofDay: day - back + 7 * min(max(n, -6_000_000), 6_000_000))
        default:
            let (year, month, _) = Self.civil(fromDays: day)
            let n = min(max(n, -1_000_000), 1_000_000)
            if unit == "years" { return start(ofDay: Self.days(year: year + n, month: 1, day: 1)) }
            let months = year * 12 + (month - 1) + n
            let y = months >= 0 ? months / 12 : (months - 11) / 12
            return start(ofDay: Self.days(year: y, month: months - y * 12 + 1, day: 1))
        }
    }

    /// A date of `$time.iso(…)` or of a quoted date: RFC 3339, or a date alone (`2026-01-01`,
    /// local midnight), or a date and time without an offset (local time).
    static func date(_ text: String, timeZoneOffset: Int) -> Double? {
        var text = text
        // `$time.iso("2008-08-03 12:22:00 +0800")`, as mdfind's users write it: quoted, a space
        // before the time and the offset, the offset without a colon.
        if text.count >= 2, let first = text.first, first == text.last, first == "\"" || first == "'" {
            text = String(text.dropFirst().dropLast()).trimmingSpaces
        }
        let parts = text.split(separator: " ")
        if parts.count == 3, parts[2].count == 5, let sign = parts[2].first, sign == "+" || sign == "-" {
            let zone = parts[2]
            text = "\(parts[0])T\(parts[1])\(zone.prefix(3)):\(zone.suffix(2))"
        } else if parts.count == 2 {
            text = "\(parts[0])T\(parts[1])"
        }
        if let seconds = RFC3339.parse(text) { return seconds }
        let sign = timeZoneOffset < 0 ? "-" : "+"
        let minutes = Int(timeZoneOffset.magnitude) / 60
        func two(_ n: Int) -> String { n < 10 ? "0\(n)" : "\(n)" }
        let zone = "\(sign)\(two(minutes / 60)):\(two(minutes % 60))"
        if text.count == 10 { return RFC3339.parse(text + "T00:00:00" + zone) }
        if text.count == 19 || text.count == 16 { return RFC3339.parse(text + (text.count == 16 ? ":00" : "") + zone) }
        return nil
    }

    /// Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's algorithm).
    static func days(year: Int, month: Int, day: Int) -> Int {
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yoe = y - era * 400
        let doy = (153 * (month + (month > 2 ? -3 : 9)) + 2) / 5 + day - 1
        let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy
        return era * 146097 + doe - 719468
    }

    /// The proleptic Gregorian date of a number of days since 1970-01-01.
    static func civil(fromDays days: Int) -> (year: Int, month: Int, day: Int) {
        let z = days + 719468
        let era = (z >= 0 ? z : z - 146096) / 146097
        let doe = z - era * 146097
        let yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100)
        let mp = (5 * doy + 2) / 153
        let day = doy - (153 * mp + 2) / 5 + 1
        let month = mp < 10 ? mp + 3 : mp - 9
        return (yoe + era * 400 + (month <= 2 ? 1 : 0), month, day)
    }

    /// Core Spotlight's `kMDItem…` names for the attributes this index has (docs/QUERIES.md):
    /// a query written for `CSSearchQuery` or `mdfind` may use either. Any other name is kept,
    /// so an attribute the index does not have is an error that names it.
    static let spotlightNames = AttributeSchema.spotlightNames

    /// The index's name for an attribute a query names (its own, or a `kMDItem…` one).
    static func attributeName(_ name: String) -> String { spotlightNames[name] ?? name }

    static func isAttributeName(_ word: String) -> Bool {
        guard let first = word.unicodeScalars.first, first.properties.isAlphabetic || first == "_" else { return false }
        return word.unicodeScalars.allSatisfy { $0.properties.isAlphabetic || ("0"..."9").contains($0) || $0 == "_" }
    }

    static func splitWords(_ text: String) -> [String] {
        text.split(whereSeparator: { $0.isWhitespace }).map(String.init)
    }

    static func describe(_ modifiers: StringModifiers) -> String {
        (modifiers.contains(.caseInsensitive) ? "c" : "") + (modifiers.contains(.diacriticInsensitive) ? "d" : "") + (modifiers.contains(.wordBased) ? "w" : "")
    }
}

extension String {
    var trimmingSpaces: String {
        var s = Substring(self)
        while s.first?.isWhitespace == true { s.removeFirst() }
        while s.last?.isWhitespace == true { s.removeLast() }
        return String(s)
    }
}
