import Foundation
import ReindexHost
import ReindexSystem
@testable import ReindexCommandLine
@testable import ReindexStore
import ReindexProtocol
import ReindexTestSupport
import XCTest

/// The extension author's kit, through the built `reindex`: `new` projects that pass
/// `validate --run`, completion scripts and the manual page generated from the declarations,
/// and manifest errors an author can act on.
final class AuthoringTests: XCTestCase {
    /// The package root, found from this file.
    static let packageRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().path

    /// The test's environment plus whatever SDK locations the developer set (REINDEX_PYTHON_SDK
    /// lets the Python template be tested before SDKs/python is in this checkout).
    func environment(_ scratch: String) -> [String: String] {
        var extra: [String: String] = [:]
        for key in ["REINDEX_PYTHON_SDK", "REINDEX_TS_SDK", "REINDEX_SOURCE_ROOT"] {
            if let value = ProcessInfo.processInfo.environment[key] { extra[key] = value }
        }
        return TestSupport.commandEnvironment(scratch: scratch, extra: extra)
    }

    func reindex(_ arguments: [String], _ scratch: String, timeout: Double = 120) throws -> TestSupport.CommandResult {
        try TestSupport.runReindex(arguments, scratch: scratch, environment: environment(scratch), timeout: timeout)
    }

    /// Where a program is on PATH, or nil.
    static func which(_ program: String) -> String? {
        for directory in (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin").split(separator: ":") {
            let path = "\(directory)/\(program)"
            if FileManager.default.isExecutableFile(atPath: path) { return path }
        }
        return nil
    }

