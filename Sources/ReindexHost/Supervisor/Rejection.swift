import ReindexStore
import ReindexSystem
import ReindexProtocol

/// One item the host rejected, with why.
public struct Rejection: Sendable, Equatable, CustomStringConvertible {
    /// The item's identifier, when it had a readable one.
    public var uniqueIdentifier: String?
    public var reason: String

    public init(uniqueIdentifier: String?, reason: String) {
        self.uniqueIdentifier = uniqueIdentifier
        self.reason = reason
    }

    /// How many rejections a request keeps to report (`run --json`'s `rejections`); the rest are
    /// counted, and every one is in the bundle's log.
    public static let reportedLimit = 1000

    public var description: String {
        "item rejected\(uniqueIdentifier.map { " (\($0.prefix(80)))" } ?? ""): \(reason)"
    }
}
