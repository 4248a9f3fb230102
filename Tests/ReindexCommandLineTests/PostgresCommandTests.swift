import Foundation
import ReindexHost
@testable import ReindexStore
import ReindexTestSupport
import ReindexProtocol
import XCTest
#if canImport(Glibc)
import Glibc
#endif

/// The `reindex` command and `reindex serve` workers on a PostgreSQL index, as real processes
/// against the real server the tests start: selection by connection string, password masking,
/// the exit codes of the faults, and the fleet sharing one queue. Tests only wait for conditions.
final class PostgresCommandTests: XCTestCase, @unchecked Sendable {
    private typealias T = TestSupport
    private var scratch = ""
    private var server: PostgresServer!
    private var schema = ""
    private var servers: [T.RunningCommand] = []
    private var extensions: String { "\(scratch)/extensions" }
    private let deadline = 60.0

    override func setUpWithError() throws {
        scratch = try T.makeScratchDirectory(for: self)
        server = try PostgresServer.shared()
        schema = server.freshSchema("cmd")
        try FileManager.default.createDirectory(atPath: extensions, withIntermediateDirectories: true)
        addTeardownBlock { [self] in
            for serve in servers where serve.process.isRunning {
                kill(serve.process.processIdentifier, SIGKILL)
                serve.process.waitUntilExit()
            }
        }
    }

    /// A URI with a password (the test server trusts its socket, so libpq sends it unused).
    private var index: String {
        "postgresql://postgres:s3cret-pw@\(server.socketDirectory.replacingOccurrences(of: "/", with: "%2F")):\(server.port)/postgres"
    }

    private func environment(_ extra: [String: String] = [:]) -> [String: String] {
        T.commandEnvironment(scratch: scratch, extra: ["REINDEX_PG_SCHEMA": schema].merging(extra) { _, b in b })
    }

    private func reindex(_ arguments: [String], _ extra: [String: String] = [:]) throws -> T.CommandResult {
        try T.runReindex(["--index", index, "--extensions-path", extensions] + arguments, scratch: scratch, environment: environment(extra), timeout: deadline)
    }

    private func bundle(_ identifier: String, _ executable: String, arguments: [String] = [], environment: [String: String] = [:], maxAttempts: Int? = nil) throws {
        var spec = T.BundleSpec(identifier, executable: executable)
        spec.arguments = arguments
        spec.environment = environment
        spec.maxAttempts = maxAttempts
        spec.sandbox = .bool(false)
        try T.makeBundle(spec, in: extensions)
    }

    private func startServe(_ extra: [String: String] = [:]) throws -> T.RunningCommand {
        let serve = try T.RunningCommand(arguments: ["--index", index, "--extensions-path", extensions, "serve", "--rescan", "1", "--retry-base", "0.2"],
                                         environment: environment(extra), scratch: scratch, feedsStdin: false)
        servers.append(serve)
        try wait("serve to start") { (T.read(serve.stderrPath) ?? "").contains(" serve info: serving ") }
        return serve
    }

    private func wait(_ what: String, _ condition: () throws -> Bool) throws {
        let end = Date().addingTimeInterval(deadline)
        while Date() < end {
            if try condition() { return }
            usleep(50_000)
        }
        XCTFail("timed out waiting for \(what)")
        throw XCTSkip("gave up")
    }

    private func store() throws -> PostgresStore {
        try PostgresStore.open(try PostgresLocation(server.connectionString, environment: ["REINDEX_PG_SCHEMA": schema]))
    }

    func testRunSearchItemsStatusAndPathsWorkOnAPostgreSQLIndexAndNeverPrintThePassword() throws {
        try bundle("com.example.gadgets", "well_behaved.py", arguments: ["5", "2"])
        let run = try reindex(["run", "com.example.gadgets", "--json"])
        XCTAssertEqual(run.status, 0, "\(run)")
        XCTAssertTrue(run.stdout.contains("\"put\":5"), run.stdout)
        let search = try reindex(["search", "gadget ite", "--json"])
        XCTAssertEqual(search.status, 0, "\(search)")
        let results = try JSONParser.parse(text: search.stdout)["results"]?.arrayValue ?? []
        XCTAssertEqual(results.count, 5)
        let items = try reindex(["items", "com.example.gadgets", "--json"])
        XCTAssertEqual((try JSONParser.parse(text: items.stdout)["results"]?.arrayValue ?? []).count, 5)
        let status = try reindex(["status", "--json"])
        XCTAssertEqual(status.status, 0, "\(status)")
        let parsed = try JSONParser.parse(text: status.stdout)
        XCTAssertEqual(parsed["bundles"]?.arrayValue?.first?["items"], .integer(5))
        XCTAssertNotNil(parsed["workers"]?.arrayValue)
        let paths = try reindex(["paths", "--json"])
        for output in [run, search, items, status, paths] {
            XCTAssertFalse(output.stdout.contains("s3cret-pw") || output.stderr.contains("s3cret-pw"), "\(output)")
        }
        XCTAssertTrue(paths.stdout.contains("postgres:***@"), paths.stdout)
        let check = try reindex(["check"])
        XCTAssertEqual(check.status, 0, "check reads the PostgreSQL index too: \(check)")
        XCTAssertFalse(check.stdout.contains("s3cret-pw") || check.stderr.contains("s3cret-pw"), "\(check)")
    }

