import Foundation
import ReindexTestSupport
import XCTest
import ReindexHost
import ReindexSystem
@testable import ReindexStore
import ReindexProtocol

/// The store under ordinary concurrency, through the real command and real extensions: an open
/// request never stalls another bundle, every read is one snapshot, a new index can be opened by
/// many processes at once, and a damaged index gets one clear error. Nothing here is timed: each
/// test waits for a condition (with a generous limit that only a hang reaches).
final class ConcurrencyTests: XCTestCase {
    private typealias T = TestSupport
    private var scratch = ""
    private var extensions: String { "\(scratch)/extensions" }
    private var index: String { "\(scratch)/index/index.sqlite" }
    private var environment: [String: String] { T.commandEnvironment(scratch: scratch) }
    private var opened: [T.RunningCommand] = []

    override func setUpWithError() throws {
        scratch = try T.makeScratchDirectory(for: self)
        try FileManager.default.createDirectory(atPath: extensions, withIntermediateDirectories: true)
        signal(SIGPIPE, SIG_IGN)
    }

    override func tearDown() {
        for command in opened where command.process.isRunning { kill(command.process.processIdentifier, SIGKILL) }
        opened = []
        super.tearDown()
    }

    private func reindex(_ arguments: [String], stdin: String? = nil) throws -> T.CommandResult {
        try T.runReindex(["--index", index, "--extensions-path", extensions] + arguments, scratch: scratch, environment: environment, stdin: stdin, timeout: 120)
    }

    private func start(_ arguments: [String]) throws -> T.RunningCommand {
        let command = try T.RunningCommand(arguments: ["--index", index, "--extensions-path", extensions] + arguments,
                                           environment: environment, scratch: scratch, feedsStdin: false)
        opened.append(command)
        return command
    }

    /// Waits until `condition` holds; fails after `limit` seconds (only a hang gets there).
    private func waitFor(_ what: String, limit: Double = 60, file: StaticString = #filePath, line: UInt = #line, _ condition: () -> Bool) -> Bool {
        let end = Date().addingTimeInterval(limit)
        while !condition() {
            if Date() >= end {
                XCTFail("gave up waiting for \(what)", file: file, line: line)
                return false
            }
            usleep(20_000)
        }
        return true
    }

    /// A bundle whose reindexAll puts `count` items, then stays silent until the test releases it.
    private func makePausingBundle(_ identifier: String, count: Int = 5) throws -> (ready: String, release: String) {
        var spec = T.BundleSpec(identifier, executable: "pause_after_puts.py")
        spec.arguments = [String(count)]
        let handshake = try T.handshakeDirectory(scratch)
        let ready = "\(handshake)/\(identifier).ready", release = "\(handshake)/\(identifier).release"
        spec.environment = ["FIXTURE_READY": ready, "FIXTURE_RELEASE": release]
        spec.sandboxWrite = [handshake]
        // Silent for as long as the test needs: the wait for the other bundles must not end
        // because this request timed out.
        spec.idleSeconds = 600
        try T.makeBundle(spec, in: extensions)
        return (ready, release)
    }

    // MARK: An open request stalls no one

