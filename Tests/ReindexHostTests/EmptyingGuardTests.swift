import Foundation
import ReindexTestSupport
import XCTest
import ReindexProtocol

/// A `reindexAll` that would remove every item of a bundle without putting any — an early
/// acknowledgement, every item rejected — is not published, fails with the contract's exit code
/// and is not retried; the extension says an empty data set is on purpose with `allowEmpty`.
/// Through the real command, with real extensions.
final class EmptyingGuardTests: XCTestCase {
    private typealias T = TestSupport
    private var scratch = ""
    private let bundle = "com.example.emptying"

    override func setUpWithError() throws {
        scratch = try T.makeScratchDirectory(for: self)
        signal(SIGPIPE, SIG_IGN)
    }

    /// Writes (or rewrites) the bundle so its reindexAll does `mode`.
    private func install(_ mode: String, count: Int = 3) throws {
        var spec = T.BundleSpec(bundle, executable: "early_ack.py")
        spec.arguments = [mode, String(count)]
        _ = try T.makeBundle(spec, in: "\(scratch)/extensions")
    }

    private func reindex(_ arguments: [String]) throws -> T.CommandResult {
        try T.runReindex(["--extensions-path", "\(scratch)/extensions", "--index", "\(scratch)/index.sqlite"] + arguments, scratch: scratch)
    }

    private func liveIdentifiers() throws -> [String] {
        let items = try reindex(["items", bundle, "--json"])
        XCTAssertEqual(items.status, 0, "\(items)")
        return try JSONParser.parse(text: items.stdout)["results"]?.arrayValue?.compactMap { $0["uniqueIdentifier"]?.stringValue }.sorted() ?? []
    }

    private func requestCounts() throws -> (pending: Int, failed: Int) {
        let status = try reindex(["status", "--json"])
        let entry = try JSONParser.parse(text: status.stdout)["bundles"]?.arrayValue?.first { $0["bundleIdentifier"]?.stringValue == bundle }
        return (Int(entry?["pending"]?.integerValue ?? -1), Int(entry?["failed"]?.integerValue ?? -1))
    }

    func testAnAcknowledgementBeforeAnyPutKeepsTheBundlesItems() throws {
        try install("full")
        XCTAssertEqual(try reindex(["run", bundle]).status, 0)
        XCTAssertEqual(try liveIdentifiers(), ["item.1", "item.2", "item.3"])

        // The handler starts a thread and returns: its acknowledgement comes before any put.
        try install("thread")
        let run = try reindex(["run", bundle])
        XCTAssertEqual(run.status, 76, "\(run)")
        XCTAssertTrue(run.stderr.contains("error: \(bundle): the reindexAll was acknowledged without putting any item, which would remove all 3 items"), "\(run)")
        XCTAssertTrue(run.stderr.contains("allowEmpty"), "the error says how to proceed: \(run)")
        XCTAssertTrue(run.stderr.contains("not retried"), "\(run)")
        XCTAssertEqual(try liveIdentifiers(), ["item.1", "item.2", "item.3"], "the old items stay visible")
        // Not retried by serve in a loop: failed for good, nothing pending.
        let counts = try requestCounts()
        XCTAssertEqual(counts.pending, 0)
        XCTAssertEqual(counts.failed, 1)

        let json = try reindex(["run", bundle, "--json"])
        XCTAssertEqual(json.status, 76)
        let document = try JSONParser.parse(text: json.stdout)
        XCTAssertEqual(document["outcome"]?.stringValue, "failed")
        XCTAssertEqual(document["failure"]?.stringValue, "emptyReplacement")
    }

