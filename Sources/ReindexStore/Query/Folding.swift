import ReindexProtocol
import ReindexSystem
import Foundation

/// Case and diacritic folding and `*` wildcards for string comparisons, and the tokens the
/// full-text index makes of a word (unicode61 with diacritics removed: letters and digits,
/// lowercased, accents dropped).
package enum Folding {
    static func fold(_ text: String, _ modifiers: StringModifiers) -> String {
        var options: String.CompareOptions = []
        if modifiers.contains(.caseInsensitive) { options.insert(.caseInsensitive) }
        if modifiers.contains(.diacriticInsensitive) { options.insert(.diacriticInsensitive) }
        return options.isEmpty ? text : text.folding(options: options, locale: nil)
    }

    /// Whether `value` matches `pattern`: `*` is any run of characters, `?` any one character,
    /// `\*` and `\?` a star and a question mark.
    ///
    /// Characters are Unicode scalars, as PostgreSQL's `LIKE` counts them, so `?` means the same
    /// on both backends. The match keeps only the last star's position to return to, so it
    /// takes time in proportion to the value's length times the pattern's at worst.
    static func matches(_ value: String, pattern: String, modifiers: StringModifiers) -> Bool {
        if modifiers.contains(.wordBased) { return wordMatches(value, pattern: pattern, modifiers: modifiers) }
        return wildcard(Array(fold(value, modifiers).unicodeScalars), compile(fold(pattern, modifiers)))
    }

    /// A pattern element: a literal scalar, `?` or `*`.
    enum PatternElement: Equatable { case literal(Unicode.Scalar), one, any }

    static func compile(_ pattern: String) -> [PatternElement] {
        var elements: [PatternElement] = []
        var scalars = pattern.unicodeScalars.makeIterator()
        while let c = scalars.next() {
            switch c {
            case "\\": if let d = scalars.next() { elements.append(.literal(d)) }
            case "*": if elements.last != .any { elements.append(.any) }
            case "?": elements.append(.one)
            default: elements.append(.literal(c))
            }
        }
        return elements
    }

    static func wildcard(_ v: [Unicode.Scalar], _ p: [PatternElement]) -> Bool {
        var i = 0, j = 0
        var star: Int? = nil, resume = 0
        while i < v.count {
            if j < p.count, p[j] != .any, p[j] == .one || p[j] == .literal(v[i]) {
                i += 1; j += 1
            } else if j < p.count, p[j] == .any {
                star = j; resume = i; j += 1
            } else if let s = star {
                resume += 1; i = resume; j = s + 1
            } else {
                return false
            }
        }
        while j < p.count, p[j] == .any { j += 1 }
        return j == p.count
    }

    /// Core Spotlight's word-based match (`w` outside the full-text index): the value's words —
    /// split at anything that is not a letter or a digit, and where a lowercase letter is
    /// followed by an uppercase one (`MyWindowController` holds `My`, `Window`, `Controller`) —
    /// include the pattern's words, consecutively, each word matched whole with its wildcards.
    /// Case and diacritics count unless `c` and `d`.
    static func wordMatches(_ value: String, pattern: String, modifiers: StringModifiers) -> Bool {
        let folding = modifiers.subtracting(.wordBased)
        let words = spotlightWords(value).map { Array(fold($0, folding).unicodeScalars) }
        let wanted = patternWords(pattern).map { compile(fold($0, folding)) }
        guard !wanted.isEmpty, words.count >= wanted.count else { return false }
        for start in 0...(words.count - wanted.count) where wanted.indices.allSatisfy({ wildcard(words[start + $0], wanted[$0]) }) {
            return true
        }
        return false
    }

    /// A letter or a decimal digit, as ICU's `u_isalnum` (PostgreSQL's `[[:alnum:]]` under an
    /// ICU collation).
    static func isWordScalar(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.properties.generalCategory {
        case .uppercaseLetter, .lowercaseLetter, .titlecaseLetter, .modifierLetter, .otherLetter, .decimalNumber: return true
        default: return false
        }
    }

    /// A value's words for `w`: runs of letters and digits, also split where a lowercase letter
    /// is followed by an uppercase one.
    static func spotlightWords(_ text: String) -> [String] {
        var words: [String] = []
        var current = String.UnicodeScalarView()
        var previous: Unicode.GeneralCategory? = nil
        for scalar in text.unicodeScalars {
            let category = scalar.properties.generalCategory
            if isWordScalar(scalar) {
                if WordParts.isCaseBoundary(previousLowercase: previous == .lowercaseLetter, uppercase: category == .uppercaseLetter), !current.isEmpty {
                    words.append(String(current))
                    current = String.UnicodeScalarView()
                }
                current.append(scalar)
                previous = category
            } else {
                if !current.isEmpty { words.append(String(current)) }
                current = String.UnicodeScalarView()
                previous = nil
            }
        }
        if !current.isEmpty { words.append(String(current)) }
        return words
    }

    /// A `w` pattern's words: split like a value's at anything but letters, digits and the
    /// wildcards (an escaped `\*` or `\?` stays in its word), not at case changes.
    static func patternWords(_ pattern: String) -> [String] {
        var words: [String] = []
        var current = ""
        var scalars = pattern.unicodeScalars.makeIterator()
        while let scalar = scalars.next() {
            if scalar == "\\", let next = scalars.next() {
                current.unicodeScalars.append(scalar)
                current.unicodeScalars.append(next)
            } else if scalar == "*" || scalar == "?" || isWordScalar(scalar) {
                current.unicodeScalars.append(scalar)
            } else if !current.isEmpty {
                words.append(current)
                current = ""
            }
        }
        if !current.isEmpty { words.append(current) }
        return words
    }

    /// The index's tokens of `text`.
    static func tokens(_ text: String) -> [String] {
        words(text.folding(options: [.caseInsensitive, .diacriticInsensitive], locale: nil), keepingMarks: false)
    }

    /// A character words are made of — a letter or a number, as the full-text index's words
    /// are — rather than one that separates them. The query's words, a narrowed search's check
    /// and the desktop's plain words all ask it.
    package static func isWordCharacter(_ scalar: Unicode.Scalar) -> Bool {
        scalar.properties.isAlphabetic || scalar.properties.numericType != nil
    }

    /// The words of `text`, split as SQLite's `unicode61` tokenizer splits them: on anything that
    /// is not a letter or a digit (nor, with `keepingMarks`, a combining mark, which PostgreSQL's
    /// parser keeps inside a word).
    static func words(_ text: String, keepingMarks: Bool) -> [String] {
        var words: [String] = []
        var current = ""
        for scalar in text.unicodeScalars {
            if isWordCharacter(scalar)
                || (keepingMarks && scalar.properties.generalCategory == .nonspacingMark) {
                current.unicodeScalars.append(scalar)
            } else if !current.isEmpty {
                words.append(current)
                current = ""
            }
        }
        if !current.isEmpty { words.append(current) }
        return words
    }

    /// `text` with every word that starts with one of `terms` (folded tokens) marked by `open`
    /// and `close`; nil when nothing matched.
    static func highlight(_ text: String, terms: [String], open: String, close: String) -> String? {
        guard !terms.isEmpty else { return nil }
        var output = ""
        var word = ""
        var matched = false
        func flush() {
            guard !word.isEmpty else { return }
            let token = tokens(word).first ?? ""
            if !token.isEmpty, terms.contains(where: { token.hasPrefix($0) }) {
                output += open + word + close
                matched = true
            } else {
                output += word
            }
            word = ""
        }
        for character in text {
            if character.isLetter || character.isNumber { word.append(character) } else { flush(); output.append(character) }
        }
        flush()
        return matched ? output : nil
    }
}
