import Foundation
import ReindexHost
import ReindexSystem
@testable import ReindexCommandLine
@testable import ReindexStore
import ReindexProtocol
import ReindexTestSupport
import XCTest

/// `reindex serve` as a real process: the built command, fixture extensions in bundles on a
/// search path in a scratch directory, and a real index file. Each test starts serve, changes
/// the world (copies a bundle in, deletes the index, signals serve…) and waits, with generous
/// deadlines, until the index or the fixtures' own records show the expected outcome. Nothing is
/// timed: a test only ever waits for a condition. tearDown always stops every serve it started
/// (SIGTERM, then SIGKILL if it does not exit) and waits for it.
final class ServeTests: XCTestCase, @unchecked Sendable {
    private typealias T = TestSupport
    private var scratch = ""
    private var servers: [T.RunningCommand] = []
    private var extensionsDirectory: String { "\(scratch)/extensions" }
    private var indexDirectory: String { "\(scratch)/index" }
    private var indexPath: String { "\(indexDirectory)/index.sqlite" }
    /// Generous: serve and the fixtures share two cores with other work.
    private let deadline: Double = 30

    override func setUpWithError() throws {
        scratch = try T.makeScratchDirectory(for: self)
        // Teardown blocks run last-in first-out, and before tearDown(): stopping every serve here
        // makes sure none is still running when the scratch directory's own block deletes its
        // index (serve would see the index lost and exit 74).
        addTeardownBlock { [weak self] in self?.stopServers() }
        for directory in [extensionsDirectory, indexDirectory, "\(scratch)/staging"] {
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        }
        signal(SIGPIPE, SIG_IGN)
    }

    private func stopServers() {
        for server in servers {
            let result = stop(server)
            // Every serve shuts down cleanly on SIGTERM, whatever the test did to it.
            XCTAssertFalse(result.timedOut, "serve did not exit on SIGTERM: \(result)")
            XCTAssertTrue(result.status == 0 && !result.signaled, "serve did not exit cleanly: \(result)")
        }
        servers = []
    }

    override func tearDown() {
        stopServers()
        // The scratch directory's own teardown block may have run already; serve is stopped now,
        // so nothing can recreate files in it after this.
        if !scratch.isEmpty { try? FileManager.default.removeItem(atPath: scratch) }
        super.tearDown()
    }

    // MARK: Running serve

    /// Starts `reindex serve` on the scratch index and waits until it is serving (its signal
    /// handlers are installed by then).
    @discardableResult
    private func startServe(
        rescan: String = "1", retryBase: String = "0.2", removalGrace: String? = nil, concurrency: Int? = nil,
        extensionsPath: String? = nil, file: StaticString = #filePath, line: UInt = #line
    ) throws -> T.RunningCommand {
        var arguments = ["--index", indexPath, "--extensions-path", extensionsPath ?? extensionsDirectory,
                         "serve", "--rescan", rescan, "--retry-base", retryBase]
        if let removalGrace { arguments += ["--removal-grace", removalGrace] }
        if let concurrency { arguments += ["--concurrency", String(concurrency)] }
        let server = try T.RunningCommand(arguments: arguments, environment: T.commandEnvironment(scratch: scratch),
                                          scratch: scratch, feedsStdin: false)
        servers.append(server)
        try eventually("serve to start", file: file, line: line) { () -> Bool? in
            guard server.process.isRunning else { throw WaitFailure("serve exited at start: \(T.read(server.stderrPath) ?? "")") }
            return log(server).contains(" serve info: serving ") ? true : nil
        }
        return server
    }

    /// SIGTERM, then SIGKILL if serve has not exited within the deadline; waits for the exit.
    private func stop(_ server: T.RunningCommand) -> T.CommandResult {
        if server.process.isRunning { kill(server.process.processIdentifier, SIGTERM) }
        return server.finish(timeout: deadline)
    }

    private func log(_ server: T.RunningCommand) -> String { T.read(server.stderrPath) ?? "" }

    private struct WaitFailure: Error, CustomStringConvertible {
        var description: String
        init(_ description: String) { self.description = description }
    }

    /// Polls `probe` until it returns a value; fails the test after `timeout` seconds, showing
    /// what every serve logged. Errors the probe throws count as "not yet", except WaitFailure.
    @discardableResult
    private func eventually<R>(
        _ what: String, timeout: Double? = nil, file: StaticString = #filePath, line: UInt = #line, _ probe: () throws -> R?
    ) throws -> R {
        let end = Date().addingTimeInterval(timeout ?? deadline)
        var lastError: Error?
        while true {
            do {
                if let value = try probe() { return value }
            } catch let failure as WaitFailure {
                XCTFail(failure.description, file: file, line: line)
                throw failure
            } catch {
                lastError = error
            }
            if Date() >= end {
                let logs = servers.map { "serve pid \($0.process.processIdentifier):\n\(log($0))" }.joined(separator: "\n")
                let message = "gave up waiting for \(what)\(lastError.map { " (last error: \($0))" } ?? "")\n\(logs)"
                XCTFail(message, file: file, line: line)
                throw WaitFailure(message)
            }
            usleep(50_000)
        }
    }

