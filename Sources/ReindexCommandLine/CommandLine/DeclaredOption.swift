/// An option or flag declared for `Command`, as listed in `ReindexCommand.options`.
package protocol DeclaredOption<Command>: Sendable {
    associatedtype Command
    var spec: OptionSpec { get }
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
