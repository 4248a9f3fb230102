import CReindexSystem
import ReindexProtocol
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#elseif canImport(Musl)
import Musl
#endif

/// Which way a protocol message went.
public enum TraceDirection: String, Sendable {
    case toExtension = "host→ext"
    case fromExtension = "ext→host"
}

/// How a session behaves: timeouts, debug mode, and hooks for progress, tracing and stderr.
public struct SessionOptions {
    /// Debug mode: `REINDEX_DEBUG=1`, `initialize` says `debug: true`, and no timeouts apply.
    public var debug = false
    /// Seconds the extension should wait for a debugger (`REINDEX_WAIT_FOR_DEBUGGER`; 0 = forever).
    public var waitForDebuggerSeconds: Double? = nil
    /// Hold the process before `exec` until a debugger traces it (for extensions without the
    /// SDK's gate): seconds, 0 = forever, nil = do not hold.
    public var holdBeforeExecSeconds: Double? = nil
    /// A descriptor that becomes readable when the request should be cancelled (Ctrl-C, SIGTERM).
    public var cancelFD: Int32? = nil
    /// How long an extension has to answer `$/cancel` before it is stopped.
    public var cancelGraceSeconds: Double = 5
    /// Shutdown: seconds after closing stdin before SIGTERM, and after SIGTERM before SIGKILL.
    public var exitGraceSeconds: Double = 5
    public var termGraceSeconds: Double = 2
    public var environment: [String: String] = [:]
    public var onProgress: ((ProgressParams) -> Void)? = nil
    public var onTrace: ((TraceDirection, UnsafeRawBufferPointer) -> Void)? = nil
    public var onStderrLine: ((String) -> Void)? = nil
    /// Lint mode (`validate --run`): protocol problems the session can survive are reported here
    /// and the session goes on, so one run shows every problem; others still end the request.
    public var onRecoverableViolation: ((String) -> Void)? = nil
    /// The protocol versions `initialize` offers (the conformance suite offers only an unsupported
    /// one, to see the extension decline); nil: the host's own.
    public var offeredProtocolVersions: [Int]? = nil
    /// Called once the process exists (debug mode prints the attach commands here).
    public var onSpawn: ((ExtensionProcess) -> Void)? = nil
    /// The sandbox: Landlock rules, private directories, `--require-sandbox`, `--no-sandbox`.
    public var sandbox = SandboxOptions()

    public init() {}
}

/// One running extension speaking protocol version 1: spawn, `initialize`, requests one at a
/// time with their index operations streamed into the store, acknowledgements, shutdown.
///
/// Everything happens on the calling thread in one `poll` loop over the extension's stdout,
/// stderr and stdin and the cancel descriptor, so timeouts, cancellation and a child that stops
/// reading are all handled without extra threads, and memory stays bounded by one line.
public final class ExtensionSession {
    public let bundle: DiscoveredBundle
    public let store: IndexStore
    public let log: ExtensionLog
    public private(set) var process: ExtensionProcess?
    public private(set) var initializeResult: InitializeResult?
    var options: SessionOptions

    private var outgoing: [UInt8] = []
    private var deadlines: Deadlines
    private var failure: RequestFailure?
    private var stdoutClosed = false
    private var initialized = false
    private var nextRequestID: Int64 = 1
    private var answered = Set<RequestID>()
    private var current: RequestContext?
    private var deferredViolation: String?
    private var warnings: [String] = []
    private var prettyPrintedReported = false
    private var pendingProbe: RequestID?
    private var probeReply: Result<JSONValue, RPCError>?
    /// How many processes the extension left behind (in its group, or escaped from it) when it
    /// was shut down.
    public private(set) var leftBehind = 0
    /// The extension's `batch/commit` requests the host accepted, and those it refused (a client
    /// state over 250 bytes or not base64), over the session.
    public private(set) var commitsAccepted = 0
    public private(set) var commitsRefused: [String] = []
    /// The failure that ended the last request, for the log's account of why the session ended.
    private var endedBy: RequestFailure?
    /// Reads and decodes stdout on its own thread, from spawn to teardown (with each raw line too
    /// when tracing).
    private var decoder: StdoutDecoder?
    private var isShutDown = false

    final class RequestContext {
        let id: RequestID
        let request: QueuedRequest
        let writes: StagedWrites
        var reply: Result<JSONValue, RPCError>?
        var rejections: [String] = []
        var cancelSentAt: Double?
        var progressSavedAt = -Double.infinity
        init(id: RequestID, request: QueuedRequest, writes: StagedWrites) {
            self.id = id
            self.request = request
            self.writes = writes
        }
    }

