import ReindexHost
import ReindexStore
import ReindexProtocol
import ReindexSystem

/// Reads standard input line by line with bounded memory: never more than one line (of at most
/// `maximumLineLength` bytes) is held. A longer line is not held at all: it is skipped and
/// reported to `onOverlong` with its number and length, and reading goes on.
package struct StandardInputLines {
    /// `beforeWaiting` runs whenever no input is ready, just before the read that waits for it.
    package static func forEach(
        maximumLineLength: Int = LineReader.defaultMaximumLineLength, beforeWaiting: () throws -> Void = {},
        onOverlong: (_ lineNumber: Int, _ length: Int) throws -> Void = { number, length in
            throw ReindexError(.invalidData, "stdin line \(number) is longer than \(LineReader.defaultMaximumLineLength) bytes (\(length) bytes)")
        },
        _ body: (UnsafeRawBufferPointer, Int) throws -> Void
    ) throws {
        var buffer = [UInt8](repeating: 0, count: 256 << 10)
        var pending: [UInt8] = []
        var skipping = false
        var skippedLength = 0
        var lineNumber = 0
        while true {
            // Input paused (nothing for 10 ms): the caller may commit what it has before waiting.
            var ready = [pollfd(fd: 0, events: Int16(POLLIN), revents: 0)]
            if poll(&ready, 1, 0) == 0 && poll(&ready, 1, 10) == 0 { try beforeWaiting() }
            let n = buffer.withUnsafeMutableBytes { raw in retryingOnInterrupt { read(0, raw.baseAddress, raw.count) } }
            if n < 0 { throw ReindexError(.ioError, "cannot read stdin: \(FileSystem.errnoText())") }
            if n == 0 { break }
            try buffer.withUnsafeBytes { raw in
                var start = 0
                while start < n {
                    let newline = raw[start..<n].firstIndex(of: 0x0A)
                    let end = newline ?? n
                    let segment = UnsafeRawBufferPointer(rebasing: raw[start..<end])
                    if skipping {
                        skippedLength += segment.count
                    } else if pending.count + segment.count > maximumLineLength {
                        skipping = true
                        skippedLength = pending.count + segment.count
                        pending = []
                    } else if newline != nil && pending.isEmpty {
                        lineNumber += 1
                        try body(segment, lineNumber)
                    } else {
                        pending.append(contentsOf: segment)
                        if newline != nil {
                            lineNumber += 1
                            try pending.withUnsafeBytes { try body($0, lineNumber) }
                            pending.removeAll(keepingCapacity: pending.count <= 1 << 20)
                        }
                    }
                    if newline != nil && skipping {
                        lineNumber += 1
                        skipping = false
                        try onOverlong(lineNumber, skippedLength)
                    }
                    start = end + 1
                }
            }
        }
        if skipping {
            lineNumber += 1
            try onOverlong(lineNumber, skippedLength)
        } else if !pending.isEmpty {
            lineNumber += 1
            try pending.withUnsafeBytes { try body($0, lineNumber) }
        }
    }
}
