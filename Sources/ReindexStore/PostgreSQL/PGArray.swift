import CLibPQ
import ReindexProtocol
import ReindexSystem

/// Text-array literals for parameters (`{"a","b",NULL}`), so many rows go in one statement.
/// A text array literal (`{"a","b",NULL}`) built byte by byte from UTF-8 fields, ready for
/// libpq (NUL-terminated by `finish`). PostgreSQL text cannot hold NUL, so NUL bytes are left out.
struct PGArrayBuilder {
    private(set) var bytes: [UInt8]
    private var count = 0

    init(capacity: Int = 1 << 16) {
        bytes = []
        bytes.reserveCapacity(capacity)
        bytes.append(UInt8(ascii: "{"))
    }

    /// Adds one element: the fields joined by newlines, those absent skipped; NULL when all are.
    mutating func append(_ first: UnsafeRawBufferPointer?, _ second: UnsafeRawBufferPointer? = nil) {
        if count > 0 { bytes.append(UInt8(ascii: ",")) }
        count += 1
        guard first != nil || second != nil else {
            bytes.append(contentsOf: [UInt8(ascii: "N"), UInt8(ascii: "U"), UInt8(ascii: "L"), UInt8(ascii: "L")])
            return
        }
        bytes.append(UInt8(ascii: "\""))
        if let first { escape(first) }
        if let second {
            if first != nil { bytes.append(0x0A) }
            escape(second)
        }
        bytes.append(UInt8(ascii: "\""))
    }

    /// Adds one element of these bytes (UTF-8); NULL when nil.
    mutating func append(_ bytes: [UInt8]?) {
        guard let bytes else { return append(nil, nil) }
        bytes.withUnsafeBytes { append($0) }
    }

    mutating func append(_ text: String?) {
        guard var text else { return append(nil, nil) }
        text.withUTF8 { append(UnsafeRawBufferPointer($0)) }
    }

    private mutating func escape(_ field: UnsafeRawBufferPointer) {
        var plain = true
        for byte in field where byte == 0x22 || byte == 0x5C || byte == 0 { plain = false; break }
        if plain { bytes.append(contentsOf: field); return }
        for byte in field {
            if byte == 0 { continue }
            if byte == 0x22 || byte == 0x5C { bytes.append(0x5C) }
            bytes.append(byte)
        }
    }

    /// The literal, NUL-terminated.
    mutating func finish() -> [UInt8] {
        bytes.append(UInt8(ascii: "}"))
        bytes.append(0)
        return bytes
    }

    /// The literal, as text (a parameter of `PGConnection.query`).
    mutating func text() -> String { String(decoding: finish().dropLast(), as: UTF8.self) }
}

enum PGArray {
    static func literal(_ values: [String?]) -> String {
        var out = "{"
        out.reserveCapacity(values.count * 16)
        for (n, value) in values.enumerated() {
            if n > 0 { out += "," }
            guard let value else { out += "NULL"; continue }
            out += "\""
            for ch in value.unicodeScalars {
                if ch == "\"" || ch == "\\" { out += "\\" }
                out.unicodeScalars.append(ch)
            }
            out += "\""
        }
        return out + "}"
    }

    static func parse(_ literal: String?) -> [String] {
        guard let literal, literal.count >= 2 else { return [] }
        var result: [String] = []
        var current = ""
        var quoted = false, escaped = false, wasQuoted = false
        for ch in literal.dropFirst().dropLast() {
            if escaped { current.append(ch); escaped = false; continue }
            if quoted {
                if ch == "\\" { escaped = true } else if ch == "\"" { quoted = false } else { current.append(ch) }
                continue
            }
            if ch == "\"" { quoted = true; wasQuoted = true; continue }
            if ch == "," {
                result.append(current); current = ""; wasQuoted = false
                continue
            }
            current.append(ch)
        }
        if !current.isEmpty || wasQuoted { result.append(current) }
        return result
    }
}
