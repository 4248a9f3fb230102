import Foundation
import ReindexHost
import ReindexSystem
import ReindexStore
import ReindexProtocol
import ReindexTestSupport
import XCTest

/// The ShowTimes example through the real host: films and expiring screenings in two domains,
/// committed in batches of 250 with the position as client state, so that a `reindexAll` killed
/// in the middle resumes where it stopped and the index ends with every item exactly once.
final class ShowTimesTests: XCTestCase {
    private let bundleID = "com.example.showtimes.indexer"
    private let filmDomain = "com.example.showtimes.film"
    private let screeningDomain = "com.example.showtimes.screening"

    private func makeHost(environment: [String: String]) throws -> TestHost {
        let host = try TestHost(test: self)
        try TestSupport.makeExampleBundle(example: "ShowTimes", product: "ShowTimesIndexer", in: host.extensions) { manifest in
            TestSupport.set("environment", TestSupport.environmentJSON(environment), in: &manifest)
        }
        return host
    }

    func testAFullRunIndexesFilmsAndScreeningsThatExpire() throws {
        let host = try makeHost(environment: ["SHOWTIMES_FILMS": "12"])
        let (result, json) = try host.reindexJSON(["run", bundleID])
        XCTAssertEqual(result.status, 0, "\(result)")
        XCTAssertEqual(json["outcome"]?.stringValue, "acknowledged", "\(result)")
        let put = try XCTUnwrap(json["put"]?.integerValue)

        let films = try host.items(bundleID, domain: filmDomain)
        let screenings = try host.items(bundleID, domain: screeningDomain)
        XCTAssertEqual(films.count, 12)
        XCTAssertGreaterThan(screenings.count, 0)
        XCTAssertEqual(Int64(films.count + screenings.count), put)
        XCTAssertEqual(try host.items(bundleID).count, films.count + screenings.count, "items outside the two domains")

        XCTAssertTrue(films.allSatisfy { $0.expiration == nil }, "films do not expire")
        let now = Date().timeIntervalSince1970
        for screening in screenings {
            let expiration = try XCTUnwrap(screening.expiration, "\(screening.uniqueIdentifier) has no expiration date")
            XCTAssertGreaterThan(expiration, now - 60, screening.uniqueIdentifier)
            // It expires when the screening starts.
            let start = try XCTUnwrap(screening.attributes["startDate"]?.stringValue.flatMap { RFC3339.parse($0) })
            XCTAssertEqual(expiration, start, accuracy: 0.001, screening.uniqueIdentifier)
        }
        let log = TestSupport.read(host.logPath(bundleID)) ?? ""
        XCTAssertTrue(log.contains("showtimes: done: \(put) items in"), log)
    }

    func testAReindexAllKilledMidwayResumesFromTheCommittedClientState() throws {
        let host = try TestHost(test: self)
        // The marker lives in a directory of its own that the manifest declares writable: the
        // extension runs sandboxed and may create files nowhere else outside its own directories.
        let markers = "\(host.scratch)/markers"
        try FileManager.default.createDirectory(atPath: markers, withIntermediateDirectories: true)
        let crashedOnce = "\(markers)/crashed-once"
        try TestSupport.makeExampleBundle(example: "ShowTimes", product: "ShowTimesIndexer", in: host.extensions) { manifest in
            TestSupport.set("environment", TestSupport.environmentJSON([
                "SHOWTIMES_CRASH_AFTER_BATCHES": "2", "SHOWTIMES_CRASH_ONCE_FILE": crashedOnce,
            ]), in: &manifest)
            TestSupport.set("sandbox", .object([("write", .array([.string(markers)]))]), in: &manifest)
        }
        // The previous state of the index: one listing from an earlier run.
        let legacy = #"{"uniqueIdentifier":"legacy.1","domainIdentifier":"com.example.showtimes.film","attributes":{"title":"Legacy Listing"}}"#
        XCTAssertEqual(try host.reindex(["put", bundleID], stdin: legacy + "\n").status, 0)

        // First attempt: two batches of 250 are committed, then the extension exits (status 70)
        // without acknowledging. The request fails with 75 and a retry is queued.
        let (first, firstJSON) = try host.reindexJSON(["run", bundleID])
        XCTAssertEqual(first.status, 75, "\(first)")
        XCTAssertEqual(firstJSON["outcome"]?.stringValue, "failed")
        XCTAssertEqual(firstJSON["retry"]?.stringValue, "queued")
        XCTAssertTrue(first.stderr.contains("error: "), first.stderr)
        XCTAssertTrue(FileManager.default.fileExists(atPath: crashedOnce))
        let (_, status) = try host.reindexJSON(["status"])
        let bundleStatus = try XCTUnwrap(status["bundles"]?.arrayValue?.first { $0["bundleIdentifier"]?.stringValue == bundleID })
        XCTAssertEqual(bundleStatus["pending"]?.integerValue, 1, "no retry is queued: \(status)")

        // Nothing of the unfinished reindexAll is visible: searches see the previous state.
        XCTAssertEqual(try host.items(bundleID).map(\.uniqueIdentifier), ["legacy.1"])
        XCTAssertEqual(try host.search("legacy"), ["legacy.1"])

        // Second attempt (asked to resume, as serve's retry would): resumes at item 500 and acknowledges.
        let (second, secondJSON) = try host.reindexJSON(["run", bundleID, "--resume"])
        XCTAssertEqual(second.status, 0, "\(second)")
        XCTAssertEqual(secondJSON["outcome"]?.stringValue, "acknowledged", "\(second)")
        let log = TestSupport.read(host.logPath(bundleID)) ?? ""
        XCTAssertTrue(log.contains("showtimes: resuming reindexAll at item 500 of "), log)

        // The final index: every item of the catalogue exactly once, the legacy listing gone.
        let identifiers = try host.items(bundleID).map(\.uniqueIdentifier)
        let total = identifiers.count
        XCTAssertGreaterThan(total, 750, "the catalogue is too small to need three batches")
        XCTAssertEqual(Set(identifiers).count, total, "an item is indexed twice")
        XCTAssertFalse(identifiers.contains("legacy.1"))
        XCTAssertEqual(try host.items(bundleID, domain: filmDomain).count, 60)
        XCTAssertEqual(try host.items(bundleID, domain: screeningDomain).count, total - 60)
        XCTAssertTrue(log.contains("showtimes: done: \(total) items in"), log)
        XCTAssertEqual(secondJSON["put"]?.integerValue, Int64(total - 500), "the retry did not resume from the committed state: \(second)")
        XCTAssertEqual(secondJSON["deleted"]?.integerValue, 1, "the legacy listing was not replaced: \(second)")
    }
}