    public init(bundle: DiscoveredBundle, store: IndexStore, logPath: String?, options: SessionOptions) {
        self.bundle = bundle
        self.store = store
        // Wait as long as it takes for another writer, unless this request is cancelled.
        store.connection.setBusyWait(seconds: 3600, cancelFD: options.cancelFD)
        self.options = options
        self.log = ExtensionLog(path: logPath)
        self.deadlines = Deadlines(timeouts: options.debug ? nil : bundle.manifest.timeouts)
        log.onLine = options.onStderrLine
        signal(SIGPIPE, SIG_IGN)
    }

    deinit { shutdown() }

    private var id: String { bundle.identifier }

    private func fail(_ kind: RequestFailure.Kind, _ message: String) -> RequestFailure {
        var failure = RequestFailure(kind, "\(id): \(message)", stderrTail: log.lastLines)
        failure.wireID = current.map { "\($0.id)" }
        return failure
    }

    // MARK: Starting

    /// Spawns the extension and completes `initialize`.
    public func start() throws(RequestFailure) {
        let environment = ExtensionEnvironment.build(
            host: options.environment, manifest: bundle.manifest, hostPID: getpid(),
            debug: options.debug, waitForDebuggerSeconds: options.waitForDebuggerSeconds)
        log.note("starting \(bundle.executablePath) (\(bundle.manifest.version))\(options.debug ? " in debug mode" : "")")
        let spawned: ExtensionProcess
        do {
            let launch = try SandboxLaunch(bundle: bundle, options: options.sandbox, environment: environment,
                                           hostEnvironment: options.environment, indexPath: store.path)
            log.note(launch.summary)
            spawned = try ExtensionProcess(bundle: bundle, environment: launch.environment,
                                           waitForTracerBeforeExec: options.holdBeforeExecSeconds, launch: launch)
        } catch {
            throw RequestFailure(.cannotStart, error.message)
        }
        process = spawned
        decoder = StdoutDecoder(stdoutFD: spawned.stdoutFD, keepsLines: options.onTrace != nil)
        options.onSpawn?(spawned)
        if spawned.waitsBeforeExec {
            do { try spawned.checkExec(bundle: bundle) } catch { throw RequestFailure(.cannotStart, error.message, stderrTail: log.lastLines) }
        }
        deadlines.processStarted(now: Clock.monotonic())
        let params = InitializeParams(protocolVersions: options.offeredProtocolVersions ?? ReindexVersion.protocolVersions, hostVersion: ReindexVersion.string,
                                      bundleIdentifier: bundle.identifier, debug: options.debug)
        send(.request(id: .number(0), method: Method.initialize, params: params.json))
        try pump { self.initialized }
        deadlines.initialized()
    }

    // MARK: Requests

    /// Sends one request, streams its operations into the store, and ends it: on success the
    /// staged writes are acknowledged (with `onAcknowledge` in the same transaction); on any
    /// failure what was not committed is rolled back and the failure returned.
    public func perform(
        _ request: QueuedRequest,
        onAcknowledge: (IndexStore, WriteCounts) throws(SQLiteError) -> Void
    ) -> (counts: WriteCounts, rejections: [String], failure: RequestFailure?) {
        let writes: StagedWrites
        do {
            writes = try StagedWrites(store: store, bundleIdentifier: bundle.identifier,
                                      scope: request.kind == .reindexAll ? .replacement(generation: request.id) : .live,
                                      requestID: request.id, declarations: bundle.manifest.attributes)
        } catch {
            return (WriteCounts(), [], fail(.storeFailure, "cannot prepare the index: \(error)"))
        }
        let requestID = RequestID.number(nextRequestID)
        nextRequestID += 1
        let context = RequestContext(id: requestID, request: request, writes: writes)
        decoder?.validate(with: writes.declarations)
        current = context
        defer { current = nil; deadlines.requestEnded() }
        let method: String
        let params: JSONValue
        switch request.kind {
        case .reindexAll:
            method = Method.reindexAll
            params = ReindexAllParams(reason: request.reason, clientState: request.clientState).json
        case .reindexItems:
            method = Method.reindexItems
            params = ReindexItemsParams(identifiers: request.identifiers, reason: request.reason).json
        }
        log.note("request \(requestID): \(method) (\(request.reason))")
        deadlines.requestStarted(now: Clock.monotonic())
        send(.request(id: requestID, method: method, params: params))
        do {
            try pump { context.reply != nil }
        } catch {
            writes.rollback()
            endedBy = error
            return (writes.counts, context.rejections, error)
        }
        answered.insert(requestID)
        switch context.reply {
        case .failure(let error)?:
            writes.rollback()
            let failure = error.code == RPCError.requestCancelled
                ? fail(.cancelled, "the request was cancelled (\(error.message))")
                : fail(.refused, "the extension refused \(method): \(error.message) (code \(error.code))")
            endedBy = failure
            return (writes.counts, context.rejections, failure)
        default:
            do {
                let counts = try writes.acknowledge { (store) throws(SQLiteError) in try onAcknowledge(store, writes.counts) }
                log.note("request \(requestID) acknowledged: put \(counts.put), deleted \(counts.deleted), rejected \(counts.rejected), ignored updates \(counts.ignoredUpdates)")
                return (counts, context.rejections, nil)
            } catch {
                writes.rollback()
                return (writes.counts, context.rejections, fail(.storeFailure, "cannot commit the acknowledged request: \(error)"))
            }
        }
    }

