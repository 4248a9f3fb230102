import ReindexProtocol
import ReindexHost
import ReindexStore
import ReindexSystem
/// What a shell may complete for an option's value or an argument (`reindex completions`).
package enum CompletionKind: Sendable, Equatable {
    /// Free text: nothing to offer.
    case none
    /// One of these words.
    case values([String])
    /// A file name.
    case file
    /// A directory name.
    case directory
    /// A bundle identifier, asked of `reindex list --json` when completing.
    case bundleIdentifier
    /// A command name of the tool.
    case command

    /// The kind a value name implies when a declaration says nothing: `PATH`/`FILE` files,
    /// `DIR`/`DIRS` directories, `BUNDLE_ID` (and `ID` of `--bundle`) bundle identifiers.
    static func implied(by valueName: String) -> CompletionKind {
        switch valueName {
        case "PATH", "FILE": return .file
        case "DIR", "DIRS": return .directory
        case "BUNDLE_ID": return .bundleIdentifier
        default: return .none
        }
    }
}

/// One option of a command, declared once: parsing and help text both come from it.
package struct OptionSpec: Sendable {
    package enum Value: Sendable, Equatable {
        /// A flag without a value: `--json`.
        case none
        /// A required value: `--index PATH` or `--index=PATH`.
        case required(String)
        /// An optional value, only as `--opt=VALUE`: `--wait-for-debugger[=SECONDS]`.
        case optional(String)
    }

    package var name: String          // long name without dashes
    package var short: Character?
    package var value: Value
    package var help: String
    package var environment: String?
    /// Options sharing a group are mutually exclusive (`--all | --ids | --ids-from`).
    package var exclusiveGroup: String?
    /// What a shell completes for the value (implied by the value name unless declared).
    package var completion: CompletionKind

    package init(_ name: String, short: Character? = nil, value: Value = .none, help: String, environment: String? = nil, exclusiveGroup: String? = nil,
                completion: CompletionKind? = nil) {
        self.name = name
        self.short = short
        self.value = value
        self.help = help
        self.environment = environment
        self.exclusiveGroup = exclusiveGroup
        switch value {
        case .none: self.completion = completion ?? .none
        case .required(let v), .optional(let v): self.completion = completion ?? .implied(by: v)
        }
    }

    /// The value's placeholder (`PATH`), or nil for a flag.
    package var valueName: String? {
        switch value {
        case .none: return nil
        case .required(let v), .optional(let v): return v
        }
    }

    package var synopsis: String {
        switch value {
        case .none: return "--\(name)"
        case .required(let v): return "--\(name) \(v)"
        case .optional(let v): return "--\(name)[=\(v)]"
        }
    }
}

/// A positional argument of a command.
package struct ArgumentSpec: Sendable {
    package var name: String
    package var help: String
    package var optional: Bool
    /// The last argument only: it takes every remaining positional argument, joined by spaces
    /// (`search staff eng` reads as `search "staff eng"`).
    package var variadic: Bool
    /// What a shell completes for it (implied by the name unless declared).
    package var completion: CompletionKind
    package init(_ name: String, help: String, optional: Bool = false, variadic: Bool = false, completion: CompletionKind? = nil) {
        self.name = name
        self.help = help
        self.optional = optional
        self.variadic = variadic
        self.completion = completion ?? .implied(by: name)
    }

    /// How the synopsis writes it: `QUERY…` when variadic, in brackets when optional.
    package var synopsis: String {
        let text = variadic ? name + "…" : name
        return optional ? "[\(text)]" : text
    }
}

/// A subcommand: its name, arguments, options and the help derived from them.
package struct CommandSpec: Sendable {
    package var name: String
    package var summary: String
    package var arguments: [ArgumentSpec]
    package var options: [OptionSpec]
    package var discussion: String

    package init(_ name: String, summary: String, arguments: [ArgumentSpec] = [], options: [OptionSpec] = [], discussion: String = "") {
        self.name = name
        self.summary = summary
        self.arguments = arguments
        self.options = options
        self.discussion = discussion
    }
}

