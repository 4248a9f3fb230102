import Foundation
import ReindexProtocol
import XCTest

/// Replays fuzz inputs through `FuzzHarness`, the same code the libFuzzer targets run
/// (`Scripts/fuzz.sh`): the seed corpus in `Fuzz/corpus/<target>/`, whose every file must decode
/// exactly as listed below, and every input that once made a target fail, kept in
/// `Tests/Fixtures/fuzz-regressions/<target>/`.
final class FuzzRegressionTests: XCTestCase {
    static let packageRoot = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    /// What each seed is: one entry per protocol line (line-decoder), per item (item-validator)
    /// or for the manifest. A new seed needs its entry here.
    static let expectedSeeds: [String: [String: [String]]] = [
        "line-decoder": [
            // Recorded from Examples/python/bookshelf: reindexAll (three batches) and
            // reindexItems for book.3 and the missing book.99.
            "bookshelf-from-extension": [
                "reply 0: initialized, protocol 1",
                "notification index/put: 5 valid",
                "notification $/progress: 5 of 15 for request 1",
                "request batch/commit (id 1): commits request 1 with 10 bytes of client state",
                "notification index/put: 5 valid",
                "notification $/progress: 10 of 15 for request 1",
                "request batch/commit (id 2): commits request 1 with 11 bytes of client state",
                "notification index/put: 5 valid",
                "notification $/progress: 15 of 15 for request 1",
                "reply 1: result",
                "notification index/put: 1 valid",
                "notification index/delete: 1 identifiers",
                "reply 2: result",
            ],
            // The host's side of the same session, with its replies to batch/commit.
            "bookshelf-to-extension": [
                "request initialize (id 0): ok",
                "request reindexAll (id 1): ok, forced",
                "reply 1: result",
                "reply 2: result",
                "request reindexItems (id 2): ok, 2 identifiers, expiring",
            ],
            // Recorded from the Swift SDK example ColleaguesIndexer (the put shortened to 4 items).
            "colleagues-from-extension": [
                "reply 0: initialized, protocol 1",
                "notification index/put: 4 valid",
                "notification $/progress: 26 of 26 for request 1",
                "reply 1: result",
                "notification index/delete: 2 identifiers",
                "reply 2: result",
            ],
            "colleagues-to-extension": [
                "request initialize (id 0): ok",
                "request reindexAll (id 1): ok, indexLost",
                "request reindexItems (id 2): ok, 2 identifiers, forced",
            ],
            // Recorded from ShowTimesIndexer (the put shortened to 6 items): expirations, dates.
            "showtimes-from-extension": [
                "reply 0: initialized, protocol 1",
                "notification index/put: 6 valid",
                "request batch/commit (id 1): commits request 1 with 2 bytes of client state",
                "notification $/progress: 54 of 54 for request 1",
                "reply 1: result",
            ],
            "version-mismatch": [
                "request initialize (id 0): ok",
                "reply 0: error -32602",
            ],
            "refusal-and-cancel": [
                "request reindexAll (id 3): ok, retry, resumes from 10 bytes of client state",
                "reply 3: error -32000",
                "request reindexItems (id 4): ok, 1 identifiers, someFutureReason",
                "notification $/cancel: request 4",
                "reply 4: error -32800",
            ],
            "put-with-invalid-items": [
                "notification index/put: 2 valid, invalid items[0].attributes.title items[2].uniqueIdentifier "
                    + "items[3].uniqueIdentifier items[4].expirationDate items[5].attributes.keywords[1] items[6]",
                "notification index/put: no items array",
                "notification index/put: no items array",
            ],
            "batch-commit-variants": [
                "request batch/commit (id 5): commits request 1 with 6 bytes of client state",
                "request batch/commit (id 6): commits request 1",
                "request batch/commit (id 7): refused, client state not base64",
                "request batch/commit (id 8): refused, client state of 251 bytes",
                "request batch/commit (id 9): invalid params.requestId",
                "request batch/commit (id \"c-10\"): commits request \"r-1\" with 6 bytes of client state",
                "reply 5: result",
            ],
            "index-operations": [
                "notification index/delete: 2 identifiers",
                "notification index/deleteDomains: 1 domains",
                "notification index/deleteAll",
                "notification $/progress: 3 of ? for request 1",
                "notification $/progress: 1 of 20 for request \"r-1\"",
                "notification index/delete: invalid params.identifiers[0]",
                "notification $/progress: invalid params.requestId",
                "notification $/somethingNew: unknown method",
                "request index/search (id 11): unknown method",
            ],
            "malformed-lines": [
                "undecodable -32700",           // truncated
                "undecodable -32700",           // not JSON
                "invalid UTF-8 at byte 37",     // inside a string
                "invalid UTF-8 at byte 0",
                "undecodable -32600",           // an array
                "undecodable -32600",           // "jsonrpc": "1.0"
                "undecodable -32600",           // no "jsonrpc"
                "undecodable -32600",           // both result and error
                "undecodable -32600",           // result without id
                "undecodable -32600",           // id is an object
                "undecodable -32600",           // id 1.5
                "undecodable -32600",           // method is a number
                "undecodable -32600",           // params is a string
                "undecodable -32600",           // request with a null id
                "undecodable -32600",           // neither request nor reply
                "undecodable -32600",           // error without code
                "undecodable -32600",           // error is a string
                "undecodable -32700",           // two messages on one line
                "undecodable -32700",           // leading zero
                "undecodable -32700",           // lone surrogate
            ],
            "framing-crlf-blank-tail": [
                "reply 0: initialized, protocol 1",
                "blank",
                "notification $/progress: 1 of ? for request 1",
                "no newline after byte 209",
            ],
            // Header 0xC3: an 81-byte line limit.
            "line-too-long": [
                "reply 1: result",
                "line too long at byte 37",
            ],
            "orphan-error": [
                "error reply with a null id: -32700",
                "error reply with a null id: -32600",
            ],
            "unicode-and-escapes": [
                "notification index/put: 1 valid",
                "notification index/put: 1 valid",
                "request batch/commit (id \"\u{0}id\"): commits request \"\u{0}id\"",
            ],
            "numbers": [
                "reply 1: result",
                "reply 9223372036854775807: result",
                "reply -9223372036854775808: error -32603",
                "notification $/progress: invalid params.total",  // 9.2e18 is past Int64
                "undecodable -32700",                              // 1e400
            ],
        ],
        "manifest": [
            "bookshelf.json": ["ok com.example.bookshelf.indexer"],
            "colleagues.json": ["ok com.example.colleagues.indexer"],
            "showtimes.json": ["ok com.example.showtimes.indexer"],
            "contract-example.json": ["ok com.example.colleagues.indexer"],
            "everything.json": ["ok org.example-2.Notes.Indexer"],
            "minimal.json": ["ok a.b"],
            "empty.json": ["invalid (top level)"],
            "not-json.json": ["invalid (top level)"],
            "top-level-array.json": ["invalid (top level)"],
            "too-deep.json": ["invalid (top level)"],
            "manifest-version-2.json": ["invalid manifestVersion"],
            "bad-identifier.json": ["invalid bundleIdentifier"],
            "executable-empty.json": ["invalid executable"],
            "environment-equals.json": ["invalid environment"],
            "protocol-versions-empty.json": ["invalid protocolVersions"],
            "idle-seconds-string.json": ["invalid timeouts.idleSeconds"],
            "retry-zero.json": ["invalid retry.maxAttempts"],
            "limits-wrong.json": ["invalid limits.cpuSeconds"],
            "sandbox.json": ["ok com.example.recipes.indexer"],
            "sandbox-dotdot.json": ["invalid sandbox.read[0]"],
        ],
        "item-validator": [
            "contract-example.json": ["valid"],
            "bookshelf-item.json": ["valid"],
            "colleagues-items.json": ["valid", "valid", "valid"],
            "showtimes-items.json": ["valid", "valid", "valid"],
            "every-attribute.json": ["valid"],
            "duplicates-and-nulls.json": ["valid"],
            "null-attributes.json": ["valid"],
            "identifier-1024-bytes.json": ["valid"],
            "not-json.json": ["not JSON"],
            "missing-identifier.json": ["invalid item.uniqueIdentifier: is required (a string)"],
            "empty-identifier.json": ["invalid item.uniqueIdentifier: expected 1 to 1024 UTF-8 bytes, got 0 bytes"],
            "identifier-too-long.json": ["invalid item.uniqueIdentifier: expected 1 to 1024 UTF-8 bytes, got 1025 bytes"],
            "title-number.json": ["invalid item.attributes.title: expected a string, got 42"],
            "bad-base64.json": [#"invalid item.attributes.thumbnailData: expected base64 text, got "abcde""#],
            "bad-dates.json": [
                #"invalid items[0].expirationDate: expected an RFC 3339 date, got "2026-02-29T00:00:00Z""#,
                #"invalid items[1].expirationDate: expected an RFC 3339 date, got "2026-12-31""#,
                #"invalid items[2].attributes.startDate: expected an RFC 3339 date, got "2026-12-31T24:00:00Z""#,
                "invalid items[3].attributes.endDate: expected an RFC 3339 date, got 1767139200",
                "valid",  // 2024-02-29T23:59:59.999999+23:59
            ],
            "wrong-types.json": [
                "invalid items[0].uniqueIdentifier: expected a string, got 7",
                "invalid items[1].domainIdentifier: expected a string, got an array",
                "invalid items[2].attributes: expected an object, got an array",
                #"invalid items[3].attributes.keywords: expected an array of strings, got "one""#,
                "invalid items[4].attributes.authors[1]: expected a string, got null",
                #"invalid items[5].attributes.rating: expected a number, got "5""#,
                "invalid items[6].attributes.supportsNavigation: expected true or false, got 1",
                #"invalid items[7]: expected an object, got "item""#,
                "invalid items[8]: expected an object, got null",
            ],
        ],
    ]

    /// What some regression inputs must give (every one must pass the invariants).
    static let expectedRegressions: [String: [String: [String]]] = [
        "item-validator": [
            // Found by the fuzzer: a local time in 9999 that is in the year 10000 UTC was
            // accepted, and RFC3339.format wrote it as "10000-01-01T07:59:59Z", which nothing
            // reads (the SDK's items became invalid when written; the host's search output
            // carried the malformed date).
            "year-10000-after-offset.json": [
                #"invalid item.attributes.contentCreationDate: expected an RFC 3339 date, got "9999-12-31 23:59:59-08:00""#,
            ],
            "dates-at-the-ends-of-the-range.json": [
                #"invalid items[0].expirationDate: expected an RFC 3339 date, got "9999-12-31T23:59:59-08:00""#,
                #"invalid items[1].expirationDate: expected an RFC 3339 date, got "9999-12-31T23:59:60Z""#,
                #"invalid items[2].attributes.startDate: expected an RFC 3339 date, got "9999-12-31T23:59:59.9996Z""#,
                #"invalid items[3].attributes.endDate: expected an RFC 3339 date, got "0000-01-01T00:00:00+00:01""#,
                "valid",  // 0000-01-01T00:00:00.0004+00:00 (rounds to the first millisecond)
                "valid",  // 9999-12-31T23:59:59.999Z
                "valid",  // 0000-01-01T00:00:00Z
                "valid",  // 9999-12-31T22:59:59-01:00
            ],
        ],
    ]

    /// Every seed decodes as listed, with every invariant holding, and every seed is listed.
    func testSeedCorpusDecodesAsExpected() throws {
        for target in FuzzHarness.targets {
            let expected = try XCTUnwrap(Self.expectedSeeds[target], "no expectations for \(target)")
            let directory = Self.packageRoot.appendingPathComponent("Fuzz/corpus/\(target)")
            let files = try Self.files(in: directory)
            XCTAssertEqual(Set(files.map(\.lastPathComponent)), Set(expected.keys), "the seeds of \(target) and their expectations differ")
            for file in files {
                let name = file.lastPathComponent
                let outcomes = try Self.replay(target: target, file: file)
                XCTAssertEqual(outcomes, expected[name], "\(target)/\(name)")
            }
        }
    }

    /// Inputs that once made a fuzz target fail now pass every invariant.
    func testRegressionInputsPass() throws {
        let root = Self.packageRoot.appendingPathComponent("Tests/Fixtures/fuzz-regressions")
        var isDirectory: ObjCBool = false
        XCTAssertTrue(FileManager.default.fileExists(atPath: root.path, isDirectory: &isDirectory) && isDirectory.boolValue,
                      "missing \(root.path)")
        var replayed = 0
        for target in FuzzHarness.targets {
            let directory = root.appendingPathComponent(target)
            guard FileManager.default.fileExists(atPath: directory.path) else { continue }
            for file in try Self.files(in: directory) {
                let outcomes = try Self.replay(target: target, file: file)
                if let expected = Self.expectedRegressions[target]?[file.lastPathComponent] {
                    XCTAssertEqual(outcomes, expected, "\(target)/\(file.lastPathComponent)")
                }
                replayed += 1
            }
        }
        XCTAssertGreaterThanOrEqual(replayed, Self.expectedRegressions.values.map(\.count).reduce(0, +))
        // Subdirectories must be named after targets, or their inputs would never run.
        let unknown = try FileManager.default.contentsOfDirectory(atPath: root.path)
            // (The query target's are replayed by ReindexStoreTests' QueryFuzzTests.)
            .filter { !$0.hasPrefix(".") && !$0.hasSuffix(".md") && !FuzzHarness.targets.contains($0) && $0 != "query" }
        XCTAssertEqual(unknown, [], "folders in fuzz-regressions that are not fuzz targets")
        print("FuzzRegressionTests: replayed \(replayed) regression inputs")
    }

    /// The same stream gives the same lines however the reads cut it (the line-decoder
    /// target's header byte only chooses the cuts and, with its top bit, a smaller line limit).
    func testLineDecoderOutcomesDoNotDependOnTheReads() throws {
        let file = Self.packageRoot.appendingPathComponent("Fuzz/corpus/line-decoder/bookshelf-from-extension")
        let stream = Array(try Data(contentsOf: file).dropFirst())
        let reference = try Self.outcomes(target: "line-decoder", [0x03] + stream)  // one read
        XCTAssertEqual(reference.count, 13)
        for header: UInt8 in [0x00, 0x01, 0x02, 0x04, 0x41, 0x7E, 0x7F] {
            XCTAssertEqual(try Self.outcomes(target: "line-decoder", [header] + stream), reference, "header \(header)")
        }
        XCTAssertEqual(FuzzHarness.LinePlan(header: 0x00, streamLength: 100).chunkSizes, Array(repeating: 1, count: 100))
        XCTAssertEqual(FuzzHarness.LinePlan(header: 0x03, streamLength: 100).chunkSizes, [100])
        XCTAssertEqual(FuzzHarness.LinePlan(header: 0x41, streamLength: 100).chunkSizes.reduce(0, +), 100)
        XCTAssertEqual(FuzzHarness.LinePlan(header: 0x41, streamLength: 100).maximumLineLength, 16 << 20)
        XCTAssertEqual(FuzzHarness.LinePlan(header: 0x80, streamLength: 100).maximumLineLength, 1)
    }

    /// The fix for the first fuzz finding: RFC 3339 text is accepted only for instants that
    /// `RFC3339.format` writes back as RFC 3339 text, which then reads as the same instant.
    func testRFC3339AcceptsOnlyInstantsItCanWriteBack() throws {
        for text in ["9999-12-31T23:59:59-08:00", "9999-12-31T23:59:60Z", "9999-12-31T23:59:59.9996Z",
                     "0000-01-01T00:00:00+00:01", "0000-01-01T00:30:00+01:00"] {
            XCTAssertNil(RFC3339.parse(text), text)
        }
        for (text, written) in [
            ("9999-12-31T23:59:59.999Z", "9999-12-31T23:59:59.999Z"),
            ("9999-12-31T23:59:59+00:00", "9999-12-31T23:59:59Z"),
            ("9999-12-31T22:59:59-01:00", "9999-12-31T23:59:59Z"),
            ("0000-01-01T00:00:00Z", "0000-01-01T00:00:00Z"),
            ("0000-01-01T01:00:00+01:00", "0000-01-01T00:00:00Z"),
            ("0000-01-01T00:00:00.0004Z", "0000-01-01T00:00:00Z"),
        ] {
            let seconds = try XCTUnwrap(RFC3339.parse(text), text)
            XCTAssertEqual(RFC3339.format(seconds), written, text)
            XCTAssertNotNil(RFC3339.parse(written), written)
        }
    }

    /// The reference model the line-decoder target checks `LineReader` against.
    func testReferenceFramingModel() {
        let stream = Array("ab\n\ncd\r\nef".utf8)
        let skipping = FuzzHarness.referenceFraming(stream, limit: 16, skipsEmptyLines: true)
        XCTAssertEqual(skipping.lines, [Array("ab".utf8), Array("cd\r".utf8)])
        XCTAssertEqual(skipping.offsets, [0, 4])
        XCTAssertEqual(skipping.tail, Array("ef".utf8))
        XCTAssertEqual(skipping.tailOffset, 8)
        XCTAssertNil(skipping.tooLongAt)
        let keeping = FuzzHarness.referenceFraming(stream, limit: 16, skipsEmptyLines: false)
        XCTAssertEqual(keeping.lines, [Array("ab".utf8), [], Array("cd\r".utf8)])
        XCTAssertEqual(keeping.offsets, [0, 3, 4])
        let limited = FuzzHarness.referenceFraming(stream, limit: 2, skipsEmptyLines: true)
        XCTAssertEqual(limited.lines, [Array("ab".utf8)])
        XCTAssertEqual(limited.tooLongAt, 4)
        XCTAssertNil(limited.tail)
        XCTAssertEqual(FuzzHarness.referenceFraming(Array("abc".utf8), limit: 2, skipsEmptyLines: true).tooLongAt, 0)
    }

    // MARK: Helpers

    static func files(in directory: URL) throws -> [URL] {
        try FileManager.default.contentsOfDirectory(at: directory, includingPropertiesForKeys: nil)
            .filter { !$0.lastPathComponent.hasPrefix(".") && !$0.lastPathComponent.hasSuffix(".md") }
            .sorted { $0.lastPathComponent < $1.lastPathComponent }
    }

    static func replay(target: String, file: URL) throws -> [String] {
        do {
            return try FuzzHarness.run(target: target, Array(try Data(contentsOf: file)))
        } catch let violation as FuzzHarness.Violation {
            XCTFail("\(target)/\(file.lastPathComponent): \(violation)")
            return []
        }
    }

    static func outcomes(target: String, _ data: [UInt8]) throws -> [String] {
        do { return try FuzzHarness.run(target: target, data) } catch {
            XCTFail("\(target): \(error)")
            return []
        }
    }
}
