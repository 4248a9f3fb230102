import ReindexProtocol
import Foundation
import ReindexExtension
import ReindexHost
import ReindexSystem
import ReindexStore
import ReindexTestSupport
import XCTest

/// A handler that declares no name or version: the SDK must report the manifest's.
struct UnnamedProbe: IndexRequestHandler {
    func reindexAll(_ index: SearchableIndex) async throws {
        try await index.put(SearchableItem(uniqueIdentifier: "probe.1", attributes: .init(title: "unnamed")))
    }
    func reindexItems(identifiers: [String], index: SearchableIndex) async throws {}
}

/// The SDK reports `displayName` and `version` of the bundle's manifest.json in `initialize`, read
/// from the working directory the host starts it in. Runs as a real process through the built
/// `reindex validate --run`, which prints what `initialize` said.
final class ManifestIdentityTests: XCTestCase {
    private static let role = "REINDEX_SDK_TEST_UNNAMED_EXTENSION"

    /// Not a check of its own: the entry point of the probe process (returns at once in a normal run).
    func testUnnamedExtensionProcessEntryPoint() async {
        guard ProcessInfo.processInfo.environment[Self.role] != nil else { return }
        fflush(nil)
        guard dup2(3, 1) == 1 else { exit(71) }
        close(3)
        await ExtensionMain.run(UnnamedProbe())
    }

    private func makeBundle(in host: TestHost, manifest: [(String, JSONValue)]) throws -> String {
        let directory = "\(host.extensions)/unnamed"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        try TestSupport.write("""
            #!/bin/sh
            exec "$REINDEX_SDK_TEST_EXECUTABLE" "ReindexExtensionTests.ManifestIdentityTests/testUnnamedExtensionProcessEntryPoint" 3>&1 1>&2
            """, to: "\(directory)/unnamed.sh", mode: 0o755)
        let members: [(String, JSONValue)] = [
            ("manifestVersion", 1), ("bundleIdentifier", "com.example.sdk-test.unnamed"), ("executable", "unnamed.sh"),
            ("environment", TestSupport.environmentJSON([Self.role: "1", "REINDEX_SDK_TEST_EXECUTABLE": TestSupport.testExecutable])),
            // It runs the test executable, outside its bundle: the sandbox lets it only when declared.
            ("sandbox", .object([("read", .array([.string(URL(fileURLWithPath: TestSupport.testExecutable).deletingLastPathComponent().path)]))])),
        ] + manifest
        try TestSupport.write(JSONWriter.string(.object(members)), to: "\(directory)/manifest.json")
        return directory
    }

    func testInitializeReportsTheManifestsDisplayNameAndVersion() throws {
        _ = try TestSupport.product("reindex")
        let host = try TestHost(test: self)
        let directory = try makeBundle(in: host, manifest: [("displayName", "Probe Display Name"), ("version", "3.1.4")])
        let result = try host.reindex(["validate", directory, "--run"])
        XCTAssertEqual(result.status, 0, "\(result)")
        XCTAssertTrue(result.stdout.contains("protocol 1, extension \"Probe Display Name\" 3.1.4"), "\(result)")
    }

    func testWithoutDisplayNameOrVersionTheIdentifierAndZeroAreReported() throws {
        _ = try TestSupport.product("reindex")
        let host = try TestHost(test: self)
        let directory = try makeBundle(in: host, manifest: [])
        let result = try host.reindex(["validate", directory, "--run"])
        XCTAssertEqual(result.status, 0, "\(result)")
        XCTAssertTrue(result.stdout.contains("protocol 1, extension \"com.example.sdk-test.unnamed\" 0"), "\(result)")
    }

    /// Without a readable manifest (the executable run by hand) there is nothing to report: nil.
    func testReadingAManifestOutsideABundleGivesNil() throws {
        let scratch = try TestSupport.makeScratchDirectory(for: self)
        XCTAssertNil(BundleManifest.read(path: "\(scratch)/manifest.json"))
        try TestSupport.write(#"{"manifestVersion":1,"bundleIdentifier":"a.b","executable":"x","displayName":"AB","version":"2"}"#, to: "\(scratch)/manifest.json")
        XCTAssertEqual(BundleManifest.read(path: "\(scratch)/manifest.json")?.displayName, "AB")
        try TestSupport.write("{", to: "\(scratch)/manifest.json")
        XCTAssertNil(BundleManifest.read(path: "\(scratch)/manifest.json"))
    }
}
