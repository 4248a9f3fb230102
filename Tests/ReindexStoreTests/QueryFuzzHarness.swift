#if !QUERY_FUZZ_TARGET  // Scripts/fuzz.sh compiles this file into the query module itself
@testable import ReindexStore
#endif
import ReindexProtocol

/// What the "query" fuzz target (Fuzz/Query) does with one input, and the invariants it checks;
/// `QueryFuzzTests` replays the seeds and saved failures through it.
///
/// The input is the query text (invalid UTF-8 replaced, as a command line would be read). It is
/// parsed with the standard limits and compiled for SQLite, with a few declared attributes.
/// Besides "no trap, no memory error, no hang" (libFuzzer's timeout):
/// - a query is refused exactly when it is past a limit or malformed, with a position inside
///   the query (1 … its length + 1), and a query longer than the length limit always is;
/// - a query that parses has at most `maximumTerms` terms and `maximumDepth` levels;
/// - what it compiles to nests parentheses no deeper than `maximumSQLNesting`, and SQLite's
///   parser stack no deeper than `maximumParserDepth` (see `QueryPlan.nested`).
enum QueryFuzzHarness {
    static let declared: [String: AttributeDeclaration] = {
        let json = #"""
            {"pages":{"type":"number"},"genres":{"type":"stringList","searchable":true},"isbn":{"type":"string"},
             "published":{"type":"date"},"inPrint":{"type":"boolean"},"blurb":{"type":"string","searchable":true,"searchableByDefault":true}}
            """#
        guard let value = try? JSONParser.parse(Array(json.utf8)), let declared = try? AttributeDeclaration.parseAll(value) else { return [:] }
        return declared
    }()

    /// Each level of the query may alternate `||` and `&&` twice in the SQL (`a || b && (…)`),
    /// and a term nests a few parentheses of its own; the shapes that reach these bounds run on
    /// SQLite in QueryCommandTests.testQueriesAtTheLimitsRun.
    static let maximumSQLNesting = 2 * QueryLimits.standard.maximumDepth + 16
    static let maximumParserDepth = 2 * QueryLimits.standard.maximumDepth + 8

    /// nil when every invariant holds, else what broke.
    static func run(_ bytes: [UInt8]) -> String? {
        let text = String(decoding: bytes, as: UTF8.self)
        let limits = QueryLimits.standard
        let length = text.count
        let expression: QueryExpression?
        do {
            expression = try QueryParser.parse(text, now: 1_800_000_000, timeZoneOffset: 3600)
        } catch {
            guard (1...(length + 1)).contains(error.position) else { return "error position \(error.position) outside 1…\(length + 1): \(error)" }
            return nil
        }
        if text.utf8.count > limits.maximumLength { return "a query of \(text.utf8.count) bytes parsed" }
        guard let expression else { return nil }
        let (terms, depth) = measure(expression)
        if terms > limits.maximumTerms { return "\(terms) terms parsed" }
        if depth > limits.maximumDepth { return "\(depth) levels parsed" }
        do {
            let plan = try QueryPlan.compile(expression, declared: declared)
            var check = plan
            var deepest = 0
            for conjunct in QueryPlan.chain(expression, conjunction: true) {
                deepest = max(deepest, try check.nested(conjunct, negated: false).depth)
            }
            if deepest > maximumParserDepth { return "parser depth \(deepest) for: \(text)" }
            let nesting = parenthesisNesting(plan.condition)
            if nesting > maximumSQLNesting { return "SQL nesting \(nesting) for: \(text)" }
        } catch {
            // Compilation errors name a term: a position inside the query, or 0 (InRange).
            guard (0...(length + 1)).contains(error.position) else { return "compile error position \(error.position): \(error)" }
        }
        return nil
    }

    /// Terms (as the parser counts them) and levels in an expression: each `!`, and each `||`
    /// inside a `&&` (which needs parentheses) — at most what the parser counted.
    static func measure(_ expression: QueryExpression) -> (terms: Int, depth: Int) {
        switch expression {
        case .words(let words): return (words.count, 0)
        case .comparison(let c):
            if case .string(let text, let modifiers) = c.value, modifiers.contains(.wordBased) { return (max(1, QueryParser.splitWords(text).count), 0) }
            return (1, 0)
        case .inRange, .restriction: return (1, 0)
        case .not(let inner):
            let (terms, depth) = measure(inner)
            return (terms, depth + 1)
        case .and, .or:
            var conjunction = false
            if case .and = expression { conjunction = true }
            var terms = 0
            var depth = 0
            for operand in QueryPlan.chain(expression, conjunction: conjunction) {
                let (t, d) = measure(operand)
                terms += t
                // A '||' inside a '&&' was in parentheses ('&&' inside '||' need not be).
                var parenthesized = false
                if case .or = operand, conjunction { parenthesized = true }
                depth = max(depth, d + (parenthesized ? 1 : 0))
            }
            return (terms, depth)
        }
    }

    static func parenthesisNesting(_ sql: String) -> Int {
        var level = 0
        var deepest = 0
        var quoted = false
        for byte in sql.utf8 {
            if byte == UInt8(ascii: "'") { quoted.toggle() }
            if quoted { continue }
            if byte == UInt8(ascii: "(") { level += 1; deepest = max(deepest, level) }
            if byte == UInt8(ascii: ")") { level -= 1 }
        }
        return deepest
    }
}