    func testARunWhoseItemsAreAllRejectedPublishesNothingAndAccountsForEach() throws {
        try install("full")
        XCTAssertEqual(try reindex(["run", bundle]).status, 0)
        try install("invalid", count: 15)
        let run = try reindex(["run", bundle])
        XCTAssertEqual(run.status, 65, "\(run)")
        XCTAssertTrue(run.stderr.contains("every item of the reindexAll was rejected (15)"), "\(run)")
        XCTAssertTrue(run.stderr.contains("5 more item(s) rejected"), "the human output says where the rest are: \(run)")
        XCTAssertTrue(run.stderr.contains("rejections"), "\(run)")
        XCTAssertEqual(try liveIdentifiers(), ["item.1", "item.2", "item.3"])

        let json = try reindex(["run", bundle, "--json"])
        XCTAssertEqual(json.status, 65)
        let document = try JSONParser.parse(text: json.stdout)
        let rejections = document["rejections"]?.arrayValue ?? []
        XCTAssertEqual(rejections.count, 15, json.stdout)
        XCTAssertEqual(Set(rejections.compactMap { $0["uniqueIdentifier"]?.stringValue }), Set((1...15).map { "bad.\($0)" }))
        XCTAssertTrue(rejections.allSatisfy { ($0["reason"]?.stringValue ?? "").contains("title") }, json.stdout)
        XCTAssertEqual(document["rejectionsNotListed"]?.integerValue, 0)

        // The bundle's log has every one.
        let logs = "\(scratch)/logs/\(bundle).log"
        let log = (try? String(contentsOfFile: logs, encoding: .utf8)) ?? (try? String(contentsOfFile: "\(scratch)/\(bundle).log", encoding: .utf8)) ?? ""
        for n in 1...15 { XCTAssertTrue(log.contains("(bad.\(n)):"), "the log names bad.\(n)") }
    }

    func testAllowEmptyEmptiesTheBundleOnPurpose() throws {
        try install("full")
        XCTAssertEqual(try reindex(["run", bundle]).status, 0)
        try install("empty")
        let run = try reindex(["run", bundle])
        XCTAssertEqual(run.status, 0, "\(run)")
        XCTAssertEqual(try liveIdentifiers(), [])
    }

    func testNothingPutIntoABundleWithoutItemsIsAcknowledged() throws {
        try install("nothing")
        let run = try reindex(["run", bundle])
        XCTAssertEqual(run.status, 0, "\(run)")
    }

    func testTheConformanceSuiteNamesEachMistake() throws {
        let cases: [(String, [String: String])] = [
            ("full", ["early-acknowledgement": "pass", "empty-reindexAll": "pass", "all-rejected": "pass"]),
            ("thread", ["early-acknowledgement": "fail", "empty-reindexAll": "fail"]),
            ("nothing", ["early-acknowledgement": "pass", "empty-reindexAll": "fail"]),
            ("empty", ["empty-reindexAll": "pass"]),
            ("invalid", ["all-rejected": "fail"]),
        ]
        for (mode, expected) in cases {
            try install(mode)
            let result = try T.runReindex(["validate", "\(scratch)/extensions/\(bundle)", "--run", "--json"], scratch: scratch,
                                          environment: T.commandEnvironment(scratch: scratch, extra: ["TMPDIR": scratch]), timeout: 120)
            let document = try JSONParser.parse(text: result.stdout)
            var checks: [String: (String, String)] = [:]
            for check in document["checks"]?.arrayValue ?? [] {
                checks[check["name"]?.stringValue ?? ""] = (check["result"]?.stringValue ?? "", check["evidence"]?.stringValue ?? "")
            }
            for (name, verdict) in expected {
                XCTAssertEqual(checks[name]?.0, verdict, "\(mode): \(name): \(checks[name]?.1 ?? "missing")\n\(result)")
            }
            XCTAssertEqual(result.status == 0, !expected.values.contains("fail"), "\(mode): \(result)")
        }
        // The evidence of an early acknowledgement names the messages that came after it.
        try install("thread")
        let text = try T.runReindex(["validate", "\(scratch)/extensions/\(bundle)", "--run"], scratch: scratch,
                                    environment: T.commandEnvironment(scratch: scratch, extra: ["TMPDIR": scratch]), timeout: 120)
        XCTAssertTrue(text.stdout.contains("index/put"), "\(text)")
    }
}
