import Foundation
import ReindexHost
import ReindexSystem
@testable import ReindexStore
import ReindexProtocol
import ReindexTestSupport
import XCTest

/// Partial updates (`"isUpdate": true`) through a real extension
/// (Tests/Fixtures/extensions/updates.py) and through `reindex put`.
final class PartialUpdateTests: XCTestCase {
    typealias T = TestSupport
    var scratch = ""
    let bundle = "com.example.updates"

    override func setUpWithError() throws {
        scratch = try T.makeScratchDirectory(for: self)
    }

    func makeBundle(environment: [String: String] = [:]) throws {
        var spec = T.BundleSpec(bundle, executable: "updates.py")
        // Its files live in a directory it is allowed to write (it runs sandboxed).
        let handshake = try T.handshakeDirectory(scratch)
        spec.environment = ["FIXTURE_COUNTER": handshake + "/counter"].merging(environment) { $1 }
        spec.sandboxWrite = [handshake]
        spec.requestSeconds = 120
        try T.makeBundle(spec, in: scratch + "/extensions")
    }

    var arguments: [String] { ["--index", scratch + "/index.sqlite", "--extensions-path", scratch + "/extensions"] }

    func reindex(_ more: [String], stdin: String? = nil) throws -> T.CommandResult {
        try T.runReindex(arguments + more, scratch: scratch, stdin: stdin)
    }

