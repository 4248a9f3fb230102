/// Base64 without Foundation: decoding length check for client states.
public enum Base64 {
    /// The decoded bytes of standard (or URL-safe) base64, or nil if it is not base64.
    public static func decode(_ text: String) -> [UInt8]? {
        var output: [UInt8] = []
        output.reserveCapacity(text.utf8.count * 3 / 4)
        var accumulator: UInt32 = 0
        var bits = 0
        var padding = 0
        var symbols = 0
        for byte in text.utf8 {
            let value: UInt32
            switch byte {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"): value = UInt32(byte - UInt8(ascii: "A"))
            case UInt8(ascii: "a")...UInt8(ascii: "z"): value = UInt32(byte - UInt8(ascii: "a") + 26)
            case UInt8(ascii: "0")...UInt8(ascii: "9"): value = UInt32(byte - UInt8(ascii: "0") + 52)
            case UInt8(ascii: "+"), UInt8(ascii: "-"): value = 62
            case UInt8(ascii: "/"), UInt8(ascii: "_"): value = 63
            case UInt8(ascii: "="): padding += 1; continue
            default: return nil
            }
            if padding > 0 { return nil }
            symbols += 1
            accumulator = accumulator << 6 | value
            bits += 6
            if bits >= 8 {
                bits -= 8
                output.append(UInt8((accumulator >> UInt32(bits)) & 0xFF))
            }
        }
        // A final group of 2 or 3 symbols may be padded to 4; anything else is malformed.
        switch symbols % 4 {
        case 0: if padding != 0 { return nil }
        case 2: if padding != 0 && padding != 2 { return nil }
        case 3: if padding != 0 && padding != 1 { return nil }
        default: return nil
        }
        return output
    }

    private static let alphabet: [UInt8] = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8)

    /// Standard base64 with padding.
    public static func encode<S: Sequence>(_ bytes: S) -> String where S.Element == UInt8 {
        var output: [UInt8] = []
        var accumulator: UInt32 = 0
        var bits = 0
        for byte in bytes {
            accumulator = accumulator << 8 | UInt32(byte)
            bits += 8
            while bits >= 6 {
                bits -= 6
                output.append(alphabet[Int((accumulator >> UInt32(bits)) & 0x3F)])
            }
        }
        if bits > 0 {
            output.append(alphabet[Int((accumulator << UInt32(6 - bits)) & 0x3F)])
        }
        while output.count % 4 != 0 { output.append(UInt8(ascii: "=")) }
        return String(decoding: output, as: UTF8.self)
    }
}
