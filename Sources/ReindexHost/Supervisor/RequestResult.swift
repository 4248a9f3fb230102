import ReindexStore
import ReindexSystem
import ReindexProtocol

/// The result of one request.
public struct RequestResult: Sendable {
    public var request: QueuedRequest
    public var counts: WriteCounts
    public var failure: RequestFailure?
    public var started: Double
    public var ended: Double
    /// The request's state after this attempt (pending again, failed for good, or done).
    public var stateAfter: RequestState
    /// The first `Rejection.reportedLimit` rejected items with their reasons (`counts.rejected`
    /// has them all).
    public var rejections: [Rejection]
    /// Problems that did not fail the request (a protocol violation that came after its
    /// acknowledgement, when no later request was left to fail).
    public var warnings: [String] = []

    public var acknowledged: Bool { failure == nil }
    public var durationSeconds: Double { ended - started }
}
