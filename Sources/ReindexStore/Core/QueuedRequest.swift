import ReindexSystem
import ReindexProtocol

/// The two requests of the protocol.
public enum RequestKind: String, Sendable {
    case reindexAll
    case reindexItems
}

/// Where a queued request stands.
public enum RequestState: String, Sendable {
    case pending, running, done, failed
}

/// A request in the durable queue.
public struct QueuedRequest: Sendable, Equatable {
    public var id: Int64
    public var bundleKey: String
    public var bundleIdentifier: String
    public var kind: RequestKind
    public var identifiers: [String]
    public var reason: ReindexReason
    public var state: RequestState
    public var attempts: Int
    public var maxAttempts: Int
    public var nextAttempt: Double
    public var lastError: String?
    /// The client state of the last committed batch (base64), for a resumed `reindexAll`.
    public var clientState: String?
    public var created: Double
    public var updated: Double
}
