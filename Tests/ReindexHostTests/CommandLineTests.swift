import Foundation
import XCTest
import ReindexHost
import ReindexSystem
@testable import ReindexCommandLine
@testable import ReindexStore
import ReindexProtocol

/// The usage error `body` throws, or nil (and a failure) when it does not throw one.
private func usageError(_ body: () throws -> ParsedArguments, file: StaticString = #filePath, line: UInt = #line) -> ReindexError? {
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

final class ArgumentParserTests: XCTestCase {
    private let parser = ReindexCommands.parser

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
        commands: [
            CommandSpec("go", summary: "go somewhere",
                        arguments: [ArgumentSpec("TARGET", help: "where"), ArgumentSpec("EXTRA", help: "more", optional: true)],
                        options: [
                            OptionSpec("all", help: "everything", exclusiveGroup: "what"),
                            OptionSpec("ids", value: .required("ID[,ID…]"), help: "some", exclusiveGroup: "what"),
                            OptionSpec("ids-from", value: .required("FILE"), help: "from a file", exclusiveGroup: "what"),
                            OptionSpec("wait", value: .optional("SECONDS"), help: "wait"),
                            OptionSpec("verbose", short: "v", help: "talk"),
                        ]),
            CommandSpec("stop", summary: "stop"),
        ])

    // MARK: Global options before and after the command

    func testGlobalOptionsBeforeAndAfterTheCommand() throws {
        for arguments in [["--json", "list"], ["list", "--json"]] {
            let parsed = try parser.parse(arguments)
            XCTAssertEqual(parsed.command, "list", "\(arguments)")
            XCTAssertTrue(parsed.flag("json"), "\(arguments)")
            XCTAssertFalse(parsed.flag("help"))
            XCTAssertEqual(parsed.positional, [])
        }
        let before = try parser.parse(["--index", "/tmp/i.sqlite", "--extensions-path", "/a:/b", "list"])
        let after = try parser.parse(["list", "--index", "/tmp/i.sqlite", "--extensions-path", "/a:/b"])
        for parsed in [before, after] {
            XCTAssertEqual(parsed.value("index"), "/tmp/i.sqlite")
            XCTAssertEqual(parsed.value("extensions-path"), "/a:/b")
        }
        let mixed = try parser.parse(["--json", "validate", "--index", "/i", "some/dir", "--run"])
        XCTAssertEqual(mixed.command, "validate")
        XCTAssertEqual(mixed.positional, ["some/dir"])
        XCTAssertTrue(mixed.flag("json"))
        XCTAssertTrue(mixed.flag("run"))
        XCTAssertEqual(mixed.value("index"), "/i")
    }

    func testOptionEqualsValue() throws {
        let parsed = try parser.parse(["--index=/x/y.sqlite", "list", "--extensions-path=/a=b:/c"])
        XCTAssertEqual(parsed.value("index"), "/x/y.sqlite")
        XCTAssertEqual(parsed.value("extensions-path"), "/a=b:/c", "only the first '=' separates the value")
        XCTAssertEqual(try parser.parse(["--index=", "list"]).value("index"), "", "an empty inline value is a value")
    }

    func testValuesMayLookLikeOptions() throws {
        XCTAssertEqual(try parser.parse(["--index", "--json", "list"]).value("index"), "--json")
        XCTAssertFalse(try parser.parse(["--index", "--json", "list"]).flag("json"))
    }

    func testRepeatedOptionsKeepEveryValueAndTheLastWins() throws {
        let parsed = try parser.parse(["--index", "/one", "list", "--index=/two"])
        XCTAssertEqual(parsed.options["index"], ["/one", "/two"])
        XCTAssertEqual(parsed.value("index"), "/two")
        XCTAssertEqual(try parser.parse(["--json", "list", "--json"]).options["json"], ["", ""])
    }

    func testShortOptions() throws {
        XCTAssertTrue(try parser.parse(["-h"]).flag("help"))
        XCTAssertTrue(try parser.parse(["list", "-h"]).flag("help"))
        XCTAssertTrue(try custom.parse(["go", "-v", "x"]).flag("verbose"))
        XCTAssertEqual(usageError { try custom.parse(["-v", "go", "x"]) }?.message, "unknown option '-v'", "a command's short option before the command")
        XCTAssertEqual(usageError { try parser.parse(["-x", "list"]) }?.message, "unknown option '-x'")
        XCTAssertEqual(usageError { try parser.parse(["list", "-hx"]) }?.message, "unknown option '-hx'")
    }

    func testDoubleDashEndsOptions() throws {
        let parsed = try parser.parse(["validate", "--", "--not-an-option"])
        XCTAssertEqual(parsed.positional, ["--not-an-option"])
        XCTAssertEqual(try parser.parse(["validate", "-"]).positional, ["-"])
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
        XCTAssertEqual(try custom.parse(["go", "a"]).positional, ["a"])
        XCTAssertEqual(try custom.parse(["go", "a", "b"]).positional, ["a", "b"])
        XCTAssertNotNil(usageError { try custom.parse(["go", "a", "b", "c"]) })
    }

    func testHelpAndVersionSkipValidation() throws {
        XCTAssertTrue(try parser.parse(["validate", "--help"]).flag("help"))
        XCTAssertTrue(try parser.parse(["--version"]).flag("version"))
        XCTAssertNil(try parser.parse(["--version"]).command)
        XCTAssertTrue(try custom.parse(["go", "--all", "--ids", "x", "--help"]).flag("help"))
    }

    func testNoArgumentsParseToNoCommand() throws {
        let parsed = try parser.parse([])
        XCTAssertNil(parsed.command)
        XCTAssertTrue(parsed.options.isEmpty)
    }

    // MARK: Exclusive groups and optional values

    func testExclusiveGroups() throws {
        XCTAssertEqual(usageError { try custom.parse(["go", "x", "--all", "--ids", "a,b"]) }?.message, "--all and --ids cannot be used together")
        XCTAssertEqual(usageError { try custom.parse(["go", "x", "--ids-from", "f", "--ids=a"]) }?.message, "--ids and --ids-from cannot be used together")
        XCTAssertNotNil(usageError { try custom.parse(["go", "--ids-from=f", "x", "--all"]) })
        // One member of a group, repeated or alone, is fine, as are options outside the group.
        XCTAssertEqual(try custom.parse(["go", "x", "--ids", "a", "--ids", "b", "--verbose"]).options["ids"], ["a", "b"])
        XCTAssertTrue(try custom.parse(["go", "x", "--all", "--wait"]).flag("all"))
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
        XCTAssertEqual(try custom.parse(["go", "x", "--wait"]).options["wait"], [""])
        XCTAssertEqual(try custom.parse(["go", "x", "--wait=30"]).value("wait"), "30")
        // Without '=' the next word is not taken as the value.
        let separate = try custom.parse(["go", "--wait", "x"])
        XCTAssertEqual(separate.value("wait"), "")
        XCTAssertEqual(separate.positional, ["x"])
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