    func testAnOpenIdleRequestDoesNotStallOtherBundlesOrCommands() throws {
        let pause = try makePausingBundle("com.example.slow")
        try T.makeBundle(T.BundleSpec("com.example.other", executable: "well_behaved.py"), in: extensions)
        let slow = try start(["run", "com.example.slow"])
        guard waitFor("the slow extension to put its items and go quiet", { FileManager.default.fileExists(atPath: pause.ready) }) else { return }
        defer { _ = FileManager.default.createFile(atPath: pause.release, contents: nil) }

        // Its five puts are written but not visible, and nobody waits for them.
        let put = try reindex(["put", "com.example.notes"], stdin: #"{"uniqueIdentifier":"n1","attributes":{"title":"Concurrent note"}}"# + "\n")
        XCTAssertEqual(put.status, 0, "\(put)")
        let delete = try reindex(["delete", "com.example.notes", "--ids", "n1"])
        XCTAssertEqual(delete.status, 0, "\(delete)")
        XCTAssertTrue(delete.stdout.contains("deleted 1"), "\(delete)")
        let other = try reindex(["run", "com.example.other"])
        XCTAssertEqual(other.status, 0, "\(other)")
        let check = try reindex(["check", "--json"])
        XCTAssertEqual(check.status, 0, "\(check)")
        XCTAssertTrue(check.stdout.contains(#""healthy":true"#), "\(check)")
        XCTAssertFalse(check.stdout.contains("damaged") || check.stderr.contains("damaged"), "\(check)")
        let hidden = try reindex(["search", "paused", "--json"])
        XCTAssertEqual(hidden.status, 0, "\(hidden)")
        XCTAssertTrue(hidden.stdout.contains(#""results":[]"#), "an unacknowledged reindexAll is visible: \(hidden)")

        _ = FileManager.default.createFile(atPath: pause.release, contents: nil)
        let finished = slow.finish(timeout: 60)
        XCTAssertEqual(finished.status, 0, "\(finished)")
        let visible = try reindex(["items", "com.example.slow", "--json"])
        XCTAssertEqual(visible.stdout.components(separatedBy: #""uniqueIdentifier""#).count - 1, 5, "\(visible)")
    }

    func testServeRunsTwoBundlesSideBySide() throws {
        let pause = try makePausingBundle("com.example.slow")
        try T.makeBundle(T.BundleSpec("com.example.quick", executable: "well_behaved.py"), in: extensions)
        XCTAssertEqual(try reindex(["run", "com.example.slow", "--queue"]).status, 0)
        let serve = try start(["serve", "--concurrency", "2", "--rescan", "1", "--retry-base", "0.2"])
        defer {
            _ = FileManager.default.createFile(atPath: pause.release, contents: nil)
            kill(serve.process.processIdentifier, SIGTERM)
            let stopped = serve.finish(timeout: 60)
            XCTAssertEqual(stopped.status, 0, "\(stopped)")
        }
        guard waitFor("the slow extension to go quiet", { FileManager.default.fileExists(atPath: pause.ready) }) else { return }
        XCTAssertEqual(try reindex(["run", "com.example.quick", "--queue"]).status, 0)
        // The quick bundle's request completes while the slow one is still open.
        _ = waitFor("the quick bundle's request to be acknowledged while the slow one is open", limit: 45) {
            let status = (try? reindex(["status", "--json"]).stdout) ?? ""
            return status.contains(#""bundleIdentifier":"com.example.quick","items":3"#)
        }
        XCTAssertFalse(FileManager.default.fileExists(atPath: pause.release))
    }

    // MARK: Every read is one snapshot

    func testSearchesSeeOneGenerationWhileAReplacementIsAcknowledged() throws {
        let count = 3000
        func bundle(prefix: String) throws {
            var spec = T.BundleSpec("com.example.gen", executable: "well_behaved.py")
            spec.arguments = [String(count)]
            spec.environment = ["FIXTURE_PREFIX": prefix]
            try T.makeBundle(spec, in: extensions)
        }
        try bundle(prefix: "Old")
        XCTAssertEqual(try reindex(["run", "com.example.gen"]).status, 0)
        let store = try IndexStore.open(path: index)
        var mixed: [String] = []
        var searches = 0
        for (round, prefix) in ["New", "Old", "New", "Old", "New"].enumerated() {
            try bundle(prefix: prefix)
            let run = try start(["run", "com.example.gen"])
            while run.process.isRunning {
                let results = try store.search("item", limit: count + 10)
                searches += 1
                let fresh = results.filter { $0.title?.hasPrefix(prefix) == true }.count
                if fresh > 0 && fresh < results.count { mixed.append("round \(round): \(fresh) \(prefix) + \(results.count - fresh) other") }
            }
            let finished = run.finish(timeout: 60)
            XCTAssertEqual(finished.status, 0, "\(finished)")
            XCTAssertEqual(try store.search("item", limit: count + 10).filter { $0.title?.hasPrefix(prefix) == true }.count, count)
        }
        XCTAssertEqual(mixed, [], "searches saw two generations at once (\(mixed.count) of \(searches))")
    }

    // MARK: A new index, opened by many at once

    func testManyCommandsOpeningABrandNewIndexAtOnce() throws {
        for round in 1...3 {
            let path = "\(scratch)/fresh-\(round)/index.sqlite"
            let commands = try (0..<8).map { n in
                try T.RunningCommand(arguments: ["--index", path, "--extensions-path", extensions] + ["delete", "com.example.fresh", "--ids", "x\(n)"],
                                     environment: environment, scratch: scratch, feedsStdin: false)
            }
            for command in commands {
                let result = command.finish(timeout: 120)
                XCTAssertEqual(result.status, 0, "round \(round): \(result)")
                XCTAssertFalse(result.stderr.contains("locked"), "round \(round): \(result)")
            }
        }
    }

    func testManyConnectionsOpeningABrandNewIndexAtTheSameInstant() throws {
        // Threads released together, each with its own connection, as processes at first boot.
        for round in 1...10 {
            let path = "\(scratch)/instant-\(round)/index.sqlite"
            let failures = Failures()
            let start = DispatchSemaphore(value: 0)
            let group = DispatchGroup()
            for _ in 0..<8 {
                DispatchQueue.global().async(group: group) {
                    start.wait()
                    do { _ = try IndexStore.open(path: path) } catch { failures.append("\(error)") }
                }
            }
            for _ in 0..<8 { start.signal() }
            group.wait()
            XCTAssertEqual(failures.list, [], "round \(round)")
        }
    }

    private final class Failures: @unchecked Sendable {
        private let lock = NSLock()
        private var items: [String] = []
        func append(_ text: String) { lock.lock(); items.append(text); lock.unlock() }
        var list: [String] { lock.lock(); defer { lock.unlock() }; return items }
    }

    // MARK: A damaged index

    func testADamagedIndexGivesOneClearErrorToEveryReadCommand() throws {
        var spec = T.BundleSpec("com.example.big", executable: "well_behaved.py")
        spec.arguments = ["3000"]
        try T.makeBundle(spec, in: extensions)
        XCTAssertEqual(try reindex(["run", "com.example.big"]).status, 0)
        // Damage the pages past the first fifth (items and their full-text rows), not the header
        // or the schema, so the index opens and the damage shows only when rows are read. (Past
        // the first half only, a search could find every row it read undamaged: where rows land
        // depends on how the run's batches were cut, which depends on timing.)
        let size = try XCTUnwrap(FileManager.default.attributesOfItem(atPath: index)[.size] as? Int)
        let handle = try XCTUnwrap(FileHandle(forUpdatingAtPath: index))
        var offset = size / 5
        while offset < size * 9 / 10 {
            try handle.seek(toOffset: UInt64(offset + 100))
            handle.write(Data((0..<2000).map { UInt8(truncatingIfNeeded: $0 &* 7919 &+ offset) }))
            offset += 4096
        }
        try handle.close()

        let check = try reindex(["check"])
        XCTAssertNotEqual(check.status, 0, "\(check)")
        XCTAssertTrue(check.stderr.contains("damaged"), "\(check)")
        for arguments in [["status", "--json"], ["items", "com.example.big", "--limit", "5000"], ["search", "gadget", "--json", "--limit", "5000"], ["status"]] {
            let result = try reindex(arguments)
            XCTAssertTrue(result.status == 74 || result.status == 65, "\(arguments): \(result)")
            XCTAssertTrue(result.stderr.contains("damaged") && result.stderr.contains("reindex reset"), "\(arguments): \(result)")
            XCTAssertFalse(result.stderr.contains("SELECT"), "\(arguments): a raw statement in the error: \(result)")
            XCTAssertEqual(result.stderr.components(separatedBy: "error:").count - 1, 1, "\(arguments): one error line: \(result)")
        }
    }
}