    /// Runs `body` on a fresh connection to the index, when the index file exists.
    private func withStore<R>(_ body: (IndexStore) throws -> R?) throws -> R? {
        guard FileManager.default.fileExists(atPath: indexPath) else { return nil }
        return try body(try IndexStore.open(path: indexPath))
    }

    private func liveIdentifiers(_ bundle: String) throws -> [String] {
        try withStore { try T.identifiers($0, bundle: bundle) } ?? []
    }

    /// Runs the `reindex` command (not serve) on the scratch index and search path.
    private func reindex(_ arguments: [String], extensionsPath: String? = nil) throws -> T.CommandResult {
        try T.runReindex(["--index", indexPath, "--extensions-path", extensionsPath ?? extensionsDirectory] + arguments,
                         scratch: scratch, timeout: 60)
    }

    private func json(_ result: T.CommandResult, file: StaticString = #filePath, line: UInt = #line) throws -> JSONValue {
        XCTAssertEqual(result.status, 0, "\(result)", file: file, line: line)
        return try JSONParser.parse(text: result.stdout)
    }

    // MARK: Bundles

    /// A bundle of the recording fixture (`serve_recorder.py`), configured through its manifest's
    /// environment.
    private func recorder(_ identifier: String, _ environment: [String: String] = [:], maxAttempts: Int? = nil) -> T.BundleSpec {
        var spec = T.BundleSpec(identifier, executable: "serve_recorder.py")
        spec.support = []
        spec.environment = environment
        // Its records go to files in the scratch directory: made here, and declared writable (the
        // sandbox lets it write nothing else).
        for key in ["FIXTURE_RECORD", "FIXTURE_TIMELINE"] {
            guard let path = environment[key] else { continue }
            if !FileManager.default.fileExists(atPath: path) { _ = FileManager.default.createFile(atPath: path, contents: nil) }
            spec.sandboxWrite.append(path)
        }
        spec.maxAttempts = maxAttempts
        return spec
    }

    @discardableResult
    private func makeBundle(_ spec: T.BundleSpec, in root: String? = nil, manifest extra: [(String, JSONValue)] = []) throws -> String {
        let directory = try T.makeBundle(spec, in: root ?? extensionsDirectory)
        if !extra.isEmpty { try editManifest(directory) { $0 + extra } }
        return directory
    }

    /// Rewrites a bundle's manifest.json atomically (a new file renamed over the old one), so serve
    /// never reads half a manifest.
    private func editManifest(_ directory: String, _ change: ([(String, JSONValue)]) -> [(String, JSONValue)]) throws {
        let path = "\(directory)/manifest.json"
        guard case .object(let members) = try JSONParser.parse(text: T.read(path) ?? "") else {
            throw WaitFailure("\(path) is not a JSON object")
        }
        let temporary = "\(directory)/.manifest.json.new"
        try T.write(JSONWriter.string(.object(change(members))), to: temporary)
        XCTAssertEqual(rename(temporary, path), 0, "rename: errno \(errno)")
    }

    /// Makes a bundle outside the search path, then moves it in with one rename (as a package
    /// manager or `cp -r` to a temporary name and `mv` would).
    private func moveBundleIn(_ spec: T.BundleSpec, to root: String? = nil, manifest extra: [(String, JSONValue)] = []) throws {
        let staged = try makeBundle(spec, in: "\(scratch)/staging", manifest: extra)
        let target = "\(root ?? extensionsDirectory)/\(spec.identifier)"
        XCTAssertEqual(rename(staged, target), 0, "rename \(staged) → \(target): errno \(errno)")
    }

    // MARK: Fixture records

    /// One line of a recorder's FIXTURE_RECORD file.
    private struct Received: Equatable, CustomStringConvertible {
        var method: String
        var reason: String
        var identifiers: [String]
        var time: Double
        var description: String { "\(method) \(reason) \(identifiers.isEmpty ? "-" : identifiers.joined(separator: ","))" }
    }

    private func received(_ path: String) -> [Received] {
        (T.read(path) ?? "").split(separator: "\n").compactMap { line in
            let fields = line.split(separator: " ").map(String.init)
            guard fields.count == 4 else { return nil }
            return Received(method: fields[0], reason: fields[1], identifiers: fields[2] == "-" ? [] : fields[2].split(separator: ",").map(String.init),
                            time: Double(fields[3]) ?? 0)
        }
    }

    // MARK: 1. New bundles

