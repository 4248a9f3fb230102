import ReindexStore
import ReindexProtocol
import ReindexSystem

/// An extension's stderr: appended to its log file (rotated, so a flood stays bounded), and its
/// last lines kept for error messages.
public final class ExtensionLog {
    /// The log is rotated to `<file>.1` when it passes this size; at most twice this is kept.
    public static let defaultRotationBytes = 4 << 20
    public static let tailLines = 20
    static let maximumTailLineBytes = 2000

    public let path: String?
    let rotationBytes: Int
    private var fd: Int32 = -1
    private var size = 0
    private var partial: [UInt8] = []
    private var tail: [String] = []
    /// Called with each complete line (debug mode streams stderr live).
    public var onLine: ((String) -> Void)?

    public init(path: String?, rotationBytes: Int = ExtensionLog.defaultRotationBytes) {
        self.path = path
        self.rotationBytes = rotationBytes
        if let path {
            try? FileSystem.makeDirectories(FileSystem.directoryName(path))
            fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0o600)
            size = Int(FileSystem.status(path)?.size ?? 0)
        }
    }

    deinit { if fd >= 0 { close(fd) } }

    /// Writes a line of the host's own (a session header) into the log.
    public func note(_ text: String) {
        append(Array("--- \(RFC3339.format(Clock.now())) \(text)\n".utf8))
    }

    /// Takes a chunk of the extension's stderr.
    public func consume(_ chunk: UnsafeRawBufferPointer) {
        append(chunk)
        var start = 0
        let bytes = chunk.bindMemory(to: UInt8.self)
        for i in 0..<bytes.count where bytes[i] == 0x0A {
            finishLine(UnsafeBufferPointer(rebasing: bytes[start..<i]))
            start = i + 1
        }
        if start < bytes.count {
            let room = ExtensionLog.maximumTailLineBytes - partial.count
            if room > 0 { partial.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[start..<min(bytes.count, start + room)])) }
        }
    }

    /// Flushes an unterminated last line.
    public func finish() {
        if !partial.isEmpty { finishLine(UnsafeBufferPointer(start: nil, count: 0)) }
    }

    private func finishLine(_ rest: UnsafeBufferPointer<UInt8>) {
        var bytes = partial
        partial.removeAll(keepingCapacity: true)
        let room = max(0, ExtensionLog.maximumTailLineBytes - bytes.count)
        bytes.append(contentsOf: rest.prefix(room))
        var line = String(decoding: bytes, as: UTF8.self)
        if line.hasSuffix("\r") { line.removeLast() }
        tail.append(line)
        if tail.count > ExtensionLog.tailLines { tail.removeFirst(tail.count - ExtensionLog.tailLines) }
        onLine?(line)
    }

    /// The last lines of stderr.
    public var lastLines: [String] {
        var lines = tail
        if !partial.isEmpty { lines.append(String(decoding: partial, as: UTF8.self)) }
        return Array(lines.suffix(ExtensionLog.tailLines))
    }

    private func append(_ bytes: [UInt8]) {
        bytes.withUnsafeBytes { append($0) }
    }

    private func append(_ raw: UnsafeRawBufferPointer) {
        guard fd >= 0, let path else { return }
        if size + raw.count > rotationBytes && size > 0 {
            close(fd)
            rename(path, path + ".1")
            fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_TRUNC | O_CLOEXEC, 0o600)
            size = 0
            guard fd >= 0 else { return }
        }
        guard writeAll(fd, raw) else { return }
        size += raw.count
    }
}
