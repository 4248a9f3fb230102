import XCTest
import ReindexProtocol

/// Parses `text` or fails the test.
private func parse(_ text: String, maximumDepth: Int = JSONParser.defaultMaximumDepth,
                   file: StaticString = #filePath, line: UInt = #line) -> JSONValue? {
    do {
        return try JSONParser.parse(text: text, maximumDepth: maximumDepth)
    } catch {
        XCTFail("unexpected parse error for \(text.debugDescription): \(error)", file: file, line: line)
        return nil
    }
}

/// The error parsing `bytes` gives, or nil (and a failure) when it parses.
private func parseError(_ bytes: [UInt8], maximumDepth: Int = JSONParser.defaultMaximumDepth,
                        file: StaticString = #filePath, line: UInt = #line) -> JSONParseError? {
    do {
        let value = try JSONParser.parse(bytes, maximumDepth: maximumDepth)
        XCTFail("expected a parse error for \(String(decoding: bytes, as: UTF8.self).debugDescription), got \(value)", file: file, line: line)
        return nil
    } catch {
        return error
    }
}

private func parseError(_ text: String, maximumDepth: Int = JSONParser.defaultMaximumDepth,
                        file: StaticString = #filePath, line: UInt = #line) -> JSONParseError? {
    parseError(Array(text.utf8), maximumDepth: maximumDepth, file: file, line: line)
}

final class JSONParserTests: XCTestCase {
    // MARK: Valid documents of every kind

    func testLiterals() {
        XCTAssertEqual(parse("null"), .null)
        XCTAssertEqual(parse("true"), .bool(true))
        XCTAssertEqual(parse("false"), .bool(false))
    }

    func testStrings() {
        XCTAssertEqual(parse("\"\""), .string(""))
        XCTAssertEqual(parse("\"hello\""), .string("hello"))
        XCTAssertEqual(parse("\"héllo wörld · 日本 😀\""), .string("héllo wörld · 日本 😀"))
        // DEL (0x7F) is not a JSON control character and may appear raw.
        XCTAssertEqual(parse("\"a\u{7F}b\""), .string("a\u{7F}b"))
    }

    func testNumbers() {
        XCTAssertEqual(parse("0"), .integer(0))
        XCTAssertEqual(parse("-0"), .integer(0))
        XCTAssertEqual(parse("42"), .integer(42))
        XCTAssertEqual(parse("-17"), .integer(-17))
        XCTAssertEqual(parse("0.5"), .double(0.5))
        XCTAssertEqual(parse("-0.25"), .double(-0.25))
        XCTAssertEqual(parse("1e3"), .double(1000))
        XCTAssertEqual(parse("1E+3"), .double(1000))
        XCTAssertEqual(parse("25e-2"), .double(0.25))
        XCTAssertEqual(parse("3.14159"), .double(3.14159))
    }

    func testArrays() {
        XCTAssertEqual(parse("[]"), .array([]))
        XCTAssertEqual(parse("[ ]"), .array([]))
        XCTAssertEqual(parse("[1,\"a\",true,null,[],{}]"),
                       .array([.integer(1), .string("a"), .bool(true), .null, .array([]), .object([])]))
        XCTAssertEqual(parse("[[[1]],[2]]"), .array([.array([.array([1])]), .array([2])]))
    }

    func testObjects() throws {
        XCTAssertEqual(parse("{}"), .object([]))
        XCTAssertEqual(parse("{ }"), .object([]))
        let value = try XCTUnwrap(parse("{\"b\":1,\"a\":[true,{\"c\":null}]}"))
        // Members keep their source order.
        guard case .object(let members) = value else { return XCTFail("not an object: \(value)") }
        XCTAssertEqual(members.map(\.0), ["b", "a"])
        XCTAssertEqual(value["b"], .integer(1))
        XCTAssertEqual(value["a"], .array([.bool(true), .object([("c", .null)])]))
        XCTAssertNil(value["missing"])
    }

    func testDuplicateKeysAreKeptAndTheLastWinsOnLookup() throws {
        let value = try XCTUnwrap(parse("{\"k\":1,\"k\":2}"))
        XCTAssertEqual(value.objectValue?.count, 2)
        XCTAssertEqual(value["k"], .integer(2))
    }

