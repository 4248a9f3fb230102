import ReindexStore
import Dispatch
import CReindexSystem
import ReindexSystem

/// Turns SIGINT/SIGTERM/SIGHUP into a readable descriptor, so a poll loop can notice a cancellation
/// between two messages instead of being killed in the middle of a transaction.
public final class CancelSignal: @unchecked Sendable {
    private let pipe = WakePipe()
    private var sources: [DispatchSourceSignal] = []

    /// Readable once a signal arrived (one byte per signal).
    public var readFD: Int32 { pipe.readFD }

    /// By default: Ctrl-C, a polite stop, and a closed terminal or dropped ssh session.
    public init(signals: [Int32] = [SIGINT, SIGTERM, SIGHUP]) {
        for number in signals {
            signal(number, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
            let pipe = self.pipe
            source.setEventHandler { pipe.wake(UInt8(truncatingIfNeeded: number)) }
            source.resume()
            sources.append(source)
        }
    }

    deinit {
        for source in sources { source.cancel() }
    }

    /// Reads pending signal bytes; returns how many there were.
    func drainSignals() -> Int { pipe.drain() }
}
