import Foundation
import ReindexHost
import ReindexSystem
import ReindexStore
import ReindexProtocol
import ReindexTestSupport
import XCTest

/// The Colleagues example, built with the SDK, run through the real host (`reindex run`) against
/// a real index file: what it indexes is searchable, `reindexItems` puts and deletes exactly the
/// identifiers asked for, and a stray `print` inside the handler cannot break the protocol.
final class ColleaguesTests: XCTestCase {
    private let bundleID = "com.example.colleagues.indexer"

    private func makeHost(environment: [String: String] = [:]) throws -> TestHost {
        let host = try TestHost(test: self)
        try TestSupport.makeExampleBundle(example: "Colleagues", product: "ColleaguesIndexer", in: host.extensions) { manifest in
            if !environment.isEmpty { TestSupport.set("environment", TestSupport.environmentJSON(environment), in: &manifest) }
        }
        return host
    }

    /// `reindex run --json`, checked to be acknowledged with `put` items.
    @discardableResult
    private func runAcknowledged(_ host: TestHost, _ extra: [String] = [], put: Int64, deleted: Int64 = 0,
                                 file: StaticString = #filePath, line: UInt = #line) throws -> TestSupport.CommandResult {
        let (result, json) = try host.reindexJSON(["run", bundleID] + extra, file: file, line: line)
        XCTAssertEqual(result.status, 0, "\(result)", file: file, line: line)
        XCTAssertEqual(json["outcome"]?.stringValue, "acknowledged", "\(result)", file: file, line: line)
        XCTAssertEqual(json["put"]?.integerValue, put, "\(result)", file: file, line: line)
        XCTAssertEqual(json["deleted"]?.integerValue, deleted, "\(result)", file: file, line: line)
        XCTAssertEqual(json["rejected"]?.integerValue, 0, "\(result)", file: file, line: line)
        return result
    }

    func testReindexAllIndexesEveryoneAndTheyAreSearchable() throws {
        let host = try makeHost()
        let result = try runAcknowledged(host, put: 26)
        XCTAssertEqual(result.json?["request"]?.stringValue, "reindexAll")

        let items = try host.items(bundleID)
        XCTAssertEqual(items.count, 26)
        XCTAssertEqual(Set(items.map(\.uniqueIdentifier)).count, 26)
        XCTAssertTrue(items.allSatisfy { $0.uniqueIdentifier.hasPrefix("employee.") && $0.domainIdentifier == "com.example.colleagues.employee" })

        // Words match as prefixes: "staff eng" finds the Staff Engineer, "ada" finds Ada Park.
        XCTAssertEqual(try host.search("staff eng"), ["employee.58"])
        XCTAssertEqual(try host.search("ada"), ["employee.40"])
        let ada = try XCTUnwrap(items.first { $0.uniqueIdentifier == "employee.40" })
        XCTAssertEqual(ada.title, "Ada Park")
        XCTAssertEqual(ada.attributes["emailAddresses"], ["ada.park@example.com"])
        XCTAssertEqual(ada.attributes["supportsPhoneCall"], true)

        // The SDK negotiated protocol version 1 with the host (which offers only 1).
        let log = TestSupport.read(host.logPath(bundleID)) ?? ""
        XCTAssertTrue(log.contains("initialized: Colleagues 1.0.0, protocol 1"), log)
        XCTAssertTrue(log.contains("colleagues: indexing 26 people (reason: forced)"), log)
    }

    func testReindexItemsPutsTheExistingIdentifierAndDeletesTheUnknownOne() throws {
        let host = try makeHost()
        // Someone indexed under an identifier the directory does not know (any more).
        let stale = #"{"uniqueIdentifier":"employee.999","domainIdentifier":"com.example.colleagues.employee","attributes":{"title":"Zebulon Former"}}"#
        let put = try host.reindex(["put", bundleID], stdin: stale + "\n")
        XCTAssertEqual(put.status, 0, "\(put)")
        XCTAssertEqual(try host.search("zebulon"), ["employee.999"])

        let result = try runAcknowledged(host, ["--ids", "employee.41,employee.999"], put: 1, deleted: 1)
        XCTAssertEqual(result.json?["request"]?.stringValue, "reindexItems")
        XCTAssertEqual(try host.items(bundleID).map(\.uniqueIdentifier), ["employee.41"])
        XCTAssertEqual(try host.search("zebulon"), [])
        XCTAssertEqual(try host.search("grace"), ["employee.41"])
        XCTAssertTrue((TestSupport.read(host.logPath(bundleID)) ?? "").contains("colleagues: re-indexed 1, removed 1 who left"))
    }

