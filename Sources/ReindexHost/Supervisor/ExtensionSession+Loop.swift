import ReindexStore
import ReindexSystem
import ReindexProtocol

/// The session's I/O: one `poll` loop on the calling thread over the stdout decoder's wake
/// descriptor, the extension's stderr and stdin (only when output is pending) and the cancel
/// descriptor, with the deadlines as its timeout.
extension ExtensionSession {
    /// Runs the poll loop until `done` holds, a failure happens, or a deadline passes.
    func pump(until done: () -> Bool) throws(RequestFailure) {
        try carryOut(rules.raiseDeferredViolation())
        while true {
            if let failure { throw failure }
            if done() { return }
            if let player = options.replay, player.isComplete {
                throw fail(.cancelled, "the replay is complete: the recording ends here, where the recorded session's request ended without a reply")
            }
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
            throw storeFailure("cannot write to the index", error)
        }
    }

    /// Events from the decoder thread, in order, through the protocol's rules. Time spent
    /// waiting for the index is not the extension's idleness.
    func processDecoderEvents(_ decoder: StdoutDecoder) throws(RequestFailure) {
        for event in decoder.take() {
            if failure != nil { return }
            switch event {
            case let .message(_, _, _, line):
                if let line {
                    trace(line)
                    record(.ext, line)
                    try play(line)
                }
                deadlines.messageReceived(now: Clock.monotonic())
                try carryOut(rules.receive(event))
                deadlines.messageReceived(now: Clock.monotonic())
            case let .undecodable(line, _, _):
                trace(line)
                record(.ext, line)
                try play(line)
                try carryOut(rules.receive(event))
            case .framing:
                recorder?.event("lineTooLong")
                try play(nil, tooLong: true)
                try carryOut(rules.receive(event))
            case .warning:
                try carryOut(rules.receive(event))
            case .end:
                stdoutClosed = true
                recorder?.event("stdoutEnded")
                try play(nil)
                try carryOut(rules.receive(event))
            }
        }
    }

    func record(_ side: Recording.Side, _ line: [UInt8]) {
        guard let recorder else { return }
        line.withUnsafeBytes { recorder.message(side, $0) }
    }

    /// Replay: compares what the extension did (a line; nil: its stdout ended) with the
    /// recording and sends the host's recorded lines that follow it; a divergence ends the
    /// request, and nothing more of the recording is sent.
    private func play(_ line: [UInt8]?, tooLong: Bool = false) throws(RequestFailure) {
        guard let player = options.replay, !player.isOver else { return }
        let matched: Bool
        if tooLong {
            matched = player.received(.lineTooLong)
        } else if let line {
            matched = line.withUnsafeBytes { player.received(.line($0)) }
        } else {
            matched = player.received(.end)
        }
        if matched {
            for due in player.hostLinesDue() { sendRecorded(due) }
            return
        }
        let failure = fail(.cancelled, "the replay diverged at the extension's message \(player.divergence?.message ?? 0)")
        self.failure = failure
        throw failure
    }

    private func trace(_ line: [UInt8]) {
        guard let onTrace = options.onTrace else { return }
        line.withUnsafeBytes { onTrace(.fromExtension, $0) }
    }

    /// Handles what the decoder read before stdout ended.
    func drainStdout() throws(RequestFailure) {
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

    func drainStderr() {
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

    func send(_ message: Message) {
        // A replay sends the recorded host lines only.
        guard options.replay == nil else { return }
        let line = message.line
        recorder.map { recorder in line.withUnsafeBytes { recorder.message(.host, UnsafeRawBufferPointer(rebasing: $0[0..<($0.count - 1)])) } }
        if let onTrace = options.onTrace {
            line.withUnsafeBytes { onTrace(.toExtension, UnsafeRawBufferPointer(rebasing: $0[0..<($0.count - 1)])) }
        }
        outgoing.append(contentsOf: line)
        flushOutgoing()
    }

    /// Sends one recorded host line as it is (replay).
    func sendRecorded(_ line: [UInt8]) {
        if let onTrace = options.onTrace { line.withUnsafeBytes { onTrace(.toExtension, $0) } }
        outgoing.append(contentsOf: line)
        outgoing.append(0x0A)
        flushOutgoing()
    }

    func flushOutgoing() {
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
        if options.replay != nil {
            // A replay sends nothing of its own: Ctrl-C ends it.
            failure = fail(.cancelled, "the replay was stopped")
            return
        }
        guard let context = current, context.cancelSentAt == nil else {
            failure = fail(.cancelled, "cancelled before a request was outstanding")
            return
        }
        context.cancelSentAt = Clock.monotonic()
        log.note("cancelling request \(context.id)")
        send(.notification(method: Method.cancel, params: CancelParams(id: context.id).json))
    }
}