    /// Sends a request of the host's choosing outside the protocol's two (the conformance suite's
    /// unknown method) and waits up to `seconds` for its reply; nil when none came.
    public func probe(method: String, params: JSONValue?, seconds: Double) throws(RequestFailure) -> Result<JSONValue, RPCError>? {
        let requestID = RequestID.number(nextRequestID)
        nextRequestID += 1
        pendingProbe = requestID
        probeReply = nil
        defer { pendingProbe = nil }
        send(.request(id: requestID, method: method, params: params))
        let until = Clock.monotonic() + seconds
        try pump { self.probeReply != nil || Clock.monotonic() >= until }
        return probeReply
    }

    /// A protocol violation that came after the last acknowledgement and was not yet reported
    /// (no later request was left to fail); taking it clears it.
    public func takeLateViolation() -> String? {
        defer { deferredViolation = nil }
        return deferredViolation
    }

    // MARK: The loop

    /// Runs the poll loop until `done` holds, a failure happens, or a deadline passes.
    private func pump(until done: () -> Bool) throws(RequestFailure) {
        if let text = deferredViolation {
            deferredViolation = nil
            try violation(text, fatal: true)
        }
        while true {
            if let failure { throw failure }
            if done() { return }
            guard let process else { throw fail(.crashed, "is not running") }
            let now = Clock.monotonic()
            var wait = 0.25
            if let deadline = deadlines.nearest() {
                if now >= deadline.time {
                    throw fail(.timeout, deadline.reason)
                }
                wait = min(wait, deadline.time - now)
            }
            if let sent = current?.cancelSentAt {
                if now >= sent + options.cancelGraceSeconds {
                    throw fail(.cancelled, "the request was cancelled and the extension did not answer $/cancel within \(Int(options.cancelGraceSeconds)) s")
                }
                wait = min(wait, sent + options.cancelGraceSeconds - now)
            }
            var fds: [pollfd] = []
            if let decoder, !stdoutClosed { fds.append(pollfd(fd: decoder.wakeFD, events: Int16(POLLIN), revents: 0)) }
            if process.stderrFD >= 0 { fds.append(pollfd(fd: process.stderrFD, events: Int16(POLLIN), revents: 0)) }
            if !outgoing.isEmpty && process.stdinFD >= 0 { fds.append(pollfd(fd: process.stdinFD, events: Int16(POLLOUT), revents: 0)) }
            if let cancel = options.cancelFD, current?.cancelSentAt == nil { fds.append(pollfd(fd: cancel, events: Int16(POLLIN), revents: 0)) }
            try commitGroupBeforeWaiting(&fds)
            let rc = fds.withUnsafeMutableBufferPointer { poll($0.baseAddress, nfds_t($0.count), Int32(max(0, wait) * 1000) + 1) }
            if rc < 0 && errno != EINTR {
                throw fail(.crashed, "poll failed: \(FileSystem.errnoText())")
            }
            for entry in fds where entry.revents != 0 {
                if entry.fd == process.stderrFD { drainStderr() }
                else if let decoder, entry.fd == decoder.wakeFD { try processDecoderEvents(decoder) }
                else if entry.fd == process.stdinFD { flushOutgoing() }
                else if entry.fd == options.cancelFD { requestCancel() }
                if failure != nil { break }
            }
            if failure == nil && !done() && (stdoutClosed || process.waitForExit(blocking: false) != nil) {
                try processEnded()
            }
        }
    }

    /// Commits the request's open group of writes when nothing is ready to read, so no write
    /// transaction is ever held while the host waits for the extension (other bundles and
    /// commands write in between).
    private func commitGroupBeforeWaiting(_ fds: inout [pollfd]) throws(RequestFailure) {
        guard let writes = current?.writes, writes.hasOpenGroup else { return }
        // A moment's grace first: a stream that pauses between two messages is not waiting, and
        // committing at every such gap would write the full-text index in many small segments.
        let ready = fds.withUnsafeMutableBufferPointer { poll($0.baseAddress, nfds_t($0.count), StagedWrites.pauseMilliseconds) }
        guard ready == 0 else { return }
        do { try writes.flush() } catch {
            var failure = fail(.storeFailure, "cannot write to the index: \(error)")
            failure.hostSide = error.isBusy
            self.failure = failure
            throw failure
        }
    }

