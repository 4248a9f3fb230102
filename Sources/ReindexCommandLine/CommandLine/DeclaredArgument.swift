/// A positional argument declared for `Command`.
package protocol DeclaredArgument<Command>: Sendable {
    associatedtype Command
    var spec: ArgumentSpec { get }
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
