import ReindexSystem
import ReindexProtocol

/// Exponential backoff: `base · 2^(attempt-1)`, capped.
public struct Backoff: Sendable, Equatable {
    public var baseSeconds: Double
    public var maximumSeconds: Double
    public init(baseSeconds: Double = 5, maximumSeconds: Double = 3600) {
        self.baseSeconds = baseSeconds
        self.maximumSeconds = maximumSeconds
    }
    /// The delay after the `attempt`-th failure (1-based).
    public func delay(afterAttempt attempt: Int) -> Double {
        min(maximumSeconds, baseSeconds * Double(1 << min(max(attempt - 1, 0), 30)))
    }
}
