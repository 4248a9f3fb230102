import ReindexProtocol

/// The protocol's rules for one session, as a state machine: what the extension's stdout said
/// (decoded by `StdoutDecoder`) goes in, what the host must do about it comes out — send a reply,
/// stage an index operation, commit a batch, record an acknowledgement, report a problem, fail.
///
/// It does no I/O and knows nothing of the store, the clock or the process: `ExtensionSession`
/// feeds it and carries out its actions, so every rule here can be tested without spawning
/// anything (`ProtocolRulesTests`).
struct ProtocolRules {
    /// An index operation of the outstanding request, for its staged writes.
    enum IndexOperation: Equatable {
        /// `index/put`'s items, each already validated (or rejected with its reason).
        case put([StdoutDecoder.ItemOutcome])
        case delete(identifiers: [String])
        case deleteDomains([String])
        case deleteAll
    }

    /// What the host does about an event, in order.
    enum Action: Equatable {
        /// Write this message to the extension's stdin.
        case send(Message)
        /// Stage this operation in the outstanding request's writes.
        case stage(IndexOperation)
        /// Commit what was staged since the last commit, with the client state, and reply to the
        /// extension's `batch/commit` request `replyTo` with the number of operations committed.
        case commit(replyTo: RequestID, clientState: String?)
        /// A `batch/commit` refused (its error reply is a `.send` before this): why, in short.
        case commitRefused(String)
        /// `$/progress` of the outstanding request.
        case progress(ProgressParams)
        /// The reply to `initialize`, accepted.
        case initialized(InitializeResult)
        /// The reply to the outstanding request: success, or an error (a refusal or a cancellation).
        case acknowledged(Result<JSONValue, RPCError>)
        /// The reply to a probe.
        case probeAnswered(Result<JSONValue, RPCError>)
        /// A line for the bundle's log.
        case note(String)
        /// A problem that does not stop the session, shown with the run's summary (and logged).
        case warn(String)
        /// Lint mode: a protocol violation the session survives, reported; the session goes on.
        case report(String)
        /// The request (or the start) ends with this failure.
        case fail(RequestFailure.Kind, String)
    }

    /// Where the session is.
    enum Phase: Equatable {
        /// `initialize` was sent; only its reply may come.
        case starting
        /// Initialized; no request outstanding.
        case ready
        /// A request is outstanding; `acknowledged` once its reply came.
        case outstanding(RequestID, acknowledged: Bool)
    }

    /// The protocol versions `initialize` offered.
    let offered: [Int]
    /// Lint mode: violations the session can survive are reported and the session goes on.
    let recoversFromViolations: Bool

    private(set) var phase = Phase.starting
    private(set) var pendingProbe: RequestID?
    private var nextRequestID: Int64 = 1
    private var answered = Set<RequestID>()
    private var prettyPrintedReported = false
    /// A violation that came after an acknowledgement, reported before the next request.
    private var deferredViolation: String?

    init(offered: [Int], recoversFromViolations: Bool) {
        self.offered = offered
        self.recoversFromViolations = recoversFromViolations
    }

    var isInitialized: Bool { phase != .starting }

    /// The outstanding request's id, answered or not.
    var outstanding: RequestID? {
        if case let .outstanding(id, _) = phase { return id }
        return nil
    }

    var isAcknowledged: Bool {
        if case .outstanding(_, true) = phase { return true }
        return false
    }

    // MARK: The host's side

    /// The id for the next request or probe the host sends (`initialize` is 0).
    mutating func nextID() -> RequestID {
        defer { nextRequestID += 1 }
        return .number(nextRequestID)
    }

    mutating func requestSent(_ id: RequestID) { phase = .outstanding(id, acknowledged: false) }

    mutating func requestEnded() { if isInitialized { phase = .ready } }

    mutating func probeSent(_ id: RequestID) { pendingProbe = id }

    mutating func probeEnded() { pendingProbe = nil }

    /// Before the host waits again: a violation deferred from the last acknowledged request now
    /// ends the session's next exchange.
    mutating func raiseDeferredViolation() -> [Action] {
        guard let text = deferredViolation else { return [] }
        deferredViolation = nil
        return violation(text, fatal: true)
    }

    /// The deferred violation no later request was left to fail; taking it clears it.
    mutating func takeLateViolation() -> String? {
        defer { deferredViolation = nil }
        return deferredViolation
    }

    // MARK: The extension's side

    /// The rules for one event from the extension's stdout.
    mutating func receive(_ event: StdoutDecoder.Event) -> [Action] {
        switch event {
        case let .message(message, offset, items, _):
            return receive(message, offset: offset, items: items)
        case let .undecodable(line, offset, error):
            return line.withUnsafeBytes { undecodable($0, offset: offset, error: error) }
        case .framing(let error):
            return violation("stdout: \(error)", fatal: true)
        case .warning(let text):
            return [.warn(text)]
        case .end(let tail):
            guard let tail else { return [] }
            return violation("the last line on stdout (byte \(tail.offset)) has no newline at its end")
        }
    }