    func json(_ more: [String], stdin: String? = nil, status: Int32 = 0, file: StaticString = #filePath, line: UInt = #line) throws -> [String: Any] {
        let result = try reindex(["--json"] + more, stdin: stdin)
        XCTAssertEqual(result.status, status, result.description, file: file, line: line)
        return try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any], result.description, file: file, line: line)
    }

    /// The live item's attributes (nil when there is none).
    func attributes(_ uid: String, file: StaticString = #filePath, line: UInt = #line) throws -> [String: Any]? {
        let result = try reindex(["--json", "show", bundle, uid])
        if result.status != 0 { return nil }
        let document = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any], file: file, line: line)
        return document["attributes"] as? [String: Any]
    }

    func found(_ query: String) throws -> [String] {
        let document = try json(["search", query, "--limit", "100"])
        return (document["results"] as? [[String: Any]] ?? []).compactMap { $0["uniqueIdentifier"] as? String }.sorted()
    }

    func testUpdatesMergeWithinAReplacementAndIntoTheLiveItemAndUnknownOnesAreCounted() throws {
        try makeBundle()
        let first = try json(["run", bundle])
        XCTAssertEqual(first["put"] as? Int, 3, "two items and one applied update")
        XCTAssertEqual(first["ignoredUpdates"] as? Int, 1, "u.9 does not exist")
        // u.1 was updated in the generation the same request was writing.
        let one = try XCTUnwrap(try attributes("u.1"))
        XCTAssertEqual(one["rating"] as? Double, 4)
        XCTAssertNil(one["contentDescription"], "null removes an attribute")
        XCTAssertEqual(one["title"] as? String, "Original one")
        XCTAssertEqual(one["keywords"] as? [String], ["alpha"])
        XCTAssertNil(try attributes("u.9"))
        XCTAssertEqual(try found("first"), [], "the full-text row follows the merged item")
        XCTAssertEqual(try found("alpha"), ["u.1"])

        // A later reindexAll sends only an update of u.2: it merges into the live u.2 (keeping
        // its rating and domain), and u.1, which it did not put, goes.
        let second = try json(["run", bundle])
        XCTAssertEqual(second["put"] as? Int, 1)
        XCTAssertEqual(second["ignoredUpdates"] as? Int, 0)
        let two = try XCTUnwrap(try attributes("u.2"))
        XCTAssertEqual(two["title"] as? String, "Renamed two")
        XCTAssertEqual(two["rating"] as? Double, 2)
        let shown = try json(["show", bundle, "u.2"])
        XCTAssertEqual(shown["domainIdentifier"] as? String, "com.example.updates.two")
        XCTAssertNil(try attributes("u.1"))
        XCTAssertEqual(try found("renamed"), ["u.2"])
        XCTAssertEqual(try found("original"), [])
        XCTAssertEqual(try json(["check"])["healthy"] as? Bool, true, "the index invariants hold after merges")
    }

    func testAnUpdateIsInvisibleUntilItsRequestCommitsAndFollowsTheRequestsOwnDeletesAndPuts() throws {
        let ready = try T.handshakeDirectory(scratch) + "/ready", release = try T.handshakeDirectory(scratch) + "/release"
        try makeBundle(environment: ["FIXTURE_READY": ready, "FIXTURE_RELEASE": release])
        try T.write("", to: release)
        XCTAssertEqual(try reindex(["run", bundle]).status, 0)
        try FileManager.default.removeItem(atPath: release)

        let run = try T.RunningCommand(arguments: arguments + ["--json", "run", bundle, "--ids", "u.1,gone.2,staged.3,bad"],
                                       environment: T.commandEnvironment(scratch: scratch), scratch: scratch, feedsStdin: false)
        let end = Date().addingTimeInterval(60)
        while !FileManager.default.fileExists(atPath: ready) && Date() < end { usleep(20_000) }
        // The request is open and its operations are written, not committed: nothing shows.
        XCTAssertEqual(try attributes("u.1")?["title"] as? String, "Original one")
        XCTAssertEqual(try found("updated"), [])
        XCTAssertNotNil(try attributes("u.2"))
        XCTAssertNil(try attributes("u.3"))
        try T.write("", to: release)
        let result = run.finish(timeout: 60)
        XCTAssertEqual(result.status, 0, result.description)
        let summary = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any], result.description)
        XCTAssertEqual(summary["ignoredUpdates"] as? Int, 1, "the update of u.2 after its deletion")
        XCTAssertEqual(summary["rejected"] as? Int, 1)
        XCTAssertTrue(result.stderr.contains("items[0].isUpdate: expected true or false"), result.stderr)

        let one = try XCTUnwrap(try attributes("u.1"))
        XCTAssertEqual(one["title"] as? String, "Updated 1")
        XCTAssertNil(one["rating"])
        XCTAssertEqual(one["keywords"] as? [String], ["beta"])
        XCTAssertEqual(try found("updated"), ["u.1"])
        XCTAssertEqual(try found("alpha"), [])
        XCTAssertNil(try attributes("u.2"), "deleted, and the update after it ignored")
        let three = try XCTUnwrap(try attributes("u.3"), "merged into the item staged by the same request")
        XCTAssertEqual(three["title"] as? String, "Staged 3")
        XCTAssertEqual(three["rating"] as? Double, 7)
        XCTAssertEqual(three["keywords"] as? [String], ["gamma"])
        XCTAssertNil(try attributes("u.bad"))
    }

    func testPutMergesUpdatesAndCountsTheOnesWithoutAnItem() throws {
        let lines = [
            #"{"uniqueIdentifier":"n.1","attributes":{"title":"Grocery list","keywords":["food"],"rating":3}}"#,
            #"{"uniqueIdentifier":"n.1","isUpdate":true,"attributes":{"title":"Hardware list","rating":null,"contentType":"public.text"}}"#,
            #"{"uniqueIdentifier":"n.2","isUpdate":true,"attributes":{"title":"Nothing to update"}}"#,
        ]
        let put = try json(["put", "com.example.notes"], stdin: lines.joined(separator: "\n") + "\n")
        XCTAssertEqual(put["put"] as? Int, 2)
        XCTAssertEqual(put["ignoredUpdates"] as? Int, 1)
        let shown = try json(["show", "com.example.notes", "n.1"])
        let attributes = try XCTUnwrap(shown["attributes"] as? [String: Any])
        XCTAssertEqual(attributes["title"] as? String, "Hardware list")
        XCTAssertEqual(attributes["keywords"] as? [String], ["food"])
        XCTAssertEqual(attributes["contentType"] as? String, "public.text")
        XCTAssertNil(attributes["rating"])
        let results = try json(["search", "hardware"])["results"] as? [[String: Any]] ?? []
        XCTAssertEqual(results.compactMap { $0["uniqueIdentifier"] as? String }, ["n.1"])
        XCTAssertEqual((try json(["search", "grocery"])["results"] as? [[String: Any]] ?? []).count, 0)

        // A second put of updates alone: they merge into the live items.
        let again = try json(["put", "com.example.notes"], stdin: #"{"uniqueIdentifier":"n.1","isUpdate":true,"attributes":{"keywords":["tools"]}}"# + "\n")
        XCTAssertEqual(again["put"] as? Int, 1)
        let after = try json(["show", "com.example.notes", "n.1"])["attributes"] as? [String: Any]
        XCTAssertEqual(after?["keywords"] as? [String], ["tools"])
        XCTAssertEqual(after?["title"] as? String, "Hardware list")

        let bad = try reindex(["put", "com.example.notes"], stdin: #"{"uniqueIdentifier":"n.1","isUpdate":1,"attributes":{}}"# + "\n")
        XCTAssertEqual(bad.status, 65, bad.description)
        XCTAssertTrue(bad.stderr.contains("item.isUpdate: expected true or false, got 1"), bad.stderr)
    }
}
