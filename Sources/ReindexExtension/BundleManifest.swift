import Foundation
import ReindexProtocol

/// The bundle's `manifest.json` as the running extension sees it.
///
/// The host starts an extension with its bundle directory as the working directory, so the SDK
/// reads `manifest.json` from there, once, and reports its `displayName` and `version` in
/// `initialize` unless the handler overrides `extensionName` / `extensionVersion`.
public enum BundleManifest {
    /// The manifest in the working directory, or nil when there is none or it is not valid
    /// (for example when the executable is run by hand outside its bundle).
    public static let current: Manifest? = read(path: "manifest.json")

    /// Reads and validates the manifest at `path`; nil when it is missing or invalid.
    public static func read(path: String) -> Manifest? {
        guard let data = FileManager.default.contents(atPath: path) else { return nil }
        return try? Manifest.parse([UInt8](data))
    }
}
