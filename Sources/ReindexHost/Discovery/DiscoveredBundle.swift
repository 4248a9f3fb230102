import ReindexStore
import ReindexProtocol
import ReindexSystem

/// A bundle found on the search path with a valid manifest and a runnable executable.
public struct DiscoveredBundle: Sendable, Equatable {
    public var manifest: Manifest
    /// The bundle directory (absolute).
    public var directory: String
    /// The executable, resolved against the bundle directory.
    public var executablePath: String
    /// A fingerprint of the executable (size, modification time, inode) to notice replacements.
    public var executableFingerprint: String
    /// Things an author should fix that do not make the bundle unusable: keys of manifest.json that
    /// look like misspellings (`timeout` for `timeouts`), each with the suggestion.
    public var warnings: [String] = []

    public var identifier: String { manifest.bundleIdentifier }
    /// The identifier as the host keys it: lower-cased, since identifiers compare case-insensitively.
    public var key: String { manifest.bundleIdentifier.lowercased() }
    public var manifestPath: String { FileSystem.join(directory, "manifest.json") }
}
