import ReindexProtocol
import Foundation
import ReindexExtension
import ReindexHost
import ReindexSystem
import ReindexStore
import ReindexTestSupport
import XCTest

/// The SDK's pieces that need no process: the items an extension builds and their wire form,
/// base64 as the SDK uses it for client states, its errors, and the wait-for-debugger gate.
final class SDKTests: XCTestCase {
    // MARK: SearchableItem and attributes

    /// An item as the Colleagues example builds it.
    private let colleague = SearchableItem(
        uniqueIdentifier: "employee.40",
        domainIdentifier: "com.example.colleagues.employee",
        attributes: SearchableItemAttributes(
            title: "Ada Park", displayName: "Ada Park",
            contentDescription: "Engineering · Engineering Manager · Berlin · +1 555 0110",
            keywords: ["swift", "Engineering", "Berlin"], emailAddresses: ["ada.park@example.com"],
            phoneNumbers: ["+1 555 0110"], supportsPhoneCall: true))

    func testAnItemsWireFormHasOnlyWhatWasSet() throws {
        let json = colleague.json
        XCTAssertEqual(json.objectValue?.map(\.0), ["uniqueIdentifier", "domainIdentifier", "attributes"])
        XCTAssertEqual(json["uniqueIdentifier"], "employee.40")
        XCTAssertEqual(json["domainIdentifier"], "com.example.colleagues.employee")
        XCTAssertNil(json["expirationDate"])
        let attributes = try XCTUnwrap(json["attributes"])
        XCTAssertEqual(Set(attributes.objectValue?.map(\.0) ?? []),
                       ["title", "displayName", "contentDescription", "keywords", "emailAddresses", "phoneNumbers", "supportsPhoneCall"])
        XCTAssertEqual(attributes["title"], "Ada Park")
        XCTAssertEqual(attributes["keywords"], ["swift", "Engineering", "Berlin"])
        XCTAssertEqual(attributes["supportsPhoneCall"], true)
        // One line of JSON, whatever the text holds: the protocol's framing needs no raw newline.
        var withNewline = colleague
        withNewline.attributes.textContent = "line one\nline two"
        XCTAssertFalse(JSONWriter.string(withNewline.json).contains("\n"))
    }

    func testDatesNumbersDataAndCustomAttributesOnTheWire() throws {
        let start = Date(timeIntervalSince1970: 1_790_000_000)
        let item = SearchableItem(
            uniqueIdentifier: "screening.7.1790000000", domainIdentifier: "com.example.showtimes.screening",
            expirationDate: start,
            attributes: SearchableItemAttributes(
                title: "The Glass Comet", rating: 4.5, rankingHint: 2, startDate: start, endDate: start.addingTimeInterval(5400),
                thumbnailData: [0x89, 0x50, 0x4E, 0x47, 0x00, 0xFF], custom: ["hall": 3, "subtitles": ["de", "fr"]]))
        let json = item.json
        XCTAssertEqual(json["expirationDate"]?.stringValue.flatMap(RFC3339.parse), 1_790_000_000)
        let attributes = try XCTUnwrap(json["attributes"])
        XCTAssertEqual(attributes["startDate"]?.stringValue.flatMap(RFC3339.parse), 1_790_000_000)
        XCTAssertEqual(attributes["endDate"]?.stringValue.flatMap(RFC3339.parse), 1_790_005_400)
        XCTAssertEqual(attributes["rating"]?.doubleValue, 4.5)
        XCTAssertEqual(attributes["rankingHint"]?.doubleValue, 2)
        XCTAssertEqual(attributes["thumbnailData"], "iVBORwD/")
        XCTAssertEqual(attributes["hall"]?.integerValue, 3)
        XCTAssertEqual(attributes["subtitles"], ["de", "fr"])

        // What the SDK sends is what the host accepts, and it reads back to the same item.
        let validated = try ItemValidator.validate(json)
        XCTAssertEqual(validated.uniqueIdentifier, item.uniqueIdentifier)
        XCTAssertEqual(validated.expiration, 1_790_000_000)
        XCTAssertEqual(try SearchableItem(json: json), item)
        // Codable writes the same item (for extensions that keep items with JSONEncoder; key
        // order and 2 vs 2.0 may differ), and the host accepts that form too.
        let encoded = try JSONEncoder().encode(item)
        XCTAssertEqual(try JSONDecoder().decode(SearchableItem.self, from: encoded), item)
        XCTAssertEqual(try SearchableItem(json: JSONParser.parse(Array(encoded))), item)
        XCTAssertEqual(try ItemValidator.validate(JSONParser.parse(Array(encoded))).expiration, 1_790_000_000)
    }