    func testSomeoneWhoLeftIsDeletedByReindexItems() throws {
        let host = try makeHost()
        try runAcknowledged(host, put: 26)
        XCTAssertEqual(try host.search("ada"), ["employee.40"])

        // Ada (employee.40) leaves: the directory file no longer lists her.
        let original = TestSupport.read("\(host.extensions)/ColleaguesIndexer/employees.json") ?? ""
        guard case .array(let people)? = try? JSONParser.parse(text: original) else { return XCTFail("employees.json is not an array") }
        let remaining = people.filter { $0["id"]?.integerValue != 40 }
        XCTAssertEqual(remaining.count, 25)
        let reduced = "\(host.scratch)/employees-reduced.json"
        try TestSupport.write(JSONWriter.string(.array(remaining)), to: reduced)
        try TestSupport.writeManifest(of: "\(host.extensions)/ColleaguesIndexer",
                                  from: "\(TestSupport.packageRoot)/Examples/Colleagues/Sources/ColleaguesIndexer/Bundle/manifest.json") {
            TestSupport.set("environment", TestSupport.environmentJSON(["COLLEAGUES_DATA": reduced]), in: &$0)
            // A file outside its bundle: the extension may read it only once its manifest says so.
            TestSupport.set("sandbox", .object([("read", .array([.string(reduced)]))]), in: &$0)
        }

        try runAcknowledged(host, ["--ids", "employee.40,employee.41"], put: 1, deleted: 1)
        let identifiers = Set(try host.items(bundleID).map(\.uniqueIdentifier))
        XCTAssertEqual(identifiers.count, 25)
        XCTAssertFalse(identifiers.contains("employee.40"))
        XCTAssertTrue(identifiers.contains("employee.41"))
        XCTAssertEqual(try host.search("ada"), [])
    }

    func testAPrintInsideTheHandlerGoesToTheLogAndDoesNotBreakTheStream() throws {
        let host = try makeHost(environment: ["COLLEAGUES_CHATTY": "1"])
        let result = try runAcknowledged(host, put: 26)
        XCTAssertFalse(result.stderr.contains("error:"), "\(result)")
        XCTAssertEqual(try host.items(bundleID).count, 26)
        XCTAssertEqual(try host.search("staff eng"), ["employee.58"])

        let log = TestSupport.read(host.logPath(bundleID)) ?? ""
        XCTAssertTrue(log.contains("colleagues: chatty print to stdout while indexing"), "the printed text is not in the log:\n\(log)")
        XCTAssertTrue(log.contains("the extension exited with status 0"), log)
        // It reached the log as the extension's own line, not as a protocol problem.
        XCTAssertFalse(log.lowercased().contains("protocol violation"), log)
    }
}

/// The Swift SDK's examples pass the conformance suite (`reindex validate --run`) unchanged.
final class ExampleConformanceTests: XCTestCase {
    func testColleaguesAndShowTimesPassEveryCheck() throws {
        let scratch = try TestSupport.makeScratchDirectory(for: self)
        for (example, product) in [("Colleagues", "ColleaguesIndexer"), ("ShowTimes", "ShowTimesIndexer")] {
            let directory = try TestSupport.makeExampleBundle(example: example, product: product, in: scratch)
            let result = try TestSupport.run(try TestSupport.product("reindex"), ["validate", directory, "--run"], scratch: scratch,
                                         environment: ["PATH": "/usr/bin:/bin", "HOME": scratch, "TMPDIR": scratch])
            XCTAssertEqual(result.status, 0, "\(product): \(result)")
            XCTAssertTrue(result.stdout.contains("every check passed"), "\(product): \(result)")
            XCTAssertFalse(result.stdout.contains("FAIL"), "\(product): \(result)")
        }
    }
}
