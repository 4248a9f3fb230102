import Foundation
import ReindexTestSupport
import XCTest
import ReindexHost
import ReindexSystem
@testable import ReindexCommandLine
@testable import ReindexStore
import ReindexProtocol

/// `reindex validate --run`, the conformance suite: the examples pass every check, and each
/// fixture that breaks a rule fails the check of that rule — through the real command.
final class ConformanceTests: XCTestCase {
    private typealias T = TestSupport
    private var scratch = ""

    override func setUpWithError() throws {
        scratch = try T.makeScratchDirectory(for: self)
        signal(SIGPIPE, SIG_IGN)
    }

    /// The suite's verdict per check, from its JSON.
    private func validate(_ directory: String, _ extra: [String] = []) throws -> (status: Int32, checks: [String: String], output: String) {
        let result = try T.runReindex(["validate", directory, "--run", "--json"] + extra, scratch: scratch,
                                      environment: T.commandEnvironment(scratch: scratch, extra: ["TMPDIR": scratch]), timeout: 120)
        let document = try JSONParser.parse(text: result.stdout)
        var checks: [String: String] = [:]
        for check in document["checks"]?.arrayValue ?? [] {
            if let name = check["name"]?.stringValue { checks[name] = check["result"]?.stringValue }
        }
        return (result.status, checks, "\(result)")
    }

    private func fixture(_ executable: String, _ arguments: [String] = [], configure: (inout T.BundleSpec) -> Void = { _ in }) throws -> String {
        var spec = T.BundleSpec("com.example.conformance.\(executable.split(separator: ".")[0].replacingOccurrences(of: "_", with: "-"))", executable: executable)
        spec.arguments = arguments
        // A fixture that stops answering fails its check at a short idle timeout, not the default 60 s.
        spec.idleSeconds = 3
        configure(&spec)
        return try T.makeBundle(spec, in: "\(scratch)/extensions")
    }

    func testThePythonExamplesPassEveryCheck() throws {
        let root = URL(fileURLWithPath: T.fixturesDirectory).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().path
        for example in ["bookshelf-nosdk", "bookshelf"] {
            // As installed: the bundle copied, with the SDK vendored beside the script (the
            // sandbox lets an extension read its own bundle, not this checkout).
            let directory = "\(scratch)/installed/\(example)"
            try FileManager.default.createDirectory(atPath: "\(scratch)/installed", withIntermediateDirectories: true)
            try FileManager.default.copyItem(atPath: "\(root)/Examples/python/\(example)", toPath: directory)
            if example == "bookshelf" {
                try FileManager.default.copyItem(atPath: "\(root)/SDKs/python/reindex_extension", toPath: "\(directory)/reindex_extension")
            }
            let result = try validate(directory)
            XCTAssertEqual(result.status, 0, result.output)
            XCTAssertEqual(result.checks.count, BundleLint.rules.count, result.output)
            XCTAssertFalse(result.checks.values.contains("fail"), result.output)
        }
    }

    func testAWellBehavedFixturePassesAndBatchesAreResumed() throws {
        let result = try validate(try fixture("well_behaved.py", ["6", "2"]))
        XCTAssertEqual(result.status, 0, result.output)
        XCTAssertEqual(result.checks["reindexAll-resume"], "pass", result.output)
        XCTAssertEqual(result.checks["batch-commit"], "pass", result.output)
    }

    /// Each fixture breaks one rule; the suite names it.
    func testEachBrokenRuleFailsItsCheck() throws {
        let cases: [(String, [String], String, (inout T.BundleSpec) -> Void)] = [
            ("version_mismatch.py", [], "initialize", { _ in }),
            ("unknown_reply.py", [], "reindexAll", { _ in }),
            ("refuse.py", [], "reindexAll", { _ in }),
            ("method_typo.py", ["index/add"], "reindexAll", { _ in }),
            ("garbage_mid_request.py", [], "stdout-clean", { _ in }),
            ("client_state_size.py", ["251"], "batch-commit", { _ in }),
            ("ignore_sigterm.sh", [], "exit", { _ in }),
            ("fork_and_exit.sh", [], "no-leftover-processes", { _ in }),
            ("pause_after_puts.py", [], "cancel", { spec in spec.environment = ["FIXTURE_RELEASE": "/nonexistent/never"] }),
        ]
        for (executable, arguments, check, configure) in cases {
            let directory = try fixture(executable, arguments, configure: configure)
            let result = try validate(directory)
            XCTAssertEqual(result.status, 65, "\(executable): \(result.output)")
            XCTAssertEqual(result.checks[check], "fail", "\(executable) should fail \(check): \(result.output)")
        }
    }

