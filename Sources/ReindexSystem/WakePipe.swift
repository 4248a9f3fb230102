import CReindexSystem

/// A self-pipe: any thread (or a signal handler's queue) writes a byte to wake a `poll(2)` loop
/// that watches `readFD`. Both ends close-on-exec, the write end non-blocking so a full pipe
/// never blocks the waker (a pending byte already wakes the loop).
package final class WakePipe: @unchecked Sendable {
    package let readFD: Int32
    package let writeFD: Int32

    package init() {
        var fds: [Int32] = [-1, -1]
        _ = reindex_pipe_cloexec(&fds)
        readFD = fds[0]
        writeFD = fds[1]
        reindex_set_nonblocking(writeFD, 1)
    }

    deinit {
        close(readFD)
        close(writeFD)
    }

    /// Wakes the loop; `byte` may say why.
    package func wake(_ byte: UInt8 = 1) {
        var value = byte
        _ = retryingOnInterrupt { write(writeFD, &value, 1) }
    }

    /// Reads every pending byte without blocking; returns how many there were.
    @discardableResult
    package func drain() -> Int {
        var count = 0
        var byte: UInt8 = 0
        while true {
            var fds = [pollfd(fd: readFD, events: Int16(POLLIN), revents: 0)]
            guard poll(&fds, 1, 0) > 0, read(readFD, &byte, 1) == 1 else { return count }
            count += 1
        }
    }
}
