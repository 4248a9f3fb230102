import ReindexStore
import CReindexSystem
import ReindexProtocol
import ReindexSystem

/// How the host sandboxes the extensions a session starts.
public struct SandboxOptions: Sendable {
    /// Run without the sandbox whatever the manifest says (`reindex debug --no-sandbox`).
    public var disabled = false
    /// Refuse to start an extension that would run unsandboxed, or without a restriction its
    /// manifest asks for (`--require-sandbox`).
    public var required = false
    /// The host's locations: what the sandbox keeps out of reach (index, locks, logs, every
    /// bundle directory on the search path, other bundles' data) and where the bundle's private
    /// data directory lives. nil: derived from the index the session writes to, with the data
    /// directory beside it.
    public var paths: HostPaths? = nil
    /// More locations to keep out of reach: the real ones when running against a scratch index.
    public var alsoProtect: [HostPaths] = []
    /// Allow TCP whatever the manifest says: `reindex debug`, whose debuggers for scripts
    /// (debugpy, Node's inspector) listen on a loopback port and talk to helpers on others.
    public var allowsNetwork = false

    public init() {}

    /// What `list`, `status` and `validate` say of a bundle whose manifest turns the sandbox off.
    public static let offWarning = #"the sandbox is off for this bundle ("sandbox": false in its manifest): it can read and write everything you can"#
}
