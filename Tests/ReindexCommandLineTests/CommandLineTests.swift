import Foundation
import XCTest
import ReindexHost
import ReindexSystem
@testable import ReindexCommandLine
@testable import ReindexStore
import ReindexProtocol
import ReindexTestSupport

/// The usage error `body` throws, or nil (and a failure) when it does not throw one.
private func usageError<Result>(_ body: () throws -> Result, file: StaticString = #filePath, line: UInt = #line) -> ReindexError? {
    do {
        let parsed = try body()
        XCTFail("expected a usage error, got \(parsed)", file: file, line: line)
        return nil
    } catch let error as ReindexError {
        XCTAssertEqual(error.code, .usage, file: file, line: line)
        XCTAssertEqual(error.code.exitCode, 64, file: file, line: line)
        return error
    } catch {
        XCTFail("unexpected error \(error)", file: file, line: line)
        return nil
    }
}

/// A command of the test's own parser, so exclusive groups and optional values are tested
/// independently of the real commands' declarations.
private struct GoCommand: ReindexCommand {
    static let name = "go"
    static let summary = "go somewhere"
    static let target = Argument<Self, String>("TARGET", help: "where")
    static let extra = Argument<Self, String?>("EXTRA", help: "more")
    static let all = Flag<Self>("all", help: "everything", exclusiveGroup: "what")
    static let ids = Option<Self, [String]>("ids", value: "ID[,ID…]", help: "some", exclusiveGroup: "what", as: .commaList)
    static let idsFrom = Option<Self, String>("ids-from", value: "FILE", help: "from a file", exclusiveGroup: "what")
    static let wait = Option<Self, String>("wait", optionalValue: "SECONDS", help: "wait", as: .text)
    static let verbose = Flag<Self>("verbose", short: "v", help: "talk")
    static let arguments: [any DeclaredArgument<Self>] = [target, extra]
    static let options: [any DeclaredOption<Self>] = [all, ids, idsFrom, wait, verbose]

    init(_ arguments: Arguments<Self>) {}
    func run(_ context: CommandContext) throws -> Int32 { 0 }
}

private struct StopCommand: ReindexCommand {
    static let name = "stop"
    static let summary = "stop"
    init(_ arguments: Arguments<Self>) {}
    func run(_ context: CommandContext) throws -> Int32 { 0 }
}

final class ArgumentParserTests: XCTestCase {
    private let parser = ReindexCommands.parser

    /// What `arguments` say to `Command`, through its typed declarations.
    private func parse<Command: ReindexCommand>(_ arguments: [String], as command: Command.Type, with parser: ArgumentParser = ReindexCommands.parser) throws -> Arguments<Command> {
        let parsed = try parser.parse(arguments)
        XCTAssertEqual(parsed.command, Command.name, "\(arguments)")
        return parsed.arguments(for: Command.self)
    }

    /// `Command`'s typed value read from `arguments`.
    private func command<Command: ReindexCommand>(_ arguments: [String], as command: Command.Type) throws -> Command {
        try Command(try parse(arguments, as: Command.self))
    }

    /// A parser of its own, so exclusive groups and optional values are tested independently of
    /// the real commands' declarations.
    private let custom = ArgumentParser(
        toolName: "tool", summary: "a test tool",
        globalOptions: [
            OptionSpec("index", value: .required("PATH"), help: "the index", environment: "TOOL_INDEX"),
            OptionSpec("json", help: "json output"),
            OptionSpec("help", short: "h", help: "help"),
            OptionSpec("version", help: "version"),
        ],
        commands: [GoCommand.spec, StopCommand.spec])

    // MARK: Global options before and after the command

    func testGlobalOptionsBeforeAndAfterTheCommand() throws {
        for arguments in [["--json", "list"], ["list", "--json"]] {
            let parsed = try parser.parse(arguments)
            XCTAssertEqual(parsed.command, "list", "\(arguments)")
            let list = parsed.arguments(for: ListCommand.self)
            XCTAssertTrue(list[Global.json], "\(arguments)")
            XCTAssertFalse(list[Global.help])
            XCTAssertEqual(parsed.argumentCount, 0)
        }
        let before = try parse(["--index", "/tmp/i.sqlite", "--extensions-path", "/a:/b", "list"], as: ListCommand.self)
        let after = try parse(["list", "--index", "/tmp/i.sqlite", "--extensions-path", "/a:/b"], as: ListCommand.self)
        for parsed in [before, after] {
            XCTAssertEqual(try parsed.value(Global.index), "/tmp/i.sqlite")
            XCTAssertEqual(try parsed.value(Global.extensionsPath), "/a:/b")
        }
        let mixed = try parse(["--json", "validate", "--index", "/i", "some/dir", "--run"], as: ValidateCommand.self)
        XCTAssertEqual(mixed[ValidateCommand.directory], "some/dir")
        XCTAssertTrue(mixed[Global.json])
        XCTAssertTrue(mixed[ValidateCommand.runSuite])
        XCTAssertEqual(try mixed.value(Global.index), "/i")
        let validate = try ValidateCommand(mixed)
        XCTAssertEqual(validate.directory, "some/dir")
        XCTAssertTrue(validate.runSuite)
        XCTAssertNil(validate.check)
    }

    func testOptionEqualsValue() throws {
        let parsed = try parse(["--index=/x/y.sqlite", "list", "--extensions-path=/a=b:/c"], as: ListCommand.self)
        XCTAssertEqual(try parsed.value(Global.index), "/x/y.sqlite")
        XCTAssertEqual(try parsed.value(Global.extensionsPath), "/a=b:/c", "only the first '=' separates the value")
        XCTAssertEqual(try parse(["--index=", "list"], as: ListCommand.self).value(Global.index), "", "an empty inline value is a value")
    }

