import Foundation
import ReindexHost
import ReindexSystem
@testable import ReindexStore
import ReindexProtocol
import ReindexTestSupport
import XCTest

/// Isolation between bundles, and between the host and the extensions it runs, through the
/// built `reindex` command: no protocol message reaches another bundle's items, the host's
/// secrets stay out of an extension's environment, a bundle identifier cannot steer a path, and
/// the permission rule holds when a bundle is run by name. (Resource limits are in the
/// fault-injection matrix; the environment builder and log paths are also tested directly in
/// `SupervisorTests` and `DiscoveryTests`.)
final class IsolationTests: XCTestCase, @unchecked Sendable {
    private typealias T = TestSupport
    private var scratch = ""
    private var extensionsDirectory: String { "\(scratch)/extensions" }
    private var indexPath: String { "\(scratch)/index/index.sqlite" }

    override func setUpWithError() throws {
        scratch = try T.makeScratchDirectory(for: self)
        try FileManager.default.createDirectory(atPath: extensionsDirectory, withIntermediateDirectories: true)
        try FileManager.default.createDirectory(atPath: "\(scratch)/index", withIntermediateDirectories: true)
    }

    private func reindex(_ arguments: [String], environment: [String: String]? = nil, stdin: String? = nil) throws -> T.CommandResult {
        try T.runReindex(["--index", indexPath, "--extensions-path", extensionsDirectory] + arguments, scratch: scratch,
                         environment: environment, stdin: stdin)
    }

    // MARK: Another bundle's items

    private let victim = "com.example.victim"
    private let victimIDs = ["v.1", "v.2", "shared.1"]

    /// The victim's items as (identifier, domain, title), sorted.
    private func victimItems(_ store: any IndexBackend) throws -> [String] {
        try store.items(bundle: victim, domain: nil, limit: 100, now: Clock.now()).map { "\($0.uniqueIdentifier)|\($0.domainIdentifier ?? "-")|\($0.title ?? "-")" }.sorted()
    }

    private func makeHostile(_ mode: String) throws -> String {
        var spec = T.BundleSpec("com.example.hostile", executable: "hostile.py")
        spec.arguments = mode.isEmpty ? [] : [mode]
        spec.environment = ["VICTIM": victim, "VICTIM_IDS": victimIDs.joined(separator: ","), "VICTIM_DOMAINS": "com.example.victim.people,shared"]
        return try T.makeBundle(spec, in: extensionsDirectory)
    }

    func testNoProtocolMessageCanReadChangeOrDeleteAnotherBundlesItems() throws {
        for index in try TestIndex.both(for: self) {
            let n = index.name
            let environment = T.commandEnvironment(scratch: scratch, extra: index.environment)
            func reindex(_ arguments: [String]) throws -> T.CommandResult {
                try T.runReindex(["--index", index.argument, "--extensions-path", extensionsDirectory] + arguments, scratch: scratch, environment: environment)
            }
            let store = try index.open()
            try T.seed(store, bundle: victim, [
                T.item("v.1", title: "Victim Vole", domain: "com.example.victim.people"),
                T.item("v.2", title: "Victim Vicuna", domain: "com.example.victim.people.staff"),
                T.item("shared.1", title: "Victim Viper", domain: "shared"),
            ])
            let before = try victimItems(store)
            XCTAssertEqual(before.count, 3, n)
            _ = try makeHostile("")

            // reindexItems of the victim's identifiers: delete them, their domains, "%" and "*",
            // put items with the same identifiers and domains, ask for the victim's items.
            let items = try reindex(["run", "com.example.hostile", "--ids", victimIDs.joined(separator: ",")])
            XCTAssertEqual(items.status, 0, "\(n): \(items)")
            XCTAssertEqual(try victimItems(store), before, "\(n): the hostile bundle changed the victim's items")
            let hostile = try T.identifiers(store, bundle: "com.example.hostile")
            XCTAssertEqual(hostile, ["claimed.1", "own.1", "shared.1", "v.1", "v.2", "x' OR '1'='1"],
                           "\(n): the hostile bundle's items are its own, the injection attempt stored verbatim")
            let hijacked = try store.search("hijacked", limit: 50)
            XCTAssertEqual(Set(hijacked.map(\.bundleIdentifier)), ["com.example.hostile"], n)
            XCTAssertEqual(Set(try store.search("victim", limit: 50).map(\.bundleIdentifier)), [victim], n)
            XCTAssertEqual(try store.search("claimed").map(\.bundleIdentifier), ["com.example.hostile"],
                           "\(n): an item claiming the victim's bundle identifier is still the hostile bundle's")

            // Its questions got errors that say nothing of the victim's items.
            let log = T.read(index.logFile(for: "com.example.hostile", commandEnvironment: environment)) ?? ""
            for method in ["items/get", "search/query", "store/items"] {
                let line = try XCTUnwrap(log.split(separator: "\n").first { $0.contains("reply \(method):") }, "\(n): \(log)")
                XCTAssertTrue(line.contains("-32601"), "\(n): \(line)")
                XCTAssertFalse(line.contains("Vole") || line.contains("Vicuna") || line.contains("Viper"), "\(n): \(line)")
            }

            // reindexAll ending in deleteAll: the hostile bundle's own items go, the victim's stay.
            _ = try makeHostile("deleteAll")
            let all = try reindex(["run", "com.example.hostile", "--all"])
            XCTAssertEqual(all.status, 0, "\(n): \(all)")
            XCTAssertEqual(try victimItems(store), before, n)
            XCTAssertEqual(try T.identifiers(store, bundle: "com.example.hostile"), [], n)

            // batch/commit for a request that is not its own: a protocol violation, nothing committed.
            _ = try makeHostile("foreignCommit")
            let foreign = try reindex(["run", "com.example.hostile", "--ids", "v.1"])
            XCTAssertEqual(foreign.status, 76, "\(n): \(foreign)")
            XCTAssertTrue(foreign.stderr.contains("which is not outstanding"), "\(n): \(foreign.stderr)")
            XCTAssertEqual(try victimItems(store), before, n)
            XCTAssertEqual(try T.identifiers(store, bundle: "com.example.hostile"), [], n)
            store.assertHealthy(n)
        }
    }

