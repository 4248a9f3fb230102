import ReindexStore
import ReindexSystem
import ReindexProtocol

/// How a session ends: stdin closed, the extension given time to exit while its output keeps
/// flowing, then SIGTERM and SIGKILL to its process group, then whatever it left behind.
extension ExtensionSession {
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
        let escaped = process.stopEscapedProcesses()
        leftBehind += escaped.count
        if !escaped.isEmpty {
            log.note("stopped \(escaped.count) process(es) the extension left running outside its process group: \(escaped.map(String.init).joined(separator: ", "))")
        }
        drainStderr()
        process.closePipes()
        process.removePrivateTemporaryDirectory()
        log.finish()
    }

    /// Keeps stdout and stderr flowing while waiting, so a child blocked on a full pipe can exit;
    /// wakes as soon as the extension ends (its exit descriptor). Returns true when a
    /// cancellation arrived meanwhile.
    private func drainQuietly(_ process: ExtensionProcess, timeout: Double) -> Bool {
        var cancelled = false
        var fds: [pollfd] = []
        if let cancel = options.cancelFD { fds.append(pollfd(fd: cancel, events: Int16(POLLIN), revents: 0)) }
        if let decoder, !stdoutClosed { fds.append(pollfd(fd: decoder.wakeFD, events: Int16(POLLIN), revents: 0)) }
        if process.stderrFD >= 0 { fds.append(pollfd(fd: process.stderrFD, events: Int16(POLLIN), revents: 0)) }
        if process.exitFD >= 0 { fds.append(pollfd(fd: process.exitFD, events: Int16(POLLIN), revents: 0)) }
        _ = fds.withUnsafeMutableBufferPointer { poll($0.baseAddress, nfds_t($0.count), Int32(timeout * 1000) + 1) }
        for entry in fds where entry.revents != 0 {
            if entry.fd == options.cancelFD {
                var byte: UInt8 = 0
                _ = read(entry.fd, &byte, 1)
                cancelled = true
            } else if entry.fd == process.stderrFD {
                drainStderr()
            } else if entry.fd == process.exitFD {
                continue  // ended: the caller reaps it
            } else if let decoder {
                for event in decoder.take() {
                    switch event {
                    case .message(_, _, _, let line?), .undecodable(let line, _, _): record(.ext, line)
                    case .end: recorder?.event("stdoutEnded")
                    default: break
                    }
                    if case .end = event { stdoutClosed = true }
                    // In lint mode, messages after the last request are problems worth naming.
                    if let report = options.onRecoverableViolation, let text = rules.afterLastRequest(event) { report(text) }
                }
            }
        }
        return cancelled
    }
}
