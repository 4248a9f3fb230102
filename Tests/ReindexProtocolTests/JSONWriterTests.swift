import XCTest
import ReindexProtocol

final class JSONWriterTests: XCTestCase {
    private func roundTrip(_ value: JSONValue, file: StaticString = #filePath, line: UInt = #line) {
        let bytes = JSONWriter.bytes(value)
        XCTAssertFalse(bytes.contains { $0 < 0x20 }, "raw control character in \(JSONWriter.string(value))", file: file, line: line)
        do {
            let parsed = try JSONParser.parse(bytes)
            XCTAssertEqual(parsed, value, file: file, line: line)
        } catch {
            XCTFail("written JSON does not parse: \(error): \(String(decoding: bytes, as: UTF8.self))", file: file, line: line)
        }
    }

    // MARK: Exact output

    func testScalars() {
        XCTAssertEqual(JSONWriter.string(.null), "null")
        XCTAssertEqual(JSONWriter.string(.bool(true)), "true")
        XCTAssertEqual(JSONWriter.string(.bool(false)), "false")
        XCTAssertEqual(JSONWriter.string(.integer(0)), "0")
        XCTAssertEqual(JSONWriter.string(.integer(7)), "7")
        XCTAssertEqual(JSONWriter.string(.integer(-7)), "-7")
        XCTAssertEqual(JSONWriter.string(.integer(1234567890)), "1234567890")
        XCTAssertEqual(JSONWriter.string(.integer(Int64.max)), "9223372036854775807")
        XCTAssertEqual(JSONWriter.string(.integer(Int64.min)), "-9223372036854775808")
        XCTAssertEqual(JSONWriter.string(.double(0.5)), "0.5")
        XCTAssertEqual(JSONWriter.string(.double(-2.25)), "-2.25")
        XCTAssertEqual(JSONWriter.string(.double(3)), "3")
        XCTAssertEqual(JSONWriter.string(.string("")), "\"\"")
    }

    func testNonFiniteNumbersAreWrittenAsNull() {
        XCTAssertEqual(JSONWriter.string(.double(.nan)), "null")
        XCTAssertEqual(JSONWriter.string(.double(.infinity)), "null")
        XCTAssertEqual(JSONWriter.string(.double(-.infinity)), "null")
        XCTAssertEqual(JSONWriter.string(.array([.double(.nan), 1])), "[null,1]")
    }

    func testCompactArraysAndObjectsInOrder() {
        XCTAssertEqual(JSONWriter.string(.array([])), "[]")
        XCTAssertEqual(JSONWriter.string(.object([])), "{}")
        XCTAssertEqual(JSONWriter.string([1, "a", .null, true]), "[1,\"a\",null,true]")
        XCTAssertEqual(JSONWriter.string(.object([("z", 1), ("a", .array([.object([("k", "v")])]))])),
                       "{\"z\":1,\"a\":[{\"k\":\"v\"}]}")
    }

