import ReindexStore
import ReindexSystem
import ReindexProtocol

/// The manifest's three timeouts as deadlines on the monotonic clock. In debug mode every
/// deadline is off, so a debugger paused at a breakpoint never gets the extension killed.
struct Deadlines {
    let timeouts: Manifest.Timeouts?
    private(set) var startup: Double?
    private(set) var idle: Double?
    private(set) var request: Double?

    init(timeouts: Manifest.Timeouts?) {
        self.timeouts = timeouts
    }

    mutating func processStarted(now: Double) {
        if let t = timeouts { startup = now + t.startupSeconds }
    }

    mutating func initialized() { startup = nil }

    mutating func requestStarted(now: Double) {
        guard let t = timeouts else { return }
        idle = now + t.idleSeconds
        request = now + t.requestSeconds
    }

    /// Any message from the extension resets the idle timer.
    mutating func messageReceived(now: Double) {
        if let t = timeouts, idle != nil { idle = now + t.idleSeconds }
    }

    mutating func requestEnded() {
        idle = nil
        request = nil
    }

    /// The deadline that passes first, with what to say when it does.
    func nearest() -> (time: Double, reason: String)? {
        var best: (Double, String)? = nil
        func consider(_ time: Double?, _ reason: @autoclosure () -> String) {
            guard let time else { return }
            if best == nil || time < best!.0 { best = (time, reason()) }
        }
        if let t = timeouts {
            consider(startup, "did not answer initialize within startupSeconds (\(DurationText.short(t.startupSeconds)) s)")
            consider(idle, "sent nothing for idleSeconds (\(DurationText.short(t.idleSeconds)) s) while a request was outstanding")
            consider(request, "did not finish the request within requestSeconds (\(DurationText.short(t.requestSeconds)) s)")
        }
        return best.map { (time: $0.0, reason: $0.1) }
    }

}
