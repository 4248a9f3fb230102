@testable import ReindexHost
import ReindexProtocol
import Testing

/// The protocol's rules as the session applies them, without a process or a store: lines as an
/// extension would write them go through the same decoding as the decoder thread's, into
/// `ProtocolRules`, and what comes out is what the host would do.
@Suite struct ProtocolRulesTests {
    typealias Action = ProtocolRules.Action

    static let initializeReply = #"{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":1,"extension":{"name":"Tiny","version":"2.0"},"capabilities":{}}}"#

    /// One line of stdout, decoded as the decoder thread decodes it.
    static func event(_ line: String, offset: Int = 0) -> StdoutDecoder.Event {
        Array(line.utf8).withUnsafeBytes { StdoutDecoder.decode($0, offset: offset) }
    }

    /// Rules that sent `initialize` and got its reply.
    static func initialized(lint: Bool = false) -> ProtocolRules {
        var rules = ProtocolRules(offered: [1], recoversFromViolations: lint)
        _ = rules.receive(event(initializeReply))
        return rules
    }

    /// Rules with request 1 outstanding.
    static func outstanding(lint: Bool = false) -> ProtocolRules {
        var rules = initialized(lint: lint)
        let id = rules.nextID()
        rules.requestSent(id)
        return rules
    }

    /// The failure the actions end with, if any.
    static func failure(_ actions: [Action]) -> (kind: RequestFailure.Kind, message: String)? {
        guard case let .fail(kind, message)? = actions.last else { return nil }
        return (kind, message)
    }

    static func reports(_ actions: [Action]) -> [String] {
        actions.compactMap { if case .report(let text) = $0 { return text } else { return nil } }
    }

    // MARK: initialize

