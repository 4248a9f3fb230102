import Foundation
import ReindexSystem
import ReindexProtocol

/// The opaque position a page ended at: the order it continues (by relevance, or sorted by
/// which keys) and the place in that order. Cursors are read back with `decode`, which
/// checks everything in them: they come from outside (a command line, an application).
enum Cursor: Equatable {
    /// Relevance order, in one form on either backend: what the score is (`Scoring`), the pass
    /// (whole words, then prefixes), the score, the rankingHint, the bundle (its key) and the
    /// identifier (`TieOrder`).
    case relevance(scoring: Scoring, pass: Int, score: Double, hint: Double, bundle: String, uid: String)
    /// Sorted order: the sort keys (`ordering(_:)`) and the values of every key of the page's
    /// last result (each sort key as "is it missing" and its value, then the bundle, the
    /// generation and the identifier).
    case sorted(ordering: String, values: [JSONValue])

    /// What a relevance cursor's score is: a position in one order means nothing in another.
    enum Scoring: String {
        /// BM25F (docs/QUERIES.md "Relevance"), on both backends.
        case bm25f = "b"
        /// The field score PostgreSQL indexes ranked by before schema 12: refused.
        case fieldScore = "f"

        var index: String { self == .bm25f ? "an index ranked by BM25F" : "an index ranked by the field score of earlier versions" }
    }

    var encoded: String {
        let json: JSONValue
        switch self {
        case .relevance(let scoring, let pass, let score, let hint, let bundle, let uid):
            json = .array([.string(scoring.rawValue), .integer(Int64(pass)), .double(score), .double(hint), .string(bundle), .string(uid)])
        case .sorted(let ordering, let values): json = .array([.string("s"), .string(ordering)] + values)
        }
        return Base64.encode(JSONWriter.bytes(json)).replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "=", with: "")
    }

    /// The sort keys as a cursor names them: `rating:desc,title:asc` (empty: by bundle and
    /// identifier alone).
    static func ordering(_ sort: [QuerySort]) -> String {
        sort.map { $0.attribute + ($0.descending ? ":desc" : ":asc") }.joined(separator: ",")
    }

    static func describe(ordering: String) -> String {
        ordering.isEmpty ? "by bundle and identifier" : "sorted by \(ordering)"
    }

    static let again = "use the nextCursor of the previous page of this query"

    static func damaged(_ what: String) -> ReindexError {
        ReindexError(.invalidData, "cursor: damaged (\(what)); \(again)")
    }

    /// Reads a cursor this version wrote. Anything else — not base64 JSON, another kind, a
    /// number no page can end at (a pass other than 0 or 1, a negative score), a sort value of a type no key has — is an `.invalidData`
    /// error naming the problem.
    static func decode(_ text: String) throws(ReindexError) -> Cursor {
        guard let bytes = Base64.decode(text), let json = try? JSONParser.parse(bytes), case .array(let items) = json,
              let kind = items.first?.stringValue, kind == "s" || Scoring(rawValue: kind) != nil else {
            throw ReindexError(.invalidData, "cursor: not a cursor this version of reindex wrote; \(again)")
        }
        if let scoring = Scoring(rawValue: kind) {
            guard items.count == 6 else { throw damaged("a relevance cursor holds 5 values, this one \(items.count - 1)") }
            guard let pass = items[1].integerValue, pass == 0 || pass == 1 else { throw damaged("its pass is not 0 or 1") }
            guard let score = items[2].doubleValue, score >= 0 else { throw damaged("its score is not a number of at least 0") }
            guard let hint = items[3].doubleValue else { throw damaged("its rankingHint is not a number") }
            guard let bundle = items[4].stringValue, let uid = items[5].stringValue else { throw damaged("its bundle or identifier is not a string") }
            return .relevance(scoring: scoring, pass: pass == 0 ? 0 : 1, score: score, hint: hint, bundle: bundle, uid: uid)
        }
        guard items.count >= 5, let ordering = items[1].stringValue else { throw damaged("a sorted cursor holds its sort keys and at least 3 values") }
        let values = Array(items.dropFirst(2))
        for value in values {
            switch value {
            case .null, .bool, .integer, .double, .string: continue
            default: throw damaged("a sort value is neither null, a boolean, a number nor a string")
            }
        }
        // The last three: the bundle, the generation and the identifier.
        let tail = values.suffix(3)
        guard tail[tail.startIndex].stringValue != nil, tail[tail.startIndex + 1].integerValue != nil, tail[tail.startIndex + 2].stringValue != nil else {
            throw damaged("its last values are not a bundle, a generation and an identifier")
        }
        return .sorted(ordering: ordering, values: values)
    }

    /// The cursor of `options.after` checked against the query it is to continue: a query by
    /// relevance (`ranked`) takes a relevance cursor, a sorted one a cursor of the same sort
    /// keys with `keys` values. nil without a cursor.
    /// A relevance cursor must be of `scoring`, the index's: one of another index's is refused.
    static func decode(_ options: QueryOptions, ranked: Bool, keys: Int, scoring: Scoring) throws(ReindexError) -> Cursor? {
        guard let text = options.after else { return nil }
        let cursor = try decode(text)
        let wanted = ordering(options.sort)
        let order = ranked ? "by relevance" : describe(ordering: wanted)
        switch cursor {
        case .relevance(let of, _, _, _, _, _):
            guard ranked else { throw ReindexError(.invalidData, "cursor: it continues a page by relevance, this query is \(order); \(again)") }
            guard of == scoring else {
                throw ReindexError(.invalidData, "cursor: it continues a page of \(of.index), this is \(scoring.index); \(again)")
            }
        case .sorted(let ordering, let values):
            guard !ranked, ordering == wanted else {
                throw ReindexError(.invalidData, "cursor: it continues a page \(describe(ordering: ordering)), this query is \(order); \(again)")
            }
            guard values.count == keys else { throw damaged("it holds \(values.count) sort values, this query's order has \(keys)") }
        }
        return cursor
    }
}

/// Cursor checks for callers outside the store.
public enum QueryCursor {
    /// Whether `text` is a cursor this version wrote.
    public static func isValid(_ text: String) -> Bool { (try? Cursor.decode(text)) != nil }

    /// Throws an `.invalidData` error naming what is wrong with `text` unless it is a cursor
    /// this version wrote. (Whether it suits the query it is given to, the query checks.)
    public static func check(_ text: String) throws(ReindexError) { _ = try Cursor.decode(text) }
}
