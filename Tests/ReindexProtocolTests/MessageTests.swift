import XCTest
import ReindexProtocol

private func decode(_ text: String, file: StaticString = #filePath, line: UInt = #line) -> Message? {
    do {
        return try Array(text.utf8).withUnsafeBytes { raw throws(MessageDecodingError) in try Message.decode(line: raw) }
    } catch {
        XCTFail("could not decode \(text): \(error)", file: file, line: line)
        return nil
    }
}

private func decodingError(_ text: String, file: StaticString = #filePath, line: UInt = #line) -> MessageDecodingError? {
    do {
        let message = try Array(text.utf8).withUnsafeBytes { raw throws(MessageDecodingError) in try Message.decode(line: raw) }
        XCTFail("expected an error for \(text), got \(message)", file: file, line: line)
        return nil
    } catch let error as MessageDecodingError {
        return error
    } catch {
        XCTFail("unexpected error \(error)", file: file, line: line)
        return nil
    }
}

final class MessageTests: XCTestCase {
    // MARK: Requests and notifications

    func testRequestWithNumberID() throws {
        let message = decode(#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersions":[1]}}"#)
        XCTAssertEqual(message, .request(id: .number(0), method: "initialize", params: .object([("protocolVersions", [1])])))
        XCTAssertEqual(message?.method, "initialize")
    }

    func testRequestWithStringID() {
        XCTAssertEqual(decode(#"{"jsonrpc":"2.0","id":"req-7","method":"batch/commit","params":{"requestId":1}}"#),
                       .request(id: .string("req-7"), method: "batch/commit", params: .object([("requestId", 1)])))
    }

    func testRequestIDsThatAreWholeDoublesBecomeNumbers() {
        XCTAssertEqual(decode(#"{"jsonrpc":"2.0","id":5.0,"method":"m"}"#), .request(id: .number(5), method: "m", params: nil))
        XCTAssertEqual(decode(#"{"jsonrpc":"2.0","id":-3,"method":"m"}"#), .request(id: .number(-3), method: "m", params: nil))
        XCTAssertEqual(decode(#"{"jsonrpc":"2.0","id":9223372036854775807,"method":"m"}"#),
                       .request(id: .number(Int64.max), method: "m", params: nil))
    }

    func testRequestWithoutParamsAndWithArrayParams() {
        XCTAssertEqual(decode(#"{"jsonrpc":"2.0","id":1,"method":"reindexAll"}"#), .request(id: .number(1), method: "reindexAll", params: nil))
        XCTAssertEqual(decode(#"{"jsonrpc":"2.0","id":1,"method":"m","params":[1,2]}"#), .request(id: .number(1), method: "m", params: [1, 2]))
    }

    func testMemberOrderDoesNotMatter() {
        XCTAssertEqual(decode(#"{"params":{},"method":"m","id":2,"jsonrpc":"2.0"}"#), .request(id: .number(2), method: "m", params: .object([])))
    }

    func testUnknownMembersAreIgnored() {
        XCTAssertEqual(decode(#"{"jsonrpc":"2.0","method":"m","extra":{"x":1}}"#), .notification(method: "m", params: nil))
    }

    func testNotifications() {
        XCTAssertEqual(decode(#"{"jsonrpc":"2.0","method":"index/deleteAll","params":{}}"#),
                       .notification(method: "index/deleteAll", params: .object([])))
        XCTAssertEqual(decode(#"{"jsonrpc":"2.0","method":"$/cancel","params":{"id":3}}"#),
                       .notification(method: "$/cancel", params: .object([("id", 3)])))
        XCTAssertEqual(decode(#"{"jsonrpc":"2.0","method":"x"}"#)?.method, "x")
    }

    func testRequestWithNullIDIsRejected() throws {
        let error = try XCTUnwrap(decodingError(#"{"jsonrpc":"2.0","id":null,"method":"m"}"#))
        XCTAssertEqual(error.code, RPCError.invalidRequest)
        XCTAssertTrue(error.reason.contains("must not be null"), error.reason)
    }

    // MARK: Replies

    func testSuccessResults() {
        XCTAssertEqual(decode(#"{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":1}}"#),
                       .response(id: .number(0), result: .success(.object([("protocolVersion", 1)]))))
        XCTAssertEqual(decode(#"{"jsonrpc":"2.0","id":"a","result":{}}"#), .response(id: .string("a"), result: .success(.object([]))))
        XCTAssertEqual(decode(#"{"jsonrpc":"2.0","id":4,"result":null}"#), .response(id: .number(4), result: .success(.null)))
        XCTAssertEqual(decode(#"{"jsonrpc":"2.0","id":4,"result":[1]}"#), .response(id: .number(4), result: .success([1])))
        XCTAssertNil(decode(#"{"jsonrpc":"2.0","id":4,"result":1}"#)?.method)
    }

    func testErrorReplies() {
        let message = decode(#"{"jsonrpc":"2.0","id":0,"error":{"code":-32602,"message":"no common version","data":{"supported":[2],"requested":[1]}}}"#)
        XCTAssertEqual(message, .response(id: .number(0), result: .failure(RPCError(
            code: -32602, message: "no common version",
            data: .object([("supported", [2]), ("requested", [1])])))))
        XCTAssertEqual(decode(#"{"jsonrpc":"2.0","id":"s","error":{"code":-32800,"message":"Request cancelled"}}"#),
                       .response(id: .string("s"), result: .failure(RPCError(code: RPCError.requestCancelled, message: "Request cancelled"))))
    }

    func testErrorWithoutMessageGetsAnEmptyOne() {
        XCTAssertEqual(decode(#"{"jsonrpc":"2.0","id":1,"error":{"code":1}}"#),
                       .response(id: .number(1), result: .failure(RPCError(code: 1, message: ""))))
    }

    func testNullIDErrorRepliesAreOrphanErrors() {
        XCTAssertEqual(decode(#"{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error"}}"#),
                       .orphanError(RPCError(code: -32700, message: "Parse error")))
        // No id at all reads the same way.
        XCTAssertEqual(decode(#"{"jsonrpc":"2.0","error":{"code":-32600,"message":"Invalid Request"}}"#),
                       .orphanError(RPCError(code: -32600, message: "Invalid Request")))
    }

    func testResultWithoutIDIsRejected() throws {
        for text in [#"{"jsonrpc":"2.0","result":{}}"#, #"{"jsonrpc":"2.0","id":null,"result":{}}"#] {
            let error = try XCTUnwrap(decodingError(text))
            XCTAssertEqual(error.code, RPCError.invalidRequest)
            XCTAssertTrue(error.reason.contains("no \"id\""), error.reason)
        }
    }

    // MARK: Invalid envelopes

    func testInvalidJSONIsAParseError() throws {
        for text in ["", "{", "{\"jsonrpc\":\"2.0\",}", "not json", "{\"jsonrpc\":\"2.0\"} {}"] {
            let error = try XCTUnwrap(decodingError(text), text)
            XCTAssertEqual(error.code, RPCError.parseError, text)
            XCTAssertTrue(error.reason.hasPrefix("not valid JSON"), error.reason)
            XCTAssertNil(error.id)
        }
    }

    func testNotAnObject() throws {
        let cases = [("[]", "an array"), ("1", "1"), ("\"x\"", "\"x\""), ("null", "null"), ("true", "true")]
        for (text, described) in cases {
            let error = try XCTUnwrap(decodingError(text), text)
            XCTAssertEqual(error.code, RPCError.invalidRequest)
            XCTAssertEqual(error.reason, "a message must be a JSON object, got \(described)")
        }
    }

    func testWrongOrMissingJSONRPCVersion() throws {
        for text in [#"{"id":1,"method":"m"}"#, #"{"jsonrpc":"1.0","id":1,"method":"m"}"#,
                     #"{"jsonrpc":2.0,"id":1,"method":"m"}"#, #"{"jsonrpc":null,"id":1,"method":"m"}"#,
                     #"{"jsonrpc":"2.0 ","id":1,"method":"m"}"#] {
            let error = try XCTUnwrap(decodingError(text), text)
            XCTAssertEqual(error.code, RPCError.invalidRequest)
            XCTAssertEqual(error.reason, "\"jsonrpc\" must be \"2.0\"")
        }
    }

    func testBothResultAndError() throws {
        let error = try XCTUnwrap(decodingError(#"{"jsonrpc":"2.0","id":3,"result":{},"error":{"code":1,"message":"x"}}"#))
        XCTAssertEqual(error.code, RPCError.invalidRequest)
        XCTAssertTrue(error.reason.contains("both"), error.reason)
        XCTAssertEqual(error.id, .number(3))
    }

    func testParamsThatAreNotStructured() throws {
        for params in ["\"x\"", "1", "true"] {
            let error = try XCTUnwrap(decodingError(#"{"jsonrpc":"2.0","id":"r","method":"m","params":"# + params + "}"), params)
            XCTAssertEqual(error.code, RPCError.invalidRequest)
            XCTAssertEqual(error.reason, "\"params\" must be an object or an array")
            XCTAssertEqual(error.id, .string("r"), "the id is kept so the error reply can name it")
        }
        let notification = try XCTUnwrap(decodingError(#"{"jsonrpc":"2.0","method":"m","params":5}"#))
        XCTAssertNil(notification.id)
    }

    func testMethodThatIsNotAString() throws {
        let error = try XCTUnwrap(decodingError(#"{"jsonrpc":"2.0","id":9,"method":5}"#))
        XCTAssertEqual(error.reason, "\"method\" must be a string")
        XCTAssertEqual(error.id, .number(9))
    }

    func testInvalidIDs() throws {
        for id in ["true", "1.5", "[1]", "{}", "1e300"] {
            let error = try XCTUnwrap(decodingError(#"{"jsonrpc":"2.0","id":"# + id + #","method":"m"}"#), id)
            XCTAssertEqual(error.code, RPCError.invalidRequest)
            XCTAssertTrue(error.reason.hasPrefix("\"id\" must be a number or a string"), error.reason)
        }
    }

    func testErrorObjectProblems() throws {
        let cases = [
            (#""boom""#, "invalid error reply: error: expected an object, got \"boom\""),
            (#"{"message":"x"}"#, "invalid error reply: error.code: is required (a number)"),
            (#"{"code":"x","message":"y"}"#, "invalid error reply: error.code: expected a whole number, got \"x\""),
            (#"{"code":1.5}"#, "invalid error reply: error.code: expected a whole number, got 1.5"),
            (#"{"code":1,"message":2}"#, "invalid error reply: error.message: expected a string, got 2"),
        ]
        for (errorJSON, reason) in cases {
            let error = try XCTUnwrap(decodingError(#"{"jsonrpc":"2.0","id":2,"error":"# + errorJSON + "}"), errorJSON)
            XCTAssertEqual(error.code, RPCError.invalidRequest)
            XCTAssertEqual(error.reason, reason)
            XCTAssertEqual(error.id, .number(2))
        }
    }

    func testNeitherRequestNorReply() throws {
        let error = try XCTUnwrap(decodingError(#"{"jsonrpc":"2.0","id":8}"#))
        XCTAssertEqual(error.code, RPCError.invalidRequest)
        XCTAssertTrue(error.reason.hasPrefix("neither"), error.reason)
        XCTAssertEqual(error.id, .number(8))
    }

    // MARK: Encoding

    func testEncodingIsTheContractsWireForm() {
        XCTAssertEqual(String(decoding: Message.request(id: .number(0), method: "initialize", params: .object([("debug", false)])).line, as: UTF8.self),
                       "{\"jsonrpc\":\"2.0\",\"id\":0,\"method\":\"initialize\",\"params\":{\"debug\":false}}\n")
        XCTAssertEqual(String(decoding: Message.notification(method: "index/deleteAll", params: .object([])).line, as: UTF8.self),
                       "{\"jsonrpc\":\"2.0\",\"method\":\"index/deleteAll\",\"params\":{}}\n")
        XCTAssertEqual(String(decoding: Message.notification(method: "m", params: nil).line, as: UTF8.self),
                       "{\"jsonrpc\":\"2.0\",\"method\":\"m\"}\n")
        XCTAssertEqual(String(decoding: Message.response(id: .string("a"), result: .success(.object([]))).line, as: UTF8.self),
                       "{\"jsonrpc\":\"2.0\",\"id\":\"a\",\"result\":{}}\n")
        XCTAssertEqual(String(decoding: Message.response(id: .number(3), result: .failure(RPCError(code: -32800, message: "Request cancelled"))).line, as: UTF8.self),
                       "{\"jsonrpc\":\"2.0\",\"id\":3,\"error\":{\"code\":-32800,\"message\":\"Request cancelled\"}}\n")
        XCTAssertEqual(String(decoding: Message.orphanError(RPCError(code: -32700, message: "Parse error", data: "x")).line, as: UTF8.self),
                       "{\"jsonrpc\":\"2.0\",\"id\":null,\"error\":{\"code\":-32700,\"message\":\"Parse error\",\"data\":\"x\"}}\n")
    }

    func testRoundTrips() throws {
        let messages: [Message] = [
            .request(id: .number(0), method: "initialize", params: InitializeParams(hostVersion: "1.0", bundleIdentifier: "a.b", debug: true).json),
            .request(id: .string("x\ny"), method: "batch/commit", params: .object([("requestId", 1), ("clientState", "AAE=")])),
            .request(id: .number(-1), method: "m", params: nil),
            .request(id: .number(1), method: "m", params: .array([1, "two"])),
            .notification(method: "index/put", params: .object([("items", .array([.object([("uniqueIdentifier", "é\u{0}")])]))])),
            .notification(method: "$/progress", params: nil),
            .response(id: .number(7), result: .success(.null)),
            .response(id: .string(""), result: .success(.object([("committed", 3)]))),
            .response(id: .number(7), result: .failure(RPCError(code: -32602, message: "bad", data: .object([("supported", [1])])))),
            .orphanError(RPCError(code: -32600, message: "Invalid Request")),
        ]
        for message in messages {
            let line = message.line
            XCTAssertEqual(line.filter { $0 == 0x0A }.count, 1)
            XCTAssertEqual(line.last, 0x0A)
            let decoded = try line.dropLast().withUnsafeBytes { raw throws(MessageDecodingError) in try Message.decode(line: raw) }
            XCTAssertEqual(decoded, message)
            XCTAssertEqual(try Message.decode(message.json), message)
        }
    }

    func testMethodIsNilForReplies() {
        XCTAssertNil(Message.response(id: .number(1), result: .success(.null)).method)
        XCTAssertNil(Message.orphanError(RPCError(code: 1, message: "")).method)
        XCTAssertEqual(Message.request(id: .number(1), method: "reindexItems", params: nil).method, "reindexItems")
    }

    // MARK: Ids and error objects

    func testRequestID() {
        XCTAssertEqual(RequestID.number(5).json, .integer(5))
        XCTAssertEqual(RequestID.string("a").json, .string("a"))
        XCTAssertEqual(RequestID.number(5).description, "5")
        XCTAssertEqual(RequestID.string("a").description, "\"a\"")
        XCTAssertEqual(RequestID(json: .integer(3)), .number(3))
        XCTAssertEqual(RequestID(json: .double(3)), .number(3))
        XCTAssertEqual(RequestID(json: .string("3")), .string("3"))
        XCTAssertNil(RequestID(json: .double(3.5)))
        XCTAssertNil(RequestID(json: .null))
        XCTAssertNil(RequestID(json: .bool(true)))
        XCTAssertNil(RequestID(json: .array([])))
        XCTAssertNotEqual(RequestID.number(1), RequestID.string("1"))
    }

    func testRPCErrorCodesAndJSON() {
        XCTAssertEqual(RPCError.parseError, -32700)
        XCTAssertEqual(RPCError.invalidRequest, -32600)
        XCTAssertEqual(RPCError.methodNotFound, -32601)
        XCTAssertEqual(RPCError.invalidParams, -32602)
        XCTAssertEqual(RPCError.internalError, -32603)
        XCTAssertEqual(RPCError.requestCancelled, -32800)
        XCTAssertEqual(RPCError(code: 1, message: "m").json, .object([("code", 1), ("message", "m")]))
        XCTAssertEqual(RPCError(code: 1, message: "m", data: [1]).json, .object([("code", 1), ("message", "m"), ("data", [1])]))
        XCTAssertEqual(RPCError(code: -32601, message: "Method not found").description, "Method not found (code -32601)")
    }

    func testMethodNames() {
        XCTAssertEqual([Method.initialize, Method.reindexAll, Method.reindexItems, Method.put, Method.delete, Method.deleteDomains,
                        Method.deleteAll, Method.progress, Method.cancel, Method.batchCommit],
                       ["initialize", "reindexAll", "reindexItems", "index/put", "index/delete", "index/deleteDomains",
                        "index/deleteAll", "$/progress", "$/cancel", "batch/commit"])
    }
}
