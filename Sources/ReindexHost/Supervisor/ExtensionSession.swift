import ReindexStore
import ReindexSystem
import ReindexProtocol

/// One running extension speaking protocol version 1: spawn, `initialize`, requests one at a
/// time with their index operations streamed into the store, acknowledgements, shutdown.
///
/// Everything happens on the calling thread in one `poll` loop (`ExtensionSession+Loop.swift`)
/// over the decoder of the extension's stdout, its stderr and stdin and the cancel descriptor, so
/// timeouts, cancellation and a child that stops reading are all handled without more threads,
/// and memory stays bounded by one line. What the extension's messages mean is decided by
/// `ProtocolRules`; this file holds the session's state, starts it, runs requests and carries the
/// rules' actions out on the store. How an extension that ended is described is in
/// `ExtensionSession+ExitDiagnosis.swift`, how a session ends in `ExtensionSession+Teardown.swift`,
/// its options in `SessionOptions.swift`.
public final class ExtensionSession {
    public let bundle: DiscoveredBundle
    public let store: any IndexBackend
    public let log: ExtensionLog
    public private(set) var process: ExtensionProcess?
    public private(set) var initializeResult: InitializeResult?
    var options: SessionOptions

    var rules: ProtocolRules
    var outgoing: [UInt8] = []
    var deadlines: Deadlines
    var failure: RequestFailure?
    var stdoutClosed = false
    var current: RequestContext?
    private var warnings: [String] = []
    private var probeReply: Result<JSONValue, RPCError>?
    /// How many processes the extension left behind (in its group, or escaped from it) when it
    /// was shut down.
    public internal(set) var leftBehind = 0
    /// The extension's `batch/commit` requests the host accepted, and those it refused (a client
    /// state over 250 bytes or not base64), over the session.
    public private(set) var commitsAccepted = 0
    public private(set) var commitsRefused: [String] = []
    /// Whether the last acknowledgement carried `allowEmpty: true`.
    public private(set) var lastAcknowledgementAllowsEmpty = false
    /// The failure that ended the last request, for the log's account of why the session ended.
    var endedBy: RequestFailure?
    /// Reads and decodes stdout on its own thread, from spawn to teardown (with each raw line too
    /// when tracing).
    var decoder: StdoutDecoder?
    var isShutDown = false
    /// Why `launch` could not spawn the extension, for `start` to report.
    private var launchFailure: RequestFailure?
    /// Where this session's messages are recorded, when they are (set before `start`).
    public var recorder: SessionRecorder?

    final class RequestContext {
        let id: RequestID
        let request: QueuedRequest
        let writes: any IndexWriting
        var reply: Result<JSONValue, RPCError>?
        var rejections: [Rejection] = []
        var cancelSentAt: Double?
        var progressSavedAt = -Double.infinity
        init(id: RequestID, request: QueuedRequest, writes: any IndexWriting) {
            self.id = id
            self.request = request
            self.writes = writes
        }
    }

    /// A session of `bundle`'s extension writing `store`. The caller readies the store for it
    /// (`store.prepareForSession`) before the session's first write — its books may come first.
    public init(bundle: DiscoveredBundle, store: any IndexBackend, logPath: String?, options: SessionOptions) {
        self.bundle = bundle
        self.store = store
        self.options = options
        self.log = ExtensionLog(path: logPath)
        self.deadlines = Deadlines(timeouts: options.debug ? nil : bundle.manifest.timeouts)
        self.rules = ProtocolRules(offered: options.offeredProtocolVersions ?? ReindexVersion.protocolVersions,
                                   recoversFromViolations: options.onRecoverableViolation != nil)
        log.onLine = options.onStderrLine
        signal(SIGPIPE, SIG_IGN)
    }

    deinit { shutdown() }

    func fail(_ kind: RequestFailure.Kind, _ message: String) -> RequestFailure {
        var failure = RequestFailure(kind, "\(bundle.identifier): \(message)", stderrTail: log.lastLines)
        failure.wireID = current.map { "\($0.id)" }
        return failure
    }

    /// A failure to write the index: the request's end (not the extension's fault when the
    /// index was busy with another writer).
    func storeFailure(_ what: String, _ error: any Error) -> RequestFailure {
        var failure = fail(.storeFailure, "\(what): \(error)")
        failure.hostSide = (error as? StoreError)?.code == .busy
        self.failure = failure
        return failure
    }