    /// What lint mode says of an event read after the last request ended (nil: nothing).
    func afterLastRequest(_ event: StdoutDecoder.Event) -> String? {
        let what: String
        switch event {
        case let .message(message, offset, _, _): what = "\(Self.describe(message)) (stdout byte \(offset))"
        case let .undecodable(_, offset, _): what = "a line (stdout byte \(offset))"
        case .framing, .end, .warning: return nil
        }
        return "protocol violation: \(what) arrived after the last request ended"
    }

    private mutating func receive(_ message: Message, offset: Int, items: [StdoutDecoder.ItemOutcome]?) -> [Action] {
        guard isInitialized else { return initializeReply(message) }
        if let probe = pendingProbe, case let .response(replyID, result) = message, replyID == probe {
            pendingProbe = nil
            answered.insert(replyID)
            return [.probeAnswered(result)]
        }
        guard case let .outstanding(id, acknowledged) = phase else {
            return violation("\(Self.describe(message)) arrived while no request was outstanding")
        }
        if acknowledged {
            // Read in the same chunk as the acknowledgement: the request stands; the message is
            // a violation of the session, reported before the next request (or in the log).
            let text = "\(Self.describe(message)) (stdout byte \(offset)) arrived after request \(id) was acknowledged"
            if recoversFromViolations { return [.report("protocol violation: \(text)")] }
            guard deferredViolation == nil else { return [] }
            deferredViolation = text
            return [.note("protocol violation: \(text)")]
        }
        switch message {
        case let .notification(method, params):
            return notification(method, params, items: items, outstanding: id)
        case let .request(requestID, method, params):
            if method == Method.batchCommit { return batchCommit(requestID, params, outstanding: id) }
            let reply = Message.response(id: requestID, result: .failure(RPCError(code: RPCError.methodNotFound, message: "the host has no method '\(method)'")))
            return [.send(reply)] + unknownMethod(method, what: "request")
        case let .response(replyID, result):
            if replyID == id {
                phase = .outstanding(id, acknowledged: true)
                answered.insert(id)
                return [.acknowledged(result)]
            }
            if answered.contains(replyID) || replyID == .number(0) {
                return violation("a second reply to request \(replyID)", fatal: true)
            }
            // The real reply may never come: waiting for it would only run out a timeout.
            return violation("a reply to request \(replyID), which the host never sent", fatal: true)
        case let .orphanError(error):
            return violation("an error reply with a null id: \(error.message)", fatal: true)
        }
    }

    private mutating func initializeReply(_ message: Message) -> [Action] {
        guard case let .response(replyID, result) = message, replyID == .number(0) else {
            return violation("\(Self.describe(message)) arrived before the reply to initialize; nothing else may come on stdout before it")
        }
        switch result {
        case .success(let value):
            let reply: InitializeResult
            do { reply = try InitializeResult(json: value) } catch {
                return violation("the reply to initialize is invalid: \(error)", fatal: true)
            }
            guard offered.contains(reply.protocolVersion) else {
                return [.fail(.versionMismatch, "the extension chose protocol version \(reply.protocolVersion); the host offered \(offered)")]
            }
            phase = .ready
            answered.insert(.number(0))
            return [.initialized(reply), .note("initialized: \(reply.extensionName) \(reply.extensionVersion), protocol \(reply.protocolVersion)")]
        case .failure(let error):
            if error.code == RPCError.invalidParams {
                let supported = error.data?["supported"].map { JSONWriter.string($0) } ?? "(not given)"
                let requested = error.data?["requested"].map { JSONWriter.string($0) } ?? JSONWriter.string(.array(ReindexVersion.protocolVersions.map { .integer(Int64($0)) }))
                return [.fail(.versionMismatch, "no protocol version in common: the extension supports \(supported), the host requested \(requested) (\(error.message))")]
            }
            return [.fail(.cannotStart, "the extension refused initialize: \(error.message) (code \(error.code))")]
        }
    }

    private mutating func notification(_ method: String, _ params: JSONValue?, items: [StdoutDecoder.ItemOutcome]?, outstanding id: RequestID) -> [Action] {
        switch method {
        case Method.put:
            // The decoder leaves `items` nil only when the message has no array of items.
            guard let items else { return violation("index/put needs params.items (an array of items)") }
            return [.stage(.put(items))]
        case Method.delete:
            do { return [.stage(.delete(identifiers: try DeleteParams(json: params).identifiers))] } catch {
                return violation("index/delete: \(error)")
            }
        case Method.deleteDomains:
            do { return [.stage(.deleteDomains(try DeleteDomainsParams(json: params).domainIdentifiers))] } catch {
                return violation("index/deleteDomains: \(error)")
            }
        case Method.deleteAll:
            return [.stage(.deleteAll)]
        case Method.progress:
            let progress: ProgressParams
            do { progress = try ProgressParams(json: params) } catch {
                return violation("$/progress: \(error)")
            }
            guard progress.requestID == id else {
                return violation("$/progress for request \(progress.requestID), which is not outstanding")
            }
            return [.progress(progress)]
        default:
            return unknownMethod(method, what: "notification")
        }
    }