    func testPostgreSQLDownAtStartIsExit69NamingTheHostAndPort() throws {
        try bundle("com.example.gadgets", "well_behaved.py")
        for command in [["status"], ["run", "com.example.gadgets"], ["serve"]] {
            let result = try T.runReindex(["--index", "postgresql://ada:hidden@127.0.0.1:9/index", "--extensions-path", extensions] + command,
                                          scratch: scratch, environment: environment(), timeout: deadline)
            XCTAssertEqual(result.status, 69, "\(command): \(result)")
            XCTAssertTrue(result.stderr.hasPrefix("error: ") && result.stderr.contains("127.0.0.1 port 9"), result.stderr)
            XCTAssertFalse(result.stderr.contains("hidden"), result.stderr)
        }
    }

    func testAnInterruptedReindexAllResumesFromItsClientStateAndWasNeverHalfVisible() throws {
        try bundle("com.example.resume", "resume.py")
        let first = try reindex(["run", "com.example.resume"])
        XCTAssertEqual(first.status, 75, "\(first)")
        XCTAssertEqual(try store().itemCount(bundle: "com.example.resume"), 0, "committed batches of an unfinished reindexAll are invisible")
        let resumed = try reindex(["run", "com.example.resume", "--resume", "--json"])
        XCTAssertEqual(resumed.status, 0, "\(resumed)")
        XCTAssertEqual(try store().items(bundle: "com.example.resume").map(\.uniqueIdentifier), ["resume.1", "resume.2", "resume.3", "resume.4"])
    }

    func testACutConnectionFailsTheRequestWithExit75AndTheRetrySucceeds() throws {
        let ready = "\(scratch)/ready"
        try bundle("com.example.hold", "slow_resume.py", environment: ["FIXTURE_READY": ready])
        let run = try T.RunningCommand(arguments: ["--index", index, "--extensions-path", extensions, "run", "com.example.hold"],
                                       environment: environment(), scratch: scratch, feedsStdin: false)
        try wait("the first batch to be committed") { FileManager.default.fileExists(atPath: ready) }
        // Cut every connection of that reindex process, as a restart or a network cut would.
        let pid = run.process.processIdentifier
        let cut = try server.psql("SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity WHERE application_name LIKE '%:\(pid):%'")
        XCTAssertNotEqual(cut, "0")
        // The extension is still waiting; end it so the host notices on its next write.
        if let extensionPID = Int32((T.read(ready) ?? "").trimmingCharacters(in: .whitespacesAndNewlines)) { kill(extensionPID, SIGKILL) }
        let result = run.finish(timeout: deadline)
        XCTAssertEqual(result.status, 75, "\(result)")
        let states = try store().query("SELECT state || ': ' || coalesce(last_error, '') FROM requests").text(0, 0) ?? "-"
        let request = try XCTUnwrap(try store().requests(bundle: "com.example.hold", state: .pending).first, "a retry is queued: \(result) \(states)")
        XCTAssertEqual(request.clientState, Array("next=3".utf8).base64, "the committed batch survived the cut")
        XCTAssertEqual(try store().itemCount(bundle: "com.example.hold"), 0)
        let retry = try reindex(["run", "com.example.hold", "--resume"])
        XCTAssertEqual(retry.status, 0, "\(retry)")
        XCTAssertEqual(try store().items(bundle: "com.example.hold").map(\.uniqueIdentifier), ["slow.1", "slow.2", "slow.3", "slow.4"])
    }

    func testWorkersShareTheQueueRunEachRequestOnceAndShowInStatus() throws {
        let bundles = (1...6).map { "com.example.fleet\($0)" }
        for identifier in bundles { try bundle(identifier, "well_behaved.py", arguments: ["3"]) }
        let serves = [try startServe(), try startServe()]
        let probe = try store()
        try wait("both workers to register") { try probe.workers().count == 2 }
        try wait("the new bundles' first reindexAll") { try bundles.allSatisfy { try probe.itemCount(bundle: $0) == 3 } }
        for identifier in bundles {
            let queued = try reindex(["run", identifier, "--queue"])
            XCTAssertEqual(queued.status, 0, "\(queued)")
        }
        try wait("every queued request to be done") {
            try probe.query("SELECT count(*) FROM requests WHERE state <> 'done'").int(0, 0) == 0
                && probe.query("SELECT count(*) FROM requests").int(0, 0) == 12
        }
        let runsPerRequest = try probe.query("SELECT request_id, count(*) FROM runs WHERE outcome = 'acknowledged' GROUP BY request_id HAVING count(*) <> 1")
        XCTAssertEqual(runsPerRequest.rowCount, 0, "no request ran twice")
        let status = try reindex(["status", "--json"])
        let workers = try JSONParser.parse(text: status.stdout)["workers"]?.arrayValue ?? []
        XCTAssertEqual(workers.count, 2, status.stdout)
        XCTAssertEqual(Set(workers.compactMap { $0["pid"] }), Set(serves.map { JSONValue.integer(Int64($0.process.processIdentifier)) }))
        let logs = serves.map { T.read($0.stderrPath) ?? "" }
        XCTAssertTrue(logs.contains { $0.contains("woken by") }, "run --queue woke a worker through NOTIFY: \(logs)")
        for serve in serves { kill(serve.process.processIdentifier, SIGTERM) }
        for serve in serves { XCTAssertEqual(serve.finish(timeout: deadline).status, 0) }
        XCTAssertEqual(try probe.workers().count, 0, "stopped workers unregister")
    }

