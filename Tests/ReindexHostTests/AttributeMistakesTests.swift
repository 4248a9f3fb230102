import Foundation
import ReindexHost
import ReindexProtocol
import ReindexTestSupport
import XCTest

/// Mistakes with attributes are loud, through the real host and a real extension
/// (Tests/Fixtures/extensions/loose_attributes.py): numbers JSON cannot spell reject their item
/// with the reason, never stored as null; a misspelt attribute name is a warning, once per name.
final class AttributeMistakesTests: XCTestCase {
    typealias T = TestSupport
    var scratch = ""
    let bundle = "com.example.loose-attributes"

    override func setUpWithError() throws {
        scratch = try T.makeScratchDirectory(for: self)
        var spec = T.BundleSpec(bundle, executable: "loose_attributes.py")
        spec.extraManifest = [("attributes", ["director": ["type": "string"]])]
        spec.idleSeconds = 10
        try T.makeBundle(spec, in: scratch + "/extensions")
    }

    func reindex(_ more: [String]) throws -> T.CommandResult {
        try T.runReindex(["--index", scratch + "/index.sqlite", "--extensions-path", scratch + "/extensions"] + more, scratch: scratch)
    }

    func testNonFiniteNumbersRejectTheirItemWithTheReason() throws {
        let run = try reindex(["--json", "run", bundle])
        XCTAssertEqual(run.status, 0, run.description)
        let summary = try JSONParser.parse(text: run.stdout)
        XCTAssertEqual(summary["put"]?.integerValue, 3, run.description)
        XCTAssertEqual(summary["rejected"]?.integerValue, 4, run.description)
        var reasons: [String: String] = [:]
        for rejection in summary["rejections"]?.arrayValue ?? [] {
            if let id = rejection["uniqueIdentifier"]?.stringValue { reasons[id] = rejection["reason"]?.stringValue }
        }
        XCTAssertEqual(reasons["n.nan"], "items[2].attributes.rating: expected a finite number (JSON has no NaN or infinities), got NaN", run.description)
        XCTAssertEqual(reasons["n.inf"], "items[3].attributes.rankingHint: expected a finite number (JSON has no NaN or infinities), got Infinity", run.description)
        XCTAssertEqual(reasons["n.neginf"], "items[4].attributes.scores.all[1]: expected a finite number (JSON has no NaN or infinities), got -Infinity", run.description)
        XCTAssertEqual(reasons["n.huge"], "items[0].attributes.latitude: expected a finite number (JSON has no NaN or infinities), got Infinity", run.description)
        // Nothing of them is stored, as null or otherwise.
        let items = try JSONParser.parse(text: try reindex(["--json", "items", bundle]).stdout)
        let stored = (items["results"]?.arrayValue ?? []).compactMap { $0["uniqueIdentifier"]?.stringValue }.sorted()
        XCTAssertEqual(stored, ["good.1", "good.2", "good.3"], "\(items)")
    }

    func testMisspeltAttributeNamesWarnOncePerNameInRunAndDebug() throws {
        let run = try reindex(["--json", "run", bundle])
        let warnings = (try JSONParser.parse(text: run.stdout)["warnings"]?.arrayValue ?? []).compactMap(\.stringValue)
        XCTAssertEqual(warnings.count, 4, "\(warnings)")
        XCTAssertTrue(warnings.contains("item member 'contentDescription' (first in item 'good.2') is not part of an item and is ignored; attributes go inside \"attributes\": {\"uniqueIdentifier\": …, \"attributes\": {\"contentDescription\": …}}"), "\(warnings)")
        XCTAssertTrue(warnings.contains("attribute 'keyword' (first in item 'good.1') is neither built in nor declared, so it is kept as a custom attribute and not searched; did you mean 'keywords' (a built-in attribute)?"), "\(warnings)")
        XCTAssertTrue(warnings.contains { $0.hasPrefix("attribute 'titel' ") && $0.hasSuffix("did you mean 'title' (a built-in attribute)?") }, "\(warnings)")
        XCTAssertTrue(warnings.contains { $0.hasPrefix("attribute 'directer' ") && $0.hasSuffix("did you mean 'director' (an attribute the manifest declares)?") }, "\(warnings)")
        XCTAssertFalse(warnings.contains { $0.contains("'shelf'") }, "a name far from every known one is a custom attribute, silently")

        let text = try reindex(["run", bundle])
        XCTAssertEqual(text.stderr.components(separatedBy: "warning: \(bundle): attribute 'keyword'").count - 1, 1, text.stderr)

        let debug = try reindex(["debug", bundle, "--scratch-index"])
        XCTAssertTrue(debug.stderr.contains("warning: \(bundle): attribute 'titel' (first in item 'good.1')"), debug.description)
    }

    /// `reindex put` reads hand-written JSON lines: an attribute beside `uniqueIdentifier`,
    /// Core Spotlight's `attributeSet`, a misspelt member or attribute each warn, naming the line.
    func testPutWarnsAboutMembersAnItemDoesNotHaveAndMisspeltAttributes() throws {
        let lines = [
            #"{"uniqueIdentifier":"a","title":"Ada Park"}"#,
            #"{"uniqueIdentifier":"b","attributeSet":{"title":"Grace"}}"#,
            #"{"uniqueIdentifier":"c","attribtes":{"title":"x"}}"#,
            #"{"uniqueIdentifier":"d","attributes":{"titel":"x"}}"#,
            #"{"uniqueIdentifier":"e","title":"again, no second warning"}"#,
        ].joined(separator: "\n") + "\n"
        let put = try T.runReindex(["--index", scratch + "/index.sqlite", "put", "com.example.hand"], scratch: scratch, stdin: lines)
        XCTAssertEqual(put.status, 0, "warnings, not rejections: \(put)")
        let warnings = put.stderr.split(separator: "\n").map(String.init).filter { $0.hasPrefix("warning: ") }
        XCTAssertEqual(warnings, [
            #"warning: com.example.hand: stdin line 1: item member 'title' (first in item 'a') is not part of an item and is ignored; attributes go inside "attributes": {"uniqueIdentifier": …, "attributes": {"title": …}}"#,
            #"warning: com.example.hand: stdin line 2: item member 'attributeSet' (first in item 'b') is not part of an item and is ignored; Core Spotlight's attributeSet is "attributes" here"#,
            "warning: com.example.hand: stdin line 3: item member 'attribtes' (first in item 'c') is not part of an item and is ignored; did you mean 'attributes'?",
            "warning: com.example.hand: stdin line 4: attribute 'titel' (first in item 'd') is neither built in nor declared, so it is kept as a custom attribute and not searched; did you mean 'title' (a built-in attribute)?",
        ], put.stderr)
    }

    func testTheConformanceSuiteFailsMisspeltAttributeNames() throws {
        let result = try T.runReindex(["validate", "\(scratch)/extensions/\(bundle)", "--run", "--json"], scratch: scratch,
                                      environment: T.commandEnvironment(scratch: scratch, extra: ["TMPDIR": scratch]), timeout: 120)
        let document = try JSONParser.parse(text: result.stdout)
        let check = (document["checks"]?.arrayValue ?? []).first { $0["name"]?.stringValue == "attribute-names" }
        XCTAssertEqual(check?["result"]?.stringValue, "fail", "\(result)")
        XCTAssertTrue(check?["evidence"]?.stringValue?.contains("did you mean 'keywords'") ?? false, "\(result)")
        XCTAssertNotEqual(result.status, 0)
    }
}
