import Foundation

/// Queries and cursors that must be errors, shared by the command line's, the store's and the
/// query API's tests.
public enum QueryCases {
    /// Queries past each limit, the position of the error, and what it says was expected.
    public static let queriesPastTheLimits: [(name: String, query: String, position: Int, expected: String)] = [
        ("10,000 parentheses", String(repeating: "(", count: 10_000) + "dune" + String(repeating: ")", count: 10_000), 16_385, "at most 16384 bytes"),
        ("5,000 parentheses", String(repeating: "(", count: 5_000) + "dune" + String(repeating: ")", count: 5_000), 33, "levels of '(' and '!'"),
        ("60,000 '!'", String(repeating: "!", count: 60_000) + "dune", 16_385, "at most 16384 bytes"),
        ("10,000 '!'", String(repeating: "!", count: 10_000) + "dune", 33, "levels of '(' and '!'"),
        ("5,000 words joined by ||", Array(repeating: "dune", count: 5_000).joined(separator: " || "), 16_385, "at most 16384 bytes"),
        ("1,000 words joined by ||", Array(repeating: "dune", count: 1_000).joined(separator: " || "), 256 * 8 + 1, "at most 256 terms"),
        ("3,000 comparisons joined by &&", Array(repeating: "rating > 1", count: 3_000).joined(separator: " && "), 16_385, "at most 16384 bytes"),
        ("1,000 comparisons joined by &&", Array(repeating: "rating > 1", count: 1_000).joined(separator: " && "), 256 * 14 + 1, "at most 256 terms"),
        ("120 KB of words", Array(repeating: "dune", count: 24_000).joined(separator: " "), 16_385, "at most 16384 bytes"),
    ]

    /// A cursor as a foreign program might make one: URL-safe base64 of `json`.
    public static func cursor(_ json: String) -> String {
        Data(json.utf8).base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }

    /// Cursors no page of any query ends at, and a word the error names.
    public static let damagedCursors: [(cursor: String, names: String)] = [
        ("nonsense!", "not a cursor"),
        (cursor(#"{"r":1}"#), "not a cursor"),
        (cursor(#"["x",0,1,2,3]"#), "not a cursor"),
        // A relevance cursor of an earlier version (by row, on PostgreSQL) is refused whole.
        (cursor(#"["r",0,10,5,0]"#), "not a cursor"),
        (cursor(#"["b",1e300,10,0,"a","b"]"#), "pass"),
        (cursor(#"["b",-9223372036854775808,10,0,"a","b"]"#), "pass"),
        (cursor(#"["b",0.5,10,0,"a","b"]"#), "pass"),
        (cursor(#"["b",0,-1,0,"a","b"]"#), "score"),
        (cursor(#"["b",0,10,"high","a","b"]"#), "rankingHint"),
        (cursor(#"["b",0,10,0,5,"b"]"#), "identifier"),
        (cursor(#"["b",0,10,0,"a",null]"#), "identifier"),
        (cursor(#"["b",0,10,0,"a"]"#), "5 values"),
        (cursor(#"["s","",[1],"a",1,"b"]"#), "sort value"),
        (cursor(#"["s","","a",1.5,"b"]"#), "generation"),
        (cursor(#"["s",7,"a",1,"b"]"#), "sort keys"),
    ]
}