    /// The extension closed stdout or exited: read what it left, then say how it ended.
    private func processEnded() throws(RequestFailure) {
        guard let process else { return }
        try drainStdout()
        drainStderr()
        if failure != nil || (current?.reply != nil) || (current == nil && initialized) { return }
        var exit = process.waitForExit(blocking: false)
        if exit == nil {
            // stdout is closed but the process lives on: give it a moment to exit.
            let until = Clock.monotonic() + 1
            while exit == nil && Clock.monotonic() < until {
                usleep(10_000)
                exit = process.waitForExit(blocking: false)
            }
        }
        drainStderr()
        let what = initialized ? "before acknowledging the request" : "before answering initialize"
        let limits = bundle.manifest.limits
        switch exit {
        case .signaled(let signal)? where limits.cpuSeconds != nil && (signal == SIGXCPU || signal == SIGKILL && usedItsCPUTime(process)):
            throw fail(.crashed, "the extension was stopped by its CPU time limit: it used \(Self.seconds(process.cpuSeconds ?? 0)) s of CPU, "
                + "over limits.cpuSeconds = \(limits.cpuSeconds ?? 0) in its manifest (killed by \(signalName(signal))) \(what)")
        case .signaled(let signal)?:
            throw fail(.crashed, "the extension crashed: it was killed by \(signalName(signal)) \(what)\(addressSpaceNote)")
        case .exited(let status)?:
            throw fail(initialized ? .crashed : .cannotStart, "the extension exited with status \(status) \(what)\(addressSpaceNote)")
        case nil:
            throw fail(.protocolViolation, "the extension closed its stdout \(what)")
        }
    }

    /// For an extension whose manifest limits its address space, a reminder that running out of
    /// it is the likely reason an extension dies unexpectedly (the allocation that passes the
    /// limit fails; the extension's stderr, quoted after the message, usually says so).
    private var addressSpaceNote: String {
        guard let mib = bundle.manifest.limits.addressSpaceMiB else { return "" }
        return "; its manifest limits its address space to \(mib) MiB (limits.addressSpaceMiB), and an allocation past that fails"
    }

    /// Whether the extension used all the CPU time its manifest allows (past the soft limit's
    /// SIGXCPU, the hard limit sends SIGKILL).
    private func usedItsCPUTime(_ process: ExtensionProcess) -> Bool {
        guard let limit = bundle.manifest.limits.cpuSeconds, let used = process.cpuSeconds else { return false }
        return used >= Double(limit)
    }

    private static func seconds(_ value: Double) -> String {
        String(Double((value * 10).rounded()) / 10)
    }

    private func drainStdout() throws(RequestFailure) {
        guard let decoder else { return }
        // Let the decoder reach what the extension left in the pipe before judging its end.
        let until = Clock.monotonic() + 0.5
        while !stdoutClosed && failure == nil {
            try processDecoderEvents(decoder)
            if stdoutClosed || Clock.monotonic() >= until { return }
            var fds = [pollfd(fd: decoder.wakeFD, events: Int16(POLLIN), revents: 0)]
            _ = poll(&fds, 1, 50)
        }
    }

    private func drainStderr() {
        guard let process, process.stderrFD >= 0 else { return }
        var buffer = [UInt8](repeating: 0, count: 64 << 10)
        for _ in 0..<16 {
            let n = buffer.withUnsafeMutableBytes { read(process.stderrFD, $0.baseAddress, $0.count) }
            if n < 0 { if errno == EINTR { continue }; return }
            if n == 0 { process.closeStderr(); return }
            buffer.withUnsafeBytes { log.consume(UnsafeRawBufferPointer(rebasing: $0[0..<n])) }
            if n < buffer.count { return }
        }
    }

    private func send(_ message: Message) {
        let line = message.line
        if let onTrace = options.onTrace {
            line.withUnsafeBytes { onTrace(.toExtension, UnsafeRawBufferPointer(rebasing: $0[0..<($0.count - 1)])) }
        }
        outgoing.append(contentsOf: line)
        flushOutgoing()
    }

    private func flushOutgoing() {
        guard let process, process.stdinFD >= 0, !outgoing.isEmpty else { return }
        let n = outgoing.withUnsafeBytes { write(process.stdinFD, $0.baseAddress, $0.count) }
        if n > 0 {
            outgoing.removeFirst(n)
        } else if n < 0 && errno != EAGAIN && errno != EINTR {
            // EPIPE: the extension closed stdin or died; its exit is noticed by the loop.
            outgoing.removeAll()
        }
    }