    func testValuesMayLookLikeOptions() throws {
        XCTAssertEqual(try parse(["--index", "--json", "list"], as: ListCommand.self).value(Global.index), "--json")
        XCTAssertFalse(try parse(["--index", "--json", "list"], as: ListCommand.self)[Global.json])
    }

    func testRepeatedOptionsKeepEveryValueAndTheLastWins() throws {
        let parsed = try parse(["--index", "/one", "list", "--index=/two"], as: ListCommand.self)
        XCTAssertEqual(parsed.occurrences(Global.index), ["/one", "/two"])
        XCTAssertEqual(try parsed.value(Global.index), "/two")
        XCTAssertEqual(try parse(["--json", "list", "--json"], as: ListCommand.self).count(Global.json), 2)
    }

    func testShortOptions() throws {
        XCTAssertTrue(try parser.parse(["-h"]).globals[Global.help])
        XCTAssertTrue(try parse(["list", "-h"], as: ListCommand.self)[Global.help])
        XCTAssertTrue(try parse(["go", "-v", "x"], as: GoCommand.self, with: custom)[GoCommand.verbose])
        XCTAssertEqual(usageError { try custom.parse(["-v", "go", "x"]) }?.message, "unknown option '-v'", "a command's short option before the command")
        XCTAssertEqual(usageError { try parser.parse(["-x", "list"]) }?.message, "unknown option '-x'")
        XCTAssertEqual(usageError { try parser.parse(["list", "-hx"]) }?.message, "unknown option '-hx'")
    }

    func testDoubleDashEndsOptions() throws {
        let parsed = try parse(["validate", "--", "--not-an-option"], as: ValidateCommand.self)
        XCTAssertEqual(parsed[ValidateCommand.directory], "--not-an-option")
        XCTAssertFalse(parsed[ValidateCommand.runSuite])
        XCTAssertEqual(try parse(["validate", "-"], as: ValidateCommand.self)[ValidateCommand.directory], "-")
    }

    /// A start parses with `startParser`, which builds only the named command's declaration: it
    /// must read every command line as the whole parser does, and refuse the same ones the same way.
    func testTheStartParserReadsCommandLinesAsTheWholeParserDoes() {
        var lines: [[String]] = [
            ["--version"], ["-h"], [], ["--json"], ["bogus"], ["serch", "x"], ["--index", "/x", "--bogus"],
            ["search"], ["search", "a", "b", "--limit", "5", "--json"], ["run", "b", "--ids", "1,2", "--all"],
            ["run", "b", "--ids", "1", "--index=/i"], ["list", "--bogus"], ["list", "-x"], ["validate", "--", "--x"],
        ]
        for type in ReindexCommands.table { lines.append([type.name]); lines.append([type.name, "--help"]) }
        for line in lines {
            let whole = Result { try ReindexCommands.parser.parse(line) }
            let start = Result { try ReindexCommands.startParser.parse(line) }
            switch (whole, start) {
            case (.success(let a), .success(let b)):
                // The command, the positional arguments and every option's occurrences (a dictionary:
                // compared as one, whatever its order).
                func fields(_ parsed: ParsedArguments) -> [String: [String: [String]]] {
                    var fields: [String: [String: [String]]] = [:]
                    for child in Mirror(reflecting: parsed).children {
                        switch child.value {
                        case let options as [String: [String]]: fields["options"] = options
                        case let positional as [String]: fields["positional"] = ["": positional]
                        case let command as String?: fields["command"] = ["": command.map { [$0] } ?? []]
                        default: XCTFail("\(child.label ?? "?"): an unexpected field of ParsedArguments")
                        }
                    }
                    return fields
                }
                XCTAssertEqual(fields(a), fields(b), "\(line)")
                XCTAssertEqual(fields(a).count, 3, "\(line)")
            case (.failure(let a), .failure(let b)):
                XCTAssertEqual((a as? ReindexError)?.message, (b as? ReindexError)?.message, "\(line)")
            default:
                XCTFail("\(line): the whole parser gave \(whole), the start parser \(start)")
            }
        }
        XCTAssertEqual(ReindexCommands.startParser.command(named: "search")?.name, "search")
        XCTAssertNil(ReindexCommands.startParser.command(named: "bogus"))
    }

    // MARK: Usage errors

    func testMissingValues() {
        XCTAssertEqual(usageError { try parser.parse(["list", "--index"]) }?.message, "--index needs a value (PATH)")
        XCTAssertEqual(usageError { try parser.parse(["--extensions-path"]) }?.message, "--extensions-path needs a value (DIRS)")
        XCTAssertEqual(usageError { try custom.parse(["go", "x", "--ids"]) }?.message, "--ids needs a value (ID[,ID…])")
    }

    func testFlagsTakeNoValue() {
        XCTAssertEqual(usageError { try parser.parse(["list", "--json=yes"]) }?.message, "--json takes no value")
    }

    func testUnknownOptions() throws {
        let afterCommand = try XCTUnwrap(usageError { try parser.parse(["list", "--bogus"]) })
        XCTAssertEqual(afterCommand.message, "unknown option '--bogus' for 'list'")
        let beforeCommand = try XCTUnwrap(usageError { try parser.parse(["--bogus", "list"]) })
        XCTAssertTrue(beforeCommand.message.hasPrefix("unknown option '--bogus'"), beforeCommand.message)
        // A command's own option is unknown before the command and for another command.
        XCTAssertNotNil(usageError { try parser.parse(["--run", "validate", "dir"]) })
        XCTAssertEqual(usageError { try parser.parse(["list", "--run"]) }?.message, "unknown option '--run' for 'list'")
        XCTAssertNotNil(usageError { try parser.parse(["list", "--JSON"]) }, "option names are case-sensitive")
    }

    func testUnknownCommands() throws {
        let error = try XCTUnwrap(usageError { try parser.parse(["bogus"]) })
        XCTAssertTrue(error.message.hasPrefix("unknown command 'bogus'"), error.message)
        for command in ReindexCommands.all {
            XCTAssertTrue(error.message.contains(command.name), "the error lists \(command.name): \(error.message)")
        }
        XCTAssertNotNil(usageError { try parser.parse(["--json", "LIST"]) })
    }