    // MARK: Starting

    /// Spawns the extension now, without a word to it yet, so its own start (loading, its
    /// runtime) overlaps what the host does before the request (queueing it); `start` then
    /// speaks to it. A failure to spawn is kept for `start` to report. In debug mode (a wait
    /// for a debugger) and in a replay it does nothing: the extension starts with `start`, once
    /// the request is in the queue.
    public func launch() {
        guard !options.debug, options.holdBeforeExecSeconds == nil, options.waitForTracerSeconds == nil, options.replay == nil,
              process == nil, launchFailure == nil else { return }
        do { try spawn() } catch { launchFailure = error }
    }

    /// Spawns the extension (unless `launch` did) and completes `initialize`.
    public func start() throws(RequestFailure) {
        if let launchFailure { throw launchFailure }
        let spawned = if let process { process } else { try spawn() }
        if let seconds = options.waitForTracerSeconds {
            let attached = try waitForTracer(spawned, seconds: seconds)
            options.onTracerWaitEnded?(spawned.pid, attached)
        }
        if spawned.waitsBeforeExec {
            do { try spawned.checkExec(bundle: bundle) } catch { throw RequestFailure(.cannotStart, error.message, stderrTail: log.lastLines) }
        }
        deadlines.processStarted(now: Clock.monotonic())
        if let player = options.replay {
            // The recorded initialize, byte for byte; items are validated as the manifest declares.
            decoder?.validate(with: bundle.manifest.attributes)
            for line in player.hostLinesDue() { sendRecorded(line) }
        } else {
            let params = InitializeParams(protocolVersions: rules.offered, hostVersion: ReindexVersion.string,
                                          bundleIdentifier: bundle.identifier, debug: options.debug)
            send(.request(id: .number(0), method: Method.initialize, params: params.json))
        }
        try pump { self.rules.isInitialized }
        deadlines.initialized()
        options.onInitialized?(spawned)
    }

    /// The extension's process in its sandbox, and the reader of its stdout.
    @discardableResult
    private func spawn() throws(RequestFailure) -> ExtensionProcess {
        let environment = ExtensionEnvironment.build(
            host: options.environment, manifest: bundle.manifest, hostPID: getpid(),
            debug: options.debug, waitForDebuggerSeconds: options.waitForDebuggerSeconds)
        log.note("starting \(bundle.executablePath) (\(bundle.manifest.version))\(options.debug ? " in debug mode" : "")")
        let spawned: ExtensionProcess
        do {
            let launch = try SandboxLaunch(bundle: bundle, options: options.sandbox, environment: environment,
                                           hostEnvironment: options.environment, indexPath: store.displayLocation)
            log.note(launch.summary)
            spawned = try ExtensionProcess(bundle: bundle, environment: launch.environment,
                                           waitForTracerBeforeExec: options.holdBeforeExecSeconds, launch: launch,
                                           diesWithHost: options.diesWithHost)
        } catch {
            throw RequestFailure(.cannotStart, error.message)
        }
        process = spawned
        // The recorder is set after `launch`: keep the lines whenever the session may record.
        decoder = StdoutDecoder(stdoutFD: spawned.stdoutFD, keepsLines: options.onTrace != nil || options.recordsAs != nil || options.replay != nil)
        options.onSpawn?(spawned)
        return spawned
    }

    /// Waits until a debugger traces `process`, `seconds` pass (0: forever) or the host is asked
    /// to stop (the cancel descriptor: SIGINT, SIGTERM, SIGHUP), streaming the extension's stderr
    /// meanwhile. Returns whether a debugger attached; a stop is a `.cancelled` failure.
    private func waitForTracer(_ process: ExtensionProcess, seconds: Double) throws(RequestFailure) -> Bool {
        let start = Clock.monotonic()
        while true {
            guard let traced = Debugging.isTraced(process.pid) else { return false }  // gone
            if traced { return true }
            if seconds > 0 && Clock.monotonic() - start >= seconds { return false }
            var fds = [pollfd(fd: process.stderrFD, events: Int16(POLLIN), revents: 0)]
            if let cancel = options.cancelFD { fds.append(pollfd(fd: cancel, events: Int16(POLLIN), revents: 0)) }
            _ = fds.withUnsafeMutableBufferPointer { poll($0.baseAddress, nfds_t($0.count), 50) }
            if fds[0].revents != 0 { drainStderr() }
            if fds.count > 1 && fds[1].revents != 0 {
                let failure = fail(.cancelled, "stopped while waiting for a debugger to attach to pid \(process.pid)")
                self.failure = failure
                throw failure
            }
        }
    }

