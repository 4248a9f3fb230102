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
        /// A problem that does not stop anything: an attribute name that looks misspelt.
        case warning(String)
        /// stdout reached its end; `tail` is an unterminated last line, if any.
        case end(tail: (bytes: [UInt8], offset: Int)?)
    }

    /// Readable whenever events are waiting.
    var wakeFD: Int32 { wake.readFD }
    /// Woken when events are waiting, and when the decoder is to stop. `stop()` closes both at
    /// once, not whenever the thread lets go of the decoder (a run that ends leaves no descriptor
    /// open).
    private let wake = WakePipe()
    private let stopPipe = WakePipe()
    private let stdoutFD: Int32
    private let keepsLines: Bool
    private let capacity = 8
    private var queue: [Event] = []
    // The queue's lock and its two conditions.
    private let lock = Lock()
    private let notFull = Condition()
    private let finished = Condition()
    private var running = true
    /// The custom attributes `index/put` items are validated with (the current request's).
    private var declarations: [String: AttributeDeclaration] = [:]
    private var stopping = false

    /// `keepsLines`: every message carries its raw line too (for a trace of the protocol).
    init(stdoutFD: Int32, keepsLines: Bool = false) {
        self.stdoutFD = stdoutFD
        self.keepsLines = keepsLines
        let thread = Thread { [self] in self.loop() }
        thread.name = "reindex-stdout-decoder"
        thread.start()
    }

    deinit { stop() }

    /// Takes every event waiting, in order.
    func take() -> [Event] {
        wake.drain()
        return lock.withLock {
            let events = queue
            queue.removeAll(keepingCapacity: true)
            notFull.broadcast()
            return events
        }
    }

    /// Stops the thread, waits for it and closes the decoder's own pipes (at once, not whenever
    /// the last reference goes); afterwards nothing reads stdout but the caller.
    func stop() {
        lock.withLock {
            if running && !stopping {
                stopping = true
                stopPipe.wake()
                notFull.broadcast()
            }
            while running { finished.wait(lock) }
        }
        wake.close()
        stopPipe.close()
    }

    /// Hands over the events of one read together, so the session sees a chunk's lines at once,
    /// exactly as it would reading them itself.
    private func push(_ events: [Event]) -> Bool {
        if events.isEmpty { return true }
        let taken = lock.withLock {
            while queue.count >= capacity && !stopping { notFull.wait(lock) }
            if stopping { return false }
            queue.append(contentsOf: events)
            return true
        }
        if taken { wake.wake() }
        return taken
    }

    private func loop() {
        defer {
            lock.withLock {
                running = false
                finished.broadcast()
            }
        }
        var reader = LineReader()
        var buffer = [UInt8](repeating: 0, count: 256 << 10)
        // After a line over the limit nothing more is decoded, but stdout is still read (and
        // dropped) until its end, so an extension blocked on a full pipe can exit.
        var discarding = false
        var names = MisspeltAttributes()
        while true {
            var fds = [pollfd(fd: stdoutFD, events: Int16(POLLIN), revents: 0), pollfd(fd: stopPipe.readFD, events: Int16(POLLIN), revents: 0)]
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
            let declared = lock.withLock { declarations }
            do {
                try buffer.withUnsafeBytes { raw in
                    try reader.feed(UnsafeRawBufferPointer(rebasing: raw[0..<n])) { line, offset in
                        let event = Self.decode(line, offset: offset, declarations: declared, keepingLine: keepsLines, names: &names)
                        events.append(contentsOf: names.take().map(Event.warning))
                        events.append(event)
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
        lock.withLock { self.declarations = declarations }
    }

    static func decode(_ line: UnsafeRawBufferPointer, offset: Int, declarations: [String: AttributeDeclaration] = [:],
                       keepingLine: Bool = false) -> Event {
        var names = MisspeltAttributes()
        return decode(line, offset: offset, declarations: declarations, keepingLine: keepingLine, names: &names)
    }

    /// Decodes one line; attribute names that look misspelt are noted in `names`. Numbers JSON
    /// cannot spell (`NaN`, `Infinity`, `1e999`) are read, so that the item holding one is
    /// rejected with its path rather than the whole line refused as not JSON.
    static func decode(_ line: UnsafeRawBufferPointer, offset: Int, declarations: [String: AttributeDeclaration],
                       keepingLine: Bool, names: inout MisspeltAttributes) -> Event {
        let message: Message
        do {
            message = try Message.decode(line: line, allowsNonFiniteNumbers: true)
        } catch {
            return .undecodable(line: Array(line), offset: offset, error: error)
        }
        let raw = keepingLine ? Array(line) : nil
        guard case .notification(Method.put, let params) = message, let items = params?["items"]?.arrayValue else {
            return .message(message, offset: offset, items: nil, line: raw)
        }
        // The items live on only as validated rows; drop the tree before it crosses threads.
        return .message(.notification(method: Method.put, params: nil), offset: offset,
                        items: validate(items, declarations: declarations, names: &names), line: raw)
    }

    /// Validates the items of one `index/put`, each on its own.
    static func validate(_ items: [JSONValue], declarations: [String: AttributeDeclaration], names: inout MisspeltAttributes) -> [ItemOutcome] {
        var outcomes: [ItemOutcome] = []
        outcomes.reserveCapacity(items.count)
        for (n, item) in items.enumerated() {
            do {
                let valid = try ItemValidator.validate(item, path: "items[\(n)]", declarations: declarations, undeclared: { name in
                    names.note(name, item: item["uniqueIdentifier"]?.stringValue, declarations: declarations)
                }, unknownMember: { name in
                    names.noteMember(name, item: item["uniqueIdentifier"]?.stringValue, declarations: declarations)
                })
                outcomes.append(.valid(valid))
            } catch {
                outcomes.append(.invalid(uniqueIdentifier: item["uniqueIdentifier"]?.stringValue, reason: error.description))
            }
        }
        return outcomes
    }
}
