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
    /// `InRange(attribute, low, high)`: low ≤ value ≤ high.
    case inRange(attribute: String, low: Double, high: Double)
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

/// Parses the query language. `now` and `timeZoneOffset` fix what `$time.now` and
/// `$time.today` mean (tests pass their own).
///
/// Parsing takes time and stack in proportion to the query, within `QueryLimits`.
public struct QueryParser {
    public static func parse(_ text: String, now: Double = Clock.now(), timeZoneOffset: Int = 0,
                             limits: QueryLimits = .standard) throws(QuerySyntaxError) -> QueryExpression? {
        try checkLength(text, limit: limits.maximumLength)
        var parser = QueryParser(text: text, now: now, timeZoneOffset: timeZoneOffset)
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
        while i < characters.count {
            let c = characters[i]
            let position = i + 1
            if c.isWhitespace { i += 1; continue }
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
                if next(1) == "=" { tokens.append((.op(.notEqual), position)); i += 2 } else { tokens.append((.not, position)); i += 1 }
            case "=":
                guard next(1) == "=" else { throw QuerySyntaxError(position: position, expected: "'==' (comparisons use two '=')", got: "a single '='") }
                tokens.append((.op(.equal), position)); i += 2
            case "<":
                if next(1) == "=" { tokens.append((.op(.lessOrEqual), position)); i += 2 } else { tokens.append((.op(.less), position)); i += 1 }
            case ">":
                if next(1) == "=" { tokens.append((.op(.greaterOrEqual), position)); i += 2 } else { tokens.append((.op(.greater), position)); i += 1 }
            case "\"":
                var text = ""
                i += 1
                var closed = false
                while i < characters.count {
                    let d = characters[i]
                    if d == "\\", i + 1 < characters.count {
                        // \" and \\ are the quote and the backslash; \* is a literal star.
                        let e = characters[i + 1]
                        if e == "*" { text.append("\\*") } else { text.append(e) }
                        i += 2
                        continue
                    }
                    if d == "\"" { closed = true; i += 1; break }
                    text.append(d)
                    i += 1
                }
                guard closed else { throw QuerySyntaxError(position: position, expected: "a closing '\"'", got: "the end of the query") }
                var modifiers: StringModifiers = []
                while i < characters.count, !Self.isDelimiter(characters[i]) {
                    switch characters[i] {
                    case "c": modifiers.insert(.caseInsensitive)
                    case "d": modifiers.insert(.diacriticInsensitive)
                    case "w": modifiers.insert(.wordBased)
                    default:
                        throw QuerySyntaxError(position: i + 1, expected: "a string modifier (c, d or w) or a space after the string", got: "'\(characters[i])'")
                    }
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
                var word = ""
                while i < characters.count, !Self.isDelimiter(characters[i]) { word.append(characters[i]); i += 1 }
                tokens.append((.word(word), position))
            }
        }
        tokens.append((.end, characters.count + 1))
    }

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
                let value = try parseValue(after: op)
                // A word-based string is a phrase: each of its words is a term.
                if case .string(let text, let modifiers) = value, modifiers.contains(.wordBased) {
                    try count(max(1, Self.splitWords(text).count), at: start)
                } else {
                    try count(1, at: start)
                }
                return .comparison(QueryComparison(attribute: word, op: op, value: value, position: start))
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
        advance()  // InRange
        advance()  // (
        guard case .word(let attribute) = current, Self.isAttributeName(attribute) else { throw error("an attribute name as the first argument of InRange") }
        advance()
        guard current == .comma else { throw error("',' after the attribute of InRange") }
        advance()
        let low = try parseNumber("the lower bound of InRange (a number)")
        guard current == .comma else { throw error("',' after the lower bound of InRange") }
        advance()
        let high = try parseNumber("the upper bound of InRange (a number)")
        guard current == .close else { throw error("')' closing InRange") }
        advance()
        return .inRange(attribute: attribute, low: low, high: high)
    }

    mutating func parseNumber(_ expected: String) throws(QuerySyntaxError) -> Double {
        guard case .word(let text) = current, let value = Double(text), value.isFinite else { throw error(expected) }
        advance()
        return value
    }

    mutating func parseValue(after op: QueryOperator) throws(QuerySyntaxError) -> QueryValue {
        let expected = "a value after '\(op.rawValue)': a \"string\", a number, true, false or $time.now, $time.today(N), $time.iso(DATE)"
        switch current {
        case .string(let text, let modifiers):
            advance()
            return .string(text, modifiers)
        case .word(let text):
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

    func time(_ name: String, _ argument: String?, at position: Int) throws(QuerySyntaxError) -> Double {
        switch name {
        case "time.now":
            guard argument == nil || argument == "" else { throw QuerySyntaxError(position: position, expected: "$time.now without an argument", got: "'(\(argument ?? ""))'") }
            return now
        case "time.today":
            var days = 0
            if let argument, !argument.trimmingSpaces.isEmpty {
                guard let n = Int(argument.trimmingSpaces) else { throw QuerySyntaxError(position: position, expected: "a whole number of days in $time.today(N)", got: "'\(argument)'") }
                days = n
            }
            let local = now + Double(timeZoneOffset)
            let midnight = (local / 86400).rounded(.down) * 86400 - Double(timeZoneOffset)
            return midnight + Double(days) * 86400
        case "time.iso":
            guard let argument, let seconds = RFC3339.parse(argument.trimmingSpaces) else {
                throw QuerySyntaxError(position: position, expected: "an RFC 3339 date in $time.iso(…), e.g. $time.iso(2026-01-01T00:00:00Z)", got: "'\(argument ?? "")'")
            }
            return seconds
        default:
            throw QuerySyntaxError(position: position, expected: "$time.now, $time.today(N) or $time.iso(DATE)", got: "'$\(name)'")
        }
    }

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