    func testMissingAndExtraPositionalArguments() throws {
        let missing = try XCTUnwrap(usageError { try parser.parse(["validate"]) })
        XCTAssertTrue(missing.message.hasPrefix("'validate' needs DIR"), missing.message)
        XCTAssertTrue(missing.message.contains("usage: reindex validate DIR"), missing.message)
        let extra = try XCTUnwrap(usageError { try parser.parse(["validate", "a", "b"]) })
        XCTAssertEqual(extra.message, "'validate' takes at most 1 argument(s), got 'b'")
        XCTAssertNotNil(usageError { try parser.parse(["list", "extra"]) })
        let one = try parse(["go", "a"], as: GoCommand.self, with: custom)
        XCTAssertEqual(one[GoCommand.target], "a")
        XCTAssertNil(one[GoCommand.extra])
        let two = try parse(["go", "a", "b"], as: GoCommand.self, with: custom)
        XCTAssertEqual(two[GoCommand.target], "a")
        XCTAssertEqual(two[GoCommand.extra], "b")
        XCTAssertNotNil(usageError { try custom.parse(["go", "a", "b", "c"]) })
    }

    func testHelpAndVersionSkipValidation() throws {
        XCTAssertTrue(try parse(["validate", "--help"], as: ValidateCommand.self)[Global.help])
        XCTAssertTrue(try parser.parse(["--version"]).globals[Global.version])
        XCTAssertNil(try parser.parse(["--version"]).command)
        XCTAssertTrue(try parse(["go", "--all", "--ids", "x", "--help"], as: GoCommand.self, with: custom)[Global.help])
    }

    func testNoArgumentsParseToNoCommand() throws {
        let parsed = try parser.parse([])
        XCTAssertNil(parsed.command)
        XCTAssertTrue(parsed.isEmpty)
        XCTAssertFalse(parsed.globals[Global.help])
    }

    // MARK: Exclusive groups and optional values

    func testExclusiveGroups() throws {
        XCTAssertEqual(usageError { try custom.parse(["go", "x", "--all", "--ids", "a,b"]) }?.message, "--all and --ids cannot be used together")
        XCTAssertEqual(usageError { try custom.parse(["go", "x", "--ids-from", "f", "--ids=a"]) }?.message, "--ids and --ids-from cannot be used together")
        XCTAssertNotNil(usageError { try custom.parse(["go", "--ids-from=f", "x", "--all"]) })
        // One member of a group, repeated or alone, is fine, as are options outside the group.
        let repeated = try parse(["go", "x", "--ids", "a", "--ids", "b", "--verbose"], as: GoCommand.self, with: custom)
        XCTAssertEqual(repeated.occurrences(GoCommand.ids), ["a", "b"])
        XCTAssertEqual(try repeated.value(GoCommand.ids), ["a", "b"])
        XCTAssertTrue(try parse(["go", "x", "--all", "--wait"], as: GoCommand.self, with: custom)[GoCommand.all])
    }

    func testExclusiveGroupsOfTheRealCommands() throws {
        // Every real command that declares an exclusive group refuses two of its members together.
        var checked = 0
        for spec in ReindexCommands.all {
            let groups = Dictionary(grouping: spec.options.filter { $0.exclusiveGroup != nil }, by: { $0.exclusiveGroup ?? "" })
            for (_, members) in groups where members.count >= 2 {
                var arguments = [spec.name] + spec.arguments.filter { !$0.optional }.map { _ in "com.example.x" }
                for option in members.prefix(2) {
                    switch option.value {
                    case .none: arguments.append("--\(option.name)")
                    case .required: arguments += ["--\(option.name)", "v"]
                    case .optional: arguments.append("--\(option.name)=v")
                    }
                }
                let error = usageError { try parser.parse(arguments) }
                XCTAssertTrue(error?.message.contains("cannot be used together") == true, "\(arguments): \(String(describing: error))")
                checked += 1
            }
        }
        if checked == 0 { throw XCTSkip("no command of ReindexCommands declares an exclusive group yet") }
    }

    func testOptionalValues() throws {
        XCTAssertEqual(try parse(["go", "x", "--wait"], as: GoCommand.self, with: custom).occurrences(GoCommand.wait), [""])
        XCTAssertEqual(try parse(["go", "x", "--wait=30"], as: GoCommand.self, with: custom).value(GoCommand.wait), "30")
        // Without '=' the next word is not taken as the value.
        let separate = try parse(["go", "--wait", "x"], as: GoCommand.self, with: custom)
        XCTAssertEqual(try separate.value(GoCommand.wait), "")
        XCTAssertEqual(separate[GoCommand.target], "x")
        XCTAssertNil(separate[GoCommand.extra])
    }

    // MARK: Usage text

    func testUsageTextContainsEveryDeclaredOptionOfEveryCommand() {
        for spec in ReindexCommands.all {
            let text = parser.usage(spec)
            XCTAssertTrue(text.contains("reindex \(spec.name)"), "\(spec.name)")
            XCTAssertTrue(text.contains(spec.summary), "\(spec.name)")
            for option in spec.options + ReindexCommands.global {
                XCTAssertTrue(text.contains("--\(option.name)"), "usage of \(spec.name) lacks --\(option.name):\n\(text)")
                XCTAssertTrue(text.contains(option.help), "usage of \(spec.name) lacks the help of --\(option.name)")
                if let short = option.short { XCTAssertTrue(text.contains("-\(short), --\(option.name)"), "\(spec.name): -\(short)") }
                if let environment = option.environment { XCTAssertTrue(text.contains("(env: \(environment))"), "\(spec.name): \(environment)") }
                if case .required(let valueName) = option.value {
                    XCTAssertTrue(text.contains("--\(option.name) \(valueName)"), "\(spec.name): --\(option.name) \(valueName)")
                }
            }
            for argument in spec.arguments {
                XCTAssertTrue(text.contains(argument.name), "\(spec.name): \(argument.name)")
                XCTAssertTrue(text.contains(argument.help), "\(spec.name): help of \(argument.name)")
            }
            if !spec.discussion.isEmpty { XCTAssertTrue(text.contains(spec.discussion), "\(spec.name): discussion") }
        }
    }