    func testOneCheckByNameAndAnUnknownName() throws {
        let directory = try fixture("well_behaved.py")
        let one = try validate(directory, ["--check", "unknown-request"])
        XCTAssertEqual(one.status, 0, one.output)
        XCTAssertEqual(Array(one.checks.keys), ["unknown-request"], one.output)
        let bad = try T.runReindex(["validate", directory, "--run", "--check", "nonsense"], scratch: scratch)
        XCTAssertEqual(bad.status, 64, "\(bad)")
        XCTAssertTrue(bad.stderr.contains("no check named 'nonsense'"), "\(bad)")
    }

    func testAWrongReplyIdStopsTheCheckAtOnceInsteadOfWaitingOutTheIdleTimeout() throws {
        // idleSeconds 60 (the default): the violation decides the check, nothing waits for it.
        let directory = try fixture("unknown_reply.py") { $0.idleSeconds = 60 }
        let started = Date()
        let result = try validate(directory, ["--check", "reindexAll"])
        XCTAssertEqual(result.checks["reindexAll"], "fail", result.output)
        XCTAssertLessThan(Date().timeIntervalSince(started), 60, "the suite waited out the idle timeout")
    }
}

/// What an author sees for the commonest first mistakes on stdout.
final class AuthorErrorTests: XCTestCase {
    private typealias T = TestSupport

    func testAPrettyPrintedMessageIsNamedOnceAndALogLineIsQuotedWithAHint() throws {
        let scratch = try T.makeScratchDirectory(for: self)
        let pretty = try T.makeBundle(T.BundleSpec("com.example.pretty", executable: "pretty_printed.py"), in: "\(scratch)/extensions")
        let run = try T.runReindex(["--index", "\(scratch)/index.sqlite", "--extensions-path", "\(scratch)/extensions", "run", "com.example.pretty"], scratch: scratch)
        XCTAssertEqual(run.status, 76, "\(run)")
        XCTAssertTrue(run.stderr.contains("looks like part of a pretty-printed JSON message"), "\(run)")
        XCTAssertTrue(run.stderr.contains("each message on one line"), "\(run)")

        let lint = try T.runReindex(["validate", pretty, "--run", "--json", "--check", "stdout-clean"], scratch: scratch,
                                    environment: T.commandEnvironment(scratch: scratch, extra: ["TMPDIR": scratch]))
        let evidence = try JSONParser.parse(text: lint.stdout)["checks"]?.arrayValue?.first?["evidence"]?.stringValue ?? ""
        XCTAssertEqual(evidence.components(separatedBy: "pretty-printed").count - 1, 1, "named once per session, not per line: \(lint)")

        let garbage = try T.makeBundle(T.BundleSpec("com.example.garbage", executable: "garbage_mid_request.py"), in: "\(scratch)/extensions")
        _ = garbage
        let noisy = try T.runReindex(["--index", "\(scratch)/index.sqlite", "--extensions-path", "\(scratch)/extensions", "run", "com.example.garbage"], scratch: scratch)
        XCTAssertEqual(noisy.status, 76, "\(noisy)")
        XCTAssertTrue(noisy.stderr.contains("is not a protocol message: \""), "\(noisy)")
        XCTAssertTrue(noisy.stderr.contains("write logs and debug output to stderr"), "\(noisy)")
    }

    func testAJSONRPCBatchIsNamedAsABatchNotBlamedOnLogging() throws {
        let scratch = try T.makeScratchDirectory(for: self)
        try T.makeBundle(T.BundleSpec("com.example.batch", executable: "json_rpc_batch.py"), in: "\(scratch)/extensions")
        let run = try T.runReindex(["--index", "\(scratch)/index.sqlite", "--extensions-path", "\(scratch)/extensions", "run", "com.example.batch"], scratch: scratch)
        XCTAssertEqual(run.status, 76, "\(run)")
        XCTAssertTrue(run.stderr.contains("JSON-RPC batches are not part of protocol version 1; send one message per line"), "\(run)")
        XCTAssertFalse(run.stderr.contains("write logs and debug output to stderr"), "\(run)")
    }
}
