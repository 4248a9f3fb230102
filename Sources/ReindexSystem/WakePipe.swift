import CReindexSystem

/// A self-pipe: any thread (or a signal handler's queue) writes a byte to wake a `poll(2)` loop
/// that watches `readFD`. Both ends close-on-exec, the write end non-blocking so a full pipe
/// never blocks the waker (a pending byte already wakes the loop).
package final class WakePipe: @unchecked Sendable {
    package let readFD: Int32
    package let writeFD: Int32
    private let closed = Locked(false)

    package init() {
        var fds: [Int32] = [-1, -1]
        _ = reindex_pipe_cloexec(&fds)
        readFD = fds[0]
        writeFD = fds[1]
        reindex_set_nonblocking(writeFD, 1)
    }

    deinit { close() }

    /// Closes both ends now (an owner that must leave no descriptor open when it stops, rather
    /// than whenever the last reference goes); waking or draining a closed pipe does nothing.
    package func close() {
        let wasOpen = closed.withLock { closed in
            defer { closed = true }
            return !closed
        }
        if wasOpen {
            systemClose(readFD)
            systemClose(writeFD)
        }
    }

    /// Wakes the loop; `byte` may say why.
    package func wake(_ byte: UInt8 = 1) {
        if closed.withLock({ $0 }) { return }
        var value = byte
        _ = retryingOnInterrupt { write(writeFD, &value, 1) }
    }

    /// Reads every pending byte without blocking; returns how many there were.
    @discardableResult
    package func drain() -> Int {
        if closed.withLock({ $0 }) { return 0 }
        var count = 0
        var byte: UInt8 = 0
        while true {
            var fds = [pollfd(fd: readFD, events: Int16(POLLIN), revents: 0)]
            guard poll(&fds, 1, 0) > 0, read(readFD, &byte, 1) == 1 else { return count }
            count += 1
        }
    }
}