    func testToolUsageListsEveryCommandAndGlobalOption() {
        let text = parser.usage()
        XCTAssertTrue(text.hasPrefix("reindex — "))
        for spec in ReindexCommands.all {
            XCTAssertTrue(text.contains("  \(spec.name)"), spec.name)
            XCTAssertTrue(text.contains(spec.summary), spec.name)
        }
        for option in ReindexCommands.global {
            XCTAssertTrue(text.contains("--\(option.name)"), option.name)
        }
    }

    func testSynopsisShowsGroupsOptionalArgumentsAndOptionalValues() throws {
        let go = try XCTUnwrap(custom.command(named: "go"))
        XCTAssertEqual(custom.synopsis(go), "go TARGET [EXTRA] [--all | --ids ID[,ID…] | --ids-from FILE] [--wait[=SECONDS]] [--verbose]")
        let text = custom.usage(go)
        XCTAssertTrue(text.contains("USAGE: tool go TARGET [EXTRA]"), text)
        XCTAssertTrue(text.contains("-v, --verbose"), text)
        XCTAssertTrue(text.contains("(env: TOOL_INDEX)"), text)
        XCTAssertEqual(try XCTUnwrap(parser.command(named: "validate")).name, "validate")
        XCTAssertNil(parser.command(named: "nope"))
    }

    func testTheContractsGlobalOptionsAreDeclared() {
        let names = Set(ReindexCommands.global.map(\.name))
        XCTAssertTrue(names.isSuperset(of: ["index", "extensions-path", "json", "help", "version"]))
        XCTAssertEqual(ReindexCommands.global.first { $0.name == "help" }?.short, "h")
        XCTAssertEqual(ReindexCommands.global.first { $0.name == "index" }?.environment, "REINDEX_INDEX")
        XCTAssertEqual(ReindexCommands.global.first { $0.name == "extensions-path" }?.environment, "REINDEX_EXTENSIONS_PATH")
        for command in ["list", "paths", "validate"] {
            XCTAssertNotNil(ReindexCommands.parser.command(named: command), command)
        }
    }

    // MARK: Typed options

    func testTypedOptionsConvertTheirValues() throws {
        let search = try command(["search", "dune", "--limit", "5", "--fields", "title,,year", "--fields", "rating", "--facet", "a", "--facet", "b",
                                  "--sort", "year:desc", "--markers", "<b>,</b>"], as: SearchCommand.self)
        XCTAssertEqual(search.query, "dune")
        XCTAssertEqual(search.limit, 5)
        XCTAssertEqual(search.fields, ["title", "year", "rating"], "comma lists join every occurrence and drop empty parts")
        XCTAssertEqual(search.facets, ["a", "b"], "a repeatable option keeps every occurrence")
        XCTAssertEqual(search.sort.count, 1)
        XCTAssertEqual(search.markers?.open, "<b>")
        XCTAssertEqual(search.markers?.close, "</b>")
        XCTAssertFalse(search.count)
        // Absent options take their declared defaults.
        let plain = try command(["search", "dune"], as: SearchCommand.self)
        XCTAssertEqual(plain.limit, 20)
        XCTAssertEqual(plain.facetTop, 10)
        XCTAssertNil(plain.fields)
        XCTAssertNil(plain.bundle)
        XCTAssertEqual(plain.facets, [])
        XCTAssertEqual(try command(["items", "com.example.x"], as: ItemsCommand.self).limit, 100)

        let serve = try command(["serve", "--rescan", "2.5", "--removal-grace=0", "--concurrency", "3"], as: ServeCommand.self)
        XCTAssertEqual(serve.rescanSeconds, 2.5)
        XCTAssertEqual(serve.removalGraceSeconds, 0)
        XCTAssertEqual(serve.concurrency, 3)
        XCTAssertEqual(serve.retryBaseSeconds, 5)
        XCTAssertFalse(serve.requireSandbox)

        let run = try command(["run", "com.example.x", "--ids", "a,b", "--ids", "c", "--reason", "indexLost", "--queue"], as: RunCommand.self)
        XCTAssertEqual(run.bundle, "com.example.x")
        XCTAssertEqual(run.request.ids, ["a", "b", "c"])
        XCTAssertEqual(run.request.reason, .indexLost)
        XCTAssertFalse(run.request.resume)
        XCTAssertTrue(run.queue)
        let selection = try RequestSelection(run.request)
        XCTAssertEqual(selection.kind, .reindexItems)
        XCTAssertEqual(selection.identifiers, ["a", "b", "c"])
        let all = try RequestSelection(try command(["run", "com.example.x", "--resume"], as: RunCommand.self).request)
        XCTAssertEqual(all.kind, .reindexAll)
        XCTAssertEqual(all.reason, .forced)
        XCTAssertTrue(all.resume)

        let debug = try command(["debug", "com.example.x", "--wait-for-debugger", "--trace=full"], as: DebugCommand.self)
        XCTAssertEqual(debug.waitSeconds, 0, "--wait-for-debugger without a value waits for ever")
        XCTAssertEqual(debug.traceFull, true)
        let timed = try command(["debug", "com.example.x", "--wait-for-debugger=7.5", "--trace"], as: DebugCommand.self)
        XCTAssertEqual(timed.waitSeconds, 7.5)
        XCTAssertEqual(timed.traceFull, false)
        let quiet = try command(["debug", "com.example.x"], as: DebugCommand.self)
        XCTAssertNil(quiet.waitSeconds)
        XCTAssertNil(quiet.traceFull)

        XCTAssertEqual(try command(["delete", "b", "--domains", "x,y"], as: DeleteCommand.self).what, .domains(["x", "y"]))
        XCTAssertEqual(try command(["delete", "b", "--all"], as: DeleteCommand.self).what, .all)
        XCTAssertNil(try command(["delete", "b"], as: DeleteCommand.self).what)
        XCTAssertEqual(try command(["completions", "zsh"], as: CompletionsCommand.self).shell, .zsh)
        XCTAssertEqual(try command(["desktop", "install"], as: DesktopCommand.self).action, .install)
        XCTAssertNotNil(usageError { try self.command(["desktop", "start"], as: DesktopCommand.self) })
        XCTAssertNil(try command(["help"], as: HelpCommand.self).command)
        XCTAssertEqual(try command(["help", "run", "--man"], as: HelpCommand.self).command, "run")
    }

