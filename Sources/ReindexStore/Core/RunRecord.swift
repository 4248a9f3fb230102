import ReindexSystem
import ReindexProtocol

/// One finished attempt at a request.
public struct RunRecord: Sendable, Equatable {
    public var requestID: Int64?
    public var bundleIdentifier: String
    public var kind: RequestKind
    public var reason: ReindexReason
    public var started: Double
    public var ended: Double
    public var outcome: String
    public var counts: WriteCounts
    public var error: String?

    public init(requestID: Int64?, bundleIdentifier: String, kind: RequestKind, reason: ReindexReason, started: Double, ended: Double, outcome: String, counts: WriteCounts, error: String?) {
        self.requestID = requestID
        self.bundleIdentifier = bundleIdentifier
        self.kind = kind
        self.reason = reason
        self.started = started
        self.ended = ended
        self.outcome = outcome
        self.counts = counts
        self.error = error
    }
}