    func testTheHostsSecretsDoNotReachAnExtensionRunByTheCommand() throws {
        var spec = T.BundleSpec("com.example.environment", executable: "env_dump.sh")
        spec.environment = ["FIXTURE_DUMP": "environment.txt"]
        let directory = try T.makeBundle(spec, in: extensionsDirectory)
        let environment = T.commandEnvironment(scratch: scratch, extra: [
            "SECRET_TOKEN": "hunter2", "AWS_SECRET_ACCESS_KEY": "do-not-pass", "SSH_AUTH_SOCK": "/tmp/agent.sock",
            "REINDEX_INDEX": "/elsewhere/index.sqlite", "REINDEX_EXTENSIONS_PATH": "/elsewhere", "PYTHONPATH": "/elsewhere",
            "LD_LIBRARY_PATH": "/elsewhere", "REINDEX_DEBUG": "1",
        ])
        let result = try reindex(["run", "com.example.environment", "--ids", "env.1"], environment: environment)
        XCTAssertEqual(result.status, 0, "\(result)")
        let dump = try XCTUnwrap(T.read("\(directory)/environment.txt"))
        let names = Set(dump.split(separator: "\n").compactMap { $0.split(separator: "=", maxSplits: 1).first.map(String.init) })
        for secret in ["SECRET_TOKEN", "AWS_SECRET_ACCESS_KEY", "SSH_AUTH_SOCK", "REINDEX_INDEX", "REINDEX_EXTENSIONS_PATH",
                       "PYTHONPATH", "LD_LIBRARY_PATH", "REINDEX_DEBUG", "XDG_DATA_HOME", "XDG_STATE_HOME", "XDG_DATA_DIRS"] {
            XCTAssertFalse(names.contains(secret), "\(secret) reached the extension")
        }
        XCTAssertFalse(dump.contains("hunter2") || dump.contains("do-not-pass") || dump.contains("/elsewhere"), dump)
        let allowed: Set<String> = ExtensionEnvironment.allowlist.union([
            "FIXTURE_DUMP", "REINDEX_BUNDLE_IDENTIFIER", "REINDEX_PROTOCOL_VERSIONS", "REINDEX_HOST_PID", "REINDEX_DATA_DIR", "PWD", "OLDPWD", "SHLVL", "_",
        ])
        XCTAssertEqual(names.filter { !$0.hasPrefix("LC_") }.subtracting(allowed), [], dump)
    }

    // MARK: Paths

