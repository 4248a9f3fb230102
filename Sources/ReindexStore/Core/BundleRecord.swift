import ReindexSystem
import ReindexProtocol

/// What the index remembers of a bundle between scans: the version and executable it last saw,
/// and since when it has been missing from the search path.
public struct BundleRecord: Sendable, Equatable {
    public var key: String
    public var identifier: String
    public var version: String?
    public var fingerprint: String?
    public var missingSince: Double?
}