    // MARK: Requests

    /// Sends one request, streams its operations into the store, and ends it: on success the
    /// staged writes are acknowledged (with `onAcknowledge` in the same transaction); on any
    /// failure what was not committed is rolled back and the failure returned.
    public func perform(
        _ request: QueuedRequest,
        onAcknowledge: (any IndexBackend, WriteCounts) throws -> Void
    ) -> (counts: WriteCounts, rejections: [Rejection], failure: RequestFailure?) {
        let writes: any IndexWriting
        do {
            writes = try store.makeWriter(bundleIdentifier: bundle.identifier,
                                          scope: request.kind == .reindexAll ? .replacement(generation: request.id) : .live,
                                          requestID: request.id, declarations: bundle.manifest.attributes)
        } catch {
            return (WriteCounts(), [], fail(.storeFailure, "cannot prepare the index: \(error)"))
        }
        let requestID = rules.nextID()
        let context = RequestContext(id: requestID, request: request, writes: writes)
        decoder?.validate(with: writes.declarations)
        current = context
        rules.requestSent(requestID)
        defer { current = nil; rules.requestEnded(); deadlines.requestEnded(); recorder?.event("requestEnded") }
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
        // A replay sent the recorded request when the reply to initialize matched.
        if options.replay == nil { send(.request(id: requestID, method: method, params: params)) }
        do {
            try pump { context.reply != nil }
        } catch {
            writes.rollback()
            endedBy = error
            return (writes.counts, context.rejections, error)
        }
        switch context.reply {
        case .failure(let error)?:
            writes.rollback()
            let failure = error.code == RPCError.requestCancelled
                ? fail(.cancelled, "the request was cancelled (\(error.message))")
                : fail(.refused, "the extension refused \(method): \(error.message) (code \(error.code))")
            endedBy = failure
            return (writes.counts, context.rejections, failure)
        case .success(let result)?:
            lastAcknowledgementAllowsEmpty = result["allowEmpty"]?.boolValue == true
            if let refusal = emptyingRefusal(context) {
                writes.rollback()
                log.note(refusal.message)
                endedBy = refusal
                return (writes.counts, context.rejections, refusal)
            }
            fallthrough
        default:
            do {
                let counts = try writes.acknowledge { store in try onAcknowledge(store, writes.counts) }
                log.note("request \(requestID) acknowledged: put \(counts.put), deleted \(counts.deleted), rejected \(counts.rejected), ignored updates \(counts.ignoredUpdates)")
                return (counts, context.rejections, nil)
            } catch {
                writes.rollback()
                var failure = fail(.storeFailure, "cannot commit the acknowledged request: \(error)")
                failure.hostSide = (error as? StoreError)?.code == .busy
                return (writes.counts, context.rejections, failure)
            }
        }
    }

    /// Why an acknowledged `reindexAll` must not be published, or nil when it may: one that put
    /// no accepted item would remove every item the bundle has. That is what a handler that
    /// returns before its work is done (a thread not joined, an `await` forgotten) or whose items
    /// were all rejected acknowledges, so it needs the extension to say the data is empty on
    /// purpose (`allowEmpty`). A resumed attempt whose committed batches hold the items is not
    /// judged by what this attempt put.
    private func emptyingRefusal(_ context: RequestContext) -> RequestFailure? {
        guard context.request.kind == .reindexAll, context.writes.counts.put == 0, context.request.clientState == nil,
              !lastAcknowledgementAllowsEmpty else { return nil }
        let counts = context.writes.counts
        if counts.rejected > 0 {
            return fail(.allRejected, "every item of the reindexAll was rejected (\(counts.rejected)); nothing was published and the bundle's items stay as they were. Fix the items (the reasons are in the bundle's log and in `reindex run --json`'s rejections), then run it again")
        }
        let existing = (try? store.itemCount(bundle: bundle.identifier, now: 0)) ?? 0
        guard existing > 0 else { return nil }
        return fail(.emptyReplacement, "the reindexAll was acknowledged without putting any item, which would remove all \(existing) items the bundle has; nothing was published and they stay. If the handler returned before its work was done (a thread not joined, an `await` forgotten, an unstructured Task), wait for the work before returning; if the data really is empty, acknowledge with {\"allowEmpty\": true} (the SDKs' allowEmpty)")
    }