    func testWhitespaceAroundAndInsideValues() {
        XCTAssertEqual(parse(" \t\r\n{ \"a\" :\n[ 1 ,\t2 ] }\r\n "), .object([("a", .array([1, 2]))]))
    }

    func testUnicodeKeys() throws {
        let value = try XCTUnwrap(parse("{\"ключ\":\"значение\",\"\\u00e9\":1}"))
        XCTAssertEqual(value["ключ"], .string("значение"))
        XCTAssertEqual(value["é"], .integer(1))
    }

    // MARK: Escapes

    func testEveryEscape() {
        XCTAssertEqual(parse(#""\" \\ \/ \b \f \n \r \t""#), .string("\" \\ / \u{08} \u{0C} \n \r \t"))
    }

    func testUnicodeEscapes() {
        XCTAssertEqual(parse(#""\u0041\u00e9\u00E9\u65e5""#), .string("Aéé日"))
        XCTAssertEqual(parse(#""a\u0000b""#), .string("a\u{0}b"))
        XCTAssertEqual(parse(#""\u001f""#), .string("\u{1F}"))
        XCTAssertEqual(parse(#""\uFFFF""#), .string("\u{FFFF}"))
    }

    func testEscapesMixedWithRawNonASCII() {
        XCTAssertEqual(parse(#""é\n日\t😀""#), .string("é\n日\t😀"))
    }

    func testInvalidEscapeIsRejectedAtTheBackslash() throws {
        let error = try XCTUnwrap(parseError(#""ab\x""#))
        XCTAssertEqual(error.offset, 3)
        XCTAssertTrue(error.reason.contains("invalid escape"), error.reason)
    }

    func testTruncatedAndMalformedUnicodeEscapes() throws {
        for text in [#""\u12""#, #""\u12G4""#, #""\u""#, #""\uZZZZ""#, "\"\\u00"] {
            let error = try XCTUnwrap(parseError(text), text)
            XCTAssertTrue(error.reason.contains("\\u") || error.reason.contains("unterminated"), "\(text): \(error)")
        }
    }

    func testBackslashAtEndOfInputIsUnterminated() throws {
        let error = try XCTUnwrap(parseError("\"abc\\"))
        XCTAssertEqual(error.offset, 0)
        XCTAssertTrue(error.reason.contains("unterminated"), error.reason)
    }

    // MARK: Surrogate pairs

    func testSurrogatePairs() {
        XCTAssertEqual(parse(#""\uD83D\uDE00""#), .string("😀"))
        XCTAssertEqual(parse(#""\ud83d\ude00""#), .string("😀"))
        XCTAssertEqual(parse(#""\uD800\uDC00""#), .string("\u{10000}"))
        XCTAssertEqual(parse(#""\uDBFF\uDFFF""#), .string("\u{10FFFF}"))
        XCTAssertEqual(parse(#""x\uD834\uDD1Ey""#), .string("x𝄞y"))
    }

    func testUnpairedSurrogatesAreRejected() throws {
        let cases = [
            #""\uD83D""#,            // high surrogate at the end
            #""\uD83Dx""#,           // high surrogate followed by a character
            #""\uD83D\n""#,          // followed by another escape
            #""\uD83D\u0041""#,      // followed by a non-surrogate escape
            #""\uD83D\uD83D""#,      // two high surrogates
            #""\uDE00""#,            // lone low surrogate
            #""\uDE00\uD83D""#,      // reversed pair
        ]
        for text in cases {
            let error = try XCTUnwrap(parseError(text), text)
            XCTAssertTrue(error.reason.contains("surrogate") || error.reason.contains("escape"), "\(text): \(error)")
        }
        XCTAssertTrue(try XCTUnwrap(parseError(#""\uDE00""#)).reason.contains("unpaired surrogate"))
    }

    // MARK: Control characters

    func testEveryRawControlCharacterInAStringIsRejected() throws {
        for byte in UInt8(0)..<0x20 {
            // Fast path (no escapes before it) and slow path (an escape before it).
            let fast: [UInt8] = Array("\"ab".utf8) + [byte] + Array("c\"".utf8)
            let slow: [UInt8] = Array("\"\\nb".utf8) + [byte] + Array("c\"".utf8)
            let fastError = try XCTUnwrap(parseError(fast), "byte \(byte)")
            XCTAssertEqual(fastError.offset, 3, "byte \(byte)")
            XCTAssertTrue(fastError.reason.contains("control character"), fastError.reason)
            let slowError = try XCTUnwrap(parseError(slow), "byte \(byte)")
            XCTAssertEqual(slowError.offset, 4, "byte \(byte)")
            XCTAssertTrue(slowError.reason.contains("control character"), slowError.reason)
        }
    }

    func testRawNewlineInAKeyIsRejected() throws {
        let error = try XCTUnwrap(parseError("{\"a\nb\":1}"))
        XCTAssertEqual(error.offset, 3)
    }

    // MARK: Invalid UTF-8

    func testInvalidUTF8InAStringIsRejectedWithItsOffset() throws {
        // {"k":"ab<FF>"}  — the bad byte is at offset 8.
        let bytes: [UInt8] = Array("{\"k\":\"ab".utf8) + [0xFF] + Array("\"}".utf8)
        let error = try XCTUnwrap(parseError(bytes))
        XCTAssertEqual(error.offset, 8)
        XCTAssertTrue(error.reason.contains("invalid UTF-8"), error.reason)
        XCTAssertEqual(error.description, "invalid UTF-8 in a string at byte 8")
    }

    func testInvalidUTF8AfterValidMultibyteCharacters() throws {
        // "é日" is 5 bytes; the string content starts at 1, so the bad byte is at 6.
        let bytes: [UInt8] = Array("\"é日".utf8) + [0xC3] + Array("x\"".utf8)
        let error = try XCTUnwrap(parseError(bytes))
        XCTAssertEqual(error.offset, 6)
    }

    func testInvalidUTF8Sequences() throws {
        let bad: [[UInt8]] = [
            [0x80],                    // lone continuation byte
            [0xC0, 0x80],              // overlong NUL
            [0xE0, 0x80, 0x80],        // overlong
            [0xED, 0xA0, 0x80],        // UTF-8 encoded surrogate
            [0xF4, 0x90, 0x80, 0x80],  // above U+10FFFF
            [0xF8, 0x88, 0x80, 0x80, 0x80],
            [0xE6, 0x97],              // truncated sequence before the closing quote
            [0xFE], [0xFF],
        ]
        for sequence in bad {
            let bytes: [UInt8] = Array("[\"ok\",\"xy".utf8) + sequence + Array("\"]".utf8)
            let error = try XCTUnwrap(parseError(bytes), "\(sequence)")
            XCTAssertTrue(error.reason.contains("invalid UTF-8"), "\(sequence): \(error)")
            XCTAssertEqual(error.offset, 9, "\(sequence)")
        }
    }

    func testInvalidUTF8InAStringWithEscapesReportsTheInputOffset() throws {
        // "\n<FF>": quote 0, backslash 1, 'n' 2, the bad byte 3.
        let bytes: [UInt8] = Array("\"\\n".utf8) + [0xFF] + Array("\"".utf8)
        let error = try XCTUnwrap(parseError(bytes))
        XCTAssertTrue(error.reason.contains("invalid UTF-8"), error.reason)
        XCTAssertEqual(error.offset, 3)
    }

    func testInvalidUTF8OutsideAStringIsRejected() throws {
        let bytes: [UInt8] = Array("[1, ".utf8) + [0xFF] + Array("]".utf8)
        let error = try XCTUnwrap(parseError(bytes))
        XCTAssertEqual(error.offset, 4)
        XCTAssertTrue(error.reason.contains("0xFF"), error.reason)
    }

    func testFirstInvalidUTF8Offset() {
        func offset(_ bytes: [UInt8]) -> Int? { bytes.withUnsafeBytes { firstInvalidUTF8Offset($0) } }
        XCTAssertNil(offset([]))
        XCTAssertNil(offset(Array("plain ascii".utf8)))
        XCTAssertNil(offset(Array("é日😀".utf8)))
        XCTAssertEqual(offset([0xFF]), 0)
        XCTAssertEqual(offset(Array("abc".utf8) + [0x80]), 3)
        XCTAssertEqual(offset(Array("é".utf8) + [0xC3, 0x28]), 2)
    }

    // MARK: Numbers

    func testLeadingZerosAreRejected() throws {
        for text in ["01", "-01", "00", "007", "[01]", "{\"a\":00}"] {
            let error = try XCTUnwrap(parseError(text), text)
            XCTAssertTrue(error.reason.contains("leading zero"), "\(text): \(error)")
        }
        XCTAssertEqual(parse("0.01"), .double(0.01))
        XCTAssertEqual(parse("0e1"), .double(0))
    }

    func testMalformedNumbers() throws {
        for text in ["-", "+1", ".5", "1.", "1.e3", "1e", "1e+", "-a", "0x10", "1_000", "Infinity", "NaN", "-Infinity"] {
            XCTAssertNotNil(parseError(text), text)
        }
    }

    func testIntegerVersusDouble() throws {
        func kind(_ text: String) -> String {
            switch parse(text) {
            case .integer?: return "integer"
            case .double?: return "double"
            default: return "other"
            }
        }
        XCTAssertEqual(kind("1"), "integer")
        XCTAssertEqual(kind("-1"), "integer")
        XCTAssertEqual(kind("1.0"), "double")
        XCTAssertEqual(kind("1e0"), "double")
        XCTAssertEqual(kind("10E2"), "double")
        // An integer and a double with the same value compare equal.
        XCTAssertEqual(parse("1"), parse("1.0"))
        XCTAssertEqual(parse("1.0")?.integerValue, 1)
        XCTAssertNil(parse("1.5")?.integerValue)
        XCTAssertEqual(parse("1.5")?.doubleValue, 1.5)
    }

    func testLargeNumbers() throws {
        XCTAssertEqual(parse("9223372036854775807"), .integer(Int64.max))
        XCTAssertEqual(parse("-9223372036854775808"), .integer(Int64.min))
        // One past Int64 becomes a double rather than failing or wrapping.
        guard case .double(let d)? = parse("9223372036854775808") else { return XCTFail("expected a double") }
        XCTAssertEqual(d, 9_223_372_036_854_775_808.0)
        guard case .double(let e)? = parse("-9223372036854775809") else { return XCTFail("expected a double") }
        XCTAssertEqual(e, -9_223_372_036_854_775_808.0)
        guard case .double(let big)? = parse("123456789012345678901234567890") else { return XCTFail("expected a double") }
        XCTAssertEqual(big, 1.2345678901234568e29, accuracy: 1e15)
        XCTAssertEqual(parse("1e308"), .double(1e308))
        XCTAssertEqual(parse("1e-400"), .double(0))
    }

    func testNumbersOutOfRangeAreRejected() throws {
        for text in ["1e400", "-1e400", "[1e999]"] {
            let error = try XCTUnwrap(parseError(text), text)
            XCTAssertTrue(error.reason.contains("out of range"), "\(text): \(error)")
        }
        XCTAssertEqual(parseError("[1e999]")?.offset, 1)
    }

    // MARK: Structure errors

    func testTrailingData() throws {
        XCTAssertEqual(parseError("1 2")?.offset, 2)
        XCTAssertEqual(parseError("{} x")?.offset, 3)
        XCTAssertEqual(parseError("[1]]")?.offset, 3)
        XCTAssertEqual(parseError("nullnull")?.offset, 4)
        XCTAssertEqual(parseError("\"a\"\"b\"")?.offset, 3)
        let error = try XCTUnwrap(parseError("true false"))
        XCTAssertTrue(error.reason.contains("after the JSON value"), error.reason)
    }

    func testEmptyAndWhitespaceOnlyInput() throws {
        XCTAssertEqual(parseError("")?.offset, 0)
        XCTAssertEqual(parseError("  \n ")?.offset, 4)
        XCTAssertTrue(try XCTUnwrap(parseError("")).reason.contains("unexpected end of input"))
    }

    func testStructuralErrors() throws {
        let cases: [(String, Int)] = [
            ("[1,]", 3),
            ("{\"a\":1,}", 7),
            ("{\"a\" 1}", 5),
            ("{a:1}", 1),
            ("{1:1}", 1),
            ("[1 2]", 3),
            ("{\"a\":1 \"b\":2}", 7),
            ("[", 1),
            ("{", 1),
            ("{\"a\":", 5),
            ("\"abc", 0),
            ("tru", 0),
            ("nul", 0),
            ("True", 0),
            ("[nulx]", 1),
            ("'a'", 0),
            ("\u{0C}1", 0),   // form feed is not JSON white space
        ]
        for (text, offset) in cases {
            let error = try XCTUnwrap(parseError(text), text)
            XCTAssertEqual(error.offset, offset, "\(text.debugDescription): \(error)")
        }
    }

    // MARK: Nesting depth

    func testNestingUpToTheLimitIsAccepted() throws {
        let depth = JSONParser.defaultMaximumDepth
        let text = String(repeating: "[", count: depth) + String(repeating: "]", count: depth)
        var value = try XCTUnwrap(parse(text))
        var levels = 0
        while case .array(let inner) = value {
            levels += 1
            guard let first = inner.first else { break }
            value = first
        }
        XCTAssertEqual(levels, depth)
    }

    func testNestingBeyondTheLimitIsRejected() throws {
        let depth = JSONParser.defaultMaximumDepth + 1
        let arrays = String(repeating: "[", count: depth) + String(repeating: "]", count: depth)
        let error = try XCTUnwrap(parseError(arrays))
        XCTAssertTrue(error.reason.contains("nesting deeper than \(JSONParser.defaultMaximumDepth)"), error.reason)
        XCTAssertEqual(error.offset, depth - 1)

        let objects = String(repeating: "{\"a\":", count: depth) + "1" + String(repeating: "}", count: depth)
        XCTAssertTrue(try XCTUnwrap(parseError(objects)).reason.contains("nesting"))
    }

    func testCustomMaximumDepth() throws {
        XCTAssertEqual(parse("[[{}]]", maximumDepth: 3), .array([.array([.object([])])]))
        XCTAssertNotNil(parseError("[[[[]]]]", maximumDepth: 3))
        XCTAssertNotNil(parseError("[{\"a\":{\"b\":[]}}]", maximumDepth: 3))
        XCTAssertEqual(parse("1", maximumDepth: 0), .integer(1))
        XCTAssertNotNil(parseError("[]", maximumDepth: 0))
    }

    func testHostileDepthDoesNotCrash() throws {
        let bytes = [UInt8](repeating: UInt8(ascii: "["), count: 1_000_000)
        let error = try XCTUnwrap(parseError(bytes))
        XCTAssertTrue(error.reason.contains("nesting"), error.reason)
    }

    // MARK: Entry points

    func testRawBufferEntryPointAgreesWithTheArrayOne() throws {
        let bytes = Array("{\"a\":[1,2.5,\"x\"]}".utf8)
        let fromBuffer = try bytes.withUnsafeBytes { raw in try JSONParser.parse(raw) }
        XCTAssertEqual(fromBuffer, try JSONParser.parse(bytes))
    }

    func testErrorDescription() {
        XCTAssertEqual(JSONParseError(offset: 7, reason: "oops").description, "oops at byte 7")
    }

    // MARK: Numbers JSON cannot spell

    func testNonFiniteNumbersAreRefusedByNameUnlessAllowed() throws {
        XCTAssertEqual(parseError(Array(#"{"a":NaN}"#.utf8))?.reason, "NaN is not a JSON number (JSON has no NaN or infinities)")
        XCTAssertEqual(parseError(Array(#"[Infinity]"#.utf8))?.reason, "Infinity is not a JSON number (JSON has no NaN or infinities)")
        XCTAssertEqual(parseError(Array(#"[-Infinity]"#.utf8))?.offset, 1)
        XCTAssertEqual(parseError(Array(#"[1e999]"#.utf8))?.reason, "number out of range (1e999 is too large for a double)")
        XCTAssertEqual(parseError(Array(#"[Nope]"#.utf8))?.reason, "invalid literal")

        func lenient(_ text: String) throws -> JSONValue {
            try Array(text.utf8).withUnsafeBytes { try JSONParser.parse($0, allowsNonFiniteNumbers: true) }
        }
        let value = try lenient(#"{"a":NaN,"b":[Infinity,-Infinity,-1e999],"c":1}"#)
        XCTAssertTrue(value["a"]?.doubleValue?.isNaN ?? false)
        XCTAssertEqual(value["b"], [.double(.infinity), .double(-.infinity), .double(-.infinity)])
        XCTAssertEqual(value.firstNonFiniteNumber(path: "v")?.path, "v.a")
        XCTAssertEqual(value["b"]?.firstNonFiniteNumber(path: "b")?.path, "b[0]")
        XCTAssertNil(value["c"]?.firstNonFiniteNumber(path: "c"))
        XCTAssertEqual(JSONValue.double(-.infinity).preview(), "-Infinity")
        XCTAssertThrowsError(try lenient("[-Inf]"))
    }
}