    func testBundleIdentifiersCannotSteerALogLockOrIndexPath() throws {
        let hostile = ["../../outside", "..", "com.example/../../outside", "com.example.x/..", "/tmp/outside.x", "com..example",
                       ".com.example", "com.example.", "com.exa mple", "com.example.%2e%2e", "~.ssh"]
        for (n, identifier) in hostile.enumerated() {
            let directory = "\(extensionsDirectory)/hostile-\(n)"
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
            try T.write("#!/bin/sh\nexit 0\n", to: "\(directory)/run.sh", mode: 0o755)
            let manifest = JSONWriter.string(.object([("manifestVersion", 1), ("bundleIdentifier", .string(identifier)), ("executable", "run.sh")]))
            try T.write(manifest, to: "\(directory)/manifest.json")
        }
        let list = try reindex(["list", "--json"])
        XCTAssertEqual(list.status, 0, "\(list)")
        let parsed = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(list.stdout.utf8)) as? [String: Any])
        XCTAssertEqual((parsed["bundles"] as? [Any])?.count, 0, "a hostile identifier was accepted: \(list.stdout)")
        let problems = parsed["problems"] as? [[String: Any]] ?? []
        XCTAssertEqual(problems.count, hostile.count, list.stdout)
        for problem in problems {
            XCTAssertTrue((problem["reason"] as? String ?? "").contains("bundleIdentifier: expected a reverse-DNS identifier"), "\(problem)")
        }
        // Asking for them by name finds nothing and creates nothing outside the index directory.
        for identifier in hostile {
            let run = try reindex(["run", identifier])
            XCTAssertEqual(run.status, 66, "\(identifier): \(run)")
            let queued = try reindex(["run", identifier, "--queue"])
            XCTAssertNotEqual(queued.status, 0, "\(identifier): \(queued)")
        }
        let created = try FileManager.default.subpathsOfDirectory(atPath: scratch)
            .filter { !$0.hasPrefix("extensions") && !$0.hasPrefix("command-") && !$0.hasPrefix("home") && !$0.hasPrefix("xdg") }
        for path in created {
            XCTAssertTrue(path.hasPrefix("index"), "something was created outside the index directory: \(path)")
        }
        XCTAssertFalse(FileManager.default.fileExists(atPath: "\(scratch)/outside"))
        XCTAssertFalse(FileManager.default.fileExists(atPath: "/tmp/outside.x.log"))
        // The paths themselves, for any input: inside their directories.
        let paths = HostPaths(extensionsPath: nil, index: indexPath, environment: [:])
        for identifier in hostile {
            XCTAssertEqual(FileSystem.directoryName(paths.logFile(for: identifier)), "\(scratch)/index/logs", identifier)
            let (lock, _) = try BundleLock.acquire(name: identifier, index: indexPath)
            XCTAssertEqual(lock.map { FileSystem.directoryName($0.path) }, "\(scratch)/index/locks", identifier)
        }
    }

    // MARK: Permissions

    func testTheCommandRefusesToRunABundleOthersCanWrite() throws {
        let directory = try T.makeBundle(T.BundleSpec("com.example.writable", executable: "well_behaved.py"), in: extensionsDirectory)
        // An executable others can write is named in the refusal (65); a manifest others can write
        // is not read at all, so the bundle is not found (66) and the refusal is shown as a hint.
        for (file, what, status) in [("well_behaved.py", "executable", Int32(65)), ("manifest.json", "manifest", Int32(66))] {
            try FileManager.default.setAttributes([.posixPermissions: 0o757], ofItemAtPath: "\(directory)/\(file)")
            let result = try reindex(["run", "com.example.writable"])
            XCTAssertEqual(result.status, status, "\(what): \(result)")
            XCTAssertTrue(result.stderr.contains("\(directory)/\(file)"), "\(what): \(result.stderr)")
            XCTAssertTrue(result.stderr.contains("writable by others"), "\(what): \(result.stderr)")
            XCTAssertFalse(FileManager.default.fileExists(atPath: "\(scratch)/index/logs/com.example.writable.log"), "the \(what) was run")
            try FileManager.default.setAttributes([.posixPermissions: file.hasSuffix(".py") ? 0o755 : 0o644], ofItemAtPath: "\(directory)/\(file)")
        }
        XCTAssertEqual(try reindex(["run", "com.example.writable"]).status, 0)
    }
}
