import ReindexStore
import ReindexSystem
import ReindexProtocol

/// Writes one session's recording as it happens: appended through a buffer (so the session does
/// not wait for the disk at every message), memory bounded by the buffer and one line, the file
/// bounded by the bundle's byte bound. A failure to write (a full disk) ends the recording with
/// one line in the bundle's log and never the session.
public final class SessionRecorder {
    public let path: String
    let directory: String
    let maximumBytes: Int64
    private let log: ExtensionLog
    private let start = Clock.monotonic()
    private var fd: Int32 = -1
    private var buffer: [UInt8] = []
    private var written: Int64 = 0
    private var messages = 0
    private var truncated = false
    private var finished = false
    private static let bufferSize = 256 << 10

    /// Opens the recording file, or returns nil (with a line in the log) when it cannot be made.
    public init?(directory: String, header: Recording.Header, maximumBytes: Int64, log: ExtensionLog) {
        self.directory = directory
        self.maximumBytes = maximumBytes
        self.log = log
        path = FileSystem.join(directory, "\(Int64((header.started * 1000).rounded()))-r\(header.requestID).jsonl")
        do {
            try FileSystem.makeDirectories(directory, mode: 0o700)
        } catch {
            log.note("this session is not recorded: cannot make \(directory): \(error); the run goes on")
            return nil
        }
        // Private even where the directory existed with looser permissions (recordings hold item data).
        chmod(FileSystem.directoryName(directory), 0o700)
        chmod(directory, 0o700)
        fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        guard fd >= 0 else {
            log.note("this session is not recorded: cannot create \(path): \(FileSystem.errnoText()); the run goes on")
            return nil
        }
        appendObject(header.json)
    }

    deinit {
        if !finished { finish(outcome: "unfinished", error: nil) }
    }

    /// One protocol line (without its newline), in either direction.
    public func message(_ side: Recording.Side, _ line: UnsafeRawBufferPointer) {
        guard fd >= 0 else { return }
        if written + Int64(buffer.count + line.count + 64) > maximumBytes {
            if !truncated {
                truncated = true
                log.note("the recording reached \(maximumBytes) bytes and keeps no more messages of this session: \(path)")
            }
            return
        }
        messages += 1
        appendText("{\"t\":\(time()),\"d\":\"\(side.rawValue)\"}\n")
        buffer.append(contentsOf: line)
        buffer.append(0x0A)
        if buffer.count >= Self.bufferSize { flush() }
    }

    public func event(_ name: String) {
        guard fd >= 0, !truncated else { return }
        appendText("{\"t\":\(time()),\"event\":\"\(name)\"}\n")
    }

    /// Writes the ending, closes the file and applies the bundle's bounds.
    public func finish(outcome: String, error: String?) {
        guard !finished else { return }
        finished = true
        guard fd >= 0 else { return }
        var members: [(String, JSONValue)] = [("t", .double(Double(time()) ?? 0)), ("event", "end"), ("outcome", .string(outcome)),
                                              ("messages", .integer(Int64(messages))), ("truncated", .bool(truncated))]
        if let error { members.append(("error", .string(error))) }
        appendObject(.object(members))
        flush()
        if fd >= 0 { close(fd); fd = -1 }
        Recording.prune(directory: directory, maximumBytes: maximumBytes)
    }

    private func time() -> String {
        DurationText.milliseconds(Clock.monotonic() - start)
    }

    private func appendObject(_ value: JSONValue) {
        JSONWriter.write(value, into: &buffer)
        buffer.append(0x0A)
    }

    private func appendText(_ text: String) {
        buffer.append(contentsOf: text.utf8)
    }

    private func flush() {
        guard fd >= 0, !buffer.isEmpty else { buffer.removeAll(keepingCapacity: true); return }
        if writeAll(fd, buffer) {
            written += Int64(buffer.count)
            buffer.removeAll(keepingCapacity: true)
        } else {
            let reason = FileSystem.errnoText()
            log.note("the recording stopped: cannot write \(path): \(reason); the run goes on unrecorded")
            close(fd)
            fd = -1
            unlink(path)
            buffer = []
        }
    }
}
