import ReindexSystem
import Foundation

/// Case and diacritic folding and `*` wildcards for string comparisons, and the tokens the
/// full-text index makes of a word (unicode61 with diacritics removed: letters and digits,
/// lowercased, accents dropped).
enum Folding {
    static func fold(_ text: String, _ modifiers: StringModifiers) -> String {
        var options: String.CompareOptions = []
        if modifiers.contains(.caseInsensitive) { options.insert(.caseInsensitive) }
        if modifiers.contains(.diacriticInsensitive) { options.insert(.diacriticInsensitive) }
        return options.isEmpty ? text : text.folding(options: options, locale: nil)
    }

    /// Whether `value` matches `pattern`: `*` is any run of characters, `\*` a star.
    static func matches(_ value: String, pattern: String, modifiers: StringModifiers) -> Bool {
        let v = Array(fold(value, modifiers))
        var parts: [(text: [Character], star: Bool)] = []
        var literal: [Character] = []
        var characters = Array(fold(pattern, modifiers)).makeIterator()
        while let c = characters.next() {
            if c == "\\" {
                if let d = characters.next() { literal.append(d) }
            } else if c == "*" {
                parts.append((literal, true))
                literal = []
            } else {
                literal.append(c)
            }
        }
        parts.append((literal, false))
        // Greedy wildcard matching: the first piece anchors the start, the last the end.
        var position = 0
        for (n, part) in parts.enumerated() {
            let isFirst = n == 0, isLast = n == parts.count - 1
            if isFirst {
                guard v.count >= part.text.count, Array(v[0..<part.text.count]) == part.text else { return false }
                position = part.text.count
                if isLast { return position == v.count }
                continue
            }
            if isLast {
                guard v.count - position >= part.text.count else { return false }
                return Array(v[(v.count - part.text.count)...]) == part.text
            }
            guard let found = find(part.text, in: v, from: position) else { return false }
            position = found + part.text.count
        }
        return true
    }

    private static func find(_ needle: [Character], in haystack: [Character], from start: Int) -> Int? {
        if needle.isEmpty { return start }
        guard haystack.count >= needle.count else { return nil }
        var i = start
        while i + needle.count <= haystack.count {
            if Array(haystack[i..<(i + needle.count)]) == needle { return i }
            i += 1
        }
        return nil
    }

    /// The index's tokens of `text`.
    static func tokens(_ text: String) -> [String] {
        words(text.folding(options: [.caseInsensitive, .diacriticInsensitive], locale: nil), keepingMarks: false)
    }

    /// The words of `text`, split as SQLite's `unicode61` tokenizer splits them: on anything that
    /// is not a letter or a digit (nor, with `keepingMarks`, a combining mark, which PostgreSQL's
    /// parser keeps inside a word).
    static func words(_ text: String, keepingMarks: Bool) -> [String] {
        var words: [String] = []
        var current = ""
        for scalar in text.unicodeScalars {
            if scalar.properties.isAlphabetic || scalar.properties.numericType != nil
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
