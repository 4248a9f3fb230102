import Foundation
import XCTest
import ReindexProtocol

private func json(_ text: String, file: StaticString = #filePath, line: UInt = #line) -> JSONValue {
    do { return try JSONParser.parse(text: text) } catch {
        XCTFail("bad test JSON \(text): \(error)", file: file, line: line)
        return .null
    }
}

private func validate(_ value: JSONValue, path: String = "item", file: StaticString = #filePath, line: UInt = #line) -> ValidatedItem? {
    do { return try ItemValidator.validate(value, path: path) } catch {
        XCTFail("unexpected validation error: \(error)", file: file, line: line)
        return nil
    }
}

private func validationError(_ value: JSONValue, path: String = "item", file: StaticString = #filePath, line: UInt = #line) -> FieldError? {
    do {
        let item = try ItemValidator.validate(value, path: path)
        XCTFail("expected a validation error, got \(item)", file: file, line: line)
        return nil
    } catch {
        return error
    }
}

/// An item with one attribute set to `value`.
private func item(attribute key: String, _ value: JSONValue) -> JSONValue {
    .object([("uniqueIdentifier", "id"), ("attributes", .object([(key, value)]))])
}

final class ItemValidatorTests: XCTestCase {
    // MARK: Identifier

    func testMinimalItem() throws {
        let validated = try XCTUnwrap(validate(json(#"{"uniqueIdentifier":"employee.42"}"#)))
        XCTAssertEqual(validated.uniqueIdentifier, "employee.42")
        XCTAssertNil(validated.domainIdentifier)
        XCTAssertNil(validated.expiration)
        XCTAssertEqual(validated.searchText, [String?](repeating: nil, count: AttributeSchema.searched.count))
        XCTAssertEqual(String(decoding: validated.attributesJSON, as: UTF8.self), "{}")
    }

    func testMissingIdentifier() {
        XCTAssertEqual(validationError(json(#"{"attributes":{}}"#))?.description, "item.uniqueIdentifier: is required (a string)")
        XCTAssertEqual(validationError(json(#"{"uniqueIdentifier":null}"#))?.description, "item.uniqueIdentifier: is required (a string)")
    }

    func testIdentifierOfTheWrongType() {
        XCTAssertEqual(validationError(json(#"{"uniqueIdentifier":42}"#))?.description, "item.uniqueIdentifier: expected a string, got 42")
        XCTAssertEqual(validationError(json(#"{"uniqueIdentifier":["a"]}"#))?.description, "item.uniqueIdentifier: expected a string, got an array")
    }

    func testEmptyIdentifier() {
        let error = validationError(json(#"{"uniqueIdentifier":""}"#))
        XCTAssertEqual(error?.path, "item.uniqueIdentifier")
        XCTAssertEqual(error?.description, "item.uniqueIdentifier: expected 1 to 1024 UTF-8 bytes, got 0 bytes")
    }

    func testIdentifierLengthIsCountedInUTF8Bytes() {
        XCTAssertNotNil(validate(.object([("uniqueIdentifier", .string(String(repeating: "a", count: 1024)))])))
        XCTAssertEqual(validationError(.object([("uniqueIdentifier", .string(String(repeating: "a", count: 1025)))]))?.description,
                       "item.uniqueIdentifier: expected 1 to 1024 UTF-8 bytes, got 1025 bytes")
        // 512 two-byte characters are 1024 bytes; 513 are too many although far fewer than 1024 characters.
        XCTAssertNotNil(validate(.object([("uniqueIdentifier", .string(String(repeating: "é", count: 512)))])))
        XCTAssertEqual(validationError(.object([("uniqueIdentifier", .string(String(repeating: "é", count: 513)))]))?.description,
                       "item.uniqueIdentifier: expected 1 to 1024 UTF-8 bytes, got 1026 bytes")
        XCTAssertEqual(validationError(.object([("uniqueIdentifier", .string(String(repeating: "😀", count: 257)))]))?.description,
                       "item.uniqueIdentifier: expected 1 to 1024 UTF-8 bytes, got 1028 bytes")
    }

    func testNotAnObject() {
        XCTAssertEqual(validationError("employee.42")?.description, "item: expected an object, got \"employee.42\"")
        XCTAssertEqual(validationError(.null)?.description, "item: expected an object, got null")
        XCTAssertEqual(validationError([1])?.description, "item: expected an object, got an array")
    }

    func testThePathIsThePrefixOfEveryError() {
        XCTAssertEqual(validationError(json("{}"), path: "params.items[3]")?.description, "params.items[3].uniqueIdentifier: is required (a string)")
        XCTAssertEqual(validationError(item(attribute: "title", 1), path: "params.items[0]")?.path, "params.items[0].attributes.title")
    }

    // MARK: Domain and expiration

    func testDomainIdentifier() {
        XCTAssertEqual(validate(json(#"{"uniqueIdentifier":"a","domainIdentifier":"com.example.colleagues.employee"}"#))?.domainIdentifier,
                       "com.example.colleagues.employee")
        XCTAssertEqual(validationError(json(#"{"uniqueIdentifier":"a","domainIdentifier":5}"#))?.description,
                       "item.domainIdentifier: expected a string, got 5")
    }

    func testExpirationDateParsing() {
        XCTAssertEqual(validate(json(#"{"uniqueIdentifier":"a","expirationDate":"2026-12-31T00:00:00Z"}"#))?.expiration, 1_798_675_200)
        XCTAssertEqual(validate(json(#"{"uniqueIdentifier":"a","expirationDate":"2026-12-31T01:00:00+01:00"}"#))?.expiration, 1_798_675_200)
        XCTAssertEqual(validate(json(#"{"uniqueIdentifier":"a","expirationDate":"2026-12-30T19:00:00-05:00"}"#))?.expiration, 1_798_675_200)
        XCTAssertEqual(validate(json(#"{"uniqueIdentifier":"a","expirationDate":"2026-12-31T00:00:00.25Z"}"#))?.expiration, 1_798_675_200.25)
        XCTAssertNil(validate(json(#"{"uniqueIdentifier":"a","expirationDate":null}"#))?.expiration)
    }

    func testInvalidExpirationDates() {
        XCTAssertEqual(validationError(json(#"{"uniqueIdentifier":"a","expirationDate":"2026-02-30T00:00:00Z"}"#))?.description,
                       "item.expirationDate: expected an RFC 3339 date, got \"2026-02-30T00:00:00Z\"")
        XCTAssertEqual(validationError(json(#"{"uniqueIdentifier":"a","expirationDate":"tomorrow"}"#))?.description,
                       "item.expirationDate: expected an RFC 3339 date, got \"tomorrow\"")
        XCTAssertEqual(validationError(json(#"{"uniqueIdentifier":"a","expirationDate":1798675200}"#))?.description,
                       "item.expirationDate: expected a string, got 1798675200")
    }

    // MARK: Attributes

    func testAttributesThatAreNotAnObject() {
        XCTAssertEqual(validationError(json(#"{"uniqueIdentifier":"a","attributes":[]}"#))?.description,
                       "item.attributes: expected an object, got an array")
        XCTAssertEqual(validationError(json(#"{"uniqueIdentifier":"a","attributes":"title"}"#))?.description,
                       "item.attributes: expected an object, got \"title\"")
        // null attributes are the same as none.
        XCTAssertEqual(validate(json(#"{"uniqueIdentifier":"a","attributes":null}"#)).map { String(decoding: $0.attributesJSON, as: UTF8.self) }, "{}")
    }

    func testEveryKnownAttributeAcceptsItsType() throws {
        let validated = try XCTUnwrap(validate(json(#"""
        {"uniqueIdentifier":"a","attributes":{
          "title":"t","displayName":"d","contentDescription":"c","textContent":"x","contentType":"public.text",
          "contentURL":"https://example.com","thumbnailURL":"file:///t.png","relatedUniqueIdentifier":"b",
          "keywords":["k"],"alternateNames":[],"authors":["a"],"emailAddresses":["a@example.com"],"phoneNumbers":["+1 555"],
          "rating":4.5,"rankingHint":1,"latitude":-33.9,"longitude":151.2,
          "supportsPhoneCall":true,"supportsNavigation":false,
          "startDate":"2026-01-01T00:00:00Z","endDate":"2026-01-02T00:00:00+02:00",
          "contentCreationDate":"2025-12-31T23:59:59.999Z","contentModificationDate":"2026-01-01t00:00:00z",
          "thumbnailData":"iVBORw0KGgo="}}
        """#)))
        XCTAssertEqual(validated.uniqueIdentifier, "a")
        // Every key of the schema was present in the test item.
        let attributes = try JSONParser.parse(validated.attributesJSON)
        XCTAssertEqual(Set(attributes.objectValue?.map(\.0) ?? []), Set(AttributeSchema.kinds.keys))
    }

    func testNullAttributeValuesAreAccepted() throws {
        for key in AttributeSchema.kinds.keys.sorted() {
            XCTAssertNotNil(validate(item(attribute: key, .null)), key)
        }
    }

    func testWrongAttributeTypesForEveryKind() throws {
        let expectations: [AttributeKind: [(JSONValue, String)]] = [
            .string: [(5, "expected a string, got 5"), (["a"], "expected a string, got an array"), (true, "expected a string, got true")],
            .stringList: [("a", "expected an array of strings, got \"a\""), (.object([]), "expected an array of strings, got an object")],
            .number: [("5", "expected a number, got \"5\""), (false, "expected a number, got false"), ([1], "expected a number, got an array")],
            .boolean: [(1, "expected true or false, got 1"), ("true", "expected true or false, got \"true\"")],
            .date: [(0, "expected an RFC 3339 date, got 0"), ("2026-02-30T00:00:00Z", "expected an RFC 3339 date, got \"2026-02-30T00:00:00Z\""),
                    ("2026-12-31", "expected an RFC 3339 date, got \"2026-12-31\"")],
            .base64: [(5, "expected base64 text, got 5"), ("not base64!", "expected base64 text, got \"not base64!\"")],
        ]
        var checked = 0
        for (key, kind) in AttributeSchema.kinds.sorted(by: { $0.key < $1.key }) {
            for (value, message) in try XCTUnwrap(expectations[kind]) {
                let error = validationError(item(attribute: key, value))
                XCTAssertEqual(error?.path, "item.attributes.\(key)", key)
                XCTAssertEqual(error?.description, "item.attributes.\(key): \(message)", key)
                checked += 1
            }
        }
        XCTAssertGreaterThanOrEqual(checked, AttributeSchema.kinds.count * 2)
    }

    func testWrongElementInAStringList() {
        for key in ["keywords", "alternateNames", "authors", "emailAddresses", "phoneNumbers"] {
            XCTAssertEqual(validationError(item(attribute: key, ["ok", 7]))?.description, "item.attributes.\(key)[1]: expected a string, got 7")
            XCTAssertEqual(validationError(item(attribute: key, [.null]))?.description, "item.attributes.\(key)[0]: expected a string, got null")
        }
    }

    func testTheSchemaMatchesTheContract() {
        let expected: [String: AttributeKind] = [
            "title": .string, "displayName": .string, "contentDescription": .string, "textContent": .string,
            "contentType": .string, "contentURL": .string, "thumbnailURL": .string, "relatedUniqueIdentifier": .string,
            "keywords": .stringList, "alternateNames": .stringList, "authors": .stringList, "emailAddresses": .stringList,
            "phoneNumbers": .stringList, "rating": .number, "rankingHint": .number, "latitude": .number, "longitude": .number,
            "supportsPhoneCall": .boolean, "supportsNavigation": .boolean, "startDate": .date, "endDate": .date,
            "contentCreationDate": .date, "contentModificationDate": .date, "thumbnailData": .base64,
        ]
        XCTAssertEqual(AttributeSchema.kinds, expected)
        XCTAssertEqual(Set(AttributeSchema.searched),
                       ["title", "displayName", "alternateNames", "contentDescription", "textContent", "keywords", "authors"])
    }

    func testUnknownAttributesAreKeptInAttributesJSON() throws {
        let attributes = json(#"{"title":"Ada","favouriteColour":"green","nested":{"a":[1,{"b":null}]},"count":3,"keywords":["x"]}"#)
        let validated = try XCTUnwrap(validate(.object([("uniqueIdentifier", "a"), ("attributes", attributes)])))
        let stored = try JSONParser.parse(validated.attributesJSON)
        XCTAssertEqual(stored, attributes)
        XCTAssertEqual(stored["favouriteColour"], "green")
        XCTAssertEqual(stored["nested"], json(#"{"a":[1,{"b":null}]}"#))
        // Unknown keys are not searched.
        XCTAssertFalse(validated.searchText.contains { $0?.contains("green") == true })
        // Unknown keys of any type are accepted.
        XCTAssertNotNil(validate(item(attribute: "rating2", "not a number")))
    }

    func testSearchTextExtraction() throws {
        let validated = try XCTUnwrap(validate(json(#"""
        {"uniqueIdentifier":"a","attributes":{
          "authors":["Ada","Grace"],"keywords":["swift","compilers"],"textContent":"body","contentDescription":"desc",
          "alternateNames":["A. Park"],"displayName":"Ada P.","title":"Ada Park",
          "contentType":"public.contact","emailAddresses":["ada@example.com"],"custom":"hidden"}}
        """#)))
        XCTAssertEqual(AttributeSchema.searched, ["title", "displayName", "alternateNames", "contentDescription", "textContent", "keywords", "authors"])
        XCTAssertEqual(validated.searchText, ["Ada Park", "Ada P.", "A. Park", "desc", "body", "swift\ncompilers", "Ada\nGrace"])
        XCTAssertFalse(validated.searchText.contains { $0?.contains("ada@example.com") == true }, "emailAddresses are not full-text searched")
        XCTAssertFalse(validated.searchText.contains { $0?.contains("public.contact") == true })
    }

    func testSearchTextWithPartialAndEmptyAttributes() throws {
        let validated = try XCTUnwrap(validate(json(#"{"uniqueIdentifier":"a","attributes":{"keywords":[],"title":null,"authors":["solo"]}}"#)))
        let byName = Dictionary(uniqueKeysWithValues: zip(AttributeSchema.searched, validated.searchText))
        XCTAssertEqual(byName["keywords"], .some(""))
        XCTAssertEqual(byName["title"], .some(nil))
        XCTAssertEqual(byName["authors"], .some("solo"))
        XCTAssertEqual(byName["displayName"], .some(nil))
    }
}

final class SearchableItemTests: XCTestCase {
    private func fullItem() -> SearchableItem {
        SearchableItem(
            uniqueIdentifier: "employee.42",
            domainIdentifier: "com.example.colleagues.employee",
            expirationDate: Date(timeIntervalSince1970: 1_798_675_200),
            attributes: SearchableItemAttributes(
                title: "Ada Park", displayName: "Ada", contentDescription: "Engineering · Staff Engineer", textContent: "line1\nline2",
                contentType: "public.contact", contentURL: "https://example.com/ada", thumbnailURL: "file:///tmp/ada.png",
                relatedUniqueIdentifier: "employee.7", keywords: ["swift", "compilers"], alternateNames: ["A. Park"], authors: ["HR"],
                emailAddresses: ["ada@example.com"], phoneNumbers: ["+1 555 0142"], rating: 4.5, rankingHint: 10, latitude: -33.86,
                longitude: 151.21, supportsPhoneCall: true, supportsNavigation: false,
                startDate: Date(timeIntervalSince1970: 1_781_512_200), endDate: Date(timeIntervalSince1970: 1_781_512_200.5),
                contentCreationDate: Date(timeIntervalSince1970: 946_684_800), contentModificationDate: Date(timeIntervalSince1970: -1),
                thumbnailData: [0x89, 0x50, 0x4E, 0x47, 0x00, 0xFF],
                custom: ["favouriteColour": "green", "nested": .object([("a", [1, 2])])]))
    }

    func testJSONRoundTrip() throws {
        let item = fullItem()
        let wire = JSONWriter.bytes(item.json)
        let decoded = try SearchableItem(json: try JSONParser.parse(wire))
        XCTAssertEqual(decoded, item)
        XCTAssertEqual(item.json["expirationDate"], "2026-12-31T00:00:00Z")
        XCTAssertEqual(item.json["attributes"]?["endDate"], "2026-06-15T08:30:00.500Z")
        XCTAssertEqual(item.json["attributes"]?["thumbnailData"], .string(Base64.encode([0x89, 0x50, 0x4E, 0x47, 0x00, 0xFF])))
        XCTAssertEqual(item.json["attributes"]?["favouriteColour"], "green")
    }

    func testTheWireFormIsValidForTheHost() throws {
        let validated = try ItemValidator.validate(fullItem().json)
        XCTAssertEqual(validated.uniqueIdentifier, "employee.42")
        XCTAssertEqual(validated.domainIdentifier, "com.example.colleagues.employee")
        XCTAssertEqual(validated.expiration, 1_798_675_200)
        XCTAssertEqual(validated.searchText.first, "Ada Park")
    }

    func testCodableRoundTrip() throws {
        let item = fullItem()
        let data = try JSONEncoder().encode(item)
        let decoded = try JSONDecoder().decode(SearchableItem.self, from: data)
        XCTAssertEqual(decoded, item)
        let many = try JSONDecoder().decode([SearchableItem].self, from: try JSONEncoder().encode([item, SearchableItem(uniqueIdentifier: "b")]))
        XCTAssertEqual(many, [item, SearchableItem(uniqueIdentifier: "b")])
    }

    func testCodableRejectsInvalidItems() {
        XCTAssertThrowsError(try JSONDecoder().decode(SearchableItem.self, from: Data(#"{"uniqueIdentifier":""}"#.utf8)))
        XCTAssertThrowsError(try JSONDecoder().decode(SearchableItem.self, from: Data(#"{"uniqueIdentifier":"a","attributes":{"rating":"x"}}"#.utf8)))
    }

    func testMinimalItemJSON() throws {
        let item = SearchableItem(uniqueIdentifier: "x")
        XCTAssertEqual(JSONWriter.string(item.json), #"{"uniqueIdentifier":"x","attributes":{}}"#)
        XCTAssertEqual(try SearchableItem(json: json(#"{"uniqueIdentifier":"x"}"#)), item)
    }

    func testSearchableItemRejectsWhatTheValidatorRejects() {
        let cases = [#"{"uniqueIdentifier":""}"#, #"{"uniqueIdentifier":"a","attributes":{"title":1}}"#,
                     #"{"uniqueIdentifier":"a","expirationDate":"2026-02-30T00:00:00Z"}"#]
        for text in cases {
            do {
                _ = try SearchableItem(json: json(text))
                XCTFail("accepted \(text)")
            } catch {
                XCTAssertEqual(error, validationError(json(text)), text)
            }
        }
    }

    func testSearchableItemAcceptsNullAttributesLikeTheValidator() throws {
        let value = json(#"{"uniqueIdentifier":"a","attributes":null}"#)
        XCTAssertNotNil(validate(value))
        let item = try SearchableItem(json: value)
        XCTAssertEqual(item, SearchableItem(uniqueIdentifier: "a"))
    }

    func testAttributesReaderErrorsNameTheirPath() {
        func problem(_ text: String) -> String? {
            do { _ = try SearchableItemAttributes(json: json(text)); return nil } catch { return error.description }
        }
        XCTAssertEqual(problem(#"{"title":5}"#), "attributes.title: expected a string, got 5")
        XCTAssertEqual(problem(#"{"keywords":["a",1]}"#), "attributes.keywords[1]: expected a string, got 1")
        XCTAssertEqual(problem(#"{"rating":"high"}"#), "attributes.rating: expected a number, got \"high\"")
        XCTAssertEqual(problem(#"{"supportsNavigation":"yes"}"#), "attributes.supportsNavigation: expected true or false, got \"yes\"")
        XCTAssertEqual(problem(#"{"startDate":"2026-02-30T00:00:00Z"}"#), "attributes.startDate: expected an RFC 3339 date, got \"2026-02-30T00:00:00Z\"")
        XCTAssertEqual(problem(#"{"thumbnailData":"!!"}"#)?.hasPrefix("attributes.thumbnailData: expected base64"), true)
        XCTAssertEqual(problem("[]"), "attributes: expected an object, got an array")
        XCTAssertNil(problem(#"{"unknown":{"any":"thing"}}"#))
    }

    func testCustomAttributesCannotShadowKnownOnes() throws {
        let attributes = SearchableItemAttributes(title: "real", custom: ["title": "fake", "extra": 1])
        let written = attributes.json
        XCTAssertEqual(written["title"], "real")
        XCTAssertEqual(written.objectValue?.filter { $0.0 == "title" }.count, 1)
        XCTAssertEqual(written["extra"], 1)
    }
}

final class RFC3339Tests: XCTestCase {
    func testParseUTC() {
        XCTAssertEqual(RFC3339.parse("1970-01-01T00:00:00Z"), 0)
        XCTAssertEqual(RFC3339.parse("2026-12-31T00:00:00Z"), 1_798_675_200)
        XCTAssertEqual(RFC3339.parse("2024-02-29T12:34:56Z"), 1_709_210_096)
        XCTAssertEqual(RFC3339.parse("2000-01-01T00:00:00Z"), 946_684_800)
        XCTAssertEqual(RFC3339.parse("1969-12-31T23:59:59Z"), -1)
        XCTAssertEqual(RFC3339.parse("1900-01-01T00:00:00Z"), -2_208_988_800)
    }

    func testParseAgreesWithFoundationForManyDates() {
        var generator = SplitMix64(seed: 2026)
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC")!
        for _ in 0..<500 {
            let seconds = Double(Int64.random(in: -2_000_000_000...4_000_000_000, using: &generator))
            let parts = calendar.dateComponents([.year, .month, .day, .hour, .minute, .second], from: Date(timeIntervalSince1970: seconds))
            func pad(_ value: Int?, _ width: Int) -> String {
                let digits = String(value ?? -1)
                return String(repeating: "0", count: max(0, width - digits.count)) + digits
            }
            let text = "\(pad(parts.year, 4))-\(pad(parts.month, 2))-\(pad(parts.day, 2))T\(pad(parts.hour, 2)):\(pad(parts.minute, 2)):\(pad(parts.second, 2))Z"
            XCTAssertEqual(RFC3339.parse(text), seconds, text)
            XCTAssertEqual(RFC3339.format(seconds), text)
        }
    }

    func testParseOffsets() {
        XCTAssertEqual(RFC3339.parse("2026-12-31T01:00:00+01:00"), 1_798_675_200)
        XCTAssertEqual(RFC3339.parse("2026-12-30T19:00:00-05:00"), 1_798_675_200)
        XCTAssertEqual(RFC3339.parse("2026-12-31T05:30:00+05:30"), 1_798_675_200)
        XCTAssertEqual(RFC3339.parse("2026-12-30T23:15:00-00:45"), 1_798_675_200)
        XCTAssertEqual(RFC3339.parse("2026-12-31T00:00:00+00:00"), 1_798_675_200)
        XCTAssertEqual(RFC3339.parse("2026-12-31T00:00:00-00:00"), 1_798_675_200)
        XCTAssertEqual(RFC3339.parse("2026-12-31T23:59:00+23:59"), 1_798_675_200)
    }

    func testParseFractions() throws {
        XCTAssertEqual(RFC3339.parse("2026-12-31T00:00:00.5Z"), 1_798_675_200.5)
        XCTAssertEqual(RFC3339.parse("2026-12-31T01:00:00.25+01:00"), 1_798_675_200.25)
        XCTAssertEqual(try XCTUnwrap(RFC3339.parse("2026-12-31T00:00:00.123Z")), 1_798_675_200.123, accuracy: 1e-6)
        XCTAssertEqual(try XCTUnwrap(RFC3339.parse("1970-01-01T00:00:00.123456789Z")), 0.123456789, accuracy: 1e-9)
        XCTAssertEqual(RFC3339.parse("1970-01-01T00:00:00.000Z"), 0)
    }

    func testParseAcceptsRFC3339Variants() {
        XCTAssertEqual(RFC3339.parse("2026-12-31t00:00:00z"), 1_798_675_200)
        XCTAssertEqual(RFC3339.parse("2026-12-31 00:00:00Z"), 1_798_675_200)
        // A leap second is valid RFC 3339; it reads as the next second.
        XCTAssertEqual(RFC3339.parse("2016-12-31T23:59:60Z"), RFC3339.parse("2017-01-01T00:00:00Z"))
    }

    func testLeapYears() {
        XCTAssertNotNil(RFC3339.parse("2024-02-29T00:00:00Z"))
        XCTAssertNotNil(RFC3339.parse("2000-02-29T00:00:00Z"))
        XCTAssertNil(RFC3339.parse("2025-02-29T00:00:00Z"))
        XCTAssertNil(RFC3339.parse("1900-02-29T00:00:00Z"))
        XCTAssertNil(RFC3339.parse("2100-02-29T00:00:00Z"))
    }

    func testInvalidDates() {
        let invalid = [
            "2026-02-30T00:00:00Z", "2026-02-29T00:00:00Z", "2026-04-31T00:00:00Z", "2026-06-31T00:00:00Z",
            "2026-09-31T00:00:00Z", "2026-11-31T00:00:00Z", "2026-01-32T00:00:00Z",
            "2026-00-10T00:00:00Z", "2026-13-01T00:00:00Z", "2026-12-00T00:00:00Z",
            "2026-12-31T24:00:00Z", "2026-12-31T23:60:00Z", "2026-12-31T23:59:61Z",
            "2026-12-31T00:00:00", "2026-12-31", "2026-12-31T00:00Z", "2026-12-31T00:00:00.Z",
            "2026-12-31T00:00:00+01", "2026-12-31T00:00:00+0100", "2026-12-31T00:00:00+01:0",
            "2026-12-31T00:00:00+24:00", "2026-12-31T00:00:00+01:60",
            "2026-12-31T00:00:00Zjunk", "2026-12-31T00:00:00+01:00x", " 2026-12-31T00:00:00Z",
            "26-12-31T00:00:00Z", "2026/12/31T00:00:00Z", "2026-12-31X00:00:00Z", "2026-1-31T00:00:00Z",
            "2026-12-31T00:00:00UTC", "", "not a date at all!!!!", "２０２６-12-31T00:00:00Z",
        ]
        for text in invalid {
            XCTAssertNil(RFC3339.parse(text), text)
        }
    }

    func testFormat() {
        XCTAssertEqual(RFC3339.format(0), "1970-01-01T00:00:00Z")
        XCTAssertEqual(RFC3339.format(1_798_675_200), "2026-12-31T00:00:00Z")
        XCTAssertEqual(RFC3339.format(1_709_210_096), "2024-02-29T12:34:56Z")
        XCTAssertEqual(RFC3339.format(-1), "1969-12-31T23:59:59Z")
        XCTAssertEqual(RFC3339.format(-0.5), "1969-12-31T23:59:59.500Z")
        XCTAssertEqual(RFC3339.format(1_798_675_200.5), "2026-12-31T00:00:00.500Z")
        XCTAssertEqual(RFC3339.format(1_798_675_200.25), "2026-12-31T00:00:00.250Z")
        XCTAssertEqual(RFC3339.format(-2_208_988_800), "1900-01-01T00:00:00Z")
    }

    func testFormatThenParseRoundTrips() {
        var generator = SplitMix64(seed: 99)
        for _ in 0..<1000 {
            let millis = Int64.random(in: -5_000_000_000_000...5_000_000_000_000, using: &generator)
            let seconds = Double(millis) / 1000
            let text = RFC3339.format(seconds)
            guard let parsed = RFC3339.parse(text) else { XCTFail("cannot parse \(text)"); continue }
            XCTAssertEqual(parsed, seconds, accuracy: 0.0005, text)
        }
    }

    func testFormatRoundsSubMillisecondFractionsToTheNearestMillisecond() throws {
        // A fraction that rounds up to a whole second must carry into the seconds.
        let seconds = 1_798_675_199.9996
        let text = RFC3339.format(seconds)
        let parsed = try XCTUnwrap(RFC3339.parse(text), text)
        XCTAssertEqual(parsed, seconds, accuracy: 0.001)
        XCTAssertEqual(text, "2026-12-31T00:00:00Z")
    }
}

final class ItemWriterTests: XCTestCase {
    func testDirectWriterMatchesTheTreeWriterForEveryAttributeKind() throws {
        let attributes = SearchableItemAttributes(
            title: "Zoë \"quoted\"\nline", displayName: "d", contentDescription: "c", textContent: "t",
            contentType: "public.text", contentURL: "https://example.com/a", thumbnailURL: "u", relatedUniqueIdentifier: "r",
            keywords: ["a", "b\u{1}"], alternateNames: [], authors: ["x"], emailAddresses: ["e@example.com"], phoneNumbers: ["+1"],
            rating: 4.5, rankingHint: 2, latitude: -12.25, longitude: 1e-7, supportsPhoneCall: true, supportsNavigation: false,
            startDate: Date(timeIntervalSince1970: 1_800_000_000.25), endDate: Date(timeIntervalSince1970: 0),
            contentCreationDate: Date(timeIntervalSince1970: 86_400), contentModificationDate: nil,
            thumbnailData: [0, 1, 2, 250], custom: ["zeta": .array([1, .null]), "alpha": .object([("k", "v")]), "title": "ignored: known key"])
        let items = [
            SearchableItem(uniqueIdentifier: "full", domainIdentifier: "com.example.d", expirationDate: Date(timeIntervalSince1970: 1_900_000_000), attributes: attributes),
            SearchableItem(uniqueIdentifier: "bare"),
            SearchableItem(uniqueIdentifier: "ü\\/", attributes: .init(title: "only title")),
        ]
        for item in items {
            var direct: [UInt8] = []
            item.writeJSON(into: &direct)
            XCTAssertEqual(String(decoding: direct, as: UTF8.self), JSONWriter.string(item.json))
            XCTAssertEqual(try SearchableItem(json: try JSONParser.parse(direct)), try SearchableItem(json: item.json))
        }
    }

    func testPartialUpdatesAreReadWrittenAndMerged() throws {
        var attributes = SearchableItemAttributes(rating: 5)
        attributes.custom["title"] = .null
        let update = SearchableItem(uniqueIdentifier: "a", attributes: attributes, isUpdate: true)
        var direct: [UInt8] = []
        update.writeJSON(into: &direct)
        XCTAssertEqual(String(decoding: direct, as: UTF8.self), #"{"uniqueIdentifier":"a","isUpdate":true,"attributes":{"rating":5,"title":null}}"#)
        XCTAssertEqual(JSONWriter.string(update.json), String(decoding: direct, as: UTF8.self))
        let validated = try ItemValidator.validate(update.json)
        XCTAssertTrue(validated.isUpdate)
        XCTAssertEqual(try SearchableItem(json: update.json).isUpdate, true)

        let merged = try validated.merged(intoAttributes: Array(#"{"title":"Old","keywords":["k"],"rating":1}"#.utf8),
                                          domainIdentifier: "d", expiration: 42)
        XCTAssertFalse(merged.isUpdate)
        XCTAssertEqual(String(decoding: merged.attributesJSON, as: UTF8.self), #"{"keywords":["k"],"rating":5}"#)
        XCTAssertEqual(merged.domainIdentifier, "d")
        XCTAssertEqual(merged.expiration, 42)
        XCTAssertNil(merged.text(.title), "the full-text fields follow the merged attributes")
        XCTAssertEqual(merged.text(.keywords), "k")
        XCTAssertEqual(merged.filters.rating, 5)

        XCTAssertThrowsError(try ItemValidator.validate(["uniqueIdentifier": "a", "isUpdate": "yes"])) { error in
            XCTAssertEqual((error as? FieldError)?.description.contains("item.isUpdate: expected true or false"), true, "\(error)")
        }
        XCTAssertFalse(try ItemValidator.validate(["uniqueIdentifier": "a", "isUpdate": .null]).isUpdate)
    }

    func testDeclaredAttributesAreCheckedAndSearchedByDefaultThroughTextContent() throws {
        let declarations = try AttributeDeclaration.parseAll([
            "pages": ["type": "number"], "blurb": ["type": "string", "searchableByDefault": true], "tags": ["type": "string", "multiValued": true],
        ])
        XCTAssertEqual(declarations["tags"]?.attributeKind, .stringList)
        XCTAssertEqual(declarations["blurb"]?.searchable, true)
        let item: JSONValue = ["uniqueIdentifier": "a", "attributes": ["textContent": "body", "blurb": "tide", "pages": 3, "tags": ["x"]]]
        XCTAssertEqual(try ItemValidator.validate(item, declarations: declarations).text(.textContent), "body\ntide")
        XCTAssertEqual(try ItemValidator.validate(item).text(.textContent), "body", "undeclared: not searched")
        XCTAssertThrowsError(try ItemValidator.validate(["uniqueIdentifier": "a", "attributes": ["tags": "x"]], declarations: declarations)) { error in
            XCTAssertEqual((error as? FieldError)?.path, "item.attributes.tags")
        }
        var manifest = try Manifest.parse(["manifestVersion": 1, "bundleIdentifier": "com.example.a", "executable": "x", "attributes": ["pages": ["type": "number"]]])
        XCTAssertEqual(manifest.attributes["pages"]?.kind, .number)
        manifest = try Manifest.parse(manifest.json)
        XCTAssertEqual(manifest.attributes["pages"]?.kind, .number, "the manifest's JSON keeps its declarations")
        XCTAssertTrue(Manifest.warnings(["attribute": [:]]).contains { $0.contains("did you mean 'attributes'") })
    }

    // MARK: Numbers JSON cannot spell, and undeclared names

    func testNonFiniteNumbersAreRejectedWithTheirPath() {
        let cases: [(JSONValue, String)] = [
            (["uniqueIdentifier": "a", "attributes": ["rating": .double(.nan)]], "item.attributes.rating: expected a finite number (JSON has no NaN or infinities), got NaN"),
            (["uniqueIdentifier": "a", "attributes": ["longitude": .double(-.infinity)]], "item.attributes.longitude: expected a finite number (JSON has no NaN or infinities), got -Infinity"),
            (["uniqueIdentifier": "a", "attributes": ["extra": ["deep": [1, .double(.infinity)]]]], "item.attributes.extra.deep[1]: expected a finite number (JSON has no NaN or infinities), got Infinity"),
        ]
        for (item, reason) in cases {
            XCTAssertThrowsError(try ItemValidator.validate(item)) { XCTAssertEqual("\($0)", reason) }
        }
        let declared = ["score": AttributeDeclaration(kind: .number)]
        XCTAssertThrowsError(try ItemValidator.validate(["uniqueIdentifier": "a", "attributes": ["score": .double(.nan)]], declarations: declared)) {
            XCTAssertEqual("\($0)", "item.attributes.score: expected a finite number (JSON has no NaN or infinities), got NaN")
        }
    }

    func testUndeclaredAttributeNamesAreReported() throws {
        var names: [String] = []
        _ = try ItemValidator.validate(["uniqueIdentifier": "a", "attributes": ["title": "T", "keyword": "k", "score": 1, "shelf": "B"]],
                                       declarations: ["score": AttributeDeclaration(kind: .number)]) { names.append($0) }
        XCTAssertEqual(names, ["keyword", "shelf"])
    }

    func testAttributesNameTheirFirstNonFiniteNumber() {
        XCTAssertNil(SearchableItemAttributes(rating: 4).firstNonFiniteNumber)
        XCTAssertEqual(SearchableItemAttributes(title: "t", rating: .nan).firstNonFiniteNumber?.attribute, "rating")
        XCTAssertEqual(SearchableItemAttributes(custom: ["m": ["x": .double(.infinity)]]).firstNonFiniteNumber?.attribute, "m.x")
    }
}