    /// Sends a request of the host's choosing outside the protocol's two (the conformance suite's
    /// unknown method) and waits up to `seconds` for its reply; nil when none came.
    public func probe(method: String, params: JSONValue?, seconds: Double) throws(RequestFailure) -> Result<JSONValue, RPCError>? {
        let requestID = rules.nextID()
        rules.probeSent(requestID)
        probeReply = nil
        defer { rules.probeEnded() }
        send(.request(id: requestID, method: method, params: params))
        let until = Clock.monotonic() + seconds
        try pump { self.probeReply != nil || Clock.monotonic() >= until }
        return probeReply
    }

    /// Reads what the extension sends for `seconds` while no request is outstanding (the
    /// conformance suite listens for work that goes on after an acknowledgement).
    public func settle(seconds: Double) throws(RequestFailure) {
        let until = Clock.monotonic() + seconds
        try pump { Clock.monotonic() >= until }
    }

    /// A protocol violation that came after the last acknowledgement and was not yet reported
    /// (no later request was left to fail); taking it clears it.
    public func takeLateViolation() -> String? {
        rules.takeLateViolation()
    }

    /// Problems that did not stop the session (unknown methods outside index/ and batch/);
    /// taking them clears them.
    public func takeWarnings() -> [String] {
        defer { warnings = [] }
        return warnings
    }

    // MARK: Carrying out the rules

    /// Carries out the rules' actions for one event, in order, until one ends the request.
    func carryOut(_ actions: [ProtocolRules.Action]) throws(RequestFailure) {
        for action in actions {
            switch action {
            case .send(let message):
                send(message)
            case .stage(let operation):
                try stage(operation)
            case let .commit(replyTo, clientState):
                try commitBatch(replyTo: replyTo, clientState: clientState)
            case .commitRefused(let why):
                commitsRefused.append(why)
            case .progress(let progress):
                reportProgress(progress)
            case .initialized(let result):
                initializeResult = result
            case .acknowledged(let result):
                current?.reply = result
            case .probeAnswered(let result):
                probeReply = result
            case .note(let text):
                log.note(text)
            case .warn(let text):
                log.note(text)
                if warnings.count < 10 && !warnings.contains(text) { warnings.append(text) }
            case .report(let text):
                options.onRecoverableViolation?(text)
            case let .fail(kind, message):
                let failure = fail(kind, message)
                self.failure = failure
                throw failure
            }
        }
    }

    private func stage(_ operation: ProtocolRules.IndexOperation) throws(RequestFailure) {
        guard let context = current else { return }
        let writes = context.writes
        do {
            switch operation {
            case .put(let items):
                for item in items {
                    switch item {
                    case .valid(let validated):
                        try writes.put(validated)
                    case let .invalid(uid, reason):
                        writes.reject(count: 1)
                        let rejection = Rejection(uniqueIdentifier: uid, reason: reason)
                        // Every one in the log; the first ones in the result too.
                        log.note("request \(context.id): \(rejection)")
                        if context.rejections.count < Rejection.reportedLimit { context.rejections.append(rejection) }
                    }
                }
            case .delete(let identifiers):
                try writes.delete(identifiers: identifiers)
            case .deleteDomains(let domains):
                try writes.delete(domains: domains)
            case .deleteAll:
                try writes.deleteAll()
            }
        } catch {
            throw storeFailure("cannot write to the index", error)
        }
    }

    private func commitBatch(replyTo requestID: RequestID, clientState: String?) throws(RequestFailure) {
        guard let context = current else { return }
        let requestRowID = context.request.id
        do {
            let committed = try context.writes.commitBatch { store in
                try store.saveClientState(requestRowID, clientState)
            }
            send(.response(id: requestID, result: .success(BatchCommitResult(committed: Int64(committed)).json)))
            commitsAccepted += 1
        } catch {
            throw storeFailure("cannot commit a batch", error)
        }
    }

    private func reportProgress(_ progress: ProgressParams) {
        options.onProgress?(progress)
        guard let context = current else { return }
        // For `status`, at most once a second (and never at the cost of the request).
        let now = Clock.monotonic()
        if now - context.progressSavedAt >= 1 {
            context.progressSavedAt = now
            try? store.saveProgress(context.request.id, progress)
        }
    }
}
