import ReindexProtocol

/// What an extension implements: Core Spotlight's `CSIndexExtensionRequestHandler`, for any host
/// that speaks protocol version 1.
///
/// Each method is given a `SearchableIndex` to write to. Returning acknowledges the request (the
/// host then commits what was written); throwing refuses it with the error's message (the host
/// discards what was not committed and retries later). Both run as tasks that are cancelled when
/// the host sends `$/cancel`; `SearchableIndex` calls then throw `CancellationError`.
public protocol IndexRequestHandler: Sendable {
    /// Index everything the extension has. `index.reason` says why; `index.clientState` holds the
    /// state of the last committed batch when this resumes an interrupted attempt.
    func reindexAll(_ index: SearchableIndex) async throws

    /// Re-index exactly these items: put the ones that exist, delete the ones that are gone.
    func reindexItems(identifiers: [String], index: SearchableIndex) async throws

    /// The name the extension reports in `initialize`. Defaults to the manifest's `displayName`
    /// (read from `manifest.json` in the working directory, which the host sets to the bundle
    /// directory; a manifest without one gives its `bundleIdentifier`), else the executable's name.
    var extensionName: String { get }
    /// The version the extension reports in `initialize`. Defaults to the manifest's `version`,
    /// else `"0"`.
    var extensionVersion: String { get }
}

extension IndexRequestHandler {
    public var extensionName: String { BundleManifest.current?.displayName ?? ExtensionMain.executableName }
    public var extensionVersion: String { BundleManifest.current?.version ?? "0" }
}

/// Conform your `@main` type to this and implement the two handler methods; `main()` runs the
/// protocol loop until the host closes stdin.
///
/// ```swift
/// @main
/// struct MyIndexer: IndexExtension {
///     func reindexAll(_ index: SearchableIndex) async throws {
///         try await index.put([SearchableItem(uniqueIdentifier: "1", attributes: .init(title: "Hello"))])
///     }
///     func reindexItems(identifiers: [String], index: SearchableIndex) async throws {}
/// }
/// ```
public protocol IndexExtension: IndexRequestHandler {
    init()
}

extension IndexExtension {
    /// Protects stdout and passes the debugger gate before `init()` runs, so a `print` there
    /// lands in the log and a breakpoint there can be hit; then runs the protocol.
    public static func main() async {
        ExtensionMain.prepare()
        await ExtensionMain.run(Self())
    }
}

/// An error that refuses a request with a specific JSON-RPC code and message.
public struct IndexRequestError: Error, Sendable, CustomStringConvertible {
    public var code: Int
    public var message: String
    public init(code: Int = -32000, _ message: String) {
        self.code = code
        self.message = message
    }
    public var description: String { message }
}

/// Errors the SDK itself raises.
public enum SearchableIndexError: Error, Sendable, CustomStringConvertible {
    /// A batch's client state is larger than the protocol's 250 bytes; nothing was sent.
    case clientStateTooLarge(Int)
    /// The host refused a batch commit.
    case commitRefused(String)
    /// The connection to the host is gone.
    case disconnected
    /// The request was already answered: the handler returned (or threw) before this write.
    case requestEnded(requestID: String)
    /// An item `put` refused before sending anything: which item, which attribute, and why (a
    /// number JSON cannot spell — NaN, an infinity — which would otherwise arrive as `null`).
    case invalidItem(uniqueIdentifier: String, attribute: String, reason: String)

    public var description: String {
        switch self {
        case .clientStateTooLarge(let n): return "client state is \(n) bytes; at most \(BatchCommitParams.maximumClientStateBytes) are allowed"
        case .commitRefused(let message): return "the host refused the batch commit: \(message)"
        case .disconnected: return "the connection to the host is closed"
        case .requestEnded(let id): return "request \(id) was already acknowledged; await the work (or join its thread) before the handler returns"
        case let .invalidItem(uid, attribute, reason): return "item '\(uid)': attribute '\(attribute)': \(reason); nothing was sent"
        }
    }
}
