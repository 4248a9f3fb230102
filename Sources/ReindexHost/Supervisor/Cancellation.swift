import ReindexStore
import Dispatch
import CReindexSystem
import ReindexSystem

/// Turns SIGINT/SIGTERM/SIGHUP into a readable descriptor, so a poll loop can notice a cancellation
/// between two messages instead of being killed in the middle of a transaction.
public final class CancelSignal: @unchecked Sendable {
    /// Readable once a signal arrived (one byte per signal).
    public let readFD: Int32
    private let writeFD: Int32
    private var sources: [DispatchSourceSignal] = []

    /// By default: Ctrl-C, a polite stop, and a closed terminal or dropped ssh session.
    public init(signals: [Int32] = [SIGINT, SIGTERM, SIGHUP]) {
        var fds: [Int32] = [-1, -1]
        _ = reindex_pipe_cloexec(&fds)
        readFD = fds[0]
        writeFD = fds[1]
        reindex_set_nonblocking(writeFD, 1)
        for number in signals {
            signal(number, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
            let fd = writeFD
            source.setEventHandler {
                var byte: UInt8 = UInt8(truncatingIfNeeded: number)
                _ = write(fd, &byte, 1)
            }
            source.resume()
            sources.append(source)
        }
    }

    deinit {
        for source in sources { source.cancel() }
        close(readFD)
        close(writeFD)
    }
}

/// A minimal mutex over pthread, for the few places shared state needs one.
final class NSLockLike: @unchecked Sendable {
    private var mutex = pthread_mutex_t()
    init() { pthread_mutex_init(&mutex, nil) }
    deinit { pthread_mutex_destroy(&mutex) }
    func withLock<T>(_ body: () throws -> T) rethrows -> T {
        pthread_mutex_lock(&mutex)
        defer { pthread_mutex_unlock(&mutex) }
        return try body()
    }
}
