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