    func testStringsWithQuotesBackslashesAndNewlines() {
        XCTAssertEqual(JSONWriter.string(.string("say \"hi\"")), #""say \"hi\"""#)
        XCTAssertEqual(JSONWriter.string(.string("C:\\dir\\file")), #""C:\\dir\\file""#)
        XCTAssertEqual(JSONWriter.string(.string("line1\nline2\r\n\tend")), #""line1\nline2\r\n\tend""#)
        XCTAssertEqual(JSONWriter.string(.string("\\\"\n")), #""\\\"\n""#)
        XCTAssertEqual(JSONWriter.string(.string("a/b")), "\"a/b\"")
    }

    func testOtherControlCharactersAreEscapedAsUnicode() {
        XCTAssertEqual(JSONWriter.string(.string("\u{0}")), #""\u0000""#)
        XCTAssertEqual(JSONWriter.string(.string("\u{08}\u{0C}")), #""\u0008\u000c""#)
        XCTAssertEqual(JSONWriter.string(.string("\u{1B}[0m")), #""\u001b[0m""#)
        XCTAssertEqual(JSONWriter.string(.string("\u{1F}")), #""\u001f""#)
    }

    func testNonASCIIIsWrittenAsUTF8() {
        XCTAssertEqual(JSONWriter.bytes(.string("é😀")), Array("\"é😀\"".utf8))
    }

    func testKeysAreEscapedToo() {
        let value: JSONValue = .object([("a\"b\nc", 1)])
        XCTAssertEqual(JSONWriter.string(value), #"{"a\"b\nc":1}"#)
        roundTrip(value)
    }

    func testWriteAppendsToExistingOutput() {
        var output = Array("prefix:".utf8)
        JSONWriter.write([1, 2], into: &output)
        XCTAssertEqual(String(decoding: output, as: UTF8.self), "prefix:[1,2]")
        var string = Array("x".utf8)
        JSONWriter.writeString("q\"", into: &string)
        XCTAssertEqual(String(decoding: string, as: UTF8.self), #"x"q\"""#)
    }

    // MARK: Never a raw newline or control character

    func testEveryControlCharacterIsEscaped() {
        var all = ""
        for scalar in 0..<0x20 { all.unicodeScalars.append(Unicode.Scalar(UInt8(scalar))) }
        let value: JSONValue = .object([(all, .array([.string(all), .string("x" + all + "y")]))])
        let bytes = JSONWriter.bytes(value)
        XCTAssertFalse(bytes.contains(0x0A))
        XCTAssertFalse(bytes.contains(0x0D))
        XCTAssertFalse(bytes.contains { $0 < 0x20 })
        roundTrip(value)
    }

    func testDELAndC1ControlCharactersRoundTripAndC0AreEscaped() throws {
        // The writer escapes every C0 control (the framing depends on it); DEL and the C1
        // controls are ordinary UTF-8 text and round-trip unchanged.
        let value: JSONValue = .string("a\u{7F}b\u{85}c\u{9F}d\u{01}e")
        let bytes = JSONWriter.bytes(value)
        XCTAssertFalse(bytes.contains { $0 < 0x20 })
        XCTAssertEqual(try JSONParser.parse(bytes), value)
    }

    func testLineWriterProducesExactlyOneLine() {
        let value: JSONValue = .object([("text", "many\nlines\nhere\n"), ("n", 1)])
        let line = LineWriter.line(value)
        XCTAssertEqual(line.last, 0x0A)
        XCTAssertEqual(line.filter { $0 == 0x0A }.count, 1)
        XCTAssertEqual(Array(line.dropLast()), JSONWriter.bytes(value))

        var output = Array("{}\n".utf8)
        LineWriter.appendLine([true], to: &output)
        XCTAssertEqual(String(decoding: output, as: UTF8.self), "{}\n[true]\n")
    }

    // MARK: Round trips

    func testRoundTripsOfEveryKind() {
        roundTrip(.null)
        roundTrip(true)
        roundTrip(false)
        roundTrip(0)
        roundTrip(.integer(Int64.max))
        roundTrip(.integer(Int64.min))
        roundTrip(.double(0.1))
        roundTrip(.double(-1.5e-7))
        roundTrip(.double(1e300))
        roundTrip(.double(1e15))
        roundTrip(.double(123456789.123))
        roundTrip(.double(Double.leastNonzeroMagnitude))
        roundTrip(.double(Double.greatestFiniteMagnitude))
        roundTrip("")
        roundTrip("plain")
        roundTrip("quote \" backslash \\ slash / newline \n tab \t cr \r nul \u{0} bell \u{07} del \u{7F}")
        roundTrip("é日本語😀𝄞\u{10FFFF}\u{FFFF}\u{2028}\u{2029}")
        roundTrip([])
        roundTrip([:])
        roundTrip([1, [2, [3, [4]]], ["k": ["nested": [.null, true, 1.5]]]])
        roundTrip(.object([("dup", 1), ("dup", 2)]))
    }

    func testRoundTripOfRandomDocuments() {
        var generator = SplitMix64(seed: 0xC0FFEE)
        for _ in 0..<300 {
            roundTrip(randomValue(depth: 0, using: &generator))
        }
    }

    func testParsedThenWrittenIsStable() throws {
        let text = #"{"a":[1,2.5,-3,"x\ny",{"b":null}],"c":true,"é":"\u0001"}"#
        let once = JSONWriter.bytes(try JSONParser.parse(text: text))
        let twice = JSONWriter.bytes(try JSONParser.parse(once))
        XCTAssertEqual(once, twice)
        XCTAssertEqual(String(decoding: once, as: UTF8.self), text)
    }

    func testPreviewIsShortened() {
        let value: JSONValue = .string(String(repeating: "a", count: 100))
        let preview = value.preview(limit: 10)
        XCTAssertEqual(preview, "\"aaaaaaaaa…")
        XCTAssertEqual(JSONValue.integer(5).preview(), "5")
    }

    private func randomValue(depth: Int, using generator: inout SplitMix64) -> JSONValue {
        let choice = Int.random(in: 0..<(depth > 4 ? 5 : 7), using: &generator)
        switch choice {
        case 0: return .null
        case 1: return .bool(Bool.random(using: &generator))
        case 2: return .integer(Int64.random(in: Int64.min...Int64.max, using: &generator))
        case 3:
            let d = Double.random(in: -1e6...1e6, using: &generator)
            return .double(Bool.random(using: &generator) ? d : d * 1e-9)
        case 4: return .string(randomString(using: &generator))
        case 5:
            return .array((0..<Int.random(in: 0...4, using: &generator)).map { _ in randomValue(depth: depth + 1, using: &generator) })
        default:
            return .object((0..<Int.random(in: 0...4, using: &generator)).map { _ in
                (randomString(using: &generator), randomValue(depth: depth + 1, using: &generator))
            })
        }
    }

    private func randomString(using generator: inout SplitMix64) -> String {
        let alphabet: [Unicode.Scalar] = ["a", "Z", "0", " ", "\"", "\\", "/", "\n", "\r", "\t", "\u{0}", "\u{1F}", "\u{7F}",
                                          "é", "日", "😀", "\u{2028}", "\u{FFFD}"]
        var s = String.UnicodeScalarView()
        for _ in 0..<Int.random(in: 0...12, using: &generator) {
            s.append(alphabet[Int.random(in: 0..<alphabet.count, using: &generator)])
        }
        return String(s)
    }
}