    func testAnEmptyItemIsJustItsIdentifier() throws {
        let json = SearchableItem(uniqueIdentifier: "n1").json
        XCTAssertEqual(json["uniqueIdentifier"], "n1")
        XCTAssertNil(json["domainIdentifier"])
        XCTAssertNil(json["expirationDate"])
        XCTAssertNoThrow(try ItemValidator.validate(json))
    }

    // MARK: Base64 (client states)

    func testClientStatesRoundTripThroughBase64() {
        // ShowTimes's client state is its position as text.
        XCTAssertEqual(Base64.encode(Array("500".utf8)), "NTAw")
        XCTAssertEqual(Base64.decode("NTAw").flatMap { String(bytes: $0, encoding: .utf8) }, "500")
        XCTAssertEqual(Base64.encode([UInt8]()), "")
        XCTAssertEqual(Base64.decode(""), [])
        // Every length up to the protocol's limit, every byte value, agreeing with Foundation.
        for count in 0...250 {
            let bytes = (0..<count).map { UInt8(truncatingIfNeeded: $0 &* 37 &+ count) }
            let encoded = Base64.encode(bytes)
            XCTAssertEqual(encoded, Data(bytes).base64EncodedString(), "\(count) bytes")
            XCTAssertEqual(Base64.decode(encoded), bytes, "\(count) bytes")
        }
        // A 250-byte state, the largest allowed, is 336 characters on the wire.
        XCTAssertEqual(Base64.encode([UInt8](repeating: 0xFF, count: 250)).count, 336)
    }

    func testBase64DecodingAcceptsURLSafeAndUnpaddedAndRejectsTheRest() {
        XCTAssertEqual(Base64.decode("-_8"), [0xFB, 0xFF])
        XCTAssertEqual(Base64.decode("+/8="), [0xFB, 0xFF])
        XCTAssertEqual(Base64.decode("Zm8"), Array("fo".utf8))
        for bad in ["Z", "Zm9v Yg==", "Zm9v\n", "Zg=a", "Zg=", "Zg===", "Zm9v*", "é"] {
            XCTAssertNil(Base64.decode(bad), bad)
        }
    }

    // MARK: Errors

    func testTheSDKsErrorsSayWhatHappened() {
        XCTAssertEqual(BatchCommitParams.maximumClientStateBytes, 250)
        let tooLarge = SearchableIndexError.clientStateTooLarge(251)
        XCTAssertTrue(tooLarge.description.contains("251"), tooLarge.description)
        XCTAssertTrue(tooLarge.description.contains("250"), tooLarge.description)
        XCTAssertTrue(SearchableIndexError.commitRefused("disk full").description.contains("disk full"))
        let refusal = IndexRequestError(code: -32001, "the catalogue server is down")
        XCTAssertEqual(refusal.code, -32001)
        XCTAssertEqual(refusal.description, "the catalogue server is down")
        XCTAssertEqual(IndexRequestError("no").code, -32000)
    }

    // MARK: DebuggerGate

    func testTheDebuggerGateIsClosedWithoutTheVariable() {
        DebuggerGate.waitIfRequested(environment: [:])
        DebuggerGate.waitIfRequested(environment: ["REINDEX_WAIT_FOR_DEBUGGER": "soon"])
        DebuggerGate.waitIfRequested(environment: ["REINDEX_DEBUG": "1"])
    }

    func testTheDebuggerGateGivesUpWhenNoDebuggerAttaches() throws {
        let scratch = try TestSupport.makeScratchDirectory(for: self)
        let captured = "\(scratch)/stderr"
        // What the gate writes to stderr, caught in a file while it runs.
        fflush(nil)
        let saved = dup(2)
        let file = open(captured, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        XCTAssertGreaterThanOrEqual(saved, 0)
        XCTAssertGreaterThanOrEqual(file, 0)
        dup2(file, 2)
        close(file)
        DebuggerGate.waitIfRequested(environment: ["REINDEX_WAIT_FOR_DEBUGGER": "1"])
        dup2(saved, 2)
        close(saved)

        // It returned (no debugger attached within a second) and said what it did.
        let text = TestSupport.read(captured) ?? ""
        XCTAssertTrue(text.contains("pid \(getpid()) is waiting for a debugger to attach (at most 1 s)"), text)
        XCTAssertTrue(text.contains("lldb -p \(getpid()) or gdb -p \(getpid())"), text)
        if Self.isTraced {
            XCTAssertTrue(text.contains("debugger attached"), text)
        } else {
            XCTAssertTrue(text.contains("no debugger attached within 1 s; continuing without one"), text)
        }
    }

    /// Whether this test process runs under a debugger (then the gate opens at once).
    private static var isTraced: Bool {
        let status = TestSupport.read("/proc/self/status") ?? ""
        guard let line = status.split(separator: "\n").first(where: { $0.hasPrefix("TracerPid:") }) else { return false }
        return line.split(separator: "\t").last.map { $0.trimmingCharacters(in: .whitespaces) != "0" } ?? false
    }
}
