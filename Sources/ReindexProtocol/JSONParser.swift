/// Why a JSON text could not be read, and where: `offset` counts bytes from the start of the text.
public struct JSONParseError: Error, Sendable, Equatable, CustomStringConvertible {
    public var offset: Int
    public var reason: String

    public init(offset: Int, reason: String) {
        self.offset = offset
        self.reason = reason
    }

    public var description: String { "\(reason) at byte \(offset)" }
}

/// A strict RFC 8259 reader over UTF-8 bytes.
///
/// It accepts exactly one value surrounded by optional white space, validates the UTF-8 of every
/// string (invalid bytes are an error, never replaced), and refuses nesting deeper than
/// `maximumDepth` so a hostile message cannot exhaust the stack.
public struct JSONParser {
    public static let defaultMaximumDepth = 256

    /// Parses `bytes` as one JSON value.
    ///
    /// `allowsNonFiniteNumbers` reads what JSON has no spelling for but some writers produce
    /// anyway (Python's `json.dumps` writes `NaN`, `Infinity` and `-Infinity` by default) and
    /// numbers too large for a double (`1e999`) as non-finite `.double`s, so that a validator can
    /// reject the one value that holds them and say why; without it they are errors, named as such.
    public static func parse(_ bytes: UnsafeRawBufferPointer, maximumDepth: Int = defaultMaximumDepth,
                             allowsNonFiniteNumbers: Bool = false) throws(JSONParseError) -> JSONValue {
        var parser = JSONParser(bytes: bytes.bindMemory(to: UInt8.self), maximumDepth: maximumDepth)
        parser.allowsNonFiniteNumbers = allowsNonFiniteNumbers
        parser.skipWhitespace()
        let value = try parser.parseValue(depth: 0)
        parser.skipWhitespace()
        if parser.index != parser.bytes.count {
            throw JSONParseError(offset: parser.index, reason: "unexpected data after the JSON value")
        }
        return value
    }

    /// Parses a byte array as one JSON value.
    public static func parse(_ bytes: [UInt8], maximumDepth: Int = defaultMaximumDepth) throws(JSONParseError) -> JSONValue {
        let result: Result<JSONValue, JSONParseError> = bytes.withUnsafeBytes { raw in
            do throws(JSONParseError) {
                return .success(try parse(raw, maximumDepth: maximumDepth))
            } catch {
                return .failure(error)
            }
        }
        return try result.get()
    }

    /// Parses a string as one JSON value.
    public static func parse(text: String, maximumDepth: Int = defaultMaximumDepth) throws(JSONParseError) -> JSONValue {
        try parse(Array(text.utf8), maximumDepth: maximumDepth)
    }

    private let bytes: UnsafeBufferPointer<UInt8>
    private let maximumDepth: Int
    private var allowsNonFiniteNumbers = false
    private var index = 0
    private var scratch: [UInt8] = []

    private init(bytes: UnsafeBufferPointer<UInt8>, maximumDepth: Int) {
        self.bytes = bytes
        self.maximumDepth = maximumDepth
    }

    private func fail(_ reason: String, at offset: Int? = nil) -> JSONParseError {
        JSONParseError(offset: offset ?? index, reason: reason)
    }

    @inline(__always)
    private mutating func skipWhitespace() {
        while index < bytes.count {
            switch bytes[index] {
            case 0x20, 0x0A, 0x0D, 0x09: index += 1
            default: return
            }
        }
    }

    private mutating func parseValue(depth: Int) throws(JSONParseError) -> JSONValue {
        guard index < bytes.count else { throw fail("unexpected end of input") }
        switch bytes[index] {
        case UInt8(ascii: "{"): return try parseObject(depth: depth + 1)
        case UInt8(ascii: "["): return try parseArray(depth: depth + 1)
        case UInt8(ascii: "\""): return .string(try parseString())
        case UInt8(ascii: "t"): try expectLiteral("true"); return .bool(true)
        case UInt8(ascii: "f"): try expectLiteral("false"); return .bool(false)
        case UInt8(ascii: "n"): try expectLiteral("null"); return .null
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return try parseNumber()
        case UInt8(ascii: "N"), UInt8(ascii: "I"): return try parseNonFinite()
        default:
            throw fail("unexpected character \(describe(bytes[index]))")
        }
    }

    private func describe(_ byte: UInt8) -> String {
        if byte >= 0x20 && byte < 0x7F { return "'\(Character(Unicode.Scalar(byte)))'" }
        return "byte 0x" + String(byte, radix: 16, uppercase: true)
    }

    private mutating func expectLiteral(_ literal: StaticString) throws(JSONParseError) {
        let start = index
        let count = literal.utf8CodeUnitCount
        guard bytes.count - index >= count else { throw fail("invalid literal", at: start) }
        let base = literal.utf8Start
        for i in 0..<count where bytes[index + i] != base[i] {
            throw fail("invalid literal", at: start)
        }
        index += count
    }

