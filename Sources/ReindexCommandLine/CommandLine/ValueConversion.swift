import ReindexSystem

/// How the occurrences of an option become its typed value. `occurrences` is never empty.
package struct ValueConversion<Value>: Sendable {
    let convert: @Sendable (_ option: String, _ occurrences: [String]) throws(ReindexError) -> Value

    package init(_ convert: @escaping @Sendable (_ option: String, _ occurrences: [String]) throws(ReindexError) -> Value) {
        self.convert = convert
    }

    /// The last occurrence, converted by `body` (the message of its error names the option).
    package static func last(_ body: @escaping @Sendable (_ option: String, _ text: String) throws(ReindexError) -> Value) -> ValueConversion {
        ValueConversion { (option, occurrences) throws(ReindexError) in try body(option, occurrences[occurrences.count - 1]) }
    }
}

extension ValueConversion where Value == String {
    /// The text of the last occurrence.
    package static var text: ValueConversion { .last { _, text in text } }
}

extension ValueConversion where Value == Int {
    /// A positive whole number.
    package static var positiveInteger: ValueConversion {
        .last { (option, text) throws(ReindexError) in
            guard let number = Int(text), number > 0 else { throw ReindexError(.usage, "--\(option) needs a positive whole number, got '\(text)'") }
            return number
        }
    }
}

extension ValueConversion where Value == Double {
    /// A non-negative, finite number of seconds.
    package static var seconds: ValueConversion {
        .last { (option, text) throws(ReindexError) in
            guard let number = Double(text), number >= 0, number.isFinite else { throw ReindexError(.usage, "--\(option) needs a number of seconds, got '\(text)'") }
            return number
        }
    }
}

extension ValueConversion where Value == [String] {
    /// Comma-separated values of every occurrence, empty ones dropped: `--ids a,b --ids c`.
    package static var commaList: ValueConversion {
        ValueConversion { _, occurrences in occurrences.flatMap { $0.split(separator: ",").map(String.init) }.filter { !$0.isEmpty } }
    }

    /// Every occurrence as given, for repeatable options: `--facet a --facet b`.
    package static var repeated: ValueConversion { ValueConversion { _, occurrences in occurrences } }
}