    func testANewBundleIsIndexedWithoutAnyCommand() throws {
        let server = try startServe()
        var spec = T.BundleSpec("com.test.newcomer", executable: "well_behaved.py")
        spec.arguments = ["3"]
        try moveBundleIn(spec)

        let ids = try eventually("the new bundle's items") { () -> [String]? in
            let ids = try liveIdentifiers("com.test.newcomer")
            return ids.count == 3 ? ids : nil
        }
        XCTAssertEqual(ids, ["item.1", "item.2", "item.3"])
        let store = try IndexStore.open(path: indexPath)
        XCTAssertEqual(try store.search("gadget", bundle: "com.test.newcomer").count, 3)
        XCTAssertEqual(try store.lastRun(bundle: "com.test.newcomer")?.reason, .bundleChanged)
        XCTAssertEqual(try store.bundleRecords().first { $0.key == "com.test.newcomer" }?.version, "1.0.0")
        XCTAssertTrue(log(server).contains("com.test.newcomer: new bundle 1.0.0"), log(server))
    }

    // MARK: 2. Expiring items

    func testAnItemAboutToExpireIsRefreshedBeforeItExpires() throws {
        let record = "\(scratch)/expiring.record"
        let expiresIn = 12.0
        try makeBundle(recorder("com.test.expiring", ["FIXTURE_RECORD": record, "FIXTURE_COUNT": "1", "FIXTURE_EXPIRES_IN": "\(Int(expiresIn))"]),
                       manifest: [("refreshBeforeExpirySeconds", .integer(60))])
        let server = try startServe()
        let expiry = try eventually("the item indexed") { try withStore { try $0.items(bundle: "com.test.expiring").first?.expiration } }

        // The refresh should come well before the item expires; the item's expiration is the
        // natural end of the wait.
        let refreshedInTime = try eventually("a reindexItems (expiring), or the item's expiration", timeout: expiresIn + deadline) { () -> Bool? in
            if received(record).contains(where: { $0.method == "reindexItems" }) { return true }
            return Clock.now() > expiry + 1 ? false : nil
        }
        let requests = received(record)
        guard refreshedInTime else {
            XCTFail("""
                Regression (was a bug): an item indexed after a tick of serve, whose expiration fell before the bundle's \
                expiry checkpoint, was never refreshed. Sources/ReindexHost/Scheduler/Server.swift refreshExpiring(now:) asks \
                each tick for the live items expiring within refreshBeforeExpirySeconds whose refresh was not yet asked for \
                that expiration (items.refresh_asked_for; Sources/ReindexStore/SQLite/IndexStore+Bundles.swift expiringItems). \
                Input: refreshBeforeExpirySeconds 60, an item expiring \(Int(expiresIn)) s after it was put. Expected a \
                reindexItems (expiring) for rec.1 before it expired (\(RFC3339.format(expiry))); got none (the fixture was \
                asked \(requests.map(\.description))), \
                so the item simply expired.
                """)
            return
        }
        XCTAssertEqual(requests.first?.description, "reindexAll indexLost -", "\(requests)")
        let refresh = try XCTUnwrap(requests.first { $0.method == "reindexItems" })
        XCTAssertEqual(refresh.reason, "expiring")
        XCTAssertEqual(refresh.identifiers, ["rec.1"])
        XCTAssertLessThan(refresh.time, expiry, "the refresh came before the item expired")

        let refreshed = try eventually("the refreshed item") { () -> SearchResult? in
            try withStore { try $0.items(bundle: "com.test.expiring").first { $0.title == "Refreshed rec.1" } }
        }
        // The refresh re-puts the item with a fresh expiration (in whole seconds, so possibly the same).
        XCTAssertGreaterThanOrEqual(try XCTUnwrap(refreshed.expiration), expiry, "the refreshed item does not expire sooner")
        XCTAssertTrue(log(server).contains("queueing reindexItems (expiring)"), log(server))
    }

    // MARK: 3. A lost index

    func testADeletedIndexIsRebuiltFromEveryBundle() throws {
        try makeBundle(recorder("com.test.lost.one", ["FIXTURE_PREFIX": "Lost"]))
        var spec = T.BundleSpec("com.test.lost.two", executable: "well_behaved.py")
        spec.arguments = ["2"]
        try makeBundle(spec)
        let server = try startServe()
        try eventually("both bundles indexed") { () -> Bool? in
            try liveIdentifiers("com.test.lost.one").count == 2 && liveIdentifiers("com.test.lost.two").count == 2 ? true : nil
        }

        // Deleted underneath serve, as `rm index.sqlite` would.
        XCTAssertEqual(unlink(indexPath), 0)
        // Only look once serve has noticed, so this test's own connection cannot create the file first.
        try eventually("serve to notice the lost index") { log(server).contains("the index was lost") ? true : nil }

        try eventually("every bundle rebuilt with reindexAll (indexLost)") { () -> Bool? in
            try withStore { store -> Bool? in
                for bundle in ["com.test.lost.one", "com.test.lost.two"] {
                    guard try store.lastRun(bundle: bundle)?.reason == .indexLost, try store.itemCount(bundle: bundle) == 2 else { return nil }
                }
                return true
            }
        }
        let store = try IndexStore.open(path: indexPath)
        XCTAssertEqual(try T.identifiers(store, bundle: "com.test.lost.one"), ["rec.1", "rec.2"])
        XCTAssertEqual(try T.identifiers(store, bundle: "com.test.lost.two"), ["item.1", "item.2"])
        XCTAssertEqual(try store.search("lost record").count, 2)
        XCTAssertEqual(try store.integrityCheck(), [])
        XCTAssertEqual(try store.lastRun(bundle: "com.test.lost.one")?.outcome, "acknowledged")
        XCTAssertTrue(server.process.isRunning)
    }

