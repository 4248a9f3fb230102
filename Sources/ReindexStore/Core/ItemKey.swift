import ReindexProtocol
import ReindexSystem

/// An item of a bundle, by identifiers.
public struct ItemKey: Hashable, Sendable {
    public var bundle: String
    public var uniqueIdentifier: String

    public init(bundle: String, uniqueIdentifier: String) {
        self.bundle = bundle
        self.uniqueIdentifier = uniqueIdentifier
    }
}
