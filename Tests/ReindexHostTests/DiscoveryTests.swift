import Foundation
import XCTest
import ReindexHost
import ReindexSystem
@testable import ReindexStore
import ReindexProtocol
import ReindexTestSupport

final class DiscoveryTests: XCTestCase {
    private var fixture: BundleFixture?

    override func setUpWithError() throws {
        fixture = try BundleFixture.make(prefix: "reindex-discovery")
    }

    override func tearDown() {
        fixture?.remove()
        fixture = nil
    }

    @discardableResult
    private func directory(_ relative: String) throws -> String {
        try XCTUnwrap(fixture).directory(relative)
    }

    private func temporaryRoot() throws -> String { try XCTUnwrap(fixture).root }

    // MARK: Valid bundles

    func testValidBundleIsListedWithResolvedAbsoluteExecutablePath() throws {
        let search = try directory("extensions")
        let bundleDirectory = try BundleFixture.bundle(in: search, "colleagues", manifest: BundleFixture.manifest(
            "com.example.Colleagues.indexer", extra: #""displayName":"Colleagues","version":"1.0.0""#))
        let result = Discovery.discover(directories: [search])
        XCTAssertEqual(result.problems, [])
        XCTAssertEqual(result.bundles.count, 1)
        let bundle = try XCTUnwrap(result.bundles.first)
        XCTAssertEqual(bundle.identifier, "com.example.Colleagues.indexer")
        XCTAssertEqual(bundle.key, "com.example.colleagues.indexer")
        XCTAssertEqual(bundle.directory, bundleDirectory)
        XCTAssertEqual(bundle.executablePath, bundleDirectory + "/bin/indexer")
        XCTAssertTrue(bundle.executablePath.hasPrefix("/"))
        XCTAssertEqual(bundle.manifestPath, bundleDirectory + "/manifest.json")
        XCTAssertEqual(bundle.manifest.displayName, "Colleagues")
        XCTAssertEqual(bundle.manifest.version, "1.0.0")
        XCTAssertFalse(bundle.executableFingerprint.isEmpty)
        XCTAssertTrue(FileManager.default.isExecutableFile(atPath: bundle.executablePath))
        // Lookups are case-insensitive.
        XCTAssertEqual(result.bundle("COM.EXAMPLE.COLLEAGUES.INDEXER")?.directory, bundleDirectory)
        XCTAssertNil(result.bundle("com.example.other"))
    }

    func testExecutablePathIsResolvedLexically() throws {
        let search = try directory("extensions")
        let bundleDirectory = try BundleFixture.bundle(in: search, "dots",
            manifest: BundleFixture.manifest("com.example.dots", executable: "./bin/../bin/./indexer"))
        let bundle = try XCTUnwrap(Discovery.discover(directories: [search]).bundles.first)
        XCTAssertEqual(bundle.executablePath, bundleDirectory + "/bin/indexer")
    }

    func testAbsoluteExecutableOutsideTheBundle() throws {
        let search = try directory("extensions")
        let tool = try temporaryRoot() + "/shared/tool"
        try BundleFixture.writeScript(to: tool)
        try BundleFixture.bundle(in: search, "abs", manifest: BundleFixture.manifest("com.example.abs", executable: tool), executable: nil)
        let bundle = try XCTUnwrap(Discovery.discover(directories: [search]).bundles.first)
        XCTAssertEqual(bundle.executablePath, tool)
    }

    func testFingerprintChangesWhenTheExecutableIsReplaced() throws {
        let search = try directory("extensions")
        let bundleDirectory = try BundleFixture.bundle(in: search, "fp", manifest: BundleFixture.manifest("com.example.fp"))
        let before = try XCTUnwrap(Discovery.discover(directories: [search]).bundles.first).executableFingerprint
        let replacement = bundleDirectory + "/bin/indexer.new"
        try BundleFixture.write(Array("#!/bin/sh\necho replaced\nexit 0\n".utf8), to: replacement, mode: 0o755)
        XCTAssertEqual(rename(replacement, bundleDirectory + "/bin/indexer"), 0)
        let after = try XCTUnwrap(Discovery.discover(directories: [search]).bundles.first).executableFingerprint
        XCTAssertNotEqual(before, after)
    }

    func testBundlesAreListedInSearchPathThenNameOrder() throws {
        let first = try directory("first")
        let second = try directory("second")
        try BundleFixture.bundle(in: first, "zeta", manifest: BundleFixture.manifest("com.example.zeta"))
        try BundleFixture.bundle(in: first, "alpha", manifest: BundleFixture.manifest("com.example.alpha"))
        try BundleFixture.bundle(in: second, "beta", manifest: BundleFixture.manifest("com.example.beta"))
        let result = Discovery.discover(directories: [first, second])
        XCTAssertEqual(result.bundles.map(\.identifier), ["com.example.alpha", "com.example.zeta", "com.example.beta"])
        XCTAssertEqual(result.problems, [])
    }

    func testEntriesThatAreNotBundlesAreIgnored() throws {
        let search = try directory("extensions")
        try directory("extensions/no-manifest/bin")
        try BundleFixture.bundle(in: search, ".hidden", manifest: "not even json")
        try BundleFixture.write(Array("{}".utf8), to: search + "/stray-file.json")
        try BundleFixture.bundle(in: search, "real", manifest: BundleFixture.manifest("com.example.real"))
        let missing = try temporaryRoot() + "/does-not-exist"
        let aFile = search + "/stray-file.json"
        let result = Discovery.discover(directories: [missing, aFile, search])
        XCTAssertEqual(result.bundles.map(\.identifier), ["com.example.real"])
        XCTAssertEqual(result.problems, [], "directories without manifest.json, hidden entries and missing search directories are not problems")
    }

    func testTheSameSearchDirectoryTwiceDoesNotShadowItself() throws {
        let search = try directory("extensions")
        try BundleFixture.bundle(in: search, "one", manifest: BundleFixture.manifest("com.example.one"))
        let result = Discovery.discover(directories: [search, search])
        XCTAssertEqual(result.bundles.map(\.identifier), ["com.example.one"])
        XCTAssertEqual(result.problems, [])
    }

    // MARK: Shadowing

    func testBundleShadowedAcrossTwoSearchDirectories() throws {
        let first = try directory("first")
        let second = try directory("second")
        let winner = try BundleFixture.bundle(in: first, "mine", manifest: BundleFixture.manifest("com.example.shadow", extra: #""version":"2""#))
        let loser = try BundleFixture.bundle(in: second, "system", manifest: BundleFixture.manifest("com.example.shadow", extra: #""version":"1""#))
        let result = Discovery.discover(directories: [first, second])
        XCTAssertEqual(result.bundles.map(\.directory), [winner])
        XCTAssertEqual(result.bundles.first?.manifest.version, "2")
        XCTAssertEqual(result.problems.count, 1)
        let problem = try XCTUnwrap(result.problems.first)
        XCTAssertEqual(problem.path, loser)
        XCTAssertEqual(problem.bundleIdentifier, "com.example.shadow")
        XCTAssertTrue(problem.reason.hasPrefix("shadowed"), problem.reason)
        XCTAssertTrue(problem.reason.contains(winner), "the reason names the winner: \(problem.reason)")

        // Reversing the search path reverses the outcome: first match wins.
        let reversed = Discovery.discover(directories: [second, first])
        XCTAssertEqual(reversed.bundles.map(\.directory), [loser])
        XCTAssertEqual(reversed.problems.map(\.path), [winner])
    }

    func testShadowingIgnoresTheCaseOfTheIdentifier() throws {
        let first = try directory("first")
        let second = try directory("second")
        let winner = try BundleFixture.bundle(in: first, "a", manifest: BundleFixture.manifest("com.Example.Shadow"))
        let loser = try BundleFixture.bundle(in: second, "b", manifest: BundleFixture.manifest("COM.EXAMPLE.SHADOW"))
        let result = Discovery.discover(directories: [first, second])
        XCTAssertEqual(result.bundles.map(\.directory), [winner])
        XCTAssertEqual(result.bundles.first?.identifier, "com.Example.Shadow", "case is preserved")
        XCTAssertEqual(result.problems.map(\.path), [loser])
        XCTAssertTrue(result.problems.first?.reason.contains("shadowed") == true)
        XCTAssertEqual(result.problems.first?.bundleIdentifier, "COM.EXAMPLE.SHADOW")
        XCTAssertEqual(result.bundle("com.example.shadow")?.directory, winner)
    }

    func testShadowingWithinOneSearchDirectory() throws {
        let search = try directory("extensions")
        let first = try BundleFixture.bundle(in: search, "a-first", manifest: BundleFixture.manifest("com.example.twin"))
        let second = try BundleFixture.bundle(in: search, "b-second", manifest: BundleFixture.manifest("com.example.TWIN"))
        let result = Discovery.discover(directories: [search])
        XCTAssertEqual(result.bundles.map(\.directory), [first])
        XCTAssertEqual(result.problems.map(\.path), [second])
    }

    func testAnInvalidBundleDoesNotShadowAValidOne() throws {
        let first = try directory("first")
        let second = try directory("second")
        let broken = try BundleFixture.bundle(in: first, "broken", manifest: BundleFixture.manifest("com.example.x"), executable: nil)
        let working = try BundleFixture.bundle(in: second, "working", manifest: BundleFixture.manifest("com.example.x"))
        let result = Discovery.discover(directories: [first, second])
        XCTAssertEqual(result.bundles.map(\.directory), [working])
        XCTAssertEqual(result.problems.map(\.path), [broken])
        XCTAssertTrue(result.problems.first?.reason.contains("does not exist") == true)
    }

    // MARK: StrictModes and the executable

    func testWorldWritableManifestIsRefused() throws {
        let search = try directory("extensions")
        let bundleDirectory = try BundleFixture.bundle(in: search, "loose", manifest: BundleFixture.manifest("com.example.loose"), manifestMode: 0o646)
        let result = Discovery.discover(directories: [search])
        XCTAssertEqual(result.bundles.count, 0)
        let problem = try XCTUnwrap(result.problems.first)
        XCTAssertEqual(problem.path, bundleDirectory)
        XCTAssertTrue(problem.reason.hasPrefix(bundleDirectory + "/manifest.json: "), problem.reason)
        XCTAssertTrue(problem.reason.contains("writable by others"), problem.reason)
        XCTAssertTrue(problem.reason.contains("0646"), problem.reason)
    }

    func testGroupWritableManifestIsAccepted() throws {
        let search = try directory("extensions")
        try BundleFixture.bundle(in: search, "group", manifest: BundleFixture.manifest("com.example.group"), manifestMode: 0o664, executableMode: 0o775)
        XCTAssertEqual(Discovery.discover(directories: [search]).bundles.count, 1)
    }

    func testWorldWritableExecutableIsRefused() throws {
        let search = try directory("extensions")
        let bundleDirectory = try BundleFixture.bundle(in: search, "loose", manifest: BundleFixture.manifest("com.example.loose"), executableMode: 0o757)
        let result = Discovery.discover(directories: [search])
        XCTAssertEqual(result.bundles.count, 0)
        let problem = try XCTUnwrap(result.problems.first)
        XCTAssertEqual(problem.path, bundleDirectory)
        XCTAssertTrue(problem.reason.hasPrefix(bundleDirectory + "/bin/indexer: "), problem.reason)
        XCTAssertTrue(problem.reason.contains("writable by others"), problem.reason)
        XCTAssertTrue(problem.reason.contains("0757"), problem.reason)
        XCTAssertEqual(problem.bundleIdentifier, "com.example.loose")
    }

    func testFilesOwnedBySomeoneElseAreRefused() throws {
        guard getuid() == 0 else { throw XCTSkip("changing a file's owner needs root") }
        let search = try directory("extensions")
        let bundleDirectory = try BundleFixture.bundle(in: search, "foreign", manifest: BundleFixture.manifest("com.example.foreign"))
        XCTAssertEqual(chown(bundleDirectory + "/manifest.json", 4242, 4242), 0)
        let result = Discovery.discover(directories: [search])
        XCTAssertEqual(result.bundles.count, 0)
        let reason = try XCTUnwrap(result.problems.first?.reason)
        XCTAssertTrue(reason.contains("owned by uid 4242"), reason)

        XCTAssertEqual(chown(bundleDirectory + "/manifest.json", 0, 0), 0)
        XCTAssertEqual(chown(bundleDirectory + "/bin/indexer", 4242, 4242), 0)
        let again = Discovery.discover(directories: [search])
        XCTAssertEqual(again.bundles.count, 0)
        let executableReason = try XCTUnwrap(again.problems.first?.reason)
        XCTAssertTrue(executableReason.hasPrefix(bundleDirectory + "/bin/indexer: "), executableReason)
        XCTAssertTrue(executableReason.contains("owned by uid 4242"), executableReason)
    }

    func testExecutableThatDoesNotExist() throws {
        let search = try directory("extensions")
        let bundleDirectory = try BundleFixture.bundle(in: search, "ghost", manifest: BundleFixture.manifest("com.example.ghost", executable: "bin/missing"))
        let problem = try XCTUnwrap(Discovery.discover(directories: [search]).problems.first)
        XCTAssertEqual(problem.path, bundleDirectory)
        XCTAssertEqual(problem.reason, "\(bundleDirectory)/manifest.json: executable: \(bundleDirectory)/bin/missing does not exist")
        XCTAssertEqual(problem.bundleIdentifier, "com.example.ghost")
    }

    func testExecutableThatIsNotExecutable() throws {
        let search = try directory("extensions")
        let bundleDirectory = try BundleFixture.bundle(in: search, "plain", manifest: BundleFixture.manifest("com.example.plain"), executableMode: 0o644)
        let problem = try XCTUnwrap(Discovery.discover(directories: [search]).problems.first)
        XCTAssertEqual(problem.reason, "\(bundleDirectory)/manifest.json: executable: \(bundleDirectory)/bin/indexer is not executable (mode 0644)")
    }

    func testExecutableThatIsADirectory() throws {
        let search = try directory("extensions")
        let bundleDirectory = try BundleFixture.bundle(in: search, "dir", manifest: BundleFixture.manifest("com.example.dir", executable: "bin"))
        let problem = try XCTUnwrap(Discovery.discover(directories: [search]).problems.first)
        XCTAssertEqual(problem.reason, "\(bundleDirectory)/manifest.json: executable: \(bundleDirectory)/bin is not a regular file")
    }

    func testLoadOneDirectory() throws {
        let search = try directory("extensions")
        let good = try BundleFixture.bundle(in: search, "good", manifest: BundleFixture.manifest("com.example.good"))
        guard case .success(let bundle) = Discovery.load(directory: good) else { return XCTFail("expected success") }
        XCTAssertEqual(bundle.identifier, "com.example.good")
        let missing = search + "/missing"
        guard case .failure(let problem) = Discovery.load(directory: missing) else { return XCTFail("expected failure") }
        XCTAssertEqual(problem.reason, "\(missing): not a directory")
        let empty = try directory("extensions/empty")
        guard case .failure(let noManifest) = Discovery.load(directory: empty) else { return XCTFail("expected failure") }
        XCTAssertTrue(noManifest.reason.hasPrefix(empty + "/manifest.json: "), noManifest.reason)
    }

    // MARK: Many malformed manifests

    func testEveryMalformedManifestGetsItsOwnProblem() throws {
        let search = try directory("extensions")
        func m(_ extra: String) -> String { BundleFixture.manifest("com.example.valid", extra: extra) }
        let deep = String(repeating: "[", count: 80) + String(repeating: "]", count: 80)
        // (directory name, manifest bytes, text the reason must contain after the manifest path)
        var cases: [(String, [UInt8], String)] = [
            ("truncated", Array(#"{"manifestVersion":1,"bundleIdentifier":"com.ex"#.utf8), "not valid JSON: unterminated string at line 1, column 41 (byte 40)"),
            ("empty", [], "the file is empty"),
            ("whitespace", Array("  \n\t ".utf8), "not valid JSON: unexpected end of input at line 2, column 3 (byte 5)"),
            ("trailing-data", Array((m("") + " {}").utf8), "not valid JSON: unexpected data after the JSON value"),
            ("utf8-in-string", Array(#"{"manifestVersion":1,"displayName":"a"#.utf8) + [0xFF] + Array(#""}"#.utf8),
             "not valid JSON: invalid UTF-8 in a string at line 1, column 38 (byte 37)"),
            ("utf8-outside", Array(#"{"manifestVersion":1,"x":"#.utf8) + [0xFF] + Array("}".utf8), "not valid JSON: unexpected character byte 0xFF at line 1, column 26 (byte 25)"),
            ("top-level-array", Array("[1]".utf8), "expected a JSON object at the top level, got an array"),
            ("top-level-string", Array("\"manifest\"".utf8), "expected a JSON object at the top level, got \"manifest\""),
            ("version-string", Array(#"{"manifestVersion":"1","bundleIdentifier":"a.b","executable":"bin/indexer"}"#.utf8), "manifestVersion: expected 1, got \"1\""),
            ("version-2", Array(#"{"manifestVersion":2,"bundleIdentifier":"a.b","executable":"bin/indexer"}"#.utf8), "manifestVersion: expected 1, got 2"),
            ("version-missing", Array(#"{"bundleIdentifier":"a.b","executable":"bin/indexer"}"#.utf8), "manifestVersion: is required"),
            ("identifier-missing", Array(#"{"manifestVersion":1,"executable":"bin/indexer"}"#.utf8), "bundleIdentifier: is required"),
            ("identifier-number", Array(#"{"manifestVersion":1,"bundleIdentifier":42,"executable":"bin/indexer"}"#.utf8), "bundleIdentifier: expected a string, got 42"),
            ("identifier-invalid", Array(BundleFixture.manifest("no_dots").utf8), "bundleIdentifier: expected a reverse-DNS identifier"),
            ("identifier-one-label", Array(BundleFixture.manifest("indexer").utf8), "bundleIdentifier: expected a reverse-DNS identifier (two or more dot-separated labels of A-Z a-z 0-9 -, at most 255 characters), got \"indexer\""),
            ("executable-missing", Array(#"{"manifestVersion":1,"bundleIdentifier":"a.b"}"#.utf8), "executable: is required"),
            ("executable-empty", Array(BundleFixture.manifest("a.b", executable: "").utf8), "executable: expected a non-empty path"),
            ("executable-number", Array(#"{"manifestVersion":1,"bundleIdentifier":"a.b","executable":7}"#.utf8), "executable: expected a string, got 7"),
            ("arguments-not-array", Array(m(#""arguments":"--fast""#).utf8), "arguments: expected an array of strings, got \"--fast\""),
            ("arguments-element", Array(m(#""arguments":["ok",1]"#).utf8), "arguments[1]: expected a string, got 1"),
            ("environment-not-object", Array(m(#""environment":["A=1"]"#).utf8), "environment: expected an object, got an array"),
            ("environment-value", Array(m(#""environment":{"MODE":1}"#).utf8), "environment.MODE: expected a string, got 1"),
            ("environment-name", Array(m(#""environment":{"A=B":"1"}"#).utf8), "environment: expected variable names without '=' or NUL"),
            ("protocol-empty", Array(m(#""protocolVersions":[]"#).utf8), "protocolVersions: expected a non-empty array"),
            ("protocol-string", Array(m(#""protocolVersions":["1"]"#).utf8), "protocolVersions[0]: expected a positive whole number, got \"1\""),
            ("protocol-not-array", Array(m(#""protocolVersions":1"#).utf8), "protocolVersions: expected an array, got 1"),
            ("timeouts-not-object", Array(m(#""timeouts":[10]"#).utf8), "timeouts: expected an object, got an array"),
            ("retry-not-object", Array(m(#""retry":3"#).utf8), "retry: expected an object, got 3"),
            ("retry-zero", Array(m(#""retry":{"maxAttempts":0}"#).utf8), "retry.maxAttempts: expected a positive whole number, got 0"),
            ("retry-fraction", Array(m(#""retry":{"maxAttempts":1.5}"#).utf8), "retry.maxAttempts: expected a positive whole number, got 1.5"),
            ("refresh-negative", Array(m(#""refreshBeforeExpirySeconds":-5"#).utf8), "refreshBeforeExpirySeconds: expected a number of 0 or more, got -5"),
            ("display-name-number", Array(m(#""displayName":3"#).utf8), "displayName: expected a string, got 3"),
            ("version-number", Array(m(#""version":1.0"#).utf8), "version: expected a string, got 1"),
            ("deep-nesting", Array(m("\"future\":\(deep)").utf8), "not valid JSON: nesting deeper than 64 levels"),
            ("duplicate-key", Array(m(#""manifestVersion":"one""#).utf8), "manifestVersion: expected 1, got \"one\""),
            ("limits-zero", Array(m(#""limits":{"cpuSeconds":0}"#).utf8), "limits.cpuSeconds: expected a positive whole number, got 0"),
        ]
        for key in ["startupSeconds", "idleSeconds", "requestSeconds"] {
            cases.append(("\(key)-negative", Array(m(#""timeouts":{"\#(key)":-1}"#).utf8), "timeouts.\(key): expected a positive number, got -1"))
            cases.append(("\(key)-zero", Array(m(#""timeouts":{"\#(key)":0}"#).utf8), "timeouts.\(key): expected a positive number, got 0"))
            cases.append(("\(key)-string", Array(m(#""timeouts":{"\#(key)":"sixty"}"#).utf8), "timeouts.\(key): expected a positive number, got \"sixty\""))
        }
        for (name, bytes, _) in cases {
            try BundleFixture.bundle(in: search, name, manifestBytes: bytes)
        }
        // Entries that are not regular files, and a file over the 1 MiB limit.
        try directory("extensions/manifest-is-directory/manifest.json")
        cases.append(("manifest-is-directory", [], "expected a regular file, got a directory"))
        try directory("extensions/manifest-dangling-link")
        try FileManager.default.createSymbolicLink(atPath: search + "/manifest-dangling-link/manifest.json", withDestinationPath: "nowhere.json")
        cases.append(("manifest-dangling-link", [], "No such file or directory"))
        try directory("extensions/manifest-fifo")
        XCTAssertEqual(mkfifo(search + "/manifest-fifo/manifest.json", 0o644), 0)
        cases.append(("manifest-fifo", [], "expected a regular file, got a special file"))
        let huge = Array(m("\"padding\":\"" + String(repeating: "p", count: 1 << 20) + "\"").utf8)
        try BundleFixture.bundle(in: search, "too-large", manifestBytes: huge)
        cases.append(("too-large", [], "larger than 1048576 bytes"))

        let valid = try BundleFixture.bundle(in: search, "zz-valid", manifest: BundleFixture.manifest("com.example.valid"))

        XCTAssertGreaterThanOrEqual(cases.count, 30)
        let result = Discovery.discover(directories: [search])
        XCTAssertEqual(result.bundles.map(\.directory), [valid], "the valid bundle beside the broken ones is still listed")
        XCTAssertEqual(result.problems.count, cases.count)

        let problems = Dictionary(result.problems.map { ($0.path, $0) }, uniquingKeysWith: { first, _ in first })
        var detail: [String] = []
        for (name, _, expected) in cases {
            let bundleDirectory = search + "/" + name
            guard let problem = problems[bundleDirectory] else {
                XCTFail("\(name): no problem reported")
                continue
            }
            let manifestPath = bundleDirectory + "/manifest.json"
            XCTAssertTrue(problem.reason.hasPrefix(manifestPath + ": "), "\(name): the reason names the file: \(problem.reason)")
            XCTAssertTrue(problem.reason.contains(expected), "\(name): expected …\(expected)…, got \(problem.reason)")
            detail.append(String(problem.reason.dropFirst(manifestPath.count)))
        }
        // Each problem says something different, even without its path.
        XCTAssertEqual(Set(detail).count, detail.count, "reasons are not distinct: \(detail.sorted())")
    }

    // MARK: Search path integration

    func testDiscoverFollowsHostPathsOrder() throws {
        let option = try directory("option")
        let dataHome = try directory("data-home")
        let dataDir = try directory("data-dir")
        let user = try directory("data-home/reindex/extensions")
        let system = try directory("data-dir/reindex/extensions")
        let fromOption = try BundleFixture.bundle(in: option, "a", manifest: BundleFixture.manifest("com.example.shared"))
        let fromUser = try BundleFixture.bundle(in: user, "b", manifest: BundleFixture.manifest("com.example.shared"))
        let userOnly = try BundleFixture.bundle(in: user, "c", manifest: BundleFixture.manifest("com.example.user"))
        let fromSystem = try BundleFixture.bundle(in: system, "d", manifest: BundleFixture.manifest("com.example.USER"))
        let paths = HostPaths(extensionsPath: option, index: nil,
                              environment: ["HOME": try temporaryRoot(), "XDG_DATA_HOME": dataHome, "XDG_DATA_DIRS": dataDir])
        let result = Discovery.discover(paths)
        XCTAssertEqual(result.bundles.map(\.directory), [fromOption, userOnly])
        XCTAssertEqual(result.problems.map(\.path), [fromUser, fromSystem])
    }
}

final class HostPathsTests: XCTestCase {
    private let home = "/home/tester"

    func testDefaults() {
        let paths = HostPaths(extensionsPath: nil, index: nil, environment: ["HOME": home])
        XCTAssertEqual(paths.searchPath.map(\.directory), [
            "/home/tester/.local/share/reindex/extensions", "/usr/local/share/reindex/extensions", "/usr/share/reindex/extensions",
        ])
        XCTAssertEqual(paths.searchPath.map(\.source), [.userData, .systemData, .systemData])
        XCTAssertEqual(paths.userExtensions, "/home/tester/.local/share/reindex/extensions")
        XCTAssertEqual(paths.index, "/home/tester/.local/share/reindex/index.sqlite")
        XCTAssertEqual(paths.indexSource, "default")
        XCTAssertEqual(paths.logs, "/home/tester/.local/state/reindex/logs")
    }

    func testExtensionsPathOptionComesFirstInOrder() {
        let paths = HostPaths(extensionsPath: "/z/first:/a/second::/m/third/", index: nil, environment: ["HOME": home])
        XCTAssertEqual(paths.searchPath.map(\.directory), [
            "/z/first", "/a/second", "/m/third",
            "/home/tester/.local/share/reindex/extensions",
            "/usr/local/share/reindex/extensions", "/usr/share/reindex/extensions",
        ])
        XCTAssertEqual(paths.searchPath.map(\.source), [.option, .option, .option, .userData, .systemData, .systemData])
    }

    func testRelativeExtensionsPathIsMadeAbsolute() {
        let paths = HostPaths(extensionsPath: "relative/dir", index: nil, environment: ["HOME": home])
        let cwd = FileManager.default.currentDirectoryPath
        XCTAssertEqual(paths.searchPath.first?.directory, FileSystem.absolute(cwd + "/relative/dir"))
        XCTAssertTrue(paths.searchPath.first?.directory.hasPrefix("/") == true)
    }

    func testEnvironmentExtensionsPathIsUsedOnlyWithoutTheOption() {
        let environment = ["HOME": home, "REINDEX_EXTENSIONS_PATH": "/env/one:/env/two"]
        let fromEnvironment = HostPaths(extensionsPath: nil, index: nil, environment: environment)
        XCTAssertEqual(fromEnvironment.searchPath.prefix(2).map(\.directory), ["/env/one", "/env/two"])
        XCTAssertEqual(fromEnvironment.searchPath.prefix(2).map(\.source), [.environment, .environment])
        XCTAssertEqual(fromEnvironment.searchPath.count, 5)

        let withOption = HostPaths(extensionsPath: "/opt/ext", index: nil, environment: environment)
        XCTAssertEqual(withOption.searchPath.map(\.directory), [
            "/opt/ext", "/home/tester/.local/share/reindex/extensions",
            "/usr/local/share/reindex/extensions", "/usr/share/reindex/extensions",
        ])
        XCTAssertFalse(withOption.searchPath.contains { $0.source == .environment })
    }

    func testXDGDataHomeOverride() {
        let paths = HostPaths(extensionsPath: nil, index: nil, environment: ["HOME": home, "XDG_DATA_HOME": "/xdg/data"])
        XCTAssertEqual(paths.searchPath.first?.directory, "/xdg/data/reindex/extensions")
        XCTAssertEqual(paths.searchPath.first?.source, .userData)
        XCTAssertEqual(paths.userExtensions, "/xdg/data/reindex/extensions")
        XCTAssertEqual(paths.index, "/xdg/data/reindex/index.sqlite")
    }

    func testRelativeXDGDataHomeIsIgnored() {
        let paths = HostPaths(extensionsPath: nil, index: nil, environment: ["HOME": home, "XDG_DATA_HOME": "relative/data"])
        XCTAssertEqual(paths.searchPath.first?.directory, "/home/tester/.local/share/reindex/extensions")
    }

    func testXDGDataDirsOverride() {
        let paths = HostPaths(extensionsPath: nil, index: nil, environment: ["HOME": home, "XDG_DATA_DIRS": "/opt/share:relative:/srv/share/"])
        XCTAssertEqual(paths.searchPath.map(\.directory), [
            "/home/tester/.local/share/reindex/extensions", "/opt/share/reindex/extensions", "/srv/share/reindex/extensions",
        ])
        XCTAssertEqual(paths.searchPath.map(\.source), [.userData, .systemData, .systemData])
    }

    func testEmptyXDGDataDirsMeansTheDefault() {
        let paths = HostPaths(extensionsPath: nil, index: nil, environment: ["HOME": home, "XDG_DATA_DIRS": ""])
        XCTAssertEqual(paths.searchPath.dropFirst().map(\.directory), ["/usr/local/share/reindex/extensions", "/usr/share/reindex/extensions"])
    }

    func testXDGStateHomeMovesTheDefaultLogs() {
        let paths = HostPaths(extensionsPath: nil, index: nil, environment: ["HOME": home, "XDG_STATE_HOME": "/xdg/state"])
        XCTAssertEqual(paths.logs, "/xdg/state/reindex/logs")
    }

    func testIndexFromOptionEnvironmentAndDefault() {
        let environment = ["HOME": home, "REINDEX_INDEX": "/env/index.sqlite", "XDG_STATE_HOME": "/xdg/state"]
        let fromOption = HostPaths(extensionsPath: nil, index: "/opt/idx/index.sqlite", environment: environment)
        XCTAssertEqual(fromOption.index, "/opt/idx/index.sqlite")
        XCTAssertEqual(fromOption.indexSource, "--index")

        let fromEnvironment = HostPaths(extensionsPath: nil, index: nil, environment: environment)
        XCTAssertEqual(fromEnvironment.index, "/env/index.sqlite")
        XCTAssertEqual(fromEnvironment.indexSource, "REINDEX_INDEX")

        let fallback = HostPaths(extensionsPath: nil, index: nil, environment: ["HOME": home, "REINDEX_INDEX": ""])
        XCTAssertEqual(fallback.index, "/home/tester/.local/share/reindex/index.sqlite")
        XCTAssertEqual(fallback.indexSource, "default")
    }

    func testRelativeIndexIsMadeAbsolute() {
        let paths = HostPaths(extensionsPath: nil, index: "data/../idx.sqlite", environment: ["HOME": home])
        XCTAssertEqual(paths.index, FileSystem.absolute(FileManager.default.currentDirectoryPath + "/idx.sqlite"))
        XCTAssertEqual(paths.logs, FileSystem.join(FileSystem.absolute(FileManager.default.currentDirectoryPath), "logs"))
    }

    func testLogsBesideAnExplicitIndex() {
        let environment = ["HOME": home, "XDG_STATE_HOME": "/xdg/state"]
        XCTAssertEqual(HostPaths(extensionsPath: nil, index: "/srv/reindex/main.sqlite", environment: environment).logs, "/srv/reindex/logs")
        XCTAssertEqual(HostPaths(extensionsPath: nil, index: nil, environment: environment.merging(["REINDEX_INDEX": "/var/r/i.sqlite"]) { $1 }).logs,
                       "/var/r/logs")
        XCTAssertEqual(HostPaths(extensionsPath: nil, index: nil, environment: environment).logs, "/xdg/state/reindex/logs")
    }

    func testMissingHome() {
        let paths = HostPaths(extensionsPath: nil, index: nil, environment: [:])
        XCTAssertEqual(paths.searchPath.first?.directory, "/.local/share/reindex/extensions")
        XCTAssertTrue(paths.index.hasPrefix("/"))
    }

    func testLogFileForAValidIdentifier() {
        let paths = HostPaths(extensionsPath: nil, index: "/srv/r/index.sqlite", environment: ["HOME": home])
        XCTAssertEqual(paths.logFile(for: "Com.Example.Colleagues"), "/srv/r/logs/com.example.colleagues.log")
        XCTAssertEqual(paths.logFile(for: "com.example.colleagues"), paths.logFile(for: "COM.EXAMPLE.COLLEAGUES"))
    }

    func testLogFileStaysInsideTheLogsDirectoryForHostileInput() {
        let paths = HostPaths(extensionsPath: nil, index: "/srv/r/index.sqlite", environment: ["HOME": home])
        let hostile = ["../../etc/passwd", "/etc/passwd", "..", ".", "", "a/b", "com.example/../../../x", "com.example\u{0}.x",
                       "com.example\n.x", "..com.example", "com.example/..", String(repeating: "a.", count: 200) + "b",
                       "~/.ssh/authorized_keys", "com.example.%2e%2e%2f", "c:\\windows.x"]
        for identifier in hostile {
            let file = paths.logFile(for: identifier)
            XCTAssertTrue(file.hasPrefix("/srv/r/logs/"), "\(identifier.debugDescription) → \(file)")
            let name = String(file.dropFirst("/srv/r/logs/".count))
            XCTAssertFalse(name.contains("/"), "\(identifier.debugDescription) → \(file)")
            XCTAssertFalse(name.contains("\u{0}"), "\(identifier.debugDescription) → \(file)")
            XCTAssertFalse(name.hasPrefix("."), "\(identifier.debugDescription) → \(file)")
            XCTAssertTrue(name.hasSuffix(".log"), "\(identifier.debugDescription) → \(file)")
            XCTAssertEqual(FileSystem.absolute(file), file, "\(identifier.debugDescription) → \(file)")
            XCTAssertEqual(FileSystem.directoryName(file), "/srv/r/logs")
        }
    }
}