    func testTypedOptionsReportBadValuesAsUsageErrors() {
        let cases: [(String, () throws -> Any)] = [
            ("--limit needs a positive whole number, got '0'", { try self.command(["search", "q", "--limit", "0"], as: SearchCommand.self) }),
            ("--limit needs a positive whole number, got 'ten'", { try self.command(["items", "b", "--limit=ten"], as: ItemsCommand.self) }),
            ("--facet-top needs a positive whole number, got '-3'", { try self.command(["search", "q", "--facet-top", "-3"], as: SearchCommand.self) }),
            ("--concurrency needs a positive whole number, got '1.5'", { try self.command(["serve", "--concurrency", "1.5"], as: ServeCommand.self) }),
            ("--rescan needs a number of seconds, got '-1'", { try self.command(["serve", "--rescan", "-1"], as: ServeCommand.self) }),
            ("--removal-grace needs a number of seconds, got 'inf'", { try self.command(["serve", "--removal-grace", "inf"], as: ServeCommand.self) }),
            ("--retry-base needs a number of seconds, got 'soon'", { try self.command(["serve", "--retry-base=soon"], as: ServeCommand.self) }),
            ("--wait-for-debugger takes a number of seconds, got 'abc'", { try self.command(["debug", "b", "--wait-for-debugger=abc"], as: DebugCommand.self) }),
            ("--trace takes no value or 'full', got 'some'", { try self.command(["debug", "b", "--trace=some"], as: DebugCommand.self) }),
            ("--markers x: expected OPEN,CLOSE (e.g. '<b>,</b>')", { try self.command(["search", "q", "--markers", "x"], as: SearchCommand.self) }),
            ("no completions for shell 'tcsh'; shells: bash, zsh, fish", { try self.command(["completions", "tcsh"], as: CompletionsCommand.self) }),
        ]
        for (message, body) in cases {
            XCTAssertEqual(usageError(body)?.message, message)
        }
        // The last occurrence is the one converted.
        XCTAssertNotNil(usageError { try self.command(["search", "q", "--limit", "5", "--limit", "0"], as: SearchCommand.self) })
        XCTAssertEqual(try command(["search", "q", "--limit", "0", "--limit", "5"], as: SearchCommand.self).limit, 5)
    }

    // MARK: The command table

    func testEveryCommandOfTheTableHasAUniqueNameAndAppearsInHelpCompletionsAndTheManualPage() throws {
        let names = ReindexCommands.table.map { $0.name }
        XCTAssertEqual(Set(names).count, names.count, "duplicate command names: \(names)")
        XCTAssertEqual(names.count, 19)
        XCTAssertEqual(ReindexCommands.all.map(\.name), names, "the declarations are the table's, in its order")
        XCTAssertEqual(parser.commands.map(\.name), names)
        let usage = parser.usage()
        let man = ManPage.roff(parser)
        let scripts = CompletionScript.Shell.allCases.map { CompletionScript.script(for: $0, parser: parser) }
        let globalNames = Set(ReindexCommands.global.map(\.name))
        for type in ReindexCommands.table {
            let name = type.name
            XCTAssertTrue(try XCTUnwrap(ReindexCommands.command(named: name)) == type, name)
            XCTAssertTrue(usage.contains("\n  \(name) "), "help lacks \(name)")
            XCTAssertTrue(man.contains(".SS \(name)\n"), "the manual page lacks \(name)")
            for (shell, script) in zip(CompletionScript.Shell.allCases, scripts) {
                XCTAssertTrue(script.contains(shell == .fish ? "-a \(name) -d" : "\(name))"), "\(shell) completion lacks \(name)")
            }
            let options = type.spec.options.map(\.name)
            XCTAssertEqual(Set(options).count, options.count, "\(name) declares an option twice: \(options)")
            XCTAssertTrue(globalNames.isDisjoint(with: options), "\(name) redeclares a global option")
            let arguments = type.spec.arguments.map(\.name)
            XCTAssertEqual(Set(arguments).count, arguments.count, "\(name) declares an argument twice")
        }
        XCTAssertNil(ReindexCommands.command(named: "nope"))
    }

    func testExitCodesOfErrorCodes() {
        XCTAssertEqual(ReindexError.Code.usage.exitCode, 64)
        XCTAssertEqual(ReindexError.Code.invalidData.exitCode, 65)
        XCTAssertEqual(ReindexError.Code.bundleNotFound.exitCode, 66)
        XCTAssertEqual(ReindexError.Code.cannotStart.exitCode, 69)
        XCTAssertEqual(ReindexError.Code.internal.exitCode, 70)
        XCTAssertEqual(ReindexError.Code.requestFailed.exitCode, 75)
        XCTAssertEqual(ReindexError.Code.protocolViolation.exitCode, 76)
    }
}

// MARK: - The real `reindex` executable

/// What a finished process printed and how it exited.
private struct ProcessOutput {
    var status: Int32
    var stdout: String
    var stderr: String
}