    private func requestCancel() {
        if let fd = options.cancelFD {
            var byte: UInt8 = 0
            _ = read(fd, &byte, 1)
        }
        guard let context = current, context.cancelSentAt == nil else {
            failure = fail(.cancelled, "cancelled before a request was outstanding")
            return
        }
        context.cancelSentAt = Clock.monotonic()
        log.note("cancelling request \(context.id)")
        send(.notification(method: Method.cancel, params: CancelParams(id: context.id).json))
    }

    private func violation(_ text: String, fatal: Bool = false) throws(RequestFailure) {
        if !fatal, let report = options.onRecoverableViolation {
            report("protocol violation: \(text)")
            return
        }
        let error = fail(.protocolViolation, "protocol violation: \(text)")
        log.note("protocol violation: \(text)")
        failure = error
        throw error
    }

    // MARK: Messages

    /// A line that is not a valid message (white space only counts as empty).
    private func undecodable(_ line: UnsafeRawBufferPointer, offset: Int, error: MessageDecodingError) throws(RequestFailure) {
        if line.allSatisfy({ $0 == 0x20 || $0 == 0x09 || $0 == 0x0D }) { return }
        if let bad = firstInvalidUTF8Offset(line) {
            try violation("stdout line at byte \(offset) is not valid UTF-8 (bad byte at \(offset + bad))")
            return
        }
        let text = String(decoding: line.prefix(80), as: UTF8.self)
        let trimmed = text.trimmingWhitespace
        let quoted = "\"" + text + (line.count > 80 ? "…" : "") + "\""
        // A message written over several lines arrives as fragments: name that once, not each line.
        if Self.looksLikePrettyPrinted(trimmed) {
            if prettyPrintedReported { return }
            prettyPrintedReported = true
            try violation("stdout line at byte \(offset), \(quoted), looks like part of a pretty-printed JSON message: "
                          + "the protocol needs each message on one line (serialize without indentation)")
            return
        }
        if trimmed.hasPrefix("{") {
            try violation("stdout line at byte \(offset), \(quoted): \(error.reason)")
        } else {
            try violation("stdout line at byte \(offset) is not a protocol message: \(quoted) (\(error.reason)); "
                          + "write logs and debug output to stderr, and only one JSON-RPC message per line to stdout")
        }
    }

    /// `{`, `}`, `"jsonrpc": "2.0",` … alone on a line: a fragment of an indented JSON document.
    static func looksLikePrettyPrinted(_ line: String) -> Bool {
        if ["{", "}", "},", "[", "]", "],"].contains(line) { return true }
        guard line.hasPrefix("\"") else { return false }
        return line.contains("\":") && (line.hasSuffix(",") || line.hasSuffix("{") || line.hasSuffix("[") || !line.hasSuffix("}"))
    }

    /// Events from the decoder thread, in order.
    private func processDecoderEvents(_ decoder: StdoutDecoder) throws(RequestFailure) {
        for event in decoder.take() {
            if failure != nil { return }
            switch event {
            case let .message(message, offset, items, line):
                if let line, let onTrace = options.onTrace { line.withUnsafeBytes { onTrace(.fromExtension, $0) } }
                deadlines.messageReceived(now: Clock.monotonic())
                try handleMessage(message, offset: offset, items: items)
                deadlines.messageReceived(now: Clock.monotonic())
            case let .undecodable(line, offset, error):
                if let onTrace = options.onTrace { line.withUnsafeBytes { onTrace(.fromExtension, $0) } }
                let outcome: Result<Void, RequestFailure> = line.withUnsafeBytes { raw in
                    do throws(RequestFailure) { try undecodable(raw, offset: offset, error: error); return .success(()) } catch { return .failure(error) }
                }
                try outcome.get()
            case .framing(let error):
                try violation("stdout: \(error)", fatal: true)
            case .end(let tail):
                stdoutClosed = true
                if let tail {
                    try violation("the last line on stdout (byte \(tail.offset)) has no newline at its end")
                }
            }
        }
    }

