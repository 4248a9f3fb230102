import ReindexHost
import ReindexStore
import ReindexSystem
import ReindexProtocol

/// A command of `reindex`: it declares its arguments and options once, as typed constants
/// (`static let limit = Option<SearchCommand, Int>(…)`), lists them in `arguments` and `options`
/// (the order of help), parses into a value of itself, and runs.
///
/// The phantom type parameter keeps a command to its own declarations: `Arguments<SearchCommand>`
/// reads `Option<SearchCommand, _>`, `Flag<SearchCommand>` and the `Global` options, and nothing
/// else compiles. Help, usage, completions and the manual page are derived from `spec`.
package protocol ReindexCommand: Sendable {
    static var name: String { get }
    static var summary: String { get }
    /// Text after the options in help and the manual page; empty by default.
    static var discussion: String { get }
    static var arguments: [any DeclaredArgument<Self>] { get }
    static var options: [any DeclaredOption<Self>] { get }

    /// Reads the parsed command line; conversion errors are usage errors (exit 64).
    init(_ arguments: Arguments<Self>) throws(ReindexError)
    /// Does the work; returns the exit status.
    func run(_ context: CommandContext) throws -> Int32
    /// The command only reads the index: it never creates one (a missing index is an error
    /// naming the path). Declared for each such command in `IndexAccess.swift`.
    static var onlyReadsIndex: Bool { get }
}

extension ReindexCommand {
    package static var discussion: String { "" }
    package static var arguments: [any DeclaredArgument<Self>] { [] }
    package static var options: [any DeclaredOption<Self>] { [] }
    package static var onlyReadsIndex: Bool { false }

    /// The declaration the parser, help, completions and the manual page read.
    package static var spec: CommandSpec {
        CommandSpec(name, summary: summary, arguments: arguments.map(\.spec), options: options.map(\.spec), discussion: discussion)
    }
}

/// The phantom command of the options every command takes (`--index`, `--json`, …).
package enum Global {
    package static let index = Option<Global, String>(
        "index", value: "PATH", help: "the index database", environment: "REINDEX_INDEX")
    package static let extensionsPath = Option<Global, String>(
        "extensions-path", value: "DIRS", help: "colon-separated directories searched before the user and system ones", environment: "REINDEX_EXTENSIONS_PATH")
    package static let json = Flag<Global>("json", help: "print JSON instead of human-readable text")
    package static let help = Flag<Global>("help", short: "h", help: "show help")
    package static let version = Flag<Global>("version", help: "show the version")

    /// In the order help lists them.
    package static let options: [any DeclaredOption<Global>] = [index, extensionsPath, json, help, version]
}

/// An option or flag declared for `Command`, as listed in `ReindexCommand.options`.
package protocol DeclaredOption<Command>: Sendable {
    associatedtype Command
    var spec: OptionSpec { get }
}

/// A positional argument declared for `Command`.
package protocol DeclaredArgument<Command>: Sendable {
    associatedtype Command
    var spec: ArgumentSpec { get }
}

/// A flag without a value (`--queue`): read as `arguments[RunCommand.queue]`, a `Bool`.
package struct Flag<Command>: DeclaredOption {
    package let spec: OptionSpec

    package init(_ name: String, short: Character? = nil, help: String, exclusiveGroup: String? = nil) {
        spec = OptionSpec(name, short: short, value: .none, help: help, exclusiveGroup: exclusiveGroup)
    }
}

/// An option with a value, converted to `Value` when read; a value that does not convert is a
/// usage error naming the option.
package struct Option<Command, Value>: DeclaredOption {
    package let spec: OptionSpec
    let conversion: ValueConversion<Value>

    /// `--name VALUE` (or `--name=VALUE`).
    package init(_ name: String, value: String, help: String, environment: String? = nil, exclusiveGroup: String? = nil,
                completion: CompletionKind? = nil, as conversion: ValueConversion<Value>) {
        spec = OptionSpec(name, value: .required(value), help: help, environment: environment, exclusiveGroup: exclusiveGroup, completion: completion)
        self.conversion = conversion
    }

    /// `--name[=VALUE]`: present without a value converts "".
    package init(_ name: String, optionalValue value: String, help: String, completion: CompletionKind? = nil, as conversion: ValueConversion<Value>) {
        spec = OptionSpec(name, value: .optional(value), help: help, completion: completion)
        self.conversion = conversion
    }
}

extension Option where Value == String {
    /// A text option: the last occurrence wins.
    package init(_ name: String, value: String, help: String, environment: String? = nil, exclusiveGroup: String? = nil, completion: CompletionKind? = nil) {
        self.init(name, value: value, help: help, environment: environment, exclusiveGroup: exclusiveGroup, completion: completion, as: .text)
    }
}

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

/// A positional argument: `String` when required, `String?` when optional.
package struct Argument<Command, Value>: DeclaredArgument {
    package let spec: ArgumentSpec
}

extension Argument where Value == String {
    /// `variadic`: the last argument, taking every remaining one joined by spaces.
    package init(_ name: String, help: String, variadic: Bool = false, completion: CompletionKind? = nil) {
        spec = ArgumentSpec(name, help: help, optional: false, variadic: variadic, completion: completion)
    }
}

extension Argument where Value == String? {
    package init(_ name: String, help: String, completion: CompletionKind? = nil) {
        spec = ArgumentSpec(name, help: help, optional: true, completion: completion)
    }
}