    func testACorruptIndexAtStartIsMovedAsideAndRebuiltWithIndexLost() throws {
        let record = "\(scratch)/corrupt.record"
        try makeBundle(recorder("com.test.corrupt.one", ["FIXTURE_RECORD": record]))
        var spec = T.BundleSpec("com.test.corrupt.two", executable: "well_behaved.py")
        spec.arguments = ["2"]
        try makeBundle(spec)
        // An index of ours whose header was overwritten (a file that is not an index is refused instead).
        do { _ = try IndexStore.open(path: indexPath) }
        let handle = try XCTUnwrap(FileHandle(forWritingAtPath: indexPath))
        try handle.write(contentsOf: Data("this is not a SQLite database, only garbage. ".utf8))
        try handle.close()

        let server = try startServe()
        try eventually("both bundles indexed") { () -> Bool? in
            try liveIdentifiers("com.test.corrupt.one").count == 2 && liveIdentifiers("com.test.corrupt.two").count == 2 ? true : nil
        }
        let listing = try FileManager.default.contentsOfDirectory(atPath: indexDirectory)
        let kept = listing.filter { $0.hasPrefix("index.sqlite.corrupt-") }
        XCTAssertEqual(kept.count, 1, "the corrupt file is kept aside: \(listing)")
        if let aside = kept.first {
            XCTAssertEqual(T.read("\(indexDirectory)/\(aside)")?.hasPrefix("this is not a SQLite database"), true)
        }
        XCTAssertTrue(log(server).contains("the index was lost"), log(server))

        let store = try IndexStore.open(path: indexPath)
        XCTAssertEqual(try store.integrityCheck(), [])
        let reasons = try ["com.test.corrupt.one", "com.test.corrupt.two"].map { try store.lastRun(bundle: $0)?.reason.rawValue ?? "none" }
        let asked = received(record).map(\.description)
        guard reasons == ["indexLost", "indexLost"] else {
            XCTFail("""
                Regression (was a bug): Sources/ReindexHost/Scheduler/Server.swift run(): with a corrupt (or missing) index at start, \
                scan() queues reindexAll (bundleChanged) for every bundle (the fresh index has no bundle records) \
                before queueIndexLost() runs, and enqueue() coalesces the indexLost request into that pending one, \
                so bundles are asked with reason bundleChanged, not indexLost (the log even says "every bundle gets \
                reindexAll (indexLost)"). Expected last-run reasons [indexLost, indexLost], got \(reasons); \
                the recorder was asked \(asked)
                """)
            return
        }
        XCTAssertEqual(asked, ["reindexAll indexLost -"])
    }

    // MARK: 4. Retries and failure

