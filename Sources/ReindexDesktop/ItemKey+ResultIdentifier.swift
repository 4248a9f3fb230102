// D-Bus desktop search (sd-bus) exists on Linux only.
#if os(Linux)
import ReindexStore

/// The identifier of one result on the bus: the item's bundle and unique identifier, each
/// percent-encoded (every byte but `A-Z a-z 0-9 - . _ ~`) and joined by `/`. Whatever characters
/// an identifier holds (a slash, a percent sign, spaces, newlines), the text names exactly one
/// item and reads back to it.
extension ItemKey {
    /// Reads an identifier this service made; nil for anything else.
    package init?(resultIdentifier text: String) {
        let parts = text.split(separator: "/", omittingEmptySubsequences: false)
        guard parts.count == 2, let bundle = ResultText.decode(parts[0]), let unique = ResultText.decode(parts[1]),
              !bundle.isEmpty, !unique.isEmpty else { return nil }
        self.init(bundle: bundle, uniqueIdentifier: unique)
    }

    /// The item's identifier on the bus.
    package var resultIdentifier: String { ResultText.encode(bundle) + "/" + ResultText.encode(uniqueIdentifier) }
}

/// The percent-encoding of a result identifier's two parts.
private enum ResultText {
    static let hex = Array("0123456789ABCDEF".utf8)

    static func encode(_ s: String) -> String {
        var bytes: [UInt8] = []
        for byte in s.utf8 {
            switch byte {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
                 UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "~"):
                bytes.append(byte)
            default:
                bytes += [UInt8(ascii: "%"), hex[Int(byte >> 4)], hex[Int(byte & 0xF)]]
            }
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    static func decode(_ s: Substring) -> String? {
        var bytes: [UInt8] = []
        var utf8 = s.utf8.makeIterator()
        while let byte = utf8.next() {
            if byte == UInt8(ascii: "%") {
                guard let high = utf8.next().flatMap(nibble), let low = utf8.next().flatMap(nibble) else { return nil }
                bytes.append(high << 4 | low)
            } else {
                bytes.append(byte)
            }
        }
        // Only what `encode` makes: the text must be valid UTF-8 and read back the same.
        guard let decoded = String(validating: bytes, as: UTF8.self), encode(decoded) == s else { return nil }
        return decoded
    }

    static func nibble(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): return byte - UInt8(ascii: "0")
        case UInt8(ascii: "A")...UInt8(ascii: "F"): return byte - UInt8(ascii: "A") + 10
        default: return nil
        }
    }
}
#endif