final class ReindexCommandTests: XCTestCase {
    private var fixture: BundleFixture?

    override func setUpWithError() throws {
        fixture = try BundleFixture.make(prefix: "reindex-command")
    }

    override func tearDown() {
        fixture?.remove()
        fixture = nil
    }

    private func temporaryRoot() throws -> String { try XCTUnwrap(fixture).root }

    /// The `reindex` executable built beside this test bundle.
    private func executable() throws -> URL {
        let bundleURL = Bundle(for: Self.self).bundleURL
        var candidates = [
            bundleURL.deletingLastPathComponent().appendingPathComponent("reindex"),
            bundleURL.appendingPathComponent("reindex"),
        ]
        if let main = Bundle.main.executableURL { candidates.append(main.deletingLastPathComponent().appendingPathComponent("reindex")) }
        // Walk up from this file to the package and look in the usual products directories.
        var directory = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        for _ in 0..<4 {
            for scratch in [".build-tests", ".build"] {
                candidates.append(directory.appendingPathComponent(scratch).appendingPathComponent("debug").appendingPathComponent("reindex"))
            }
            directory = directory.deletingLastPathComponent()
        }
        for candidate in candidates {
            var isDirectory: ObjCBool = false
            if FileManager.default.fileExists(atPath: candidate.path, isDirectory: &isDirectory), !isDirectory.boolValue,
               FileManager.default.isExecutableFile(atPath: candidate.path) {
                return candidate
            }
        }
        XCTFail("the reindex executable was not found; looked at \(candidates.map(\.path))")
        throw CocoaError(.fileNoSuchFile)
    }

    /// An environment that keeps the real user's directories out of the test.
    private func environment(_ extra: [String: String] = [:]) throws -> [String: String] {
        let root = try temporaryRoot()
        var environment = [
            "HOME": root + "/home",
            "XDG_DATA_HOME": root + "/xdg-data",
            "XDG_DATA_DIRS": root + "/xdg-system",
            "XDG_STATE_HOME": root + "/xdg-state",
            "PATH": ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin",
            "LANG": "C",
        ]
        environment.merge(extra) { $1 }
        return environment
    }

    /// Runs `reindex` with `arguments` and waits for it; output goes through real files.
    private func run(_ arguments: [String], environment extra: [String: String] = [:]) throws -> ProcessOutput {
        let root = try temporaryRoot()
        let id = UUID().uuidString
        let outPath = root + "/stdout-\(id)"
        let errPath = root + "/stderr-\(id)"
        XCTAssertTrue(FileManager.default.createFile(atPath: outPath, contents: nil))
        XCTAssertTrue(FileManager.default.createFile(atPath: errPath, contents: nil))
        let out = try FileHandle(forWritingTo: URL(fileURLWithPath: outPath))
        let err = try FileHandle(forWritingTo: URL(fileURLWithPath: errPath))
        let process = Process()
        process.executableURL = try executable()
        process.arguments = arguments
        process.environment = try environment(extra)
        process.currentDirectoryURL = URL(fileURLWithPath: root)
        process.standardInput = FileHandle.nullDevice
        process.standardOutput = out
        process.standardError = err
        try process.run()
        process.waitUntilExit()
        try out.close()
        try err.close()
        XCTAssertEqual(process.terminationReason, .exit, "reindex \(arguments) was killed by a signal")
        let stdout = String(decoding: try Data(contentsOf: URL(fileURLWithPath: outPath)), as: UTF8.self)
        let stderr = String(decoding: try Data(contentsOf: URL(fileURLWithPath: errPath)), as: UTF8.self)
        return ProcessOutput(status: process.terminationStatus, stdout: stdout, stderr: stderr)
    }

    private func jsonObject(_ text: String, file: StaticString = #filePath, line: UInt = #line) throws -> [String: Any] {
        let object = try JSONSerialization.jsonObject(with: Data(text.utf8))
        return try XCTUnwrap(object as? [String: Any], "not a JSON object: \(text)", file: file, line: line)
    }

    /// Asserts the contract's error form: stderr is one line beginning `error:`.
    private func assertErrorLine(_ output: ProcessOutput, containing needle: String, file: StaticString = #filePath, line: UInt = #line) {
        XCTAssertTrue(output.stderr.hasPrefix("error: "), "stderr: \(output.stderr)", file: file, line: line)
        XCTAssertEqual(output.stderr.split(separator: "\n").count, 1, "one line: \(output.stderr)", file: file, line: line)
        XCTAssertTrue(output.stderr.contains(needle), "stderr lacks \(needle): \(output.stderr)", file: file, line: line)
    }