    private mutating func parseObject(depth: Int) throws(JSONParseError) -> JSONValue {
        if depth > maximumDepth { throw fail("nesting deeper than \(maximumDepth) levels") }
        index += 1
        var members: [(String, JSONValue)] = []
        skipWhitespace()
        if index < bytes.count && bytes[index] == UInt8(ascii: "}") {
            index += 1
            return .object(members)
        }
        while true {
            skipWhitespace()
            guard index < bytes.count else { throw fail("unexpected end of input in an object") }
            guard bytes[index] == UInt8(ascii: "\"") else { throw fail("expected a member name in quotes") }
            let key = try parseString()
            skipWhitespace()
            guard index < bytes.count, bytes[index] == UInt8(ascii: ":") else { throw fail("expected ':' after a member name") }
            index += 1
            skipWhitespace()
            let value = try parseValue(depth: depth)
            members.append((key, value))
            skipWhitespace()
            guard index < bytes.count else { throw fail("unexpected end of input in an object") }
            if bytes[index] == UInt8(ascii: ",") { index += 1; continue }
            if bytes[index] == UInt8(ascii: "}") { index += 1; return .object(members) }
            throw fail("expected ',' or '}' in an object")
        }
    }

    private mutating func parseArray(depth: Int) throws(JSONParseError) -> JSONValue {
        if depth > maximumDepth { throw fail("nesting deeper than \(maximumDepth) levels") }
        index += 1
        var elements: [JSONValue] = []
        skipWhitespace()
        if index < bytes.count && bytes[index] == UInt8(ascii: "]") {
            index += 1
            return .array(elements)
        }
        while true {
            skipWhitespace()
            elements.append(try parseValue(depth: depth))
            skipWhitespace()
            guard index < bytes.count else { throw fail("unexpected end of input in an array") }
            if bytes[index] == UInt8(ascii: ",") { index += 1; continue }
            if bytes[index] == UInt8(ascii: "]") { index += 1; return .array(elements) }
            throw fail("expected ',' or ']' in an array")
        }
    }

    /// `NaN`, `Infinity`, `-Infinity`: not JSON; read only when `allowsNonFiniteNumbers`.
    private mutating func parseNonFinite() throws(JSONParseError) -> JSONValue {
        let start = index
        let negative = bytes[index] == UInt8(ascii: "-")
        if negative { index += 1 }
        let value: Double
        if index < bytes.count, bytes[index] == UInt8(ascii: "N"), !negative {
            try expectLiteral("NaN")
            value = .nan
        } else {
            try expectLiteral("Infinity")
            value = negative ? -.infinity : .infinity
        }
        guard allowsNonFiniteNumbers else {
            let text = value.isNaN ? "NaN" : negative ? "-Infinity" : "Infinity"
            throw fail("\(text) is not a JSON number (JSON has no NaN or infinities)", at: start)
        }
        return .double(value)
    }