    func testAKilledWorkersRequestIsTakenOverAfterItsLeaseAndResumes() throws {
        let ready = "\(scratch)/ready"
        try bundle("com.example.slow", "slow_resume.py", environment: ["FIXTURE_READY": ready])
        let lease = ["REINDEX_PG_LEASE_SECONDS": "2"]
        let first = try startServe(lease)
        try wait("the first worker to commit a batch") { FileManager.default.fileExists(atPath: ready) }
        let probe = try store()
        let request = try XCTUnwrap(try probe.requests(bundle: "com.example.slow", state: .running).first)
        kill(first.process.processIdentifier, SIGKILL)
        first.process.waitUntilExit()
        if let extensionPID = Int32((T.read(ready) ?? "").trimmingCharacters(in: .whitespacesAndNewlines)) { kill(extensionPID, SIGKILL) }
        let second = try startServe(lease)
        try wait("the second worker to finish the request") { try probe.request(request.id)?.state == .done }
        XCTAssertEqual(try probe.items(bundle: "com.example.slow").map(\.uniqueIdentifier), ["slow.1", "slow.2", "slow.3", "slow.4"])
        XCTAssertEqual(try probe.request(request.id)?.attempts, 2)
        XCTAssertEqual(try probe.query("SELECT count(*) FROM runs WHERE request_id = $1 AND outcome = 'acknowledged'", [String(request.id)]).int(0, 0), 1)
        XCTAssertTrue((T.read(second.stderrPath) ?? "").contains("request \(request.id)"), T.read(second.stderrPath) ?? "")
    }

    func testAFrozenWorkerIsTakenOverAndWhatItSendsWhenItWakesIsNeverPublished() throws {
        let ready = "\(scratch)/ready", go = "\(scratch)/go"
        try bundle("com.example.frozen", "slow_resume.py", environment: ["FIXTURE_READY": ready, "FIXTURE_GO": go])
        let lease = ["REINDEX_PG_LEASE_SECONDS": "2"]
        let frozen = try startServe(lease)
        try wait("the first worker to commit a batch") { FileManager.default.fileExists(atPath: ready) }
        let probe = try store()
        let request = try XCTUnwrap(try probe.requests(bundle: "com.example.frozen", state: .running).first)
        // Frozen, as by a long pause or a VM migration: its session, its bundle lock and its
        // extension stay alive; only its lease stops being renewed.
        kill(frozen.process.processIdentifier, SIGSTOP)
        let other = try startServe(lease)
        try wait("the other worker to take the request over and finish it") { try probe.request(request.id)?.state == .done }
        XCTAssertEqual(try probe.request(request.id)?.attempts, 2)
        XCTAssertEqual(try probe.items(bundle: "com.example.frozen").map(\.uniqueIdentifier), ["slow.1", "slow.2", "slow.3", "slow.4"])

        // It wakes up: its extension acknowledges what it wrote while frozen.
        try T.write("", to: go)
        kill(frozen.process.processIdentifier, SIGCONT)
        try wait("the woken worker to give up the request") {
            (T.read(frozen.stderrPath) ?? "").contains("request \(request.id) is no longer this worker's")
        }
        XCTAssertEqual(try probe.items(bundle: "com.example.frozen").map(\.uniqueIdentifier), ["slow.1", "slow.2", "slow.3", "slow.4"],
                       "nothing the fenced worker sent is live")
        XCTAssertEqual(try probe.request(request.id)?.state, .done, "the fenced worker left the request's books alone")
        XCTAssertEqual(try probe.query("SELECT count(*) FROM runs WHERE request_id = $1 AND outcome = 'acknowledged'", [String(request.id)]).int(0, 0), 1)
        XCTAssertFalse((T.read(other.stderrPath) ?? "").contains("taken by another worker"), T.read(other.stderrPath) ?? "")
    }
}

extension Array where Element == UInt8 {
    var base64: String { Data(self).base64EncodedString() }
}
