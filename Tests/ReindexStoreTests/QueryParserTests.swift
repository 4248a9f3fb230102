import ReindexHost
import ReindexSystem
@testable import ReindexStore
import XCTest

/// The query language's parser on its own: every operator, and the position and expectation of
/// every kind of error.
final class QueryParserTests: XCTestCase {
    let now = 1_800_000_000.0  // 2027-01-15T08:00:00Z

    func parse(_ text: String) throws -> QueryExpression? { try QueryParser.parse(text, now: now, timeZoneOffset: 0) }

    func comparison(_ attribute: String, _ op: QueryOperator, _ value: QueryValue) -> QueryExpression {
        .comparison(QueryComparison(attribute: attribute, op: op, value: value))
    }

    func failure(_ text: String, file: StaticString = #filePath, line: UInt = #line) -> QuerySyntaxError? {
        do {
            _ = try QueryParser.parse(text, now: now, timeZoneOffset: 0)
            XCTFail("'\(text)' parsed", file: file, line: line)
            return nil
        } catch {
            return error
        }
    }

    func testPlainWordsKeepTheirMeaning() throws {
        XCTAssertEqual(try parse("staff eng"), .words(["staff", "eng"]))
        XCTAssertEqual(try parse("  zoë  o'brien c++ foo-bar "), .words(["zoë", "o'brien", "c++", "foo-bar"]))
        XCTAssertEqual(try parse("\"staff engineer\""), .words(["staff", "engineer"]))
        XCTAssertNil(try parse("   "))
    }

    func testEveryComparisonOperator() throws {
        for op in QueryOperator.allCases {
            XCTAssertEqual(try parse("rating \(op.rawValue) 4"), comparison("rating", op, .number(4)), op.rawValue)
            XCTAssertEqual(try parse("rating\(op.rawValue)4.5"), comparison("rating", op, .number(4.5)), op.rawValue)
        }
        XCTAssertEqual(try parse("latitude >= -33.9"), comparison("latitude", .greaterOrEqual, .number(-33.9)))
        XCTAssertEqual(try parse("supportsPhoneCall == true"), comparison("supportsPhoneCall", .equal, .bool(true)))
    }