    @Test func theReplyToInitializeIsAcceptedAndNoted() {
        var rules = ProtocolRules(offered: [1], recoversFromViolations: false)
        #expect(!rules.isInitialized)
        let actions = rules.receive(Self.event(Self.initializeReply))
        #expect(actions == [.initialized(InitializeResult(protocolVersion: 1, extensionName: "Tiny", extensionVersion: "2.0")),
                            .note("initialized: Tiny 2.0, protocol 1")])
        #expect(rules.isInitialized)
        #expect(rules.outstanding == nil)
    }

    static let beforeInitialize = [
        (#"{"jsonrpc":"2.0","method":"index/put","params":{"items":[{"uniqueIdentifier":"a"}]}}"#, "a 'index/put' notification"),
        (#"{"jsonrpc":"2.0","id":"c1","method":"batch/commit","params":{"requestId":1}}"#, #"a 'batch/commit' request (id "c1")"#),
        (#"{"jsonrpc":"2.0","id":1,"result":{}}"#, "a reply to request 1"),
    ]

    @Test(arguments: beforeInitialize)
    func nothingMayComeBeforeTheReplyToInitialize(line: String, described: String) throws {
        var rules = ProtocolRules(offered: [1], recoversFromViolations: false)
        let failure = try #require(Self.failure(rules.receive(Self.event(line))))
        #expect(failure.kind == .protocolViolation)
        #expect(failure.message == "protocol violation: \(described) arrived before the reply to initialize; nothing else may come on stdout before it")
        #expect(!rules.isInitialized)
    }

    @Test(arguments: beforeInitialize)
    func lintReportsWhatCameBeforeInitializeAndStillAcceptsTheReply(line: String, described: String) {
        var rules = ProtocolRules(offered: [1], recoversFromViolations: true)
        #expect(Self.reports(rules.receive(Self.event(line))) == ["protocol violation: \(described) arrived before the reply to initialize; nothing else may come on stdout before it"])
        _ = rules.receive(Self.event(Self.initializeReply))
        #expect(rules.isInitialized)
    }

    @Test func aVersionTheHostDidNotOfferIsAMismatch() throws {
        var rules = ProtocolRules(offered: [1], recoversFromViolations: false)
        let actions = rules.receive(Self.event(#"{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":7,"extension":{"name":"x","version":"1"}}}"#))
        #expect(actions == [.fail(.versionMismatch, "the extension chose protocol version 7; the host offered [1]")])
        #expect(!rules.isInitialized)
    }

    @Test func aDeclinedInitializeNamesBothListsOfVersions() throws {
        var rules = ProtocolRules(offered: [99], recoversFromViolations: false)
        let line = #"{"jsonrpc":"2.0","id":0,"error":{"code":-32602,"message":"no common version","data":{"supported":[1],"requested":[99]}}}"#
        let failure = try #require(Self.failure(rules.receive(Self.event(line))))
        #expect(failure.kind == .versionMismatch)
        #expect(failure.message == "no protocol version in common: the extension supports [1], the host requested [99] (no common version)")
    }

    @Test func anotherErrorReplyToInitializeIsARefusalToStart() {
        var rules = ProtocolRules(offered: [1], recoversFromViolations: false)
        let actions = rules.receive(Self.event(#"{"jsonrpc":"2.0","id":0,"error":{"code":-32000,"message":"no database"}}"#))
        #expect(actions == [.fail(.cannotStart, "the extension refused initialize: no database (code -32000)")])
    }

    @Test(arguments: [false, true])
    func anInvalidReplyToInitializeEndsTheSessionEvenInLintMode(lint: Bool) throws {
        var rules = ProtocolRules(offered: [1], recoversFromViolations: lint)
        let failure = try #require(Self.failure(rules.receive(Self.event(#"{"jsonrpc":"2.0","id":0,"result":{"extension":{}}}"#))))
        #expect(failure.kind == .protocolViolation)
        #expect(failure.message.hasPrefix("protocol violation: the reply to initialize is invalid: result.protocolVersion"))
    }

    // MARK: index operations

    static let operations: [(String, ProtocolRules.IndexOperation)] = [
        (#"{"jsonrpc":"2.0","method":"index/delete","params":{"identifiers":["a","b"]}}"#, .delete(identifiers: ["a", "b"])),
        (#"{"jsonrpc":"2.0","method":"index/deleteDomains","params":{"domainIdentifiers":["x.y"]}}"#, .deleteDomains(["x.y"])),
        (#"{"jsonrpc":"2.0","method":"index/deleteAll","params":{}}"#, .deleteAll),
    ]

    @Test(arguments: operations)
    func indexOperationsOfTheOutstandingRequestAreStaged(line: String, operation: ProtocolRules.IndexOperation) {
        var rules = Self.outstanding()
        #expect(rules.receive(Self.event(line)) == [.stage(operation)])
    }

    @Test func putStagesEachItemAsTheDecoderValidatedIt() throws {
        var rules = Self.outstanding()
        let actions = rules.receive(Self.event(#"{"jsonrpc":"2.0","method":"index/put","params":{"items":[{"uniqueIdentifier":"a","attributes":{"title":"A"}},{"attributes":{"title":"no id"}}]}}"#))
        guard case .stage(.put(let items))? = actions.first, actions.count == 1 else {
            Issue.record("expected one put, got \(actions)")
            return
        }
        #expect(items.count == 2)
        guard case .valid(let item) = items[0], case let .invalid(uid, reason) = items[1] else {
            Issue.record("expected a valid item then an invalid one, got \(items)")
            return
        }
        #expect(item.uniqueIdentifier == "a")
        #expect(uid == nil)
        #expect(reason.contains("uniqueIdentifier"))
    }

    static let malformedOperations = [
        (#"{"jsonrpc":"2.0","method":"index/put","params":{"items":"a"}}"#, "index/put needs params.items (an array of items)"),
        (#"{"jsonrpc":"2.0","method":"index/delete","params":{}}"#, "index/delete: "),
        (#"{"jsonrpc":"2.0","method":"index/deleteDomains","params":{"domainIdentifiers":[1]}}"#, "index/deleteDomains: "),
    ]

    @Test(arguments: malformedOperations)
    func malformedOperationsAreViolationsThatLintSurvives(line: String, start: String) throws {
        var rules = Self.outstanding()
        let failure = try #require(Self.failure(rules.receive(Self.event(line))))
        #expect(failure.kind == .protocolViolation)
        #expect(failure.message.hasPrefix("protocol violation: \(start)"))
        var lint = Self.outstanding(lint: true)
        let reports = Self.reports(lint.receive(Self.event(line)))
        #expect(reports.count == 1)
        #expect(reports.first?.hasPrefix("protocol violation: \(start)") == true)
    }

    @Test(arguments: operations.map(\.0) + [#"{"jsonrpc":"2.0","method":"$/progress","params":{"requestId":1,"completed":1}}"#])
    func anOperationWhileNoRequestIsOutstandingIsAViolation(line: String) throws {
        var rules = Self.initialized()
        let failure = try #require(Self.failure(rules.receive(Self.event(line))))
        #expect(failure.kind == .protocolViolation)
        #expect(failure.message.hasSuffix("notification arrived while no request was outstanding"))
    }

    // MARK: acknowledgements and replies

    @Test func theReplyToTheRequestAcknowledgesIt() {
        var rules = Self.outstanding()
        #expect(rules.receive(Self.event(#"{"jsonrpc":"2.0","id":1,"result":{}}"#)) == [.acknowledged(.success(.object([])))])
        #expect(rules.isAcknowledged)
        rules.requestEnded()
        #expect(rules.outstanding == nil)
    }

    @Test func anErrorReplyIsTheRequestsAcknowledgementToo() {
        var rules = Self.outstanding()
        let actions = rules.receive(Self.event(#"{"jsonrpc":"2.0","id":1,"error":{"code":-32800,"message":"Request cancelled"}}"#))
        #expect(actions == [.acknowledged(.failure(RPCError(code: -32800, message: "Request cancelled")))])
    }

    @Test func aSecondReplyAfterTheAcknowledgementIsDeferredToTheNextRequest() throws {
        var rules = Self.outstanding()
        _ = rules.receive(Self.event(#"{"jsonrpc":"2.0","id":1,"result":{}}"#))
        let text = "a reply to request 1 (stdout byte 120) arrived after request 1 was acknowledged"
        #expect(rules.receive(Self.event(#"{"jsonrpc":"2.0","id":1,"result":{}}"#, offset: 120)) == [.note("protocol violation: \(text)")])
        // Only the first is kept.
        #expect(rules.receive(Self.event(#"{"jsonrpc":"2.0","method":"index/deleteAll"}"#, offset: 200)) == [])
        rules.requestEnded()
        let failure = try #require(Self.failure(rules.raiseDeferredViolation()))
        #expect(failure.kind == .protocolViolation)
        #expect(failure.message == "protocol violation: \(text)")
        #expect(rules.raiseDeferredViolation() == [])
        #expect(rules.takeLateViolation() == nil)
    }

    @Test func aViolationAfterTheLastAcknowledgementCanBeTakenOnce() {
        var rules = Self.outstanding()
        _ = rules.receive(Self.event(#"{"jsonrpc":"2.0","id":1,"result":{}}"#))
        _ = rules.receive(Self.event(#"{"jsonrpc":"2.0","method":"index/deleteAll"}"#, offset: 50))
        rules.requestEnded()
        #expect(rules.takeLateViolation() == "a 'index/deleteAll' notification (stdout byte 50) arrived after request 1 was acknowledged")
        #expect(rules.takeLateViolation() == nil)
    }

    @Test func lintReportsEachMessageAfterTheAcknowledgementAtOnce() {
        var rules = Self.outstanding(lint: true)
        _ = rules.receive(Self.event(#"{"jsonrpc":"2.0","id":1,"result":{}}"#))
        #expect(rules.receive(Self.event(#"{"jsonrpc":"2.0","id":1,"result":{}}"#, offset: 9))
                == [.report("protocol violation: a reply to request 1 (stdout byte 9) arrived after request 1 was acknowledged")])
        #expect(Self.reports(rules.receive(Self.event(#"{"jsonrpc":"2.0","method":"index/deleteAll"}"#))).count == 1)
        #expect(rules.takeLateViolation() == nil)
    }

    static let foreignReplies = [
        (#"{"jsonrpc":"2.0","id":1,"result":{}}"#, "protocol violation: a second reply to request 1"),
        (#"{"jsonrpc":"2.0","id":0,"result":{}}"#, "protocol violation: a second reply to request 0"),
        (#"{"jsonrpc":"2.0","id":9,"result":{}}"#, "protocol violation: a reply to request 9, which the host never sent"),
        (#"{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"parse error"}}"#, "protocol violation: an error reply with a null id: parse error"),
    ]

    @Test(arguments: foreignReplies, [false, true])
    func aReplyToAnyOtherRequestEndsTheRequestEvenInLintMode(reply: (line: String, message: String), lint: Bool) throws {
        // Request 1 answered and ended; request 2 outstanding.
        var rules = Self.outstanding(lint: lint)
        _ = rules.receive(Self.event(#"{"jsonrpc":"2.0","id":1,"result":{}}"#))
        rules.requestEnded()
        let second = rules.nextID()
        #expect(second == .number(2))
        rules.requestSent(second)
        let actions = rules.receive(Self.event(reply.line))
        #expect(actions == [.note(reply.message), .fail(.protocolViolation, reply.message)])
    }

    // MARK: unknown methods

    static let unknownMethods: [(line: String, warning: String?)] = [
        (#"{"jsonrpc":"2.0","method":"index/add","params":{"items":[]}}"#, nil),
        (#"{"jsonrpc":"2.0","method":"batch/flush"}"#, nil),
        (#"{"jsonrpc":"2.0","method":"telemetry/event","params":{}}"#, "ignored an unknown notification 'telemetry/event'"),
        (#"{"jsonrpc":"2.0","method":"$/logTrace"}"#, "ignored an unknown notification '$/logTrace'"),
    ]

    @Test(arguments: unknownMethods)
    func unknownNotificationsAreFatalOnlyInTheIndexAndBatchNamespaces(line: String, warning: String?) throws {
        var rules = Self.outstanding(lint: true)
        let actions = rules.receive(Self.event(line))
        if let warning {
            #expect(actions == [.warn(warning)])
        } else {
            let failure = try #require(Self.failure(actions))
            #expect(failure.kind == .protocolViolation)
            #expect(failure.message.contains("the index/ and batch/ methods are index/put, index/delete, index/deleteDomains, index/deleteAll, batch/commit; nothing of this request is committed"))
        }
    }

    @Test func anUnknownRequestIsAnsweredMethodNotFound() {
        var rules = Self.outstanding()
        let actions = rules.receive(Self.event(#"{"jsonrpc":"2.0","id":"t1","method":"host/info"}"#))
        #expect(actions == [
            .send(.response(id: .string("t1"), result: .failure(RPCError(code: RPCError.methodNotFound, message: "the host has no method 'host/info'")))),
            .warn("ignored an unknown request 'host/info'"),
        ])
    }

    @Test func anUnknownIndexRequestIsAnsweredAndThenEndsTheRequest() throws {
        var rules = Self.outstanding()
        let actions = rules.receive(Self.event(#"{"jsonrpc":"2.0","id":5,"method":"index/get"}"#))
        #expect(actions.first == .send(.response(id: .number(5), result: .failure(RPCError(code: RPCError.methodNotFound, message: "the host has no method 'index/get'")))))
        let failure = try #require(Self.failure(actions))
        #expect(failure.message.hasPrefix("protocol violation: unknown request 'index/get'"))
    }

    // MARK: progress

    @Test func progressOfTheOutstandingRequestIsPassedOn() {
        var rules = Self.outstanding()
        let actions = rules.receive(Self.event(#"{"jsonrpc":"2.0","method":"$/progress","params":{"requestId":1,"completed":3,"total":10,"message":"people"}}"#))
        #expect(actions == [.progress(ProgressParams(requestID: .number(1), completed: 3, total: 10, message: "people"))])
    }

    static let badProgress = [
        (#"{"jsonrpc":"2.0","method":"$/progress","params":{"requestId":2,"completed":3}}"#, "protocol violation: $/progress for request 2, which is not outstanding"),
        (#"{"jsonrpc":"2.0","method":"$/progress","params":{"requestId":1,"completed":-1}}"#, "protocol violation: $/progress: params.completed"),
        (#"{"jsonrpc":"2.0","method":"$/progress","params":{"completed":1}}"#, "protocol violation: $/progress: params.requestId"),
    ]

    @Test(arguments: badProgress, [false, true])
    func progressForAnotherRequestOrWithBadCountsIsAViolation(progress: (line: String, start: String), lint: Bool) throws {
        var rules = Self.outstanding(lint: lint)
        let actions = rules.receive(Self.event(progress.line))
        if lint {
            #expect(Self.reports(actions).count == 1)
            #expect(Self.reports(actions).first?.hasPrefix(progress.start) == true)
        } else {
            let failure = try #require(Self.failure(actions))
            #expect(failure.message.hasPrefix(progress.start))
        }
    }

    // MARK: batch/commit

    @Test func aBatchCommitOfTheOutstandingRequestIsCommitted() {
        var rules = Self.outstanding()
        let actions = rules.receive(Self.event(#"{"jsonrpc":"2.0","id":"c1","method":"batch/commit","params":{"requestId":1,"clientState":"AAEC"}}"#))
        #expect(actions == [.commit(replyTo: .string("c1"), clientState: "AAEC")])
        #expect(!rules.isAcknowledged)
    }

    static let refusedCommits = [
        (#"{"jsonrpc":"2.0","id":7,"method":"batch/commit","params":{"requestId":1,"clientState":"not base64!"}}"#,
         "clientState is not base64; nothing was committed", "clientState is not base64"),
        (#"{"jsonrpc":"2.0","id":7,"method":"batch/commit","params":{"requestId":1,"clientState":"\#(String(repeating: "A", count: 340))"}}"#,
         "clientState is 255 bytes decoded, at most 250 are allowed; nothing was committed", "clientState is 255 bytes decoded, over 250"),
    ]

    @Test(arguments: refusedCommits)
    func aClientStateThatIsNotBase64OrTooLargeIsRefusedAndTheRequestGoesOn(line: String, message: String, why: String) {
        var rules = Self.outstanding()
        #expect(rules.receive(Self.event(line)) == [
            .send(.response(id: .number(7), result: .failure(RPCError(code: RPCError.invalidParams, message: message)))),
            .commitRefused(why),
        ])
    }

    @Test func aBatchCommitWithoutParamsIsRefused() {
        var rules = Self.outstanding()
        let actions = rules.receive(Self.event(#"{"jsonrpc":"2.0","id":7,"method":"batch/commit"}"#))
        guard actions.count == 2, case .send(.response(.number(7), .failure(let error))) = actions[0], case .commitRefused = actions[1] else {
            Issue.record("expected an error reply and a refusal, got \(actions)")
            return
        }
        #expect(error.code == RPCError.invalidParams)
    }

    @Test func aBatchCommitForAnotherRequestIsAViolation() throws {
        var rules = Self.outstanding()
        let failure = try #require(Self.failure(rules.receive(Self.event(#"{"jsonrpc":"2.0","id":7,"method":"batch/commit","params":{"requestId":4}}"#))))
        #expect(failure.message == "protocol violation: batch/commit for request 4, which is not outstanding (request 1 is)")
    }

    // MARK: lines that are not messages

    @Test func whiteSpaceLinesAreIgnored() {
        var rules = Self.outstanding()
        #expect(rules.receive(Self.event(" \t\r")) == [])
    }

    @Test func aLogLineOnStdoutIsNamedAsOne() throws {
        var rules = Self.outstanding()
        let failure = try #require(Self.failure(rules.receive(Self.event("Starting indexer…", offset: 42))))
        #expect(failure.message.hasPrefix(#"protocol violation: stdout line at byte 42 is not a protocol message: "Starting indexer…" (not valid JSON"#))
        #expect(failure.message.hasSuffix("write logs and debug output to stderr, and only one JSON-RPC message per line to stdout"))
    }

    @Test func aBrokenObjectIsQuotedWithItsReason() throws {
        var rules = Self.outstanding()
        let failure = try #require(Self.failure(rules.receive(Self.event(#"{"jsonrpc":"1.0","method":"x"}"#, offset: 3))))
        #expect(failure.message == #"protocol violation: stdout line at byte 3, "{"jsonrpc":"1.0","method":"x"}": "jsonrpc" must be "2.0""#)
    }

    @Test func invalidUTF8IsNamedWithTheOffsetOfTheBadByte() throws {
        var rules = Self.outstanding()
        let line: [UInt8] = Array(#"{"a":""#.utf8) + [0xFF] + Array(#""}"#.utf8)
        let event = line.withUnsafeBytes { StdoutDecoder.decode($0, offset: 100) }
        let failure = try #require(Self.failure(rules.receive(event)))
        #expect(failure.message == "protocol violation: stdout line at byte 100 is not valid UTF-8 (bad byte at 106)")
    }

    @Test func aPrettyPrintedMessageIsNamedOncePerSession() {
        var rules = Self.outstanding(lint: true)
        var reports: [String] = []
        for (n, line) in ["{", #"  "jsonrpc": "2.0","#, #"  "method": "index/deleteAll""#, "}"].enumerated() {
            reports += Self.reports(rules.receive(Self.event(line, offset: n * 10)))
        }
        #expect(reports == [#"protocol violation: stdout line at byte 0, "{", looks like part of a pretty-printed JSON message: the protocol needs each message on one line (serialize without indentation)"#])
    }

    @Test(arguments: [("{", true), ("},", true), (#""jsonrpc": "2.0","#, true), (#""items": ["#, true), (#""id": 1"#, true),
                      ("hello", false), (#""just a string""#, false), (#"{"jsonrpc":"2.0"}"#, false)])
    func prettyPrintedFragmentsAreRecognised(line: String, fragment: Bool) {
        #expect(ProtocolRules.looksLikePrettyPrinted(line) == fragment)
    }

    @Test(arguments: [false, true])
    func aLineOverTheLimitEndsTheRequestEvenInLintMode(lint: Bool) {
        var rules = Self.outstanding(lint: lint)
        let error = LineFramingError.lineTooLong(offset: 10, limit: 16)
        let text = "protocol violation: stdout: \(error)"
        #expect(rules.receive(.framing(error)) == [.note(text), .fail(.protocolViolation, text)])
    }

    @Test func anUnterminatedLastLineIsAViolation() throws {
        var rules = Self.outstanding()
        #expect(rules.receive(.end(tail: nil)) == [])
        let failure = try #require(Self.failure(rules.receive(.end(tail: (bytes: Array("{".utf8), offset: 77)))))
        #expect(failure.message == "protocol violation: the last line on stdout (byte 77) has no newline at its end")
    }

    // MARK: probes and after the last request

    @Test func aProbeGetsItsReplyAndAReplyAfterItEndedIsAViolation() throws {
        var rules = Self.initialized()
        let probe = rules.nextID()
        rules.probeSent(probe)
        let reply = #"{"jsonrpc":"2.0","id":1,"error":{"code":-32601,"message":"Method not found"}}"#
        #expect(rules.receive(Self.event(reply)) == [.probeAnswered(.failure(RPCError(code: -32601, message: "Method not found")))])
        #expect(rules.pendingProbe == nil)
        rules.probeEnded()
        let failure = try #require(Self.failure(rules.receive(Self.event(reply))))
        #expect(failure.message == "protocol violation: a reply to request 1 arrived while no request was outstanding")
    }

    @Test func requestIDsCountUpFromOne() {
        var rules = Self.initialized()
        #expect([rules.nextID(), rules.nextID(), rules.nextID()] == [.number(1), .number(2), .number(3)])
    }

    @Test func lintNamesWhatArrivedAfterTheLastRequest() {
        let rules = Self.initialized(lint: true)
        #expect(rules.afterLastRequest(Self.event(#"{"jsonrpc":"2.0","method":"index/put","params":{"items":[]}}"#, offset: 300))
                == "protocol violation: a 'index/put' notification (stdout byte 300) arrived after the last request ended")
        #expect(rules.afterLastRequest(Self.event("bye", offset: 400)) == "protocol violation: a line (stdout byte 400) arrived after the last request ended")
        #expect(rules.afterLastRequest(.end(tail: nil)) == nil)
    }
}