    func testACrashingExtensionIsRetriedWithGrowingDelaysThenFailsWhileAnotherIsServed() throws {
        var crasher = T.BundleSpec("com.test.crasher", executable: "crash_mid_stream.sh")
        crasher.maxAttempts = 3
        try makeBundle(crasher)
        var healthy = T.BundleSpec("com.test.healthy", executable: "well_behaved.py")
        healthy.arguments = ["3"]
        try makeBundle(healthy)
        let retryBase = 1.5
        let server = try startServe(retryBase: "\(retryBase)")

        // Watch the crasher's request from the start: each failed attempt puts it back with a
        // longer delay. Meanwhile the healthy bundle is indexed, and takes work another process
        // queues for it (`reindex run --queue`) without serve being restarted.
        let store = try IndexStore.open(path: indexPath)
        var delays: [Int: Double] = [:]
        var attemptsSeen: [Int] = []
        var failed: QueuedRequest?
        var queueCommand: T.RunningCommand?
        var refreshed = false
        try eventually("the crasher's request to fail for good and the healthy bundle's queued request to be done") { () -> Bool? in
            for request in try store.requests(bundle: "com.test.crasher", state: .pending) + store.requests(bundle: "com.test.crasher", state: .running) {
                if attemptsSeen.last != request.attempts { attemptsSeen.append(request.attempts) }
                if request.state == .pending && request.attempts > 0 { delays[request.attempts] = request.nextAttempt - request.updated }
            }
            if failed == nil { failed = try store.requests(bundle: "com.test.crasher", state: .failed).first }
            if queueCommand == nil, try store.itemCount(bundle: "com.test.healthy") == 3 {
                queueCommand = try T.RunningCommand(
                    arguments: ["--index", indexPath, "--extensions-path", extensionsDirectory, "run", "com.test.healthy", "--ids", "item.2", "--queue"],
                    environment: T.commandEnvironment(scratch: scratch), scratch: scratch, feedsStdin: false)
            }
            if !refreshed { refreshed = try store.search("refreshed", bundle: "com.test.healthy").map(\.uniqueIdentifier) == ["item.2"] }
            return failed != nil && refreshed ? true : nil
        }
        let queued = try XCTUnwrap(queueCommand).finish(timeout: deadline)
        XCTAssertEqual(queued.status, 0, "\(queued)")
        XCTAssertEqual(try T.identifiers(store, bundle: "com.test.healthy"), ["item.1", "item.2", "item.3"])

        let request = try XCTUnwrap(failed)
        XCTAssertEqual(request.attempts, 3)
        XCTAssertEqual(request.kind, .reindexAll)
        XCTAssertEqual(attemptsSeen, attemptsSeen.sorted(), "attempts only grow: \(attemptsSeen)")
        XCTAssertEqual(delays.keys.sorted(), [1, 2], "a pending retry after each of the first two attempts: \(delays)")
        XCTAssertEqual(delays[1] ?? 0, retryBase, accuracy: 0.01, "\(delays)")
        XCTAssertEqual(delays[2] ?? 0, 2 * retryBase, accuracy: 0.01, "\(delays)")
        XCTAssertEqual(try store.search("halfway").count, 0, "nothing of the crashed attempts is visible")

        // The request's state is committed by the worker just before serve's loop logs it.
        try eventually("serve to log the final failure") { log(server).contains("failed for good after 3 attempt(s)") ? true : nil }
        let text = log(server)
        let retries = text.split(separator: "\n").compactMap { line -> (Int, Double)? in
            guard line.contains("com.test.crasher"), let range = line.range(of: " — retry ") else { return nil }
            let words = line[range.upperBound...].split(separator: " ")  // N of M in S s
            guard words.count >= 5, let n = Int(words[0]), let s = Double(words[4]) else { return nil }
            return (n, s)
        }
        XCTAssertEqual(retries.map(\.0), [2, 3], text)
        XCTAssertLessThan(retries.first?.1 ?? 0, retries.last?.1 ?? 0, "the announced delays grow: \(text)")
        XCTAssertTrue(text.contains("com.test.crasher: reindexAll (indexLost) crashed"), text)
        XCTAssertTrue(text.contains("failed for good after 3 attempt(s)"), text)

        let status = try json(try reindex(["--json", "status"]))
        let bundles = status["bundles"]?.arrayValue ?? []
        let crashed = try XCTUnwrap(bundles.first { $0["bundleIdentifier"]?.stringValue == "com.test.crasher" }, "\(status)")
        XCTAssertEqual(crashed["failed"], .integer(1), "\(crashed)")
        XCTAssertEqual(crashed["pending"], .integer(0), "\(crashed)")
        let reason = try XCTUnwrap(crashed["failures"]?.arrayValue?.first?.stringValue, "\(crashed)")
        XCTAssertEqual(reason, request.lastError)
        XCTAssertTrue(reason.contains("signal") || reason.contains("SEGV"), reason)
        let served = try XCTUnwrap(bundles.first { $0["bundleIdentifier"]?.stringValue == "com.test.healthy" }, "\(status)")
        XCTAssertEqual(served["items"], .integer(3), "\(served)")
        XCTAssertEqual(served["failed"], .integer(0), "\(served)")
        XCTAssertTrue(server.process.isRunning)
    }

    // MARK: 5. Changed bundles

    func testAVersionBumpIsReindexedWithBundleChanged() throws {
        let record = "\(scratch)/bump.record"
        let directory = try makeBundle(recorder("com.test.bump", ["FIXTURE_RECORD": record, "FIXTURE_PREFIX": "Before"]))
        let server = try startServe()
        try eventually("the first reindexAll") { try withStore { try $0.search("before", bundle: "com.test.bump").count == 2 ? true : nil } }

        try editManifest(directory) { members in
            members.map { key, value -> (String, JSONValue) in
                switch key {
                case "version": return (key, "2.0.0")
                case "environment": return (key, .object([("FIXTURE_RECORD", .string(record)), ("FIXTURE_PREFIX", "After")]))
                default: return (key, value)
                }
            }
        }
        try eventually("the new version's items") { try withStore { try $0.search("after", bundle: "com.test.bump").count == 2 ? true : nil } }
        XCTAssertEqual(received(record).map(\.description), ["reindexAll indexLost -", "reindexAll bundleChanged -"])
        let store = try IndexStore.open(path: indexPath)
        XCTAssertEqual(try store.search("before", bundle: "com.test.bump").count, 0, "the old version's items are replaced")
        XCTAssertEqual(try store.bundleRecords().first { $0.key == "com.test.bump" }?.version, "2.0.0")
        XCTAssertEqual(try store.lastRun(bundle: "com.test.bump")?.reason, .bundleChanged)
        XCTAssertTrue(log(server).contains("com.test.bump: version 1.0.0 → 2.0.0; queueing reindexAll (bundleChanged)"), log(server))
    }