    private func handleMessage(_ message: Message, offset: Int, items: [StdoutDecoder.ItemOutcome]?) throws(RequestFailure) {
        guard initialized else {
            try handleInitializeReply(message)
            return
        }
        if let probe = pendingProbe, case let .response(replyID, result) = message, replyID == probe {
            probeReply = result
            pendingProbe = nil
            answered.insert(replyID)
            return
        }
        guard let context = current else {
            try violation("\(Self.describe(message)) arrived while no request was outstanding")
            return
        }
        if context.reply != nil {
            // Read in the same chunk as the acknowledgement: the request stands; the message is
            // a violation of the session, reported before the next request (or in the log).
            let text = "\(Self.describe(message)) (stdout byte \(offset)) arrived after request \(context.id) was acknowledged"
            if let report = options.onRecoverableViolation {
                report("protocol violation: \(text)")
            } else if deferredViolation == nil {
                deferredViolation = text
                log.note("protocol violation: \(text)")
            }
            return
        }
        switch message {
        case let .notification(method, params):
            try handleNotification(method, params, items: items, context)
        case let .request(requestID, method, params):
            if method == Method.batchCommit {
                try handleBatchCommit(requestID, params, context)
            } else {
                send(.response(id: requestID, result: .failure(RPCError(code: RPCError.methodNotFound, message: "the host has no method '\(method)'"))))
                try unknownMethod(method, what: "request")
            }
        case let .response(replyID, result):
            if replyID == context.id {
                context.reply = result
            } else if answered.contains(replyID) || replyID == .number(0) {
                try violation("a second reply to request \(replyID)", fatal: true)
            } else {
                // The real reply may never come: waiting for it would only run out a timeout.
                try violation("a reply to request \(replyID), which the host never sent", fatal: true)
            }
        case let .orphanError(error):
            try violation("an error reply with a null id: \(error.message)", fatal: true)
        }
    }

    /// What lint mode says of an event read after the last request ended (nil: nothing).
    private static func afterLastRequest(_ event: StdoutDecoder.Event) -> String? {
        let what: String
        switch event {
        case let .message(message, offset, _, _): what = "\(Self.describe(message)) (stdout byte \(offset))"
        case let .undecodable(_, offset, _): what = "a line (stdout byte \(offset))"
        case .framing, .end: return nil
        }
        return "protocol violation: \(what) arrived after the last request ended"
    }

    private static func describe(_ message: Message) -> String {
        switch message {
        case .request(let id, let method, _): return "a '\(method)' request (id \(id))"
        case .notification(let method, _): return "a '\(method)' notification"
        case .response(let id, _): return "a reply to request \(id)"
        case .orphanError: return "an error reply with a null id"
        }
    }

    private func handleInitializeReply(_ message: Message) throws(RequestFailure) {
        guard case let .response(replyID, result) = message, replyID == .number(0) else {
            try violation("\(Self.describe(message)) arrived before the reply to initialize; nothing else may come on stdout before it")
            return
        }
        switch result {
        case .success(let value):
            let reply: InitializeResult
            do { reply = try InitializeResult(json: value) } catch {
                try violation("the reply to initialize is invalid: \(error)", fatal: true)
                return
            }
            let offered = options.offeredProtocolVersions ?? ReindexVersion.protocolVersions
            guard offered.contains(reply.protocolVersion) else {
                let error = fail(.versionMismatch, "the extension chose protocol version \(reply.protocolVersion); the host offered \(offered)")
                failure = error
                throw error
            }
            initializeResult = reply
            initialized = true
            answered.insert(.number(0))
            log.note("initialized: \(reply.extensionName) \(reply.extensionVersion), protocol \(reply.protocolVersion)")
        case .failure(let error):
            if error.code == RPCError.invalidParams {
                let supported = error.data?["supported"].map { JSONWriter.string($0) } ?? "(not given)"
                let requested = error.data?["requested"].map { JSONWriter.string($0) } ?? JSONWriter.string(.array(ReindexVersion.protocolVersions.map { .integer(Int64($0)) }))
                let failure = fail(.versionMismatch, "no protocol version in common: the extension supports \(supported), the host requested \(requested) (\(error.message))")
                self.failure = failure
                throw failure
            }
            let failure = fail(.cannotStart, "the extension refused initialize: \(error.message) (code \(error.code))")
            self.failure = failure
            throw failure
        }
    }

