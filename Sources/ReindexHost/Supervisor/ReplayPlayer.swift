import ReindexStore
import ReindexSystem
import ReindexProtocol

/// Plays the host's side of a recorded session back to an extension (`reindex debug --replay`)
/// and compares what the extension sends with what it sent then.
///
/// The host's lines are sent byte for byte: first those before the extension's first message
/// (`initialize`), then, each time the extension's message matches the recorded one, the host
/// lines that followed it in the recording (the request after the reply to `initialize`, the
/// reply to a `batch/commit`, a `$/cancel` after the same number of the extension's messages).
/// The comparison covers the session up to the end of its request; what came after (the
/// extension's exit once its stdin closed) depends on timing and is not compared.
///
/// Two messages match when they are the same JSON value, object members in any order and
/// numbers by value (`1` and `1.0`); lines that are not JSON must be the same bytes. Nothing
/// else is ignored: the protocol carries no host timestamps, and an extension's own dates are
/// part of what it sends. The extension's stdout ending is compared too, as one more message.
public final class ReplayPlayer {
    /// Where the extension first did something else.
    public struct Divergence: Sendable {
        /// 1-based, counting the extension's messages from its reply to `initialize`.
        public var message: Int
        /// The recorded message (nil: the extension's output ended there).
        public var expected: [UInt8]?
        /// What the extension sent (nil: its output ended).
        public var got: [UInt8]?
    }

    /// What the extension did, for the comparison.
    public enum Got {
        case line(UnsafeRawBufferPointer)
        case end
        case lineTooLong
    }

    private let events: [Recording.Event]
    private var position = 0
    /// The extension's messages compared so far (and matched).
    public private(set) var matchedMessages = 0
    public private(set) var divergence: Divergence?
    /// The recording's part to compare is over: every message of it matched and every host line
    /// was sent.
    public var isComplete: Bool { divergence == nil && position >= events.count }

    public init(_ recording: Recording.Loaded) {
        // Up to the end of the request: what follows depends on timing.
        var events: [Recording.Event] = []
        for event in recording.events {
            if case .requestEnded = event { break }
            events.append(event)
        }
        self.events = events
    }

    /// Whether playing has stopped (complete or diverged): nothing more is sent or compared.
    public var isOver: Bool { isComplete || divergence != nil }

    /// The host's lines due now: those from here to the extension's next event.
    public func hostLinesDue() -> [[UInt8]] {
        guard divergence == nil else { return [] }
        var lines: [[UInt8]] = []
        while position < events.count, case .message(.host, _, let line) = events[position] {
            lines.append(line)
            position += 1
        }
        return lines
    }

    /// Compares what the extension did with the recording's next event of the extension; true
    /// when it matched (then `hostLinesDue()` has what the host sent next).
    public func received(_ got: Got) -> Bool {
        guard !isOver, position < events.count else { return false }
        let expected = events[position]
        let number = matchedMessages + 1
        let matched: Bool
        switch (expected, got) {
        case let (.message(.ext, _, recorded), .line(line)): matched = Self.same(recorded, line)
        case (.stdoutEnded, .end), (.lineTooLong, .lineTooLong): matched = true
        default: matched = false
        }
        guard matched else {
            var gotBytes: [UInt8]? = nil
            switch got {
            case .line(let line): gotBytes = Array(line)
            case .lineTooLong: gotBytes = Array("(a line over the 16 MiB limit)".utf8)
            case .end: gotBytes = nil
            }
            let expectedBytes: [UInt8]?
            switch expected {
            case .message(_, _, let line): expectedBytes = line
            case .lineTooLong: expectedBytes = Array("(a line over the 16 MiB limit)".utf8)
            default: expectedBytes = nil
            }
            divergence = Divergence(message: number, expected: expectedBytes, got: gotBytes)
            return false
        }
        matchedMessages = number
        position += 1
        return true
    }

    /// The two lines as the same JSON value (members in any order), or the same bytes.
    static func same(_ recorded: [UInt8], _ line: UnsafeRawBufferPointer) -> Bool {
        if recorded.elementsEqual(line) { return true }
        guard let a = try? JSONParser.parse(recorded), let b = try? JSONParser.parse(line) else { return false }
        return normalized(a) == normalized(b)
    }

    /// Object members sorted by key, recursively.
    static func normalized(_ value: JSONValue) -> JSONValue {
        switch value {
        case .object(let members):
            return .object(members.map { ($0.0, normalized($0.1)) }.sorted { $0.0 < $1.0 })
        case .array(let elements):
            return .array(elements.map(normalized))
        default:
            return value
        }
    }
}