    private mutating func batchCommit(_ requestID: RequestID, _ params: JSONValue?, outstanding id: RequestID) -> [Action] {
        func refuse(_ message: String, _ why: String) -> [Action] {
            [.send(.response(id: requestID, result: .failure(RPCError(code: RPCError.invalidParams, message: message)))), .commitRefused(why)]
        }
        let commit: BatchCommitParams
        do { commit = try BatchCommitParams(json: params) } catch {
            return refuse("\(error)", "\(error)")
        }
        guard commit.requestID == id else {
            return violation("batch/commit for request \(commit.requestID), which is not outstanding (request \(id) is)")
        }
        if let state = commit.clientState {
            guard let decoded = Base64.decode(state) else {
                return refuse("clientState is not base64; nothing was committed", "clientState is not base64")
            }
            let limit = BatchCommitParams.maximumClientStateBytes
            guard decoded.count <= limit else {
                return refuse("clientState is \(decoded.count) bytes decoded, at most \(limit) are allowed; nothing was committed",
                              "clientState is \(decoded.count) bytes decoded, over \(limit)")
            }
        }
        return [.commit(replyTo: requestID, clientState: commit.clientState)]
    }

    /// A method the host does not know. In the `index/` and `batch/` namespaces it can only be a
    /// mistyped index operation (`index/add` for `index/put`), and going on would lose data — a
    /// reindexAll would then remove every item it "did not put" — so it is a violation; anything
    /// else is a warning shown with the run's summary.
    private mutating func unknownMethod(_ method: String, what: String) -> [Action] {
        if method.hasPrefix("index/") || method.hasPrefix("batch/") {
            let known = [Method.put, Method.delete, Method.deleteDomains, Method.deleteAll, Method.batchCommit]
            return violation("unknown \(what) '\(method)': the index/ and batch/ methods are \(known.joined(separator: ", ")); nothing of this request is committed", fatal: true)
        }
        return [.warn("ignored an unknown \(what) '\(method)'")]
    }

    /// A line that is not a valid message (white space only counts as empty).
    private mutating func undecodable(_ line: UnsafeRawBufferPointer, offset: Int, error: MessageDecodingError) -> [Action] {
        if line.allSatisfy({ $0 == 0x20 || $0 == 0x09 || $0 == 0x0D }) { return [] }
        if let bad = firstInvalidUTF8Offset(line) {
            return violation("stdout line at byte \(offset) is not valid UTF-8 (bad byte at \(offset + bad))")
        }
        let text = String(decoding: line.prefix(80), as: UTF8.self)
        let trimmed = text.trimmingWhitespace
        let quoted = "\"" + text + (line.count > 80 ? "…" : "") + "\""
        // A message written over several lines arrives as fragments: name that once, not each line.
        if Self.looksLikePrettyPrinted(trimmed) {
            if prettyPrintedReported { return [] }
            prettyPrintedReported = true
            return violation("stdout line at byte \(offset), \(quoted), looks like part of a pretty-printed JSON message: "
                             + "the protocol needs each message on one line (serialize without indentation)")
        }
        if trimmed.hasPrefix("{") {
            return violation("stdout line at byte \(offset), \(quoted): \(error.reason)")
        }
        // A JSON array that parsed: a JSON-RPC 2.0 batch, which version 1 leaves out.
        if trimmed.hasPrefix("["), error.code == RPCError.invalidRequest {
            return violation("stdout line at byte \(offset), \(quoted), is a JSON array: "
                             + "JSON-RPC batches are not part of protocol version 1; send one message per line")
        }
        return violation("stdout line at byte \(offset) is not a protocol message: \(quoted) (\(error.reason)); "
                         + "write logs and debug output to stderr, and only one JSON-RPC message per line to stdout")
    }

    /// `{`, `}`, `"jsonrpc": "2.0",` … alone on a line: a fragment of an indented JSON document.
    static func looksLikePrettyPrinted(_ line: String) -> Bool {
        if ["{", "}", "},", "[", "]", "],"].contains(line) { return true }
        guard line.hasPrefix("\"") else { return false }
        return line.contains("\":") && (line.hasSuffix(",") || line.hasSuffix("{") || line.hasSuffix("[") || !line.hasSuffix("}"))
    }

    /// A protocol violation: reported in lint mode when the session can survive it, otherwise
    /// the end of the request (noted in the log first).
    private func violation(_ text: String, fatal: Bool = false) -> [Action] {
        if !fatal && recoversFromViolations { return [.report("protocol violation: \(text)")] }
        return [.note("protocol violation: \(text)"), .fail(.protocolViolation, "protocol violation: \(text)")]
    }

    static func describe(_ message: Message) -> String {
        switch message {
        case .request(let id, let method, _): return "a '\(method)' request (id \(id))"
        case .notification(let method, _): return "a '\(method)' notification"
        case .response(let id, _): return "a reply to request \(id)"
        case .orphanError: return "an error reply with a null id"
        }
    }
}
