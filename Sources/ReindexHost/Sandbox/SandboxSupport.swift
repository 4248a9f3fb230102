import ReindexStore
import CReindexSystem
import ReindexProtocol
import ReindexSystem

/// Whether this system can sandbox extensions: Landlock (Linux 5.13 and later, when enabled), or
/// why not. Detected once per process.
public enum SandboxSupport: Sendable, Equatable, CustomStringConvertible {
    case landlock(abi: Int)
    case unavailable(reason: String)

    /// What this machine offers.
    public static let current: SandboxSupport = detect()

    static func detect() -> SandboxSupport {
        #if os(Linux)
        let abi = reindex_landlock_abi()
        if abi >= 1 { return .landlock(abi: Int(abi)) }
        let code = errno
        switch code {
        case ENOSYS: return .unavailable(reason: "this kernel has no Landlock")
        case EOPNOTSUPP: return .unavailable(reason: "Landlock is built into this kernel but not enabled; add landlock to the lsm= boot parameter")
        default: return .unavailable(reason: "Landlock cannot be used: \(FileSystem.errnoText(code))")
        }
        #else
        return .unavailable(reason: "this system has no Landlock (it is Linux-only)")
        #endif
    }

    /// The Landlock ABI, when there is one.
    public var abi: Int? {
        if case .landlock(let abi) = self { return abi }
        return nil
    }

    /// `landlock ABI 7`, or `unavailable (why)`.
    public var description: String {
        switch self {
        case .landlock(let abi): return "landlock ABI \(abi)"
        case .unavailable(let reason): return "unavailable (\(reason))"
        }
    }

    public var json: JSONValue {
        switch self {
        case .landlock(let abi):
            return .object([("available", true), ("mechanism", "landlock"), ("abi", .integer(Int64(abi))), ("description", .string(description))])
        case .unavailable(let reason):
            return .object([("available", false), ("reason", .string(reason)), ("description", .string(description))])
        }
    }

    /// What to tell the person running `bundle` before it starts: the sandbox is off, missing, or
    /// cannot enforce part of the manifest. Empty when the bundle runs as its manifest says.
    public func warnings(for bundle: DiscoveredBundle, options: SandboxOptions) -> [String] {
        let id = bundle.identifier
        if !bundle.manifest.sandbox.isEnabled {
            return ["\(id): \(SandboxOptions.offWarning)"]
        }
        if options.disabled {
            return ["\(id): running without the sandbox (--no-sandbox): it can read and write everything you can"]
        }
        switch self {
        case .unavailable:
            return ["sandbox \(description): \(id) runs unsandboxed; --require-sandbox refuses to run it instead"]
        case .landlock(let abi) where abi < 4 && !bundle.manifest.sandbox.network:
            return ["\(id): \"network\": false is not enforced: Landlock ABI \(abi) has no network rules (they need ABI 4, Linux 6.7)"]
        default:
            return []
        }
    }
}
