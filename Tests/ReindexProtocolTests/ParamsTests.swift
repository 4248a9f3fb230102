import Foundation
import XCTest
import ReindexProtocol

/// Parses a JSON literal written in the test, or fails.
private func json(_ text: String, file: StaticString = #filePath, line: UInt = #line) -> JSONValue {
    do { return try JSONParser.parse(text: text) } catch {
        XCTFail("bad test JSON \(text): \(error)", file: file, line: line)
        return .null
    }
}

/// The description of the FieldError `body` throws, or nil (and a failure) when it does not throw.
private func fieldError<T>(_ body: () throws -> T, file: StaticString = #filePath, line: UInt = #line) -> String? {
    do {
        let value = try body()
        XCTFail("expected a FieldError, got \(value)", file: file, line: line)
        return nil
    } catch let error as FieldError {
        return error.description
    } catch {
        XCTFail("expected a FieldError, got \(error)", file: file, line: line)
        return nil
    }
}

final class ParamsTests: XCTestCase {
    // MARK: initialize

    func testInitializeParamsRoundTrip() throws {
        let params = InitializeParams(protocolVersions: [1, 2], hostVersion: "0.1.0", bundleIdentifier: "com.example.a", debug: true)
        XCTAssertEqual(JSONWriter.string(params.json),
                       #"{"protocolVersions":[1,2],"host":{"name":"reindex","version":"0.1.0"},"bundleIdentifier":"com.example.a","debug":true}"#)
        XCTAssertEqual(try InitializeParams(json: params.json), params)
        XCTAssertEqual(try InitializeParams(json: try JSONParser.parse(JSONWriter.bytes(params.json))), params)
    }

    func testInitializeParamsDefaults() throws {
        let params = try InitializeParams(json: json(#"{"protocolVersions":[1]}"#))
        XCTAssertEqual(params.protocolVersions, [1])
        XCTAssertEqual(params.hostName, "reindex")
        XCTAssertEqual(params.hostVersion, "")
        XCTAssertEqual(params.bundleIdentifier, "")
        XCTAssertFalse(params.debug)
    }

    func testInitializeParamsErrors() {
        XCTAssertEqual(fieldError { try InitializeParams(json: nil) }, "params: expected an object, got null")
        XCTAssertEqual(fieldError { try InitializeParams(json: json("[]")) }, "params: expected an object, got an array")
        XCTAssertEqual(fieldError { try InitializeParams(json: json("{}")) }, "params.protocolVersions: is required (an array of numbers)")
        XCTAssertEqual(fieldError { try InitializeParams(json: json(#"{"protocolVersions":1}"#)) }, "params.protocolVersions: expected an array, got 1")
        XCTAssertEqual(fieldError { try InitializeParams(json: json(#"{"protocolVersions":[1,"2"]}"#)) }, "params.protocolVersions[1]: expected a whole number, got \"2\"")
        XCTAssertEqual(fieldError { try InitializeParams(json: json(#"{"protocolVersions":[1.5]}"#)) }, "params.protocolVersions[0]: expected a whole number, got 1.5")
        XCTAssertEqual(fieldError { try InitializeParams(json: json(#"{"protocolVersions":[1],"host":"reindex"}"#)) }, "params.host: expected an object, got \"reindex\"")
        XCTAssertEqual(fieldError { try InitializeParams(json: json(#"{"protocolVersions":[1],"host":{"name":1}}"#)) }, "params.host.name: expected a string, got 1")
        XCTAssertEqual(fieldError { try InitializeParams(json: json(#"{"protocolVersions":[1],"host":{"version":[]}}"#)) }, "params.host.version: expected a string, got an array")
        XCTAssertEqual(fieldError { try InitializeParams(json: json(#"{"protocolVersions":[1],"bundleIdentifier":5}"#)) }, "params.bundleIdentifier: expected a string, got 5")
        XCTAssertEqual(fieldError { try InitializeParams(json: json(#"{"protocolVersions":[1],"debug":"yes"}"#)) }, "params.debug: expected true or false, got \"yes\"")
    }

    func testInitializeResultRoundTrip() throws {
        let result = InitializeResult(extensionName: "Colleagues", extensionVersion: "1.0.0", capabilities: .object([("x", true)]))
        XCTAssertEqual(JSONWriter.string(result.json),
                       #"{"protocolVersion":1,"extension":{"name":"Colleagues","version":"1.0.0"},"capabilities":{"x":true}}"#)
        XCTAssertEqual(try InitializeResult(json: result.json), result)
        let minimal = try InitializeResult(json: json(#"{"protocolVersion":1}"#))
        XCTAssertEqual(minimal, InitializeResult(extensionName: "", extensionVersion: ""))
    }

    func testInitializeResultErrors() {
        XCTAssertEqual(fieldError { try InitializeResult(json: json("1")) }, "result: expected an object, got 1")
        XCTAssertEqual(fieldError { try InitializeResult(json: json("{}")) }, "result.protocolVersion: is required (a number)")
        XCTAssertEqual(fieldError { try InitializeResult(json: json(#"{"protocolVersion":"1"}"#)) }, "result.protocolVersion: expected a whole number, got \"1\"")
        XCTAssertEqual(fieldError { try InitializeResult(json: json(#"{"protocolVersion":1,"extension":[]}"#)) }, "result.extension: expected an object, got an array")
        XCTAssertEqual(fieldError { try InitializeResult(json: json(#"{"protocolVersion":1,"extension":{"name":false}}"#)) }, "result.extension.name: expected a string, got false")
    }

    // MARK: reindexAll / reindexItems

    func testReindexAllParamsRoundTrip() throws {
        for params in [ReindexAllParams(reason: .forced, clientState: nil), ReindexAllParams(reason: .retry, clientState: "AAEC"),
                       ReindexAllParams(reason: ReindexReason("somethingNew"), clientState: "")] {
            XCTAssertEqual(try ReindexAllParams(json: params.json), params)
        }
        XCTAssertEqual(JSONWriter.string(ReindexAllParams(reason: .indexLost, clientState: nil).json), #"{"reason":"indexLost","clientState":null}"#)
        let defaults = try ReindexAllParams(json: json("{}"))
        XCTAssertEqual(defaults, ReindexAllParams(reason: .forced, clientState: nil))
    }

    func testReindexAllParamsErrors() {
        XCTAssertEqual(fieldError { try ReindexAllParams(json: nil) }, "params: expected an object, got null")
        XCTAssertEqual(fieldError { try ReindexAllParams(json: json(#"{"reason":5}"#)) }, "params.reason: expected a string, got 5")
        XCTAssertEqual(fieldError { try ReindexAllParams(json: json(#"{"reason":"forced","clientState":true}"#)) }, "params.clientState: expected a string, got true")
    }

    func testReindexReasons() {
        XCTAssertEqual(ReindexReason.known.map(\.rawValue), ["forced", "indexLost", "bundleChanged", "expiring", "retry"])
        XCTAssertEqual(ReindexReason(rawValue: "expiring"), .expiring)
        XCTAssertEqual(ReindexReason("x").description, "x")
    }

    func testReindexItemsParamsRoundTrip() throws {
        let params = ReindexItemsParams(identifiers: ["a", "b\nc", ""], reason: .expiring)
        XCTAssertEqual(try ReindexItemsParams(json: params.json), params)
        XCTAssertEqual(JSONWriter.string(ReindexItemsParams(identifiers: ["x"], reason: .forced).json), #"{"identifiers":["x"],"reason":"forced"}"#)
        XCTAssertEqual(try ReindexItemsParams(json: json(#"{"identifiers":[]}"#)).reason, .forced)
    }

    func testReindexItemsParamsErrors() {
        XCTAssertEqual(fieldError { try ReindexItemsParams(json: json("{}")) }, "params.identifiers: is required (an array of strings)")
        XCTAssertEqual(fieldError { try ReindexItemsParams(json: json(#"{"identifiers":"a"}"#)) }, "params.identifiers: expected an array of strings, got \"a\"")
        XCTAssertEqual(fieldError { try ReindexItemsParams(json: json(#"{"identifiers":["a",2]}"#)) }, "params.identifiers[1]: expected a string, got 2")
        XCTAssertEqual(fieldError { try ReindexItemsParams(json: json(#"{"identifiers":[],"reason":[]}"#)) }, "params.reason: expected a string, got an array")
    }

    // MARK: index/delete, index/deleteDomains

    func testDeleteParams() throws {
        let params = DeleteParams(identifiers: ["a", "b"])
        XCTAssertEqual(JSONWriter.string(params.json), #"{"identifiers":["a","b"]}"#)
        XCTAssertEqual(try DeleteParams(json: params.json), params)
        XCTAssertEqual(fieldError { try DeleteParams(json: json("{}")) }, "params.identifiers: is required (an array of strings)")
        XCTAssertEqual(fieldError { try DeleteParams(json: json(#"{"identifiers":[null]}"#)) }, "params.identifiers[0]: expected a string, got null")
        XCTAssertEqual(fieldError { try DeleteParams(json: json(#"{"identifiers":{}}"#)) }, "params.identifiers: expected an array of strings, got an object")
        XCTAssertEqual(fieldError { try DeleteParams(json: json("true")) }, "params: expected an object, got true")
    }

    func testDeleteDomainsParams() throws {
        let params = DeleteDomainsParams(domainIdentifiers: ["com.example.a"])
        XCTAssertEqual(JSONWriter.string(params.json), #"{"domainIdentifiers":["com.example.a"]}"#)
        XCTAssertEqual(try DeleteDomainsParams(json: params.json), params)
        XCTAssertEqual(fieldError { try DeleteDomainsParams(json: json(#"{"identifiers":[]}"#)) }, "params.domainIdentifiers: is required (an array of strings)")
        XCTAssertEqual(fieldError { try DeleteDomainsParams(json: json(#"{"domainIdentifiers":[1]}"#)) }, "params.domainIdentifiers[0]: expected a string, got 1")
    }

    // MARK: $/progress

    func testProgressParams() throws {
        let full = ProgressParams(requestID: .number(3), completed: 10, total: 20, message: "half")
        XCTAssertEqual(JSONWriter.string(full.json), #"{"requestId":3,"completed":10,"total":20,"message":"half"}"#)
        XCTAssertEqual(try ProgressParams(json: full.json), full)
        let minimal = ProgressParams(requestID: .string("r"), completed: 0)
        XCTAssertEqual(JSONWriter.string(minimal.json), #"{"requestId":"r","completed":0}"#)
        XCTAssertEqual(try ProgressParams(json: minimal.json), minimal)
        XCTAssertEqual(try ProgressParams(json: json(#"{"requestId":1}"#)).completed, 0)
    }

    func testProgressParamsErrors() {
        XCTAssertEqual(fieldError { try ProgressParams(json: json("{}")) }, "params.requestId: a request id (number or string)")
        XCTAssertEqual(fieldError { try ProgressParams(json: json(#"{"requestId":true}"#)) }, "params.requestId: expected a request id (number or string), got true")
        XCTAssertEqual(fieldError { try ProgressParams(json: json(#"{"requestId":1.5}"#)) }, "params.requestId: expected a request id (number or string), got 1.5")
        XCTAssertEqual(fieldError { try ProgressParams(json: json(#"{"requestId":1,"completed":"3"}"#)) }, "params.completed: expected a whole number, got \"3\"")
        XCTAssertEqual(fieldError { try ProgressParams(json: json(#"{"requestId":1,"total":0.5}"#)) }, "params.total: expected a whole number, got 0.5")
        XCTAssertEqual(fieldError { try ProgressParams(json: json(#"{"requestId":1,"message":7}"#)) }, "params.message: expected a string, got 7")
        // Past Int64 the reader holds a double: the message says the number is too large, not
        // that it is not whole.
        XCTAssertEqual(fieldError { try ProgressParams(json: json(#"{"requestId":1,"total":100000000000000000000}"#)) },
                       "params.total: expected a whole number from -9223372036854775808 to 9223372036854775807, got 1e+20")
        XCTAssertEqual(try ProgressParams(json: json(#"{"requestId":1,"total":9223372036854775807}"#)).total, Int64.max)
    }

    // MARK: batch/commit

    func testBatchCommitParams() throws {
        let params = BatchCommitParams(requestID: .number(1), clientState: Base64.encode([1, 2, 3]))
        XCTAssertEqual(JSONWriter.string(params.json), #"{"requestId":1,"clientState":"AQID"}"#)
        XCTAssertEqual(try BatchCommitParams(json: params.json), params)
        let none = BatchCommitParams(requestID: .string("q"), clientState: nil)
        XCTAssertEqual(JSONWriter.string(none.json), #"{"requestId":"q","clientState":null}"#)
        XCTAssertEqual(try BatchCommitParams(json: none.json), none)
        XCTAssertEqual(BatchCommitParams.maximumClientStateBytes, 250)
    }

    func testBatchCommitParamsErrors() {
        XCTAssertEqual(fieldError { try BatchCommitParams(json: nil) }, "params: expected an object, got null")
        XCTAssertEqual(fieldError { try BatchCommitParams(json: json(#"{"clientState":"AA=="}"#)) }, "params.requestId: a request id (number or string)")
        XCTAssertEqual(fieldError { try BatchCommitParams(json: json(#"{"requestId":null}"#)) }, "params.requestId: expected a request id (number or string), got null")
        XCTAssertEqual(fieldError { try BatchCommitParams(json: json(#"{"requestId":1,"clientState":1}"#)) }, "params.clientState: expected a string, got 1")
    }

    func testBatchCommitResult() throws {
        XCTAssertEqual(JSONWriter.string(BatchCommitResult(committed: 42).json), #"{"committed":42}"#)
        XCTAssertEqual(try BatchCommitResult(json: BatchCommitResult(committed: 42).json), BatchCommitResult(committed: 42))
        XCTAssertEqual(try BatchCommitResult(json: json("{}")).committed, 0)
        XCTAssertEqual(fieldError { try BatchCommitResult(json: json(#"{"committed":"many"}"#)) }, "result.committed: expected a whole number, got \"many\"")
        XCTAssertEqual(fieldError { try BatchCommitResult(json: json("[]")) }, "result: expected an object, got an array")
    }

    // MARK: $/cancel

    func testCancelParams() throws {
        XCTAssertEqual(JSONWriter.string(CancelParams(id: .number(5)).json), #"{"id":5}"#)
        for id in [RequestID.number(5), .string("five")] {
            XCTAssertEqual(try CancelParams(json: CancelParams(id: id).json), CancelParams(id: id))
        }
        XCTAssertEqual(fieldError { try CancelParams(json: json("{}")) }, "params.id: a request id (number or string)")
        XCTAssertEqual(fieldError { try CancelParams(json: json(#"{"id":[]}"#)) }, "params.id: expected a request id (number or string), got an array")
        XCTAssertEqual(fieldError { try CancelParams(json: nil) }, "params: expected an object, got null")
    }

    // MARK: Base64

    func testBase64RFC4648Vectors() {
        let vectors = [("", ""), ("f", "Zg=="), ("fo", "Zm8="), ("foo", "Zm9v"), ("foob", "Zm9vYg=="), ("fooba", "Zm9vYmE="), ("foobar", "Zm9vYmFy")]
        for (plain, encoded) in vectors {
            XCTAssertEqual(Base64.encode(Array(plain.utf8)), encoded)
            XCTAssertEqual(Base64.decode(encoded), Array(plain.utf8), encoded)
        }
    }

    func testBase64AllByteValues() {
        let bytes = (0...255).map { UInt8($0) }
        let encoded = Base64.encode(bytes)
        XCTAssertEqual(encoded, Data(bytes).base64EncodedString())
        XCTAssertEqual(Base64.decode(encoded), bytes)
    }

    func testBase64RandomRoundTripsAgreeWithFoundation() {
        var generator = SplitMix64(seed: 7)
        for _ in 0..<500 {
            let bytes = (0..<Int.random(in: 0...300, using: &generator)).map { _ in UInt8.random(in: 0...255, using: &generator) }
            let encoded = Base64.encode(bytes)
            XCTAssertEqual(encoded, Data(bytes).base64EncodedString())
            XCTAssertEqual(Base64.decode(encoded), bytes)
        }
    }

    func testBase64URLSafeAlphabetDecodes() {
        XCTAssertEqual(Base64.decode("+/8="), [0xFB, 0xFF])
        XCTAssertEqual(Base64.decode("-_8="), [0xFB, 0xFF])
        XCTAssertEqual(Base64.decode("-_8"), [0xFB, 0xFF])
    }

    func testBase64MisplacedPaddingIsRejected() throws {
        // Padding that is not the end of an incomplete quantum is not base64 in any variant.
        var accepted: [String] = []
        for text in ["=", "==", "Zm9v=", "Zm9v==", "Zg=", "Zm8=="] where Base64.decode(text) != nil {
            accepted.append(text)
        }
        XCTAssertEqual(accepted, [])
    }

    func testBase64InvalidInput() {
        for text in ["Z", "Zm9vY", "Zg=a", "Zg===", "Zm9v!", "Zm 9v", " Zg==", "Zg==\n", "Zm9v\u{0}", "é", "====", "Zg=Zg=="] {
            XCTAssertNil(Base64.decode(text), text.debugDescription)
        }
    }
}