/// What the command line said, before it is read through a command's typed declarations
/// (`arguments(for:)`, `globals`). The occurrences are kept by option name; only this file reads
/// them by name, so a command cannot ask for an option it did not declare.
package struct ParsedArguments: Sendable {
    /// The command's name, or nil when none was given.
    package fileprivate(set) var command: String?
    fileprivate var positional: [String] = []
    /// Every occurrence of each option, by long name; flags hold "" per occurrence.
    fileprivate var options: [String: [String]] = [:]

    /// How many positional arguments the command got.
    package var argumentCount: Int { positional.count }
    /// Nothing at all was given.
    package var isEmpty: Bool { command == nil && positional.isEmpty && options.isEmpty }

    fileprivate func flag(_ name: String) -> Bool { options[name] != nil }

    /// The command line read through `Command`'s declarations and the global options.
    package func arguments<Command: ReindexCommand>(for command: Command.Type) -> Arguments<Command> {
        Arguments(parsed: self, argumentNames: Command.arguments.map(\.spec.name),
                  declared: Set((Command.options.map(\.spec) + Global.options.map(\.spec)).map(\.name)))
    }

    /// The global options alone (`--help`, `--version`, `--index` …), before a command is chosen.
    package var globals: Arguments<Global> {
        Arguments(parsed: self, argumentNames: [], declared: Set(Global.options.map(\.spec.name)))
    }
}

/// The parsed command line as `Command` may read it: its own flags, options and arguments, and
/// the `Global` ones. Reading another command's declaration does not compile.
package struct Arguments<Command>: Sendable {
    fileprivate let parsed: ParsedArguments
    fileprivate let argumentNames: [String]
    fileprivate let declared: Set<String>

    fileprivate func occurrences(_ spec: OptionSpec) -> [String] {
        precondition(declared.contains(spec.name), "--\(spec.name) is read but not listed in the options of \(Command.self)")
        return parsed.options[spec.name] ?? []
    }

    fileprivate func convert<Value>(_ spec: OptionSpec, _ conversion: ValueConversion<Value>) throws(ReindexError) -> Value? {
        let given = occurrences(spec)
        return given.isEmpty ? nil : try conversion.convert(spec.name, given)
    }

    fileprivate func positional(_ spec: ArgumentSpec) -> String? {
        guard let index = argumentNames.firstIndex(of: spec.name) else {
            preconditionFailure("\(spec.name) is read but not listed in the arguments of \(Command.self)")
        }
        guard index < parsed.positional.count else { return nil }
        if spec.variadic { return parsed.positional[index...].joined(separator: " ") }
        return parsed.positional[index]
    }

    /// Whether the flag was given.
    package subscript(_ flag: Flag<Command>) -> Bool { !occurrences(flag.spec).isEmpty }
    /// How often the flag was given.
    package func count(_ flag: Flag<Command>) -> Int { occurrences(flag.spec).count }
    /// The option's value, converted, or nil when it was not given.
    package func value<Value>(_ option: Option<Command, Value>) throws(ReindexError) -> Value? { try convert(option.spec, option.conversion) }
    /// The option's value, converted, or `defaultValue` when it was not given.
    package func value<Value>(_ option: Option<Command, Value>, default defaultValue: Value) throws(ReindexError) -> Value {
        try convert(option.spec, option.conversion) ?? defaultValue
    }
    /// Every occurrence of the option as written, in order.
    package func occurrences<Value>(_ option: Option<Command, Value>) -> [String] { occurrences(option.spec) }
    /// A required argument (the parser has checked that it is there).
    package subscript(_ argument: Argument<Command, String>) -> String { positional(argument.spec) ?? "" }
    /// An optional argument.
    package subscript(_ argument: Argument<Command, String?>) -> String? { positional(argument.spec) }
}

extension Arguments where Command: ReindexCommand {
    /// Whether the global flag was given.
    package subscript(_ flag: Flag<Global>) -> Bool { !occurrences(flag.spec).isEmpty }
    /// How often the global flag was given.
    package func count(_ flag: Flag<Global>) -> Int { occurrences(flag.spec).count }
    /// The global option's value, or nil.
    package func value<Value>(_ option: Option<Global, Value>) throws(ReindexError) -> Value? { try convert(option.spec, option.conversion) }
    /// Every occurrence of the global option as written, in order.
    package func occurrences<Value>(_ option: Option<Global, Value>) -> [String] { occurrences(option.spec) }
}