    // MARK: 6. Removed bundles

    func testARemovedBundlesItemsGoAfterTheGracePeriod() throws {
        let directory = try makeBundle(recorder("com.test.leaving", ["FIXTURE_PREFIX": "Leaving"]))
        try makeBundle(recorder("com.test.staying", ["FIXTURE_PREFIX": "Staying"]))
        let server = try startServe(removalGrace: "2")
        try eventually("both bundles indexed") { () -> Bool? in
            try liveIdentifiers("com.test.leaving").count == 2 && liveIdentifiers("com.test.staying").count == 2 ? true : nil
        }

        try FileManager.default.removeItem(atPath: directory)
        try eventually("the removed bundle's items to go") { () -> Bool? in
            try withStore { store -> Bool? in
                try store.itemCount(bundle: "com.test.leaving") == 0 && !store.bundleRecords().contains { $0.key == "com.test.leaving" } ? true : nil
            }
        }
        let text = log(server)
        XCTAssertTrue(text.contains("com.test.leaving: missing from the search path"), text)
        XCTAssertTrue(text.contains("removed its 2 item(s)"), text)
        let store = try IndexStore.open(path: indexPath)
        XCTAssertEqual(try store.search("leaving").count, 0)
        XCTAssertEqual(try T.identifiers(store, bundle: "com.test.staying"), ["rec.1", "rec.2"], "the other bundle keeps its items")
    }

    func testABundleBrieflyAbsentKeepsItsItems() throws {
        let record = "\(scratch)/absent.record"
        let directory = try makeBundle(recorder("com.test.absent", ["FIXTURE_RECORD": record, "FIXTURE_PREFIX": "Wandering"]))
        let server = try startServe(removalGrace: "3600")
        try eventually("the bundle indexed") { try liveIdentifiers("com.test.absent").count == 2 ? true : nil }

        let away = "\(scratch)/staging/com.test.absent"
        XCTAssertEqual(rename(directory, away), 0)
        try eventually("serve to notice the bundle is missing") { () -> Bool? in
            try withStore { try $0.bundleRecords().first { $0.key == "com.test.absent" }?.missingSince != nil ? true : nil }
        }
        XCTAssertEqual(try liveIdentifiers("com.test.absent"), ["rec.1", "rec.2"], "items are kept during the grace period")
        XCTAssertEqual(rename(away, directory), 0)
        try eventually("serve to notice the bundle is back") { () -> Bool? in
            try withStore { try $0.bundleRecords().first { $0.key == "com.test.absent" }.map { $0.missingSince == nil ? true : nil } ?? nil }
        }
        XCTAssertEqual(try liveIdentifiers("com.test.absent"), ["rec.1", "rec.2"])
        XCTAssertTrue(log(server).contains("com.test.absent: back on the search path; its items are kept"), log(server))
        XCTAssertEqual(received(record).map(\.description), ["reindexAll indexLost -"], "an unchanged bundle is not asked again")
    }

    // MARK: 7. Stopping

