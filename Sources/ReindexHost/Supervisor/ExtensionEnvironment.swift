import ReindexStore
import ReindexSystem
import ReindexProtocol

/// The environment an extension gets: an allowlist of the host's variables, then the manifest's
/// `environment`, then the protocol's own variables. Nothing else of the host's reaches it.
public enum ExtensionEnvironment {
    /// The host variables passed through (plus every `LC_*`).
    public static let allowlist: Set<String> = ["PATH", "HOME", "USER", "LOGNAME", "LANG", "TZ", "TMPDIR"]

    public static func build(
        host: [String: String], manifest: Manifest, hostPID: Int32, debug: Bool, waitForDebuggerSeconds: Double?
    ) -> [String: String] {
        var result: [String: String] = [:]
        for (key, value) in host where allowlist.contains(key) || key.hasPrefix("LC_") {
            result[key] = value
        }
        for (key, value) in manifest.environment { result[key] = value }
        result["REINDEX_BUNDLE_IDENTIFIER"] = manifest.bundleIdentifier
        result["REINDEX_PROTOCOL_VERSIONS"] = ReindexVersion.protocolVersions.map(String.init).joined(separator: ",")
        result["REINDEX_HOST_PID"] = String(hostPID)
        if debug {
            result["REINDEX_DEBUG"] = "1"
            if let seconds = waitForDebuggerSeconds {
                result["REINDEX_WAIT_FOR_DEBUGGER"] = String(Int(seconds.rounded()))
            }
            // The ports the SDKs' gates open debugpy and Node's inspector on, when the developer set them.
            for key in Debugging.portVariables.values { if let port = host[key] { result[key] = port } }
        } else {
            result["REINDEX_DEBUG"] = nil
            result["REINDEX_WAIT_FOR_DEBUGGER"] = nil
        }
        return result
    }
}
