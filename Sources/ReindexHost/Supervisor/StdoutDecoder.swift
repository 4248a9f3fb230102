import ReindexStore
import ReindexSystem
import CReindexSystem
import ReindexProtocol
import class Foundation.Thread

/// Reads and decodes an extension's stdout on a thread of its own, so JSON parsing and item
/// validation run on one core while the session writes SQLite on the other.
///
/// It hands over decoded messages in order through a small bounded queue: when the session falls
/// behind, the decoder stops reading, the pipe fills, and the extension blocks — backpressure,
/// never unbounded buffering. The session sees a readable `wakeFD` whenever events are waiting.
///
/// It is the only reader of stdout from spawn to teardown: when the session traces the protocol,
/// each message also carries the line it was read from, so the trace shows the bytes as sent.
final class StdoutDecoder: @unchecked Sendable {
    /// What an `index/put` item became.
    enum ItemOutcome: Equatable {
        case valid(ValidatedItem)
        case invalid(uniqueIdentifier: String?, reason: String)
    }

    enum Event {
        /// A decoded message; for `index/put`, its items already validated (nil only when it has
        /// no array of items). `line` is the raw line when the decoder keeps lines (tracing).
        case message(Message, offset: Int, items: [ItemOutcome]?, line: [UInt8]?)
        /// A line that is not a valid message (the session decides what that means).
        case undecodable(line: [UInt8], offset: Int, error: MessageDecodingError)
        /// A line over the limit.
        case framing(LineFramingError)
        /// stdout reached its end; `tail` is an unterminated last line, if any.
        case end(tail: (bytes: [UInt8], offset: Int)?)
    }

    /// Readable whenever events are waiting. The decoder's two self-pipes are its own, not
    /// `WakePipe`s, because `stop()` must close them at once, not whenever the thread lets go of
    /// the decoder (a run that ends leaves no descriptor open).
    let wakeFD: Int32
    private let wakeWrite: Int32
    private let stopRead: Int32
    private let stopWrite: Int32
    private let stdoutFD: Int32
    private let keepsLines: Bool
    private let capacity = 8
    private var queue: [Event] = []
    // The queue's mutex and its two conditions (which `Lock` does not offer), heap-allocated so
    // their addresses are stable.
    private let mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
    private let notFull = UnsafeMutablePointer<pthread_cond_t>.allocate(capacity: 1)
    private let finished = UnsafeMutablePointer<pthread_cond_t>.allocate(capacity: 1)
    private var running = true
    /// The custom attributes `index/put` items are validated with (the current request's).
    private var declarations: [String: AttributeDeclaration] = [:]
    private var stopping = false
    private var closed = false

    /// `keepsLines`: every message carries its raw line too (for a trace of the protocol).
    init(stdoutFD: Int32, keepsLines: Bool = false) {
        self.stdoutFD = stdoutFD
        self.keepsLines = keepsLines
        var wake: [Int32] = [-1, -1], stop: [Int32] = [-1, -1]
        _ = reindex_pipe_cloexec(&wake)
        _ = reindex_pipe_cloexec(&stop)
        wakeFD = wake[0]
        wakeWrite = wake[1]
        stopRead = stop[0]
        stopWrite = stop[1]
        reindex_set_nonblocking(wakeFD, 1)
        reindex_set_nonblocking(wakeWrite, 1)
        mutex.initialize(to: pthread_mutex_t())
        notFull.initialize(to: pthread_cond_t())
        finished.initialize(to: pthread_cond_t())
        pthread_mutex_init(mutex, nil)
        pthread_cond_init(notFull, nil)
        pthread_cond_init(finished, nil)
        let thread = Thread { [self] in self.loop() }
        thread.name = "reindex-stdout-decoder"
        thread.start()
    }

    deinit {
        stop()
        pthread_cond_destroy(notFull)
        pthread_cond_destroy(finished)
        pthread_mutex_destroy(mutex)
        for pointer in [notFull, finished] { pointer.deinitialize(count: 1); pointer.deallocate() }
        mutex.deinitialize(count: 1)
        mutex.deallocate()
    }

    /// Takes every event waiting, in order.
    func take() -> [Event] {
        var byte = [UInt8](repeating: 0, count: 64)
        while read(wakeFD, &byte, byte.count) > 0 {}
        pthread_mutex_lock(mutex)
        let events = queue
        queue.removeAll(keepingCapacity: true)
        pthread_cond_broadcast(notFull)
        pthread_mutex_unlock(mutex)
        return events
    }

