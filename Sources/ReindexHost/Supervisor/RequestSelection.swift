import ReindexStore
import ReindexSystem
import ReindexProtocol

/// A request someone asks for now (`reindex run`, `debug`, a replay), rather than one the queue
/// makes due: its kind, identifiers and reason.
public struct RequestSelection: Sendable {
    public var kind: RequestKind
    public var identifiers: [String]
    public var reason: ReindexReason
    /// Resume an unfinished reindexAll from its client state instead of starting fresh.
    public var resume: Bool

    public init(kind: RequestKind, identifiers: [String] = [], reason: ReindexReason = .forced, resume: Bool = false) {
        self.kind = kind
        self.identifiers = identifiers
        self.reason = reason
        self.resume = resume
    }
}