    private func handleNotification(_ method: String, _ params: JSONValue?, items: [StdoutDecoder.ItemOutcome]?, _ context: RequestContext) throws(RequestFailure) {
        let writes = context.writes
        do {
            switch method {
            case Method.put:
                // The decoder leaves `items` nil only when the message has no array of items.
                guard let items else {
                    try violation("index/put needs params.items (an array of items)")
                    return
                }
                try putValidated(items, context)
            case Method.delete:
                do { try writes.delete(identifiers: try DeleteParams(json: params).identifiers) } catch let error as FieldError {
                    try violation("index/delete: \(error)")
                }
            case Method.deleteDomains:
                do { try writes.delete(domains: try DeleteDomainsParams(json: params).domainIdentifiers) } catch let error as FieldError {
                    try violation("index/deleteDomains: \(error)")
                }
            case Method.deleteAll:
                try writes.deleteAll()
            case Method.progress:
                do {
                    let progress = try ProgressParams(json: params)
                    guard progress.requestID == context.id else {
                        try violation("$/progress for request \(progress.requestID), which is not outstanding")
                        return
                    }
                    options.onProgress?(progress)
                    // For `status`, at most once a second (and never at the cost of the request).
                    let now = Clock.monotonic()
                    if now - context.progressSavedAt >= 1 {
                        context.progressSavedAt = now
                        try? store.saveProgress(context.request.id, progress)
                    }
                } catch let error as FieldError {
                    try violation("$/progress: \(error)")
                }
            default:
                try unknownMethod(method, what: "notification")
            }
        } catch let error as RequestFailure {
            throw error
        } catch let error as SQLiteError {
            var failure = fail(.storeFailure, "cannot write to the index: \(error)")
            failure.hostSide = error.isBusy
            self.failure = failure
            throw failure
        } catch {
            try violation("\(method): \(error)")
        }
    }

    /// A method the host does not know. In the `index/` and `batch/` namespaces it can only be a
    /// mistyped index operation (`index/add` for `index/put`), and going on would lose data — a
    /// reindexAll would then remove every item it "did not put" — so it is a violation; anything
    /// else is a warning shown with the run's summary.
    private func unknownMethod(_ method: String, what: String) throws(RequestFailure) {
        if method.hasPrefix("index/") || method.hasPrefix("batch/") {
            let known = [Method.put, Method.delete, Method.deleteDomains, Method.deleteAll, Method.batchCommit]
            try violation("unknown \(what) '\(method)': the index/ and batch/ methods are \(known.joined(separator: ", ")); nothing of this request is committed", fatal: true)
            return
        }
        let text = "ignored an unknown \(what) '\(method)'"
        log.note(text)
        if warnings.count < 10 && !warnings.contains(text) { warnings.append(text) }
    }

    /// Problems that did not stop the session (unknown methods outside index/ and batch/);
    /// taking them clears them.
    public func takeWarnings() -> [String] {
        defer { warnings = [] }
        return warnings
    }

    /// `index/put` whose items the decoder thread already validated.
    private func putValidated(_ items: [StdoutDecoder.ItemOutcome], _ context: RequestContext) throws(RequestFailure) {
        do {
            for item in items {
                switch item {
                case .valid(let validated):
                    try context.writes.put(validated)
                case let .invalid(uid, reason):
                    context.writes.reject()
                    if context.rejections.count < 10 {
                        context.rejections.append("item rejected\(uid.map { " (\($0.prefix(80)))" } ?? ""): \(reason)")
                    }
                }
            }
        } catch {
            var failure = fail(.storeFailure, "cannot write to the index: \(error)")
            failure.hostSide = error.isBusy
            self.failure = failure
            throw failure
        }
    }

    private func handleBatchCommit(_ requestID: RequestID, _ params: JSONValue?, _ context: RequestContext) throws(RequestFailure) {
        let commit: BatchCommitParams
        do { commit = try BatchCommitParams(json: params) } catch {
            send(.response(id: requestID, result: .failure(RPCError(code: RPCError.invalidParams, message: "\(error)"))))
            commitsRefused.append("\(error)")
            return
        }
        guard commit.requestID == context.id else {
            try violation("batch/commit for request \(commit.requestID), which is not outstanding (request \(context.id) is)")
            return
        }
        if let state = commit.clientState {
            guard let decoded = Base64.decode(state) else {
                send(.response(id: requestID, result: .failure(RPCError(code: RPCError.invalidParams, message: "clientState is not base64; nothing was committed"))))
                commitsRefused.append("clientState is not base64")
                return
            }
            guard decoded.count <= BatchCommitParams.maximumClientStateBytes else {
                send(.response(id: requestID, result: .failure(RPCError(
                    code: RPCError.invalidParams,
                    message: "clientState is \(decoded.count) bytes decoded, at most \(BatchCommitParams.maximumClientStateBytes) are allowed; nothing was committed"))))
                commitsRefused.append("clientState is \(decoded.count) bytes decoded, over \(BatchCommitParams.maximumClientStateBytes)")
                return
            }
        }
        let requestRowID = context.request.id
        do {
            let committed = try context.writes.commitBatch { (store) throws(SQLiteError) in
                try store.saveClientState(requestRowID, commit.clientState)
            }
            send(.response(id: requestID, result: .success(BatchCommitResult(committed: Int64(committed)).json)))
            commitsAccepted += 1
        } catch {
            var failure = fail(.storeFailure, "cannot commit a batch: \(error)")
            failure.hostSide = error.isBusy
            self.failure = failure
            throw failure
        }
    }