    func testSIGTERMDuringALongReindexAllKeepsThePreviousItemsAndTheRequest() throws {
        let record = "\(scratch)/slow.record"
        let slowFlag = "\(scratch)/slow"
        let timeline = "\(scratch)/timeline"
        try makeBundle(recorder("com.test.slow", ["FIXTURE_RECORD": record, "FIXTURE_PREFIX": "Previous", "FIXTURE_TIMELINE": timeline,
                                                  "FIXTURE_SLOW_FILE": slowFlag, "FIXTURE_SLOW_DELAY": "0.3"]))
        let server = try startServe()
        try eventually("the first reindexAll") { try liveIdentifiers("com.test.slow") == ["rec.1", "rec.2"] ? true : nil }

        // From now on reindexAll is slow; queue one for serve and wait until it is putting items.
        try T.write("", to: slowFlag)
        let queued = try reindex(["run", "com.test.slow", "--queue"])
        XCTAssertEqual(queued.status, 0, "\(queued)")
        let extensionLog = "\(indexDirectory)/logs/com.test.slow.log"
        // Several puts in: the request's staged writes have been open for longer than one turn of
        // serve's loop (a second).
        try eventually("the slow reindexAll to be under way") { (T.read(extensionLog) ?? "").contains("put slow.5") ? true : nil }

        kill(server.process.processIdentifier, SIGTERM)
        let stopBy = Date().addingTimeInterval(deadline)
        while server.process.isRunning && Date() < stopBy { usleep(50_000) }
        if server.process.isRunning {
            let text = log(server)
            kill(server.process.processIdentifier, SIGKILL)
            for process in intervals(timeline) { kill(-pid_t(process.pid), SIGKILL) }
            _ = server.finish(timeout: deadline)
            servers.removeAll { $0 === server }
            guard text.contains("stopping:") else {
                XCTFail("""
                    Regression (was a bug): serve does not notice SIGTERM while a request streams items. A request's staged writes hold \
                    a write transaction from its first operation until commit/acknowledgement \
                    (Sources/ReindexStore/SQLite/StagedWrites.swift begin(): BEGIN IMMEDIATE), and every turn of serve's \
                    loop writes on the main thread (Sources/ReindexHost/Scheduler/Server.swift tick(): scan() → \
                    IndexStore.recordSeen, refreshExpiring() → markRefreshAsked), so the main thread waits in SQLite's \
                    busy handler for the 60 s busy timeout, twice, before it polls the signal descriptor. Input: a \
                    reindexAll putting one item every 0.3 s, SIGTERM after 5 puts. Expected: "stopping", $/cancel, \
                    exit 0 within seconds. Actual: nothing logged and no $/cancel within \(Int(deadline)) s (by hand: \
                    "database is locked" errors at +60 s and +120 s, then "stopping"). The same stall holds up \
                    dispatching other bundles and rescans during any long request. serve's last log line: \
                    \(text.split(separator: "\n").last ?? "")
                    """)
                return
            }
            XCTFail("serve logged that it was stopping but did not exit within \(Int(deadline)) s: \(text)")
            return
        }
        let result = server.finish(timeout: deadline)
        XCTAssertFalse(result.signaled, "\(result)")
        XCTAssertEqual(result.status, 0, "\(result)")
        XCTAssertTrue(result.stderr.contains("stopping: no new work; cancelling 1 running request(s)"), result.stderr)
        let processes = intervals(timeline)
        XCTAssertEqual(processes.count, 2, "\(processes)")
        for process in processes {
            try eventually("extension pid \(process.pid) to be gone") { T.isNotRunning(pid_t(process.pid)) ? true : nil }
        }

        let asked = received(record)
        XCTAssertEqual(asked.map(\.method), ["reindexAll", "reindexAll", "$/cancel"], "\(asked)")
        XCTAssertEqual(asked.dropFirst().first?.reason, "forced")
        let store = try IndexStore.open(path: indexPath)
        XCTAssertEqual(try T.identifiers(store, bundle: "com.test.slow"), ["rec.1", "rec.2"], "the previous items stay")
        XCTAssertEqual(try store.search("previous").count, 2)
        XCTAssertEqual(try store.search("slow record").count, 0, "nothing of the cancelled reindexAll is visible")
        let pending = try store.requests(bundle: "com.test.slow", state: .pending)
        XCTAssertEqual(pending.map(\.kind), [.reindexAll], "the request is back in the queue")
        XCTAssertEqual(pending.first?.reason, .forced)
        XCTAssertEqual(pending.first?.attempts, 0, "a cancelled attempt does not count")
        XCTAssertEqual(try store.requests(bundle: "com.test.slow", state: .running), [])
        XCTAssertEqual(try store.requests(bundle: "com.test.slow", state: .failed), [])
    }

    // MARK: 8. One serve per index

    func testASecondServeOnTheSameIndexRefuses() throws {
        let first = try startServe()
        let second = try reindex(["serve", "--rescan", "1"], extensionsPath: "\(scratch)/staging")
        XCTAssertNotEqual(second.status, 0, "\(second)")
        XCTAssertFalse(second.timedOut, "\(second)")
        XCTAssertEqual(second.status, 64, "\(second)")
        XCTAssertTrue(second.stderr.hasPrefix("error: "), second.stderr)
        XCTAssertTrue(second.stderr.contains("another reindex serve (pid \(first.process.processIdentifier)) is already serving the index \(indexPath)"), second.stderr)
        XCTAssertTrue(first.process.isRunning, "the first serve goes on")
    }

    // MARK: 9. SIGHUP

    func testSIGHUPRescansTheSearchPath() throws {
        // The search-path directory does not exist yet, so inotify cannot watch it, and the
        // periodic rescan is an hour away: only SIGHUP can make serve look again.
        let later = "\(scratch)/later"
        let server = try startServe(rescan: "3600", extensionsPath: later)
        XCTAssertTrue(log(server).contains("search path: \(later) (missing)"), log(server))
        try FileManager.default.createDirectory(atPath: later, withIntermediateDirectories: true)
        try moveBundleIn(recorder("com.test.hangup", ["FIXTURE_PREFIX": "Hangup"]), to: later)

        kill(server.process.processIdentifier, SIGHUP)
        try eventually("the bundle found by the rescan") { try liveIdentifiers("com.test.hangup") == ["rec.1", "rec.2"] ? true : nil }
        XCTAssertTrue(server.process.isRunning, "SIGHUP does not stop serve")
        XCTAssertTrue(log(server).contains("com.test.hangup: new bundle 1.0.0"), log(server))
    }