/// A small argument parser in the spirit of swift-argument-parser: each option is declared once,
/// as a typed constant of its command (`Flag`, `Option`, `Argument`), whose `CommandSpec` both
/// parsing and `--help` text derive from.
package struct ArgumentParser: Sendable {
    package var toolName: String
    package var summary: String
    package var globalOptions: [OptionSpec]
    package var commands: [CommandSpec]

    package init(toolName: String, summary: String, globalOptions: [OptionSpec], commands: [CommandSpec]) {
        self.toolName = toolName
        self.summary = summary
        self.globalOptions = globalOptions
        self.commands = commands
    }

    /// Builds one command's declaration by name, in place of `commands` (see `init(…lookup:)`).
    private var lookup: (@Sendable (String) -> CommandSpec?)? = nil
    private var lookupNames: [String] = []

    /// A parser that builds only the declaration of the command on the command line, by `lookup`:
    /// what a start needs (building all of them is most of the parser's cost). `commands` is
    /// empty: its help of the whole tool lists no commands, so it serves parsing only.
    package init(toolName: String, summary: String, globalOptions: [OptionSpec], commandNames: [String],
                 lookup: @escaping @Sendable (String) -> CommandSpec?) {
        self.init(toolName: toolName, summary: summary, globalOptions: globalOptions, commands: [])
        self.lookup = lookup
        self.lookupNames = commandNames
    }

    package func command(named name: String) -> CommandSpec? {
        if let lookup { return lookupNames.contains(name) ? lookup(name) : nil }
        return commands.first { $0.name == name }
    }

    private var commandNames: [String] { lookup == nil ? commands.map(\.name) : lookupNames }

    /// Parses `arguments` (without the program name). Global options may stand before or after
    /// the command. Errors are usage errors (exit 64) that say what was wrong.
    package func parse(_ arguments: [String]) throws(ReindexError) -> ParsedArguments {
        var result = ParsedArguments()
        var spec: CommandSpec? = nil
        var index = 0
        var onlyPositional = false
        while index < arguments.count {
            let argument = arguments[index]
            index += 1
            if onlyPositional || !argument.hasPrefix("-") || argument == "-" {
                if result.command == nil {
                    guard let found = command(named: argument) else {
                        throw ReindexError(.usage, "unknown command '\(argument)'\(Suggestion.clause(for: argument, among: commandNames))"
                                           + "; commands: \(commandNames.joined(separator: ", "))")
                    }
                    result.command = argument
                    spec = found
                } else {
                    result.positional.append(argument)
                }
                continue
            }
            if argument == "--" { onlyPositional = true; continue }
            var name: String
            var inlineValue: String? = nil
            if argument.hasPrefix("--") {
                name = String(argument.dropFirst(2))
                if let eq = name.firstIndex(of: "=") {
                    inlineValue = String(name[name.index(after: eq)...])
                    name = String(name[..<eq])
                }
            } else {
                guard argument.count == 2, let letter = argument.last else {
                    throw ReindexError(.usage, "unknown option '\(argument)'")
                }
                let all = globalOptions + (spec?.options ?? [])
                guard let option = all.first(where: { $0.short == letter }) else {
                    throw ReindexError(.usage, "unknown option '\(argument)'")
                }
                name = option.name
            }
            let all = globalOptions + (spec?.options ?? [])
            guard let option = all.first(where: { $0.name == name }) else {
                let scope = spec.map { "for '\($0.name)'" } ?? "(options of a command come after the command)"
                let nearest = Suggestion.clause(for: name, among: all.map(\.name)) { "'--\($0)'" }
                throw ReindexError(.usage, "unknown option '--\(name)' \(scope)\(nearest)")
            }
            switch option.value {
            case .none:
                if inlineValue != nil { throw ReindexError(.usage, "--\(name) takes no value") }
                result.options[name, default: []].append("")
            case .optional:
                result.options[name, default: []].append(inlineValue ?? "")
            case .required(let valueName):
                if let inlineValue {
                    result.options[name, default: []].append(inlineValue)
                } else {
                    guard index < arguments.count else { throw ReindexError(.usage, "--\(name) needs a value (\(valueName))") }
                    result.options[name, default: []].append(arguments[index])
                    index += 1
                }
            }
        }
        if result.flag("help") || result.flag("version") { return result }
        if let spec {
            var groups: [String: String] = [:]
            for option in spec.options {
                guard let group = option.exclusiveGroup, result.flag(option.name) else { continue }
                if let other = groups[group] {
                    throw ReindexError(.usage, "--\(other) and --\(option.name) cannot be used together")
                }
                groups[group] = option.name
            }
            let required = spec.arguments.filter { !$0.optional }.count
            if result.positional.count < required {
                let missing = spec.arguments[result.positional.count]
                throw ReindexError(.usage, "'\(spec.name)' needs \(missing.name); usage: \(toolName) \(synopsis(spec))")
            }
            if result.positional.count > spec.arguments.count, spec.arguments.last?.variadic != true {
                throw ReindexError(.usage, "'\(spec.name)' takes at most \(spec.arguments.count) argument(s), got '\(result.positional[spec.arguments.count])'")
            }
        }
        return result
    }

    package func synopsis(_ spec: CommandSpec) -> String {
        var parts = [spec.name]
        for argument in spec.arguments { parts.append(argument.synopsis) }
        var seenGroups = Set<String>()
        for option in spec.options {
            if let group = option.exclusiveGroup {
                guard seenGroups.insert(group).inserted else { continue }
                let members = spec.options.filter { $0.exclusiveGroup == group }.map(\.synopsis)
                parts.append("[" + members.joined(separator: " | ") + "]")
            } else {
                parts.append("[\(option.synopsis)]")
            }
        }
        return parts.joined(separator: " ")
    }

    private func optionLines(_ options: [OptionSpec]) -> String {
        let left = options.map { option -> String in
            (option.short.map { "-\($0), " } ?? "") + option.synopsis
        }
        let width = min(34, (left.map(\.count).max() ?? 0) + 2)
        var lines: [String] = []
        for (option, text) in zip(options, left) {
            var help = option.help
            if let environment = option.environment { help += " (env: \(environment))" }
            let padding = text.count < width ? String(repeating: " ", count: width - text.count) : "\n" + String(repeating: " ", count: width + 2)
            lines.append("  " + text + padding + help)
        }
        return lines.joined(separator: "\n")
    }

    /// The help of the whole tool.
    package func usage() -> String {
        var text = "\(toolName) — \(summary)\n\nUSAGE: \(toolName) [global options] <command> [options]\n\nCOMMANDS:\n"
        let width = (commands.map(\.name.count).max() ?? 0) + 2
        for command in commands {
            text += "  " + command.name + String(repeating: " ", count: width - command.name.count) + command.summary + "\n"
        }
        text += "\nGLOBAL OPTIONS (before or after the command):\n" + optionLines(globalOptions) + "\n"
        text += "\nSee '\(toolName) <command> --help' for a command's options.\n"
        return text
    }

    /// The help of one command.
    package func usage(_ spec: CommandSpec) -> String {
        var text = "\(toolName) \(spec.name) — \(spec.summary)\n\nUSAGE: \(toolName) \(synopsis(spec))\n"
        if !spec.arguments.isEmpty {
            text += "\nARGUMENTS:\n"
            let width = (spec.arguments.map(\.name.count).max() ?? 0) + 2
            for argument in spec.arguments {
                text += "  " + argument.name + String(repeating: " ", count: width - argument.name.count) + argument.help + "\n"
            }
        }
        if !spec.options.isEmpty { text += "\nOPTIONS:\n" + optionLines(spec.options) + "\n" }
        text += "\nGLOBAL OPTIONS:\n" + optionLines(globalOptions) + "\n"
        if !spec.discussion.isEmpty { text += "\n" + spec.discussion + "\n" }
        return text
    }
}
