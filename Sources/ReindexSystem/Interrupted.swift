/// Repeats a system call while it fails with `EINTR` (a signal arrived while it waited), and
/// returns its last result: the one retry loop of the package.
@inline(__always)
package func retryingOnInterrupt<Result: BinaryInteger>(_ call: () -> Result) -> Result {
    while true {
        let result = call()
        if result < 0 && errno == EINTR { continue }
        return result
    }
}

/// Writes every byte to `fd` (a pipe or terminal may take a part at a time), retrying after
/// signals; false when the descriptor fails (a closed pipe, a full disk).
@discardableResult
package func writeAll(_ fd: Int32, _ bytes: UnsafeRawBufferPointer) -> Bool {
    guard let base = bytes.baseAddress else { return true }
    var offset = 0
    while offset < bytes.count {
        let n = write(fd, base + offset, bytes.count - offset)
        if n < 0 {
            if errno == EINTR { continue }
            return false
        }
        offset += n
    }
    return true
}

/// Writes every byte of `bytes` to `fd`; see `writeAll(_:_:)`.
@discardableResult
package func writeAll(_ fd: Int32, _ bytes: [UInt8]) -> Bool {
    bytes.withUnsafeBytes { writeAll(fd, $0) }
}

/// Writes a line of text to standard error (a newline is added when missing).
package func writeErrorLine(_ text: String) {
    var line = text
    if !line.hasSuffix("\n") { line += "\n" }
    writeAll(2, Array(line.utf8))
}

/// `close(2)`, for types that have a `close()` of their own.
package func systemClose(_ fd: Int32) { _ = close(fd) }