    /// Stops the thread, waits for it and closes the decoder's own pipes (at once, not whenever
    /// the last reference goes); afterwards nothing reads stdout but the caller.
    func stop() {
        pthread_mutex_lock(mutex)
        if running && !stopping {
            stopping = true
            var byte: UInt8 = 1
            _ = retryingOnInterrupt { write(stopWrite, &byte, 1) }
            pthread_cond_broadcast(notFull)
        }
        while running { pthread_cond_wait(finished, mutex) }
        let close = !closed
        closed = true
        pthread_mutex_unlock(mutex)
        if close { for fd in [wakeFD, wakeWrite, stopRead, stopWrite] { systemClose(fd) } }
    }

    /// Hands over the events of one read together, so the session sees a chunk's lines at once,
    /// exactly as it would reading them itself.
    private func push(_ events: [Event]) -> Bool {
        if events.isEmpty { return true }
        pthread_mutex_lock(mutex)
        while queue.count >= capacity && !stopping { pthread_cond_wait(notFull, mutex) }
        if stopping {
            pthread_mutex_unlock(mutex)
            return false
        }
        queue.append(contentsOf: events)
        pthread_mutex_unlock(mutex)
        var byte: UInt8 = 1
        _ = retryingOnInterrupt { write(wakeWrite, &byte, 1) }
        return true
    }

    private func loop() {
        defer {
            pthread_mutex_lock(mutex)
            running = false
            pthread_cond_broadcast(finished)
            pthread_mutex_unlock(mutex)
        }
        var reader = LineReader()
        var buffer = [UInt8](repeating: 0, count: 256 << 10)
        // After a line over the limit nothing more is decoded, but stdout is still read (and
        // dropped) until its end, so an extension blocked on a full pipe can exit.
        var discarding = false
        while true {
            var fds = [pollfd(fd: stdoutFD, events: Int16(POLLIN), revents: 0), pollfd(fd: stopRead, events: Int16(POLLIN), revents: 0)]
            let rc = poll(&fds, 2, -1)
            if rc < 0 { if errno == EINTR { continue }; return }
            if fds[1].revents != 0 { return }
            let n = buffer.withUnsafeMutableBytes { read(stdoutFD, $0.baseAddress, $0.count) }
            if n < 0 {
                if errno == EINTR || errno == EAGAIN { continue }
                _ = push([.end(tail: discarding ? nil : reader.unterminatedTail)])
                return
            }
            if n == 0 {
                _ = push([.end(tail: discarding ? nil : reader.unterminatedTail)])
                return
            }
            if discarding { continue }
            var events: [Event] = []
            pthread_mutex_lock(mutex)
            let declared = declarations
            pthread_mutex_unlock(mutex)
            do {
                try buffer.withUnsafeBytes { raw in
                    try reader.feed(UnsafeRawBufferPointer(rebasing: raw[0..<n])) { line, offset in
                        events.append(Self.decode(line, offset: offset, declarations: declared, keepingLine: keepsLines))
                    }
                }
            } catch let error as LineFramingError {
                events.append(.framing(error))
                if !push(events) { return }
                discarding = true
                continue
            } catch {
                return
            }
            if !push(events) { return }
        }
    }

    /// Sets the custom attributes to validate items with, before the request they belong to is
    /// sent (nothing of a request arrives before it is sent).
    func validate(with declarations: [String: AttributeDeclaration]) {
        pthread_mutex_lock(mutex)
        self.declarations = declarations
        pthread_mutex_unlock(mutex)
    }

    static func decode(_ line: UnsafeRawBufferPointer, offset: Int, declarations: [String: AttributeDeclaration] = [:],
                       keepingLine: Bool = false) -> Event {
        let message: Message
        do {
            message = try Message.decode(line: line)
        } catch {
            return .undecodable(line: Array(line), offset: offset, error: error)
        }
        let raw = keepingLine ? Array(line) : nil
        guard case .notification(Method.put, let params) = message, let items = params?["items"]?.arrayValue else {
            return .message(message, offset: offset, items: nil, line: raw)
        }
        // The items live on only as validated rows; drop the tree before it crosses threads.
        return .message(.notification(method: Method.put, params: nil), offset: offset, items: validate(items, declarations: declarations), line: raw)
    }

    /// Validates the items of one `index/put`, each on its own.
    static func validate(_ items: [JSONValue], declarations: [String: AttributeDeclaration] = [:]) -> [ItemOutcome] {
        var outcomes: [ItemOutcome] = []
        outcomes.reserveCapacity(items.count)
        for (n, item) in items.enumerated() {
            do {
                outcomes.append(.valid(try ItemValidator.validate(item, path: "items[\(n)]", declarations: declarations)))
            } catch {
                outcomes.append(.invalid(uniqueIdentifier: item["uniqueIdentifier"]?.stringValue, reason: error.description))
            }
        }
        return outcomes
    }
}

@inline(__always)
private func systemClose(_ fd: Int32) { close(fd) }
