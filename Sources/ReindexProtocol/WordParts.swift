/// Core Spotlight's words split also where a lowercase letter meets an uppercase one
/// (`MyWindowController` holds `My`, `Window` and `Controller`). The full-text index splits only
/// at what is not a letter or a digit, so the text each searched attribute gives it is followed,
/// when it has such a change of case, by a line holding the same text with a space at each
/// change: `MyWindowController` is indexed as `MyWindowController\nMy Window Controller`. Both
/// backends index that text, and PostgreSQL's query-time checks of an attribute's own text make
/// the same line (`PostgresQueryCompiler.anyText`).
public enum WordParts {
    /// Core Spotlight's one rule for a word inside a run of letters: a new word starts where a
    /// lowercase letter is followed by an uppercase one. The indexed split line (`splitLine`) and
    /// the query's word-by-word `w` match (`Folding.spotlightWords`) both ask it.
    @inline(__always)
    public static func isCaseBoundary(previousLowercase: Bool, uppercase: Bool) -> Bool {
        previousLowercase && uppercase
    }

    /// `text`, followed by its split line when it has a change of case.
    public static func expanded(_ text: String) -> String {
        var text = text
        let split = text.withUTF8 { splitLine(UnsafeRawBufferPointer($0)) }
        guard let split else { return text }
        return text + "\n" + String(decoding: split, as: UTF8.self)
    }

    /// The text with a space where a lowercase letter is followed by an uppercase one, or nil
    /// when there is no such place. ASCII text without one is recognised without decoding, and
    /// ASCII characters are classified by their byte even in text that has others (looking a
    /// character's category up in the Unicode tables is what this costs per item otherwise).
    public static func splitLine(_ bytes: UnsafeRawBufferPointer) -> [UInt8]? {
        var previousLower = false
        var needsDecoding = false
        for byte in bytes {
            if byte >= 0x80 { needsDecoding = true; break }
            let upper = byte >= 0x41 && byte <= 0x5A
            if previousLower && upper { needsDecoding = true; break }
            previousLower = byte >= 0x61 && byte <= 0x7A
        }
        guard needsDecoding else { return nil }
        var output: [UInt8] = []
        output.reserveCapacity(bytes.count + 8)
        var changed = false
        var previousLowercase = false
        for scalar in String(decoding: bytes, as: UTF8.self).unicodeScalars {
            let lowercase: Bool, uppercase: Bool
            if scalar.isASCII {
                let byte = UInt8(truncatingIfNeeded: scalar.value)
                lowercase = byte >= 0x61 && byte <= 0x7A
                uppercase = byte >= 0x41 && byte <= 0x5A
                if isCaseBoundary(previousLowercase: previousLowercase, uppercase: uppercase) {
                    output.append(0x20)
                    changed = true
                }
                output.append(byte)
            } else {
                let category = scalar.properties.generalCategory
                lowercase = category == .lowercaseLetter
                uppercase = category == .uppercaseLetter
                if isCaseBoundary(previousLowercase: previousLowercase, uppercase: uppercase) {
                    output.append(0x20)
                    changed = true
                }
                output.append(contentsOf: UTF8.encode(scalar)!)
            }
            previousLowercase = lowercase
        }
        return changed ? output : nil
    }
}
