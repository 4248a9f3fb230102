import Foundation
import ReindexTestSupport
import XCTest

/// The "query" fuzz target's seeds (Fuzz/corpus/query) and saved failures
/// (Tests/Fixtures/fuzz-regressions/query) replayed through its harness, and the hostile
/// queries of QueryCases (Tests/ReindexTestSupport).
final class QueryFuzzTests: XCTestCase {
    func testSeedsAndRegressionsHoldTheInvariants() throws {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        var inputs: [(String, [UInt8])] = []
        for directory in ["Fuzz/corpus/query", "Tests/Fixtures/fuzz-regressions/query"] {
            let url = root.appendingPathComponent(directory)
            for name in (try? FileManager.default.contentsOfDirectory(atPath: url.path)) ?? [] {
                inputs.append((name, Array(try Data(contentsOf: url.appendingPathComponent(name)))))
            }
        }
        XCTAssertGreaterThan(inputs.count, 10, "the seeds are there")
        for query in QueryCommandTests.queriesAtTheLimits() + QueryCases.queriesPastTheLimits.map(\.query) {
            inputs.append((String(query.prefix(40)), Array(query.utf8)))
        }
        for (name, bytes) in inputs {
            XCTAssertNil(QueryFuzzHarness.run(bytes), name)
        }
    }
}
