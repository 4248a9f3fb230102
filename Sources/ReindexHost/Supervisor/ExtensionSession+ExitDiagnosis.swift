import ReindexSystem
import ReindexProtocol

/// How an extension that ended before it answered is described: exited, crashed, stopped by
/// its CPU time limit (with a word on its address-space limit), or only its stdout closed.
extension ExtensionSession {
    /// The extension closed stdout or exited: read what it left, then say how it ended.
    func processEnded() throws(RequestFailure) {
        guard let process else { return }
        try drainStdout()
        drainStderr()
        if failure != nil || rules.isAcknowledged || (current == nil && rules.isInitialized) { return }
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
        let initialized = rules.isInitialized
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

    static func seconds(_ value: Double) -> String {
        String(Double((value * 10).rounded()) / 10)
    }
}