    func testStringsWithWildcardsAndModifiers() throws {
        XCTAssertEqual(try parse(#"title == "dune*"cd"#), comparison("title", .equal, .string("dune*", [.caseInsensitive, .diacriticInsensitive])))
        XCTAssertEqual(try parse(#"keywords == "swift"c"#), comparison("keywords", .equal, .string("swift", [.caseInsensitive])))
        XCTAssertEqual(try parse(#"authors == "le guin"cdw"#), comparison("authors", .equal, .string("le guin", [.caseInsensitive, .diacriticInsensitive, .wordBased])))
        XCTAssertEqual(try parse(#"* == "dune"cdw"#), comparison("*", .equal, .string("dune", [.caseInsensitive, .diacriticInsensitive, .wordBased])))
        XCTAssertEqual(try parse(#"title != "a \"quoted\" \\ word""#), comparison("title", .notEqual, .string(#"a "quoted" \ word"#, [])))
        XCTAssertEqual(try parse(#"title == "\*""#), comparison("title", .equal, .string(#"\*"#, [])))
    }

    func testTimes() throws {
        XCTAssertEqual(try parse("startDate > $time.now"), comparison("startDate", .greater, .time(now)))
        let midnight = (now / 86400).rounded(.down) * 86400
        XCTAssertEqual(try parse("startDate > $time.today"), comparison("startDate", .greater, .time(midnight)))
        XCTAssertEqual(try parse("startDate > $time.today(-7)"), comparison("startDate", .greater, .time(midnight - 7 * 86400)))
        XCTAssertEqual(try parse("endDate <= $time.iso(2026-01-01T00:00:00Z)"), comparison("endDate", .lessOrEqual, .time(1_767_225_600)))
        // Local midnight: two hours east of UTC, today starts at 22:00 UTC the day before.
        XCTAssertEqual(try QueryParser.parse("startDate > $time.today", now: now, timeZoneOffset: 7200),
                       comparison("startDate", .greater, .time(midnight - 7200)))
    }

    /// Apple's File Metadata Query Expression Syntax: single quotes, `?`, the bracket form of
    /// the modifiers, `*` as a value, `kMDItem…` names.
    func testAppleForms() throws {
        let cd: StringModifiers = [.caseInsensitive, .diacriticInsensitive]
        XCTAssertEqual(try parse("title == 'dune'"), comparison("title", .equal, .string("dune", [])))
        XCTAssertEqual(try parse(#"title == 'it\'s'c"#), comparison("title", .equal, .string("it's", [.caseInsensitive])))
        XCTAssertEqual(try parse(#"title == "d?ne\?""#), comparison("title", .equal, .string(#"d?ne\?"#, [])))
        XCTAssertEqual(try parse(#"title ==[cd] "dune*""#), comparison("title", .equal, .string("dune*", cd)))
        XCTAssertEqual(try parse(#"kMDItemAuthors ==[c] "Steve""#), comparison("authors", .equal, .string("Steve", [.caseInsensitive])))
        XCTAssertEqual(try parse(#"title !=[cdw] 'x'"#), comparison("title", .notEqual, .string("x", [.caseInsensitive, .diacriticInsensitive, .wordBased])))
        XCTAssertEqual(try parse(#"title ==[c] "x"d"#), comparison("title", .equal, .string("x", cd)))
        XCTAssertEqual(try parse("kMDItemStarRating == *"), comparison("rating", .equal, .any))
        XCTAssertEqual(try parse("title != *"), comparison("title", .notEqual, .any))
        XCTAssertEqual(try parse("kMDItemFSName == 'x'"), comparison("kMDItemFSName", .equal, .string("x", [])))
        // A single quote that is never closed stays in its word.
        XCTAssertEqual(try parse("o'brien 'tis"), .words(["o'brien", "'tis"]))
        XCTAssertEqual(try parse("InRange(kMDItemContentCreationDate, $time.iso(2026-03-01), $time.today)"),
                       .inRange(attribute: "contentCreationDate", low: 1_772_323_200, high: 1_799_971_200, position: 1))
        XCTAssertEqual(try parse(#"InRange(startDate, "2026-03-01T00:00:00Z", 5)"#),
                       .inRange(attribute: "startDate", low: 1_772_323_200, high: 5, position: 1))
        let errors: [(String, Int, String)] = [
            (#"title ==[x] "a""#, 10, "a modifier (c, d or w)"), (#"title ==[c "a""#, 11, "a modifier"),
            (#"title ==[c"#, 11, "']' closing the '[' at 9"), ("rating ==[c] 4", 14, #"a "string" after '==[c]'"#),
            ("title == \"dune", 10, "a closing '\"'"),
        ]
        for (text, position, expected) in errors {
            guard let error = failure(text) else { continue }
            XCTAssertEqual(error.position, position, "\(text): \(error)")
            XCTAssertTrue(error.expected.contains(expected), "\(text): \(error)")
        }
    }

    /// Every `$time` form, at 2027-01-15T08:00:00Z (a Friday), in UTC.
    func testEveryTimeForm() throws {
        let midnight = 1_799_971_200.0
        func time(_ text: String, offset: Int = 0, firstWeekday: Int = 1) throws -> Double? {
            guard case .comparison(let c)? = try QueryParser.parse("startDate > " + text, now: now, timeZoneOffset: offset, firstWeekday: firstWeekday),
                  case .time(let t) = c.value else { return nil }
            return t
        }
        let cases: [(String, Double)] = [
            ("$time.now", now), ("$time.now(-3600)", now - 3600), ("$time.now(+60)", now + 60), ("$time.today", midnight),
            ("$time.today(+1)", midnight + 86400), ("$time.yesterday", midnight - 86400), ("$time.tomorrow", midnight + 86400),
            ("$time.this_week", 1_799_539_200), ("$time.this_week(-1)", 1_799_539_200 - 7 * 86400), ("$time.last_week", 1_799_539_200 - 7 * 86400),
            ("$time.next_week", 1_799_539_200 + 7 * 86400), ("$time.this_month", 1_798_761_600), ("$time.this_month(-1)", 1_796_083_200),
            ("$time.last_month", 1_796_083_200), ("$time.next_month", 1_801_440_000), ("$time.this_month(13)", 1_832_976_000),
            ("$time.this_year", 1_798_761_600), ("$time.last_year", 1_767_225_600), ("$time.this_year(-1)", 1_767_225_600),
            ("$time.iso(2026-03-01)", 1_772_323_200), ("$time.iso(2026-03-01T00:00:00Z)", 1_772_323_200),
        ]
        for (text, expected) in cases { XCTAssertEqual(try time(text), expected, text) }
        // The week starts on the locale's first day (Monday here); dates alone are local midnight.
        XCTAssertEqual(try time("$time.this_week", firstWeekday: 2), 1_799_625_600)
        XCTAssertEqual(try time("$time.iso(2026-03-01)", offset: 3600), 1_772_323_200 - 3600)
        XCTAssertEqual(try time("$time.this_month", offset: -3600 * 9), 1_798_761_600 + 3600 * 9)
        // mdfind's form of a date (simoncblyth/env, md/md.bash): 2008-08-03T04:22:00Z.
        XCTAssertEqual(try time(#"$time.iso("2008-08-03 12:22:00 +0800")"#), 1_217_737_320)
        // Counts past any date are errors, never an overflow.
        for text in ["$time.now(-9223372036854775808)", "$time.this_year(9223372036854775807)", "$time.today(1.5)"] {
            XCTAssertEqual(failure("startDate > " + text)?.position, 13, text)
        }
        for text in ["$time.this_year(3000000000000)", "$time.this_month(-3000000000000)", "$time.today(3000000000000)", "$time.this_week(-3000000000000)"] {
            XCTAssertNotNil(try time(text), text)
        }
    }

    func testLogicAndPrecedence() throws {
        let a = comparison("rating", .greaterOrEqual, .number(4))
        let b = comparison("contentType", .equal, .string("public.movie", []))
        let c = comparison("rating", .less, .number(1))
        XCTAssertEqual(try parse(#"rating >= 4 && contentType == "public.movie" || rating < 1"#), .or(.and(a, b), c))
        XCTAssertEqual(try parse(#"rating >= 4 && (contentType == "public.movie" || rating < 1)"#), .and(a, .or(b, c)))
        XCTAssertEqual(try parse(#"!(rating >= 4)"#), .not(a))
        XCTAssertEqual(try parse(#"!rating >= 4 && dune"#), .and(.not(a), .words(["dune"])))
        XCTAssertEqual(try parse("dune rating >= 4"), .and(.words(["dune"]), a))
        XCTAssertEqual(try parse("InRange(latitude, 40.0, 41.5)"), .inRange(attribute: "latitude", low: 40, high: 41.5, position: 1))
        XCTAssertEqual(try parse("bundle:com.example.films domain:com.example.films.classic dune"),
                       .and(.and(.restriction(.bundle("com.example.films")), .restriction(.domain("com.example.films.classic"))), .words(["dune"])))
    }

    func testErrorsSayWhereAndWhatWasExpected() {
        let cases: [(String, Int, String)] = [
            ("rating >=", 10, "a value after '>='"),
            ("rating >= high", 11, "a value after '>='"),
            ("rating = 4", 8, "'=='"),
            ("a & b", 3, "'&&'"),
            ("a | b", 3, "'||'"),
            (#"title == "dune"#, 10, "a closing '\"'"),
            (#"title == "dune"x"#, 16, "a string modifier"),
            ("(rating > 4", 12, "')' closing the '(' at 1"),
            ("rating > 4)", 11, "an expression before ')'"),
            ("()", 2, "an expression inside '( )'"),
            ("== 4", 1, "an attribute name before '=='"),
            ("rating > 4 &&", 14, "a word, a comparison or '('"),
            ("rating > 4 || || a", 15, "a word, a comparison or '('"),
            ("4star >= 4", 1, "an attribute name"),
            (#""dune" == 4"#, 8, "an attribute name before the operator"),
            (#""dune"c"#, 1, "an attribute and an operator before a string with modifiers"),
            ("startDate > $time.today(x)", 13, "a whole number of days"),
            ("startDate > $time.iso(yesterday)", 13, "an RFC 3339 date"),
            ("startDate > $time.someday", 13, "a $time value"),
            ("startDate > $time.today(-7", 27, "a ')' closing the argument"),
            ("$time.now", 1, "an attribute and an operator before a $time value"),
            ("InRange(latitude 40, 41)", 18, "',' after the attribute of InRange"),
            ("InRange(latitude, north, 41)", 19, "the lower bound of InRange"),
            ("InRange(latitude, 40, 41", 25, "')' closing InRange"),
            ("bundle: dune", 8, "a bundle identifier"),
        ]
        for (text, position, expected) in cases {
            guard let error = failure(text) else { continue }
            XCTAssertEqual(error.position, position, "position for '\(text)': \(error)")
            XCTAssertTrue(error.expected.contains(expected), "'\(text)': \(error)")
            XCTAssertTrue(error.reindexError.message.hasPrefix("query: at \(position): expected "), error.description)
            XCTAssertEqual(error.reindexError.code.exitCode, 65)
        }
    }
}

/// The bounds of docs/QUERIES.md, "Limits": past each, an error at the place it was crossed —
/// never a crash, whatever the query.
extension QueryParserTests {
    func testQueriesPastTheLimitsFailWhereTheyCrossThem() {
        let limits = QueryLimits.standard
        let cases: [(String, String, Int, String)] = [
            ("10,000 parentheses", String(repeating: "(", count: 10_000) + "dune" + String(repeating: ")", count: 10_000), limits.maximumLength + 1, "bytes"),
            ("5,000 parentheses", String(repeating: "(", count: 5_000) + "dune" + String(repeating: ")", count: 5_000), limits.maximumDepth + 1, "levels of '(' and '!'"),
            ("60,000 '!'", String(repeating: "!", count: 60_000) + "dune", 0, "bytes"),
            ("8,000 '!'", String(repeating: "!", count: 8_000) + "dune", limits.maximumDepth + 1, "levels of '(' and '!'"),
            ("'!(' nested", String(repeating: "!(", count: 20) + "dune" + String(repeating: ")", count: 20), 33, "levels of '(' and '!'"),
            ("1,000 words joined by ||", Array(repeating: "dune", count: 1_000).joined(separator: " || "), 256 * 8 + 1, "terms"),
            ("1,000 comparisons joined by &&", Array(repeating: "rating > 1", count: 1_000).joined(separator: " && "), 256 * 14 + 1, "terms"),
            ("a quoted string of 300 words", "\"" + Array(repeating: "w", count: 300).joined(separator: " ") + "\"", 1, "terms"),
            ("120 KB of words", Array(repeating: "dune", count: 24_000).joined(separator: " "), limits.maximumLength + 1, "bytes"),
        ]
        for (name, text, position, expected) in cases {
            guard let error = failure(text) else { continue }
            if position > 0 { XCTAssertEqual(error.position, position, "\(name): \(error)") }
            XCTAssertTrue(error.expected.contains(expected), "\(name): \(error)")
            XCTAssertEqual(error.reindexError.code.exitCode, 65, name)
        }
        // A multi-byte character that straddles the length limit is where the query ends.
        let wide = String(repeating: "a", count: limits.maximumLength - 1) + "é"
        XCTAssertEqual(failure(wide)?.position, limits.maximumLength)
    }

    func testQueriesAtTheLimitsParse() throws {
        let limits = QueryLimits.standard
        let deep = String(repeating: "(", count: limits.maximumDepth) + "dune" + String(repeating: ")", count: limits.maximumDepth)
        XCTAssertEqual(try parse(deep), .words(["dune"]))
        XCTAssertNotNil(try parse(String(repeating: "!", count: limits.maximumDepth) + "dune"))
        XCTAssertNotNil(try parse(Array(repeating: "rating > 1", count: limits.maximumTerms).joined(separator: " && ")))
        XCTAssertEqual(try parse(Array(repeating: "w", count: limits.maximumTerms).joined(separator: " ")),
                       .words(Array(repeating: "w", count: limits.maximumTerms)))
    }

    /// Words merge into one `.words` however they are joined, as they always did: after `&&`,
    /// and after a parenthesized conjunction ending in words.
    func testWordsStillMergeAcrossAConjunction() throws {
        let a = comparison("rating", .greaterOrEqual, .number(4))
        XCTAssertEqual(try parse("eng && sta x"), .words(["eng", "sta", "x"]))
        XCTAssertEqual(try parse("rating >= 4 eng sta"), .and(a, .words(["eng", "sta"])))
        XCTAssertEqual(try parse("(rating >= 4 && eng) sta"), .and(a, .words(["eng", "sta"])))
        XCTAssertEqual(try parse("eng rating >= 4 sta"), .and(.and(.words(["eng"]), a), .words(["sta"])))
    }
}