    /// Runs a program to completion; returns its status and combined output.
    static func run(_ executable: String, _ arguments: [String], in directory: String) throws -> (Int32, String) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        process.currentDirectoryURL = URL(fileURLWithPath: directory)
        let output = "\(directory)/.run-\(UUID().uuidString).log"
        _ = FileManager.default.createFile(atPath: output, contents: nil)
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: output))
        process.standardOutput = handle
        process.standardError = handle
        process.standardInput = FileHandle.nullDevice
        try process.run()
        process.waitUntilExit()
        try handle.close()
        defer { try? FileManager.default.removeItem(atPath: output) }
        return (process.terminationStatus, TestSupport.read(output) ?? "")
    }

    // MARK: reindex new

    /// Writes a project with `reindex new`, then runs `reindex validate DIR --run` on it unchanged.
    func newThenValidate(_ language: String, name: String, scratch: String) throws -> String {
        let directory = "\(scratch)/projects/\(name)"
        let made = try reindex(["new", language, name, "--output", directory], scratch)
        XCTAssertEqual(made.status, 0, "\(made)")
        return directory
    }

    func assertConformant(_ directory: String, name: String, _ scratch: String, file: StaticString = #filePath, line: UInt = #line) throws {
        let validated = try reindex(["validate", directory, "--run"], scratch)
        XCTAssertEqual(validated.status, 0, "\(validated)", file: file, line: line)
        XCTAssertTrue(validated.stdout.contains("extension \"\(name)\" 1.0.0"), "\(validated)", file: file, line: line)
        XCTAssertTrue(validated.stdout.contains("acknowledged: put 5, deleted 0"), "\(validated)", file: file, line: line)
        XCTAssertTrue(validated.stdout.contains("every check passed"), "\(validated)", file: file, line: line)
    }

    /// Builds a `reindex new typescript` project as its package.json's build script does (links
    /// the SDK, then tsc), without npm. Skips without node or tsc.
    func buildTypeScriptProject(_ directory: String, file: StaticString = #filePath, line: UInt = #line) throws {
        guard let node = Self.which("node") else { throw XCTSkip("node is not installed") }
        guard let tsc = Self.which("tsc") else { throw XCTSkip("tsc is not installed (apt-get install node-typescript)") }
        let (linked, linkLog) = try Self.run(node, ["scripts/link-sdk.mjs"], in: directory)
        XCTAssertEqual(linked, 0, linkLog, file: file, line: line)
        let (built, buildLog) = try Self.run(tsc, ["-p", "."], in: directory)
        XCTAssertEqual(built, 0, buildLog, file: file, line: line)
    }

    func testNewTypeScriptProjectBuildsPassesItsTestAndValidateRun() throws {
        guard let node = Self.which("node") else { throw XCTSkip("node is not installed") }
        let scratch = try TestSupport.makeScratchDirectory(for: self)
        let directory = try newThenValidate("typescript", name: "Notes", scratch: scratch)
        let manifest = try JSONParser.parse(text: TestSupport.read("\(directory)/manifest.json") ?? "")
        XCTAssertEqual(manifest["bundleIdentifier"]?.stringValue, "com.example.notes.indexer")
        XCTAssertEqual(manifest["executable"]?.stringValue, "notes.mjs")
        XCTAssertTrue(FileManager.default.isExecutableFile(atPath: "\(directory)/notes.mjs"), "the launcher is executable as written")
        XCTAssertNotNil(manifest["environment"]?["REINDEX_TS_SDK"]?.stringValue, "the TypeScript SDK of this checkout is recorded")
        for file in ["src/Notes.ts", "src/main.ts", "test/Notes.test.mjs", "tsconfig.json", "package.json", "README.md"] {
            XCTAssertNotNil(TestSupport.read("\(directory)/\(file)"), file)
        }
        // Unbuilt, the launcher says what to do.
        let (unbuilt, unbuiltLog) = try Self.run("\(directory)/notes.mjs", [], in: directory)
        XCTAssertEqual(unbuilt, 1, unbuiltLog)
        XCTAssertTrue(unbuiltLog.contains("build/main.js is missing: run `npm run build`"), unbuiltLog)

        try buildTypeScriptProject(directory)
        let (tested, testLog) = try Self.run(node, ["--test"], in: directory)
        XCTAssertEqual(tested, 0, testLog)
        XCTAssertTrue(testLog.contains("# pass 4"), testLog)
        try assertConformant(directory, name: "Notes", scratch)
    }

    func testNewPythonProjectPassesValidateRun() throws {
        let scratch = try TestSupport.makeScratchDirectory(for: self)
        guard SourceTree.pythonSDK(environment: environment(scratch)) != nil else {
            throw XCTSkip("the Python SDK is not in this checkout (SDKs/python) and REINDEX_PYTHON_SDK is not set")
        }
        let directory = try newThenValidate("python", name: "Books", scratch: scratch)
        XCTAssertTrue(FileManager.default.isExecutableFile(atPath: "\(directory)/books.py"))
        try assertConformant(directory, name: "Books", scratch)
        // The unit test it ships passes: the handlers on a RecordingIndex, without the host.
        guard let python = Self.which("python3") else { throw XCTSkip("python3 is not on PATH") }
        let (status, log) = try Self.run(python, ["-m", "unittest"], in: directory)
        XCTAssertEqual(status, 0, log)
        XCTAssertTrue(log.contains("Ran 3 tests") && log.contains("\nOK"), log)
    }

    /// The batch loop really resumes: a client state of 4 makes the next reindexAll put only record 5.
    func testNewProjectsResumeFromTheirClientState() throws {
        guard Self.which("node") != nil else { throw XCTSkip("node is not installed") }
        let scratch = try TestSupport.makeScratchDirectory(for: self)
        let directory = try newThenValidate("typescript", name: "Resumer", scratch: scratch)
        try buildTypeScriptProject(directory)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "\(directory)/resumer.mjs")
        process.currentDirectoryURL = URL(fileURLWithPath: directory)
        var env = environment(scratch)
        let manifest = try JSONParser.parse(text: TestSupport.read("\(directory)/manifest.json") ?? "")
        env["REINDEX_TS_SDK"] = manifest["environment"]?["REINDEX_TS_SDK"]?.stringValue
        process.environment = env
        let input = Pipe(), output = Pipe()
        process.standardInput = input
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        try process.run()
        let lines = [
            #"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersions":[1],"host":{"name":"t","version":"0"},"bundleIdentifier":"com.example.resumer.indexer","debug":false}}"#,
            #"{"jsonrpc":"2.0","id":2,"method":"reindexAll","params":{"reason":"retry","clientState":"NA=="}}"#,
        ]
        input.fileHandleForWriting.write(Data((lines.joined(separator: "\n") + "\n").utf8))
        var received = ""
        let deadline = Date().addingTimeInterval(30)
        while !received.contains(#""id":2"#) && Date() < deadline {
            let data = output.fileHandleForReading.availableData
            if data.isEmpty { break }
            received += String(decoding: data, as: UTF8.self)
        }
        try input.fileHandleForWriting.close()
        process.waitUntilExit()
        let puts = received.split(separator: "\n").filter { $0.contains(#""method":"index/put""#) }
        XCTAssertEqual(puts.count, 1, received)
        XCTAssertTrue(puts.first?.contains(#""uniqueIdentifier":"record.5""#) ?? false, received)
        XCTAssertFalse(received.contains("record.1"), received)
    }

    func testNewSwiftProjectBuildsAndPassesValidateRun() throws {
        guard let swift = Self.which("swift") else { throw XCTSkip("swift is not on PATH") }
        let scratch = try TestSupport.makeScratchDirectory(for: self)
        let directory = try newThenValidate("swift", name: "Shelf", scratch: scratch)
        let package = TestSupport.read("\(directory)/Package.swift") ?? ""
        XCTAssertTrue(package.contains(#".package(name: "ReindexHost", path: "\#(Self.packageRoot)")"#), package)
        XCTAssertTrue(package.contains(#".product(name: "ReindexExtension", package: "ReindexHost")"#), package)
        // About 20 s on a warm machine: the dependency builds only ReindexExtension and what it needs.
        let (status, log) = try Self.run(swift, ["build"], in: directory)
        XCTAssertEqual(status, 0, log)
        XCTAssertFalse(log.contains("warning:"), log)
        try assertConformant(directory, name: "Shelf", scratch)
        // The unit test it ships passes: the handlers on a RecordingIndex, without the host.
        let (tested, testLog) = try Self.run(swift, ["test"], in: directory)
        XCTAssertEqual(tested, 0, testLog)
        XCTAssertFalse(testLog.contains("warning:"), testLog)
        XCTAssertTrue(testLog.contains("Executed 3 tests, with 0 failures"), testLog)
    }

    func testNewDefaultsAndRefusals() throws {
        let scratch = try TestSupport.makeScratchDirectory(for: self)
        // Default output ./NAME (the command runs in scratch) and default identifier.
        let made = try reindex(["new", "python", "My_Notes", "--json"], scratch)
        XCTAssertEqual(made.status, 0, "\(made)")
        let json = try JSONParser.parse(text: made.stdout)
        XCTAssertEqual(json["directory"]?.stringValue, "\(scratch)/My_Notes")
        XCTAssertEqual(json["bundleIdentifier"]?.stringValue, "com.example.my-notes.indexer")
        XCTAssertTrue(FileManager.default.fileExists(atPath: "\(scratch)/My_Notes/my_notes.py"))

        let custom = try reindex(["new", "typescript", "Tasks", "--id", "org.acme.tasks", "--output", "\(scratch)/t"], scratch)
        XCTAssertEqual(custom.status, 0, "\(custom)")
        XCTAssertTrue(TestSupport.read("\(scratch)/t/manifest.json")?.contains(#""bundleIdentifier": "org.acme.tasks""#) ?? false)

        // Refuses to overwrite; the files stay as they were.
        let before = TestSupport.read("\(scratch)/My_Notes/manifest.json")
        let again = try reindex(["new", "python", "My_Notes"], scratch)
        XCTAssertEqual(again.status, 73, "\(again)")
        XCTAssertTrue(again.stderr.hasPrefix("error: \(scratch)/My_Notes is not empty"), again.stderr)
        XCTAssertEqual(TestSupport.read("\(scratch)/My_Notes/manifest.json"), before)
        // An existing empty directory is fine.
        try FileManager.default.createDirectory(atPath: "\(scratch)/empty", withIntermediateDirectories: true)
        XCTAssertEqual(try reindex(["new", "swift", "Empty", "--output", "\(scratch)/empty"], scratch).status, 0)

        for (arguments, fragment) in [
            (["new", "python", "my-notes"], "NAME 'my-notes' must start with a letter"),
            (["new", "python", "9lives"], "NAME '9lives' must start with a letter"),
            (["new", "cobol", "Notes"], "unknown language 'cobol'"),
            (["new", "python", "Notes", "--id", "notes"], "--id 'notes' is not a bundle identifier"),
            (["new", "python"], "'new' needs NAME"),
        ] {
            let refused = try reindex(arguments, scratch)
            XCTAssertEqual(refused.status, 64, "\(arguments): \(refused)")
            XCTAssertTrue(refused.stderr.hasPrefix("error: "), refused.stderr)
            XCTAssertTrue(refused.stderr.contains(fragment), "\(arguments): \(refused.stderr)")
            XCTAssertEqual(refused.stderr.split(separator: "\n").count, 1, refused.stderr)
        }
    }

    // MARK: Completions

    func testCompletionScriptsAreValidAndNameEveryCommandAndOption() throws {
        let scratch = try TestSupport.makeScratchDirectory(for: self)
        let parser = ReindexCommands.parser
        var skipped: [String] = []
        for shell in ["bash", "zsh", "fish"] {
            let result = try reindex(["completions", shell], scratch)
            XCTAssertEqual(result.status, 0, "\(result)")
            let script = result.stdout
            for command in parser.commands {
                XCTAssertTrue(script.contains(command.name), "\(shell): no command \(command.name)")
                for option in command.options {
                    let mentioned = shell == "fish" ? script.contains("-l \(option.name) ") : script.contains("--\(option.name)")
                    XCTAssertTrue(mentioned, "\(shell): no option --\(option.name) of \(command.name)")
                }
            }
            for option in parser.globalOptions {
                XCTAssertTrue(shell == "fish" ? script.contains("-l \(option.name) ") : script.contains("--\(option.name)"), "\(shell): no --\(option.name)")
            }
            for reason in ReindexReason.known { XCTAssertTrue(script.contains(reason.rawValue), "\(shell): no --reason value \(reason)") }
            XCTAssertTrue(script.contains("list --json"), "\(shell): bundle identifiers are not asked of reindex list --json")

            let path = "\(scratch)/completion.\(shell)"
            try TestSupport.write(script, to: path)
            guard let program = Self.which(shell) else { skipped.append(shell); continue }
            let (status, output) = try Self.run(program, ["-n", path], in: scratch)
            XCTAssertEqual(status, 0, "\(shell) -n: \(output)")
        }
        XCTAssertEqual(try reindex(["completions", "tcsh"], scratch).status, 64)
        if !skipped.isEmpty { print("AuthoringTests: not installed, syntax not checked: \(skipped.joined(separator: ", "))") }
    }

    /// The bash script completes bundle identifiers from `reindex list --json` of the search path on the line.
    func testBashCompletesBundleIdentifiersAndReasons() throws {
        guard let bash = Self.which("bash") else { throw XCTSkip("bash is not installed") }
        let scratch = try TestSupport.makeScratchDirectory(for: self)
        try TestSupport.makeBundle(.init("com.example.completion-probe", executable: "well_behaved.py"), in: "\(scratch)/extensions")
        let script = try reindex(["completions", "bash"], scratch).stdout
        try TestSupport.write(script, to: "\(scratch)/reindex.bash")
        let probe = """
            source "\(scratch)/reindex.bash"
            export PATH="\(FileManager.default.currentDirectoryPath):$PATH"
            COMP_WORDS=("\(TestSupport.reindexBinary)" --extensions-path "\(scratch)/extensions" run com.example.comp); COMP_CWORD=4
            _reindex; echo "ids: ${COMPREPLY[*]}"
            COMP_WORDS=("\(TestSupport.reindexBinary)" run x --reason in); COMP_CWORD=4
            _reindex; echo "reasons: ${COMPREPLY[*]}"
            COMP_WORDS=("\(TestSupport.reindexBinary)" ser); COMP_CWORD=1
            _reindex; echo "commands: ${COMPREPLY[*]}"
            """
        try TestSupport.write(probe, to: "\(scratch)/probe.sh")
        let (status, output) = try Self.run(bash, ["\(scratch)/probe.sh"], in: scratch)
        XCTAssertEqual(status, 0, output)
        XCTAssertTrue(output.contains("ids: com.example.completion-probe"), output)
        XCTAssertTrue(output.contains("reasons: indexLost"), output)
        XCTAssertTrue(output.contains("commands: serve"), output)
    }

    // MARK: The manual page

    func testCommittedManualPageIsTheGeneratedOne() throws {
        let scratch = try TestSupport.makeScratchDirectory(for: self)
        let generated = try reindex(["help", "--man"], scratch)
        XCTAssertEqual(generated.status, 0, "\(generated)")
        let committed = TestSupport.read("\(Self.packageRoot)/docs/reindex.1")
        XCTAssertEqual(committed, generated.stdout, "docs/reindex.1 is stale: regenerate it with .build/debug/reindex help --man > docs/reindex.1")
        for command in ReindexCommands.all { XCTAssertTrue(generated.stdout.contains(".SS \(command.name)\n"), command.name) }
        XCTAssertTrue(generated.stdout.allSatisfy(\.isASCII), "roff for groff without preconv")

        guard let groff = Self.which("groff") else { throw XCTSkip("groff is not installed: the page was not rendered") }
        try TestSupport.write(generated.stdout, to: "\(scratch)/reindex.1")
        let (status, output) = try Self.run(groff, ["-man", "-Tutf8", "-ww", "-z", "\(scratch)/reindex.1"], in: scratch)
        XCTAssertEqual(status, 0, output)
        XCTAssertEqual(output, "", "groff warnings: \(output)")
    }

    // MARK: Manifest errors

    func testManifestSyntaxErrorNamesLineAndColumn() throws {
        let scratch = try TestSupport.makeScratchDirectory(for: self)
        let bundle = "\(scratch)/extensions/broken"
        try FileManager.default.createDirectory(atPath: bundle, withIntermediateDirectories: true)
        try TestSupport.write("{\n  \"manifestVersion\": 1,\n  \"bundleIdentifier\": \"com.example.broken\"\n  \"executable\": \"x\"\n}\n", to: "\(bundle)/manifest.json")
        let result = try reindex(["validate", bundle], scratch)
        XCTAssertEqual(result.status, 65, "\(result)")
        XCTAssertEqual(result.stderr, "error: \(bundle)/manifest.json: not valid JSON: expected ',' or '}' in an object at line 4, column 3 (byte 71)\n")
    }

    func testMisspeltManifestKeysWarnWithTheSuggestion() throws {
        let scratch = try TestSupport.makeScratchDirectory(for: self)
        let bundle = try TestSupport.makeBundle(.init("com.example.typo", executable: "well_behaved.py"), in: "\(scratch)/extensions")
        guard case .object(var members) = try JSONParser.parse(text: TestSupport.read("\(bundle)/manifest.json") ?? "") else { return XCTFail() }
        members.append(("timeout", ["requestSeconds": 5]))
        members.append(("enviroment", ["A": "b"]))
        members.append(("x-vendor-notes", "far from every known key: silent"))
        try TestSupport.write(JSONWriter.string(.object(members)), to: "\(bundle)/manifest.json")

        let validated = try reindex(["validate", bundle], scratch)
        XCTAssertEqual(validated.status, 0, "\(validated)")
        XCTAssertTrue(validated.stderr.contains("warning: \(bundle)/manifest.json: unknown key 'timeout' is ignored; did you mean 'timeouts'?"), validated.stderr)
        XCTAssertTrue(validated.stderr.contains("unknown key 'enviroment' is ignored; did you mean 'environment'?"), validated.stderr)
        XCTAssertFalse(validated.stderr.contains("x-vendor-notes"), validated.stderr)

        let listed = try reindex(["--extensions-path", "\(scratch)/extensions", "list"], scratch)
        XCTAssertTrue(listed.stdout.contains("warning: \(bundle)/manifest.json: unknown key 'timeout'"), "\(listed)")
        let json = try JSONParser.parse(text: try reindex(["--extensions-path", "\(scratch)/extensions", "list", "--json"], scratch).stdout)
        XCTAssertEqual(json["bundles"]?.arrayValue?.first?["warnings"]?.arrayValue?.count, 2, "\(json)")

        // When a misspelling makes the manifest invalid, the error says both.
        members.removeAll { $0.0 == "executable" }
        members.append(("executible", "well_behaved.py"))
        try TestSupport.write(JSONWriter.string(.object(members)), to: "\(bundle)/manifest.json")
        let invalid = try reindex(["validate", bundle], scratch)
        XCTAssertEqual(invalid.status, 65)
        XCTAssertTrue(invalid.stderr.contains("executable: is required") && invalid.stderr.contains("did you mean 'executable'?"), invalid.stderr)
    }

    func testAScriptWhoseInterpreterIsMissingIsValidButWarnedAbout() throws {
        let scratch = try TestSupport.makeScratchDirectory(for: self)
        let bundle = try TestSupport.makeBundle(.init("com.example.nointerpreter", executable: "bad_interpreter.sh"), in: "\(scratch)/extensions")
        let validated = try reindex(["validate", bundle], scratch)
        XCTAssertEqual(validated.status, 0, "\(validated)")
        XCTAssertTrue(validated.stderr.contains("warning: com.example.nointerpreter: the executable's #! line names "
                                                + "/nonexistent/interpreter/for/reindex/tests, which does not exist here: the extension cannot start"),
                      validated.stderr)
        let fine = try TestSupport.makeBundle(.init("com.example.fine", executable: "well_behaved.py"), in: "\(scratch)/extensions")
        XCTAssertFalse(try reindex(["validate", fine], scratch).stderr.contains("#! line"))
        // `list` and `status` say it too, of that bundle only.
        let listed = try reindex(["--extensions-path", "\(scratch)/extensions", "list", "--json"], scratch)
        let bundles = try XCTUnwrap(try JSONParser.parse(text: listed.stdout)["bundles"]?.arrayValue, "\(listed)")
        for entry in bundles {
            let warnings = entry["warnings"]?.arrayValue?.compactMap(\.stringValue) ?? []
            let expected = entry["bundleIdentifier"]?.stringValue == "com.example.nointerpreter" ? 1 : 0
            XCTAssertEqual(warnings.filter { $0.contains("#! line names /nonexistent/interpreter/for/reindex/tests") }.count, expected, "\(entry)")
        }
        let index = ["--index", "\(scratch)/index.sqlite", "--extensions-path", "\(scratch)/extensions"]
        XCTAssertEqual(try reindex(index + ["run", "com.example.fine"], scratch).status, 0)
        let status = try reindex(index + ["status"], scratch)
        XCTAssertTrue(status.stdout.contains("warning: the executable's #! line names /nonexistent/interpreter/for/reindex/tests"), "\(status)")
    }

    func testExtensionsPathNamingABundleSaysSoWithAHint() throws {
        let scratch = try TestSupport.makeScratchDirectory(for: self)
        let bundle = try TestSupport.makeBundle(.init("com.example.self", executable: "well_behaved.py"), in: "\(scratch)/extensions")
        let listed = try reindex(["--extensions-path", bundle, "list"], scratch)
        XCTAssertEqual(listed.status, 0)
        XCTAssertTrue(listed.stdout.contains("\(bundle) is on the search path but is itself a bundle (it holds manifest.json)"), "\(listed)")
        XCTAssertTrue(listed.stdout.contains("use --extensions-path \(scratch)/extensions"), "\(listed)")
        let run = try reindex(["--extensions-path", bundle, "--index", "\(scratch)/index.sqlite", "run", "com.example.self"], scratch)
        XCTAssertEqual(run.stderr.split(separator: "\n").first.map(String.init),
                       "error: com.example.self: bundle is not usable: \(bundle) is on the search path but is itself a bundle (it holds manifest.json); the search path (--extensions-path, REINDEX_EXTENSIONS_PATH) names directories that contain bundles: use --extensions-path \(scratch)/extensions")
    }
}