    private mutating func parseNumber() throws(JSONParseError) -> JSONValue {
        let start = index
        var isInteger = true
        if bytes[index] == UInt8(ascii: "-") {
            if index + 1 < bytes.count, bytes[index + 1] == UInt8(ascii: "I") { return try parseNonFinite() }
            index += 1
        }
        guard index < bytes.count, isDigit(bytes[index]) else { throw fail("invalid number", at: start) }
        if bytes[index] == UInt8(ascii: "0") {
            index += 1
            if index < bytes.count, isDigit(bytes[index]) { throw fail("leading zero in a number", at: start) }
        } else {
            while index < bytes.count, isDigit(bytes[index]) { index += 1 }
        }
        if index < bytes.count, bytes[index] == UInt8(ascii: ".") {
            isInteger = false
            index += 1
            guard index < bytes.count, isDigit(bytes[index]) else { throw fail("invalid number", at: start) }
            while index < bytes.count, isDigit(bytes[index]) { index += 1 }
        }
        if index < bytes.count, bytes[index] == UInt8(ascii: "e") || bytes[index] == UInt8(ascii: "E") {
            isInteger = false
            index += 1
            if index < bytes.count, bytes[index] == UInt8(ascii: "+") || bytes[index] == UInt8(ascii: "-") { index += 1 }
            guard index < bytes.count, isDigit(bytes[index]) else { throw fail("invalid number", at: start) }
            while index < bytes.count, isDigit(bytes[index]) { index += 1 }
        }
        let text = String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<index]), as: UTF8.self)
        if isInteger, let value = Int64(text) { return .integer(value) }
        guard let value = Double(text) else { throw fail("number out of range", at: start) }
        guard value.isFinite || allowsNonFiniteNumbers else {
            throw fail("number out of range (\(text.prefix(40)) is too large for a double)", at: start)
        }
        return .double(value)
    }

    @inline(__always)
    private func isDigit(_ byte: UInt8) -> Bool { byte >= 0x30 && byte <= 0x39 }

    private mutating func parseString() throws(JSONParseError) -> String {
        let open = index
        index += 1
        let start = index
        // Fast path: no escapes, validated in place.
        while index < bytes.count {
            let byte = bytes[index]
            if byte == UInt8(ascii: "\"") {
                let slice = UnsafeBufferPointer(rebasing: bytes[start..<index])
                index += 1
                return try makeString(slice, at: start)
            }
            if byte == UInt8(ascii: "\\") { break }
            if byte < 0x20 { throw fail("control character in a string") }
            index += 1
        }
        guard index < bytes.count else { throw fail("unterminated string", at: open) }
        // Slow path with escapes.
        scratch.removeAll(keepingCapacity: true)
        scratch.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[start..<index]))
        while index < bytes.count {
            let byte = bytes[index]
            if byte == UInt8(ascii: "\"") {
                // Escapes only produce valid UTF-8, so checking the raw input finds any bad byte
                // at its true offset.
                if let bad = firstInvalidUTF8Offset(UnsafeRawBufferPointer(UnsafeBufferPointer(rebasing: bytes[start..<index]))) {
                    throw fail("invalid UTF-8 in a string", at: start + bad)
                }
                index += 1
                return String(decoding: scratch, as: UTF8.self)
            }
            if byte < 0x20 { throw fail("control character in a string") }
            if byte != UInt8(ascii: "\\") {
                scratch.append(byte)
                index += 1
                continue
            }
            index += 1
            guard index < bytes.count else { break }
            let escape = bytes[index]
            index += 1
            switch escape {
            case UInt8(ascii: "\""): scratch.append(0x22)
            case UInt8(ascii: "\\"): scratch.append(0x5C)
            case UInt8(ascii: "/"): scratch.append(0x2F)
            case UInt8(ascii: "b"): scratch.append(0x08)
            case UInt8(ascii: "f"): scratch.append(0x0C)
            case UInt8(ascii: "n"): scratch.append(0x0A)
            case UInt8(ascii: "r"): scratch.append(0x0D)
            case UInt8(ascii: "t"): scratch.append(0x09)
            case UInt8(ascii: "u"):
                var scalar = try parseHex4()
                if scalar >= 0xD800 && scalar < 0xDC00 {
                    guard index + 1 < bytes.count, bytes[index] == UInt8(ascii: "\\"), bytes[index + 1] == UInt8(ascii: "u") else {
                        throw fail("unpaired surrogate in a \\u escape")
                    }
                    index += 2
                    let low = try parseHex4()
                    guard low >= 0xDC00 && low < 0xE000 else { throw fail("unpaired surrogate in a \\u escape") }
                    scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
                } else if scalar >= 0xDC00 && scalar < 0xE000 {
                    throw fail("unpaired surrogate in a \\u escape")
                }
                guard let unicode = Unicode.Scalar(scalar) else { throw fail("invalid \\u escape") }
                scratch.append(contentsOf: UTF8.encode(unicode)!)
            default:
                throw fail("invalid escape '\\\(Character(Unicode.Scalar(escape)))'", at: index - 2)
            }
        }
        throw fail("unterminated string", at: open)
    }

    private mutating func parseHex4() throws(JSONParseError) -> UInt32 {
        guard bytes.count - index >= 4 else { throw fail("truncated \\u escape") }
        var value: UInt32 = 0
        for _ in 0..<4 {
            let byte = bytes[index]
            let digit: UInt32
            switch byte {
            case 0x30...0x39: digit = UInt32(byte - 0x30)
            case 0x41...0x46: digit = UInt32(byte - 0x41 + 10)
            case 0x61...0x66: digit = UInt32(byte - 0x61 + 10)
            default: throw fail("invalid hex digit in a \\u escape")
            }
            value = value << 4 | digit
            index += 1
        }
        return value
    }

    private func makeString(_ buffer: UnsafeBufferPointer<UInt8>, at offset: Int) throws(JSONParseError) -> String {
        // ASCII needs no validation; anything else must be well-formed UTF-8.
        var ascii = true
        for byte in buffer where byte >= 0x80 { ascii = false; break }
        if ascii { return String(decoding: buffer, as: UTF8.self) }
        guard let string = String(validating: buffer, as: UTF8.self) else {
            throw fail("invalid UTF-8 in a string", at: offset + (firstInvalidUTF8Offset(UnsafeRawBufferPointer(buffer)) ?? 0))
        }
        return string
    }
}

/// Validates that `bytes` are well-formed UTF-8; returns the offset of the first bad byte, or nil.
public func firstInvalidUTF8Offset(_ bytes: UnsafeRawBufferPointer) -> Int? {
    let buffer = bytes.bindMemory(to: UInt8.self)
    var ascii = true
    for byte in buffer where byte >= 0x80 { ascii = false; break }
    if ascii { return nil }
    if String(validating: buffer, as: UTF8.self) != nil { return nil }
    var decoder = UTF8()
    var iterator = buffer.makeIterator()
    var consumed = 0
    while true {
        switch decoder.decode(&iterator) {
        case .scalarValue(let scalar): consumed += UTF8.width(scalar)
        case .emptyInput: return nil
        case .error: return consumed
        }
    }
}
