import ReindexStore
import ReindexProtocol
import ReindexSystem

extension IndexBackend {
    /// Records that a bundle was seen on the search path (on this host, for a fleet) with this
    /// version and executable.
    public func recordSeen(_ bundle: DiscoveredBundle, now: Double = Clock.now()) throws {
        try recordSeen(key: bundle.key, identifier: bundle.identifier, version: bundle.manifest.version,
                       fingerprint: bundle.executableFingerprint, now: now)
    }
}