    /// Two search directories: `first` with a valid and an invalid bundle, `second` with a bundle
    /// that the valid one shadows (its identifier differs only in case).
    private func makeSearchPath() throws -> (first: String, second: String, good: String, bad: String, shadowed: String) {
        let fixture = try XCTUnwrap(fixture)
        let first = try fixture.directory("search/first")
        let second = try fixture.directory("search/second")
        let good = try BundleFixture.bundle(in: first, "good", manifest: BundleFixture.manifest(
            "com.example.Good", executable: "bin/GoodIndexer", extra: #""displayName":"Good One","version":"1.2.3""#), executable: "bin/GoodIndexer")
        let bad = try BundleFixture.bundle(in: first, "bad", manifest: BundleFixture.manifest(
            "com.example.bad", extra: #""timeouts":{"idleSeconds":"sixty"}"#))
        let shadowed = try BundleFixture.bundle(in: second, "other", manifest: BundleFixture.manifest("COM.EXAMPLE.GOOD"))
        return (first, second, good, bad, shadowed)
    }

    // MARK: list

    func testListJSONPrintsTheContractsFields() throws {
        let s = try makeSearchPath()
        let output = try run(["--json", "list", "--extensions-path", "\(s.first):\(s.second)"])
        XCTAssertEqual(output.status, 0, output.stderr)
        XCTAssertEqual(output.stderr, "")
        XCTAssertTrue(output.stdout.hasSuffix("\n"))
        XCTAssertEqual(output.stdout.filter { $0 == "\n" }.count, 1, "one JSON document on one line")
        let document = try jsonObject(output.stdout)

        let bundles = try XCTUnwrap(document["bundles"] as? [[String: Any]])
        XCTAssertEqual(bundles.count, 1)
        let bundle = try XCTUnwrap(bundles.first)
        XCTAssertEqual(bundle["bundleIdentifier"] as? String, "com.example.Good")
        XCTAssertEqual(bundle["displayName"] as? String, "Good One")
        XCTAssertEqual(bundle["version"] as? String, "1.2.3")
        XCTAssertEqual(bundle["path"] as? String, s.good)
        XCTAssertEqual(bundle["executable"] as? String, s.good + "/bin/GoodIndexer")

        let problems = try XCTUnwrap(document["problems"] as? [[String: Any]])
        XCTAssertEqual(problems.count, 2)
        let byPath = Dictionary(problems.compactMap { p in (p["path"] as? String).map { ($0, p) } }, uniquingKeysWith: { a, _ in a })
        let badReason = try XCTUnwrap(byPath[s.bad]?["reason"] as? String)
        XCTAssertEqual(badReason, "\(s.bad)/manifest.json: timeouts.idleSeconds: expected a positive number, got \"sixty\"")
        let shadowReason = try XCTUnwrap(byPath[s.shadowed]?["reason"] as? String)
        XCTAssertTrue(shadowReason.contains("shadowed"), shadowReason)
        XCTAssertTrue(shadowReason.contains(s.good), shadowReason)
    }

    func testListWithGlobalOptionsAfterTheCommandAndFromTheEnvironment() throws {
        let s = try makeSearchPath()
        let before = try run(["--json", "--extensions-path", "\(s.first):\(s.second)", "list"])
        let after = try run(["list", "--extensions-path=\(s.first):\(s.second)", "--json"])
        let fromEnvironment = try run(["list", "--json"], environment: ["REINDEX_EXTENSIONS_PATH": "\(s.first):\(s.second)"])
        XCTAssertEqual(before.status, 0)
        XCTAssertEqual(after.status, 0)
        XCTAssertEqual(fromEnvironment.status, 0)
        XCTAssertEqual(before.stdout, after.stdout)
        XCTAssertEqual(before.stdout, fromEnvironment.stdout)
        // The option replaces the environment variable.
        let replaced = try run(["list", "--json", "--extensions-path", s.second], environment: ["REINDEX_EXTENSIONS_PATH": s.first])
        let bundles = try XCTUnwrap(try jsonObject(replaced.stdout)["bundles"] as? [[String: Any]])
        XCTAssertEqual(bundles.compactMap { $0["path"] as? String }, [s.shadowed])
    }

    func testListFindsBundlesInTheXDGDirectories() throws {
        let root = try temporaryRoot()
        let user = try XCTUnwrap(fixture).directory("xdg-data/reindex/extensions")
        let system = try XCTUnwrap(fixture).directory("xdg-system/reindex/extensions")
        let mine = try BundleFixture.bundle(in: user, "mine", manifest: BundleFixture.manifest("com.example.same"))
        let theirs = try BundleFixture.bundle(in: system, "theirs", manifest: BundleFixture.manifest("com.example.same"))
        let output = try run(["--json", "list"])
        XCTAssertEqual(output.status, 0, output.stderr)
        let document = try jsonObject(output.stdout)
        XCTAssertEqual((document["bundles"] as? [[String: Any]])?.compactMap { $0["path"] as? String }, [mine])
        XCTAssertEqual((document["problems"] as? [[String: Any]])?.compactMap { $0["path"] as? String }, [theirs])
        XCTAssertTrue(mine.hasPrefix(root))
    }

    func testListHumanOutput() throws {
        let s = try makeSearchPath()
        let output = try run(["list", "--extensions-path", "\(s.first):\(s.second)"])
        XCTAssertEqual(output.status, 0, "invalid bundles do not make list fail")
        XCTAssertTrue(output.stdout.contains("com.example.Good"), output.stdout)
        XCTAssertTrue(output.stdout.contains(s.good), output.stdout)
        XCTAssertTrue(output.stdout.contains(s.bad), output.stdout)
        XCTAssertTrue(output.stdout.contains("timeouts.idleSeconds"), output.stdout)
        XCTAssertTrue(output.stdout.contains("shadowed"), output.stdout)
    }

    func testListWithNothingToFind() throws {
        let output = try run(["--json", "list"])
        XCTAssertEqual(output.status, 0)
        let document = try jsonObject(output.stdout)
        XCTAssertEqual((document["bundles"] as? [Any])?.count, 0)
        XCTAssertEqual((document["problems"] as? [Any])?.count, 0)
    }

    // MARK: paths

    func testPathsPrintsTheSearchPathInOrder() throws {
        let root = try temporaryRoot()
        let existing = try XCTUnwrap(fixture).directory("ext-a")
        let missing = root + "/ext-b"
        let output = try run(["paths", "--extensions-path", "\(existing):\(missing)"])
        XCTAssertEqual(output.status, 0, output.stderr)
        let expectedOrder = [existing, missing, root + "/xdg-data/reindex/extensions", root + "/xdg-system/reindex/extensions"]
        var previous = output.stdout.startIndex
        for directory in expectedOrder {
            guard let range = output.stdout.range(of: directory + " ", range: previous..<output.stdout.endIndex) else {
                XCTFail("\(directory) missing or out of order in:\n\(output.stdout)")
                break
            }
            previous = range.upperBound
        }
        let lines = output.stdout.split(separator: "\n").map(String.init)
        XCTAssertTrue(lines.contains { $0.contains(existing + " ") && $0.contains("exists") }, output.stdout)
        XCTAssertTrue(lines.contains { $0.contains(missing + " ") && $0.contains("missing") }, output.stdout)
        XCTAssertTrue(output.stdout.contains(root + "/xdg-data/reindex/index.sqlite"), output.stdout)
        XCTAssertTrue(output.stdout.contains(root + "/xdg-state/reindex/logs"), output.stdout)
    }

    func testPathsJSON() throws {
        let root = try temporaryRoot()
        let output = try run(["--json", "paths", "--extensions-path", "/first/dir:/second/dir", "--index", root + "/idx/index.sqlite"])
        XCTAssertEqual(output.status, 0, output.stderr)
        let document = try jsonObject(output.stdout)
        let entries = try XCTUnwrap(document["searchPath"] as? [[String: Any]])
        XCTAssertEqual(entries.compactMap { $0["directory"] as? String },
                       ["/first/dir", "/second/dir", root + "/xdg-data/reindex/extensions", root + "/xdg-system/reindex/extensions"])
        XCTAssertEqual(entries.compactMap { $0["exists"] as? Bool }, [false, false, false, false])
        XCTAssertEqual(document["index"] as? String, root + "/idx/index.sqlite")
        XCTAssertEqual(document["logs"] as? String, root + "/idx/logs")
    }

    // MARK: validate

    func testValidateAValidBundle() throws {
        let s = try makeSearchPath()
        let output = try run(["validate", s.good])
        XCTAssertEqual(output.status, 0, output.stderr)
        XCTAssertEqual(output.stderr, "")
        XCTAssertTrue(output.stdout.contains("com.example.Good"), output.stdout)
        let json = try run(["--json", "validate", s.good])
        XCTAssertEqual(json.status, 0)
        let document = try jsonObject(json.stdout)
        XCTAssertEqual(document["valid"] as? Bool, true)
        XCTAssertEqual(document["bundleIdentifier"] as? String, "com.example.Good")
        XCTAssertEqual(document["executable"] as? String, s.good + "/bin/GoodIndexer")
    }

    func testValidateAnInvalidManifestExits65() throws {
        let s = try makeSearchPath()
        let output = try run(["validate", s.bad])
        XCTAssertEqual(output.status, 65)
        XCTAssertEqual(output.stdout, "")
        assertErrorLine(output, containing: "\(s.bad)/manifest.json: timeouts.idleSeconds: expected a positive number, got \"sixty\"")
    }

    func testValidateABundleWhoseExecutableCannotRunExits65() throws {
        let search = try XCTUnwrap(fixture).directory("validate")
        let bundle = try BundleFixture.bundle(in: search, "plain", manifest: BundleFixture.manifest("com.example.plain"), executableMode: 0o644)
        let output = try run(["validate", bundle])
        XCTAssertEqual(output.status, 65)
        assertErrorLine(output, containing: "is not executable")
    }

    func testValidateAMissingDirectoryExits66() throws {
        let missing = try temporaryRoot() + "/no/such/bundle"
        let output = try run(["validate", missing])
        XCTAssertEqual(output.status, 66)
        assertErrorLine(output, containing: missing)
    }

    func testValidateWithoutADirectoryIsAUsageError() throws {
        let output = try run(["validate"])
        XCTAssertEqual(output.status, 64)
        assertErrorLine(output, containing: "needs DIR")
    }

    // MARK: help, version and usage errors

    func testHelp() throws {
        for arguments in [["--help"], ["-h"]] {
            let output = try run(arguments)
            XCTAssertEqual(output.status, 0, "\(arguments)")
            XCTAssertEqual(output.stderr, "")
            XCTAssertTrue(output.stdout.contains("USAGE: reindex"), output.stdout)
            for command in ReindexCommands.all { XCTAssertTrue(output.stdout.contains(command.name), command.name) }
        }
    }

    func testCommandHelp() throws {
        for arguments in [["list", "--help"], ["--help", "list"], ["validate", "-h"]] {
            let output = try run(arguments)
            XCTAssertEqual(output.status, 0, "\(arguments)")
            let name = arguments.first { !$0.hasPrefix("-") } ?? ""
            XCTAssertTrue(output.stdout.contains("reindex \(name) — "), output.stdout)
            XCTAssertTrue(output.stdout.contains("--extensions-path"), output.stdout)
        }
    }

    func testVersion() throws {
        let output = try run(["--version"])
        XCTAssertEqual(output.status, 0)
        XCTAssertTrue(output.stdout.hasPrefix("reindex \(ReindexVersion.string)"), output.stdout)
        XCTAssertNotNil(output.stdout.range(of: #"\d+\.\d+\.\d+"#, options: .regularExpression), output.stdout)
    }

    func testUnknownCommandExits64() throws {
        let output = try run(["bogus"])
        XCTAssertEqual(output.status, 64)
        XCTAssertEqual(output.stdout, "")
        assertErrorLine(output, containing: "unknown command 'bogus'")
    }

    func testUsageErrorsExit64() throws {
        let cases: [([String], String)] = [
            (["list", "--bogus"], "--bogus"),
            (["list", "--index"], "--index needs a value"),
            (["--json=1", "list"], "--json takes no value"),
            (["validate", "a", "b"], "at most 1 argument"),
        ]
        for (arguments, needle) in cases {
            let output = try run(arguments)
            XCTAssertEqual(output.status, 64, "\(arguments)")
            XCTAssertEqual(output.stdout, "", "\(arguments)")
            assertErrorLine(output, containing: needle)
        }
    }

    func testNoCommandExits64() throws {
        let output = try run([])
        XCTAssertEqual(output.status, 64)
        XCTAssertTrue(output.stderr.contains("USAGE: reindex"), output.stderr)
        XCTAssertTrue(output.stderr.split(separator: "\n").contains { $0.hasPrefix("error: ") }, output.stderr)
    }
}
