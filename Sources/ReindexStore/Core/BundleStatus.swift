import ReindexSystem
import ReindexProtocol

/// What `status` reports for one bundle.
public struct BundleStatus: Sendable, Equatable {
    public var bundleIdentifier: String
    public var items: Int
    public var pending: Int
    public var running: Int
    /// Failed requests that no later success of the bundle superseded.
    public var failed: Int
    public var lastRun: RunRecord?
    public var failedReasons: [String]
    /// The requests running now, with their last progress.
    public var runningRequests: [RunningRequest] = []
    /// Failed requests a later acknowledged run made moot (`status --failed` lists them).
    public var superseded: Int = 0
    /// Since when the bundle is missing from the search path, as `serve` noticed it.
    public var missingSince: Double?
}

/// A request running now and what its extension last said of its progress.
public struct RunningRequest: Sendable, Equatable {
    public var id: Int64
    public var kind: RequestKind
    public var reason: ReindexReason
    public var since: Double
    public var progress: ProgressParams?
}