    // MARK: 10. Concurrency

    /// One process's lifetime, from the fixture's timeline file.
    private struct Interval {
        var pid: Int
        var bundle: String
        var start: Double
        var end: Double?
    }

    private func intervals(_ path: String) -> [Interval] {
        var byPID: [Int: Interval] = [:]
        for line in (T.read(path) ?? "").split(separator: "\n") {
            let fields = line.split(separator: " ").map(String.init)
            guard fields.count == 4, let pid = Int(fields[1]), let time = Double(fields[3]) else { continue }
            if fields[0] == "start" { byPID[pid] = Interval(pid: pid, bundle: fields[2], start: time) } else { byPID[pid]?.end = time }
        }
        return byPID.values.sorted { $0.start < $1.start }
    }

    /// Pairs of intervals that overlap.
    private func overlaps(_ list: [Interval]) -> [String] {
        var found: [String] = []
        for (i, a) in list.enumerated() {
            for b in list[(i + 1)...] where b.start < (a.end ?? .infinity) && a.start < (b.end ?? .infinity) {
                found.append("\(a.bundle) pid \(a.pid) and \(b.bundle) pid \(b.pid)")
            }
        }
        return found
    }

    func testConcurrencyOneNeverRunsTwoExtensionsAtOnce() throws {
        let timeline = "\(scratch)/timeline"
        let bundles = ["com.test.one.a", "com.test.one.b", "com.test.one.c"]
        for bundle in bundles { try makeBundle(recorder(bundle, ["FIXTURE_TIMELINE": timeline, "FIXTURE_HOLD": "0.3"])) }
        try startServe(concurrency: 1)
        try eventually("three reindexAll") { () -> Bool? in
            let done = intervals(timeline).filter { $0.end != nil }
            return done.count == 3 ? true : nil
        }
        // More work for every bundle, queued while serve is running them one at a time.
        for bundle in bundles {
            let queued = try reindex(["run", bundle, "--ids", "rec.1", "--queue"])
            XCTAssertEqual(queued.status, 0, "\(queued)")
        }
        try eventually("every refresh done") { () -> Bool? in
            try withStore { store -> Bool? in
                let refreshed = try bundles.map { try store.search("refreshed", bundle: $0).count }
                return refreshed == [1, 1, 1] ? true : nil
            }
        }
        // An extension writes its end line once the host has closed its input, after the
        // acknowledgement made its items searchable: wait for the last one to exit.
        let all = try eventually("every extension exited") { () -> [Interval]? in
            let all = intervals(timeline)
            return all.count == 6 && all.allSatisfy({ $0.end != nil }) ? all : nil
        }
        XCTAssertEqual(overlaps(all), [], "with --concurrency 1 no two extensions run at once")
    }

    func testOneBundleNeverRunsTwiceAtOnce() throws {
        let timeline = "\(scratch)/timeline"
        let record = "\(scratch)/twice.record"
        try makeBundle(recorder("com.test.twice.a", ["FIXTURE_TIMELINE": timeline, "FIXTURE_RECORD": record, "FIXTURE_HOLD": "1"]))
        try makeBundle(recorder("com.test.twice.b", ["FIXTURE_TIMELINE": timeline, "FIXTURE_HOLD": "1"]))
        try startServe(concurrency: 3)
        // While A's reindexAll runs, queue a reindexItems for A: a free slot must not start it.
        try eventually("A's reindexAll under way") { received(record).isEmpty ? nil : true }
        let queued = try reindex(["run", "com.test.twice.a", "--ids", "rec.2", "--queue"])
        XCTAssertEqual(queued.status, 0, "\(queued)")
        try eventually("A's reindexItems done") { () -> Bool? in
            try withStore { try $0.search("refreshed", bundle: "com.test.twice.a").count == 1 ? true : nil }
        }
        try eventually("every extension exited") { () -> Bool? in
            let all = intervals(timeline)
            return all.count == 3 && all.allSatisfy { $0.end != nil } ? true : nil
        }
        XCTAssertEqual(received(record).map(\.description), ["reindexAll indexLost -", "reindexItems forced rec.2"])
        let ofA = intervals(timeline).filter { $0.bundle == "com.test.twice.a" }
        XCTAssertEqual(ofA.count, 2, "\(intervals(timeline))")
        XCTAssertEqual(overlaps(ofA), [], "never two processes of one bundle at once")
    }
}