    // MARK: Shutdown

    /// Ends the extension: close stdin, wait for it to exit while draining its output, SIGTERM
    /// its process group after `exitGraceSeconds`, SIGKILL after `termGraceSeconds` more. Left-over
    /// processes of its group are stopped too. Always reaps; safe to call twice.
    @discardableResult
    public func shutdown(graceful: Bool = true) -> ProcessExit? {
        guard let process else { return nil }
        if isShutDown { return process.exit }
        defer { isShutDown = true }
        // Why the session ends, in one line, before what ending it takes.
        log.note("session ended: " + ((failure ?? endedBy).map { "\($0.kind.rawValue): \($0.message)" } ?? (graceful ? "no more requests" : "stopped by the host")))
        if process.exit != nil && !process.groupIsAlive {
            finishPipes(process)
            return process.exit
        }
        flushOutgoing()
        process.closeStdin()
        var phase = 0  // 0 waiting for exit, 1 SIGTERM sent, 2 SIGKILL sent
        var phaseDeadline = Clock.monotonic() + (graceful ? options.exitGraceSeconds : 0)
        if failure != nil && !graceful { phaseDeadline = Clock.monotonic() }
        while process.waitForExit(blocking: false) == nil {
            let now = Clock.monotonic()
            if now >= phaseDeadline {
                if phase == 0 {
                    log.note(graceful ? "the extension did not exit within \(Self.seconds(options.exitGraceSeconds)) s after stdin was closed; sending SIGTERM"
                                      : "stopping the extension at once (the request failed): sending SIGTERM to its process group")
                    process.signalGroup(SIGTERM)
                    phase = 1
                    phaseDeadline = now + options.termGraceSeconds
                } else {
                    log.note("the extension did not exit after SIGTERM; sending SIGKILL")
                    process.signalGroup(SIGKILL)
                    process.waitForExit(blocking: true)
                    break
                }
            }
            if drainQuietly(process, timeout: min(0.05, max(0, phaseDeadline - now))) {
                // Ctrl-C (or serve stopping) while waiting: go on to the signals now.
                phaseDeadline = min(phaseDeadline, now)
            }
        }
        // Whatever the extension left behind in its group goes too.
        if process.groupIsAlive {
            leftBehind += 1
            process.signalGroup(SIGTERM)
            let until = Clock.monotonic() + options.termGraceSeconds
            while process.groupIsAlive && Clock.monotonic() < until { usleep(20_000) }
            if process.groupIsAlive { process.signalGroup(SIGKILL) }
        }
        finishPipes(process)
        if let exit = process.exit { log.note("the extension \(exit)") }
        return process.exit
    }

    private func finishPipes(_ process: ExtensionProcess) {
        // The decoder stops reading before the pipes close.
        decoder?.stop()
        decoder = nil
        let escaped = process.stopEscapedProcesses(bundleIdentifier: bundle.identifier)
        leftBehind += escaped.count
        if !escaped.isEmpty {
            log.note("stopped \(escaped.count) process(es) the extension left running outside its process group: \(escaped.map(String.init).joined(separator: ", "))")
        }
        drainStderr()
        process.closePipes()
        process.removePrivateTemporaryDirectory()
        log.finish()
    }

    /// Keeps stdout and stderr flowing while waiting, so a child blocked on a full pipe can exit.
    /// Returns true when a cancellation arrived meanwhile.
    private func drainQuietly(_ process: ExtensionProcess, timeout: Double) -> Bool {
        var cancelled = false
        var fds: [pollfd] = []
        if let cancel = options.cancelFD { fds.append(pollfd(fd: cancel, events: Int16(POLLIN), revents: 0)) }
        if let decoder, !stdoutClosed { fds.append(pollfd(fd: decoder.wakeFD, events: Int16(POLLIN), revents: 0)) }
        if process.stderrFD >= 0 { fds.append(pollfd(fd: process.stderrFD, events: Int16(POLLIN), revents: 0)) }
        _ = fds.withUnsafeMutableBufferPointer { poll($0.baseAddress, nfds_t($0.count), Int32(timeout * 1000) + 1) }
        for entry in fds where entry.revents != 0 {
            if entry.fd == options.cancelFD {
                var byte: UInt8 = 0
                _ = read(entry.fd, &byte, 1)
                cancelled = true
            } else if entry.fd == process.stderrFD {
                drainStderr()
            } else if let decoder {
                for event in decoder.take() {
                    if case .end = event { stdoutClosed = true }
                    // In lint mode, messages after the last request are problems worth naming.
                    if let report = options.onRecoverableViolation, let text = Self.afterLastRequest(event) { report(text) }
                }
            }
        }
        return cancelled
    }
}
