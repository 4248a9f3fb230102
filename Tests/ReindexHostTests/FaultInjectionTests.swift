import Foundation
import ReindexSystem
import ReindexTestSupport
import Synchronization
import Testing

/// The fault-injection matrix: every way an extension can misbehave, each run end to end through
/// the built `reindex run` command (the real host, with the contract's shutdown graces) against
/// a real fixture process, on an index that already holds the bundle's previous item.
///
/// Every scenario is checked the same way — the exit code; the `error:` line naming the bundle
/// and what happened; the index (previous item intact and nothing of a failed request visible, or
/// exactly the new items); SQLite's integrity check; the request's state in `reindex status`; no
/// process of the bundle left running; the bundle's log bounded — plus what is particular to it.
/// Each scenario is a test case of its own, so one that fails does not hide the others. Each
/// prints one `fault-matrix:` table row, and the suite a summary line at its end;
/// `Scripts/reliability.sh` collects them into the table of `docs/RELIABILITY.md`.
///
/// The scenarios run one at a time (`.serialized`): each has its own scratch directory, but
/// several wait on the host's one-second timeouts, which a machine busy with the others' fixture
/// processes would stretch.
@Suite(.serialized, FaultMatrix.Summary())
struct FaultInjectionTests {
    typealias T = TestSupport

    /// What the index should hold for the bundle after the run.
    enum IndexAfter: Sendable {
        /// Only the previous item ("prev.1"): nothing of the request is visible.
        case unchanged
        /// Exactly these identifiers (the request's items replaced the previous one, or were added).
        case exactly([String])
    }

    /// What `reindex status` should say of the bundle's requests after the run.
    enum QueueAfter: String, Sendable {
        case done = "done"
        case retryQueued = "retry queued"
        case failed = "failed for good"
    }

    struct Scenario: Sendable, CustomTestStringConvertible {
        var name: String
        var spec: T.BundleSpec
        /// The request arguments after `run BUNDLE_ID` (default `--all`).
        var request: [String] = []
        var exit: Int32
        /// Phrases the error message must hold (besides the bundle identifier).
        var says: [String] = []
        var index: IndexAfter
        var queue: QueueAfter
        /// What the scenario checks beyond the common checks, in words, for the table.
        var checks: String = ""
        var extra: (@Sendable (Context) throws -> Void)? = nil
        /// The scenario's row number in the table (its place in `scenarios`, from 1).
        var number = 0

        var testDescription: String { name }
    }

    /// What a scenario's extra check gets.
    struct Context {
        var result: T.CommandResult
        var bundleDirectory: String
        var logText: String
        var run: ([String]) throws -> T.CommandResult
    }

    // MARK: The matrix

    static let scenarios: [Scenario] = {
        func spec(_ executable: String, _ arguments: [String] = [], configure: (inout T.BundleSpec) -> Void = { _ in }) -> T.BundleSpec {
            let name = executable.split(separator: ".").first.map(String.init)?.replacingOccurrences(of: "_", with: "-") ?? "fixture"
            var spec = T.BundleSpec("com.example.fault.\(name)", executable: executable)
            spec.arguments = arguments
            configure(&spec)
            return spec
        }
        let timeouts: (inout T.BundleSpec) -> Void = { $0.startupSeconds = 2; $0.idleSeconds = 1; $0.requestSeconds = 10 }
        let matrix: [Scenario] = [
            Scenario(name: "behaves well (control)", spec: spec("well_behaved.py", ["3"]), exit: 0,
                     index: .exactly(["item.1", "item.2", "item.3"]), queue: .done),
            Scenario(name: "crashes mid-stream (SIGSEGV)", spec: spec("crash_mid_stream.sh"), exit: 75,
                     says: ["crashed", "SIGSEGV", "before acknowledging", "a retry is queued", "crash_mid_stream: got a request; sending two items, then crashing"],
                     index: .unchanged, queue: .retryQueued, checks: "stderr tail in the message"),
            Scenario(name: "crashes on its last allowed attempt", spec: spec("crash_mid_stream.sh") { $0.maxAttempts = 1 }, exit: 75,
                     says: ["SIGSEGV"], index: .unchanged, queue: .failed, checks: "marked failed after retry.maxAttempts"),
            Scenario(name: "exits without acknowledging", spec: spec("exit_without_ack.py"), exit: 75,
                     says: ["exited with status 0", "before acknowledging"], index: .unchanged, queue: .retryQueued),
            Scenario(name: "refuses (error reply)", spec: spec("refuse.py"), exit: 75,
                     says: ["catalogue database unreachable", "refuse: the catalogue database is unreachable; refusing"],
                     index: .unchanged, queue: .retryQueued, checks: "its message recorded"),
            Scenario(name: "hangs after the handshake", spec: spec("hang.py", ["idle"], configure: timeouts), exit: 75,
                     says: ["idleSeconds (1 s)", "hang: hanging on request 1"], index: .unchanged, queue: .retryQueued),
            Scenario(name: "silent before initialize", spec: spec("hang.py", ["startup"]) { $0.startupSeconds = 1 }, exit: 75,
                     says: ["startupSeconds (1 s)", "initialize"], index: .unchanged, queue: .retryQueued),
            Scenario(name: "exits before initialize", spec: spec("exit_before_initialize.sh"), exit: 69,
                     says: ["exited with status 1", "before answering initialize"], index: .unchanged, queue: .retryQueued),
            Scenario(name: "cannot be executed (bad #! line)", spec: spec("bad_interpreter.sh"), exit: 69,
                     says: ["cannot execute"], index: .unchanged, queue: .retryQueued),
            Scenario(name: "speaks no common protocol version", spec: spec("version_mismatch.py"), exit: 69,
                     says: ["[2,3]", "[1]"], index: .unchanged, queue: .retryQueued, checks: "both version lists named"),
            Scenario(name: "prints to stdout before initialize", spec: spec("garbage_before_initialize.sh"), exit: 76,
                     says: ["protocol violation"], index: .unchanged, queue: .retryQueued),
            Scenario(name: "prints garbage mid-request", spec: spec("garbage_mid_request.py"), exit: 76,
                     says: ["protocol violation", "not valid JSON", "printing a debug line on stdout by mistake"], index: .unchanged, queue: .retryQueued),
            Scenario(name: "sends a 20 MiB line", spec: spec("huge_line.py"), exit: 76,
                     says: ["longer than \(16 << 20) bytes"], index: .unchanged, queue: .retryQueued),
            Scenario(name: "sends invalid UTF-8", spec: spec("invalid_utf8.py"), exit: 76,
                     says: ["UTF-8"], index: .unchanged, queue: .retryQueued),
            Scenario(name: "sends deeply nested JSON (100,000 levels)", spec: spec("nested_json.py"), exit: 76,
                     says: ["protocol violation", "nest"], index: .unchanged, queue: .retryQueued, checks: "the host's parser stops at its depth limit"),
            Scenario(name: "misspells index/put as index/add", spec: spec("method_typo.py", ["index/add"]), exit: 76,
                     says: ["unknown notification 'index/add'"], index: .unchanged, queue: .retryQueued,
                     checks: "a typo in the index namespace loses nothing"),
            Scenario(name: "sends an unknown batch/ request", spec: spec("method_typo.py", ["batch/commitAll", "request"]), exit: 76,
                     says: ["unknown request 'batch/commitAll'"], index: .unchanged, queue: .retryQueued),
            Scenario(name: "reports negative progress (-5 of 10)", spec: spec("bad_progress.py", ["-5", "10"]), exit: 76,
                     says: ["params.completed", "0 or more"], index: .unchanged, queue: .retryQueued, checks: "no crash on a count below zero"),
            Scenario(name: "reports progress of Int64.min", spec: spec("bad_progress.py", ["-9223372036854775808"]), exit: 76,
                     says: ["params.completed"], index: .unchanged, queue: .retryQueued),
            Scenario(name: "reports progress of Int64.max of 1", spec: spec("bad_progress.py", ["9223372036854775807", "1"]), exit: 0,
                     index: .exactly(["progress.1"]), queue: .done, checks: "a count past its total is shown as 100%"),
            Scenario(name: "operates outside a request", spec: spec("put_outside_request.py"), exit: 76,
                     says: ["no request was outstanding"], index: .unchanged, queue: .retryQueued),
            Scenario(name: "replies to an id the host never sent", spec: spec("unknown_reply.py"), exit: 76,
                     says: ["which the host never sent"], index: .unchanged, queue: .retryQueued),
            Scenario(name: "replies twice (one write)", spec: spec("duplicate_reply.py", ["same-write"]), exit: 0,
                     index: .exactly(["dup.1"]), queue: .done,
                     checks: "the first reply stands; the second is reported as a protocol violation") { context in
                #expect(context.result.stderr.contains("warning: com.example.fault.duplicate-reply: protocol violation: a reply to request 1"),
                        "\(context.result.stderr)")
                #expect(context.logText.contains("arrived after request 1 was acknowledged"), "\(context.logText)")
            },
            Scenario(name: "closes stdout but keeps running", spec: spec("close_stdout.sh"), exit: 76,
                     says: ["closed its stdout"], index: .unchanged, queue: .retryQueued),
            Scenario(name: "commits a batch with a 251-byte client state", spec: spec("client_state_size.py", ["251"]), exit: 75,
                     says: ["exited with status 3"], index: .unchanged, queue: .retryQueued,
                     checks: "the commit refused (-32602), nothing of it kept") { context in
                #expect(context.logText.contains("commit refused: clientState is 251 bytes decoded, at most 250"), "\(context.logText)")
            },
            Scenario(name: "ignores SIGTERM and end of input", spec: spec("ignore_sigterm.sh"), request: ["--ids", "stubborn.1"], exit: 0,
                     index: .exactly(["prev.1", "stubborn.1"]), queue: .done, checks: "SIGTERM after 5 s, SIGKILL 2 s later") { context in
                let term = try #require(context.logText.range(of: "sending SIGTERM"), "\(context.logText)")
                let kill = try #require(context.logText.range(of: "sending SIGKILL"), "\(context.logText)")
                #expect(term.lowerBound < kill.lowerBound)
            },
            Scenario(name: "leaves a grandchild holding its pipes", spec: spec("grandchild.sh"), request: ["--ids", "parent.1"], exit: 0,
                     index: .exactly(["parent.1", "prev.1"]), queue: .done, checks: "the grandchild is stopped"),
            Scenario(name: "crashes while a grandchild keeps stdout open", spec: spec("grandchild.sh", ["crash"]), exit: 75,
                     says: ["SIGSEGV", "before acknowledging"], index: .unchanged, queue: .retryQueued),
            Scenario(name: "forks and exits, leaving a child", spec: spec("fork_and_exit.sh"), request: ["--ids", "fork.1"], exit: 0,
                     index: .exactly(["fork.1", "prev.1"]), queue: .done, checks: "the left-over child is stopped") { context in
                try expectLeftoverStopped(context)
            },
            Scenario(name: "forks a child into a new session, and exits", spec: spec("fork_and_exit.sh", ["setsid"]), request: ["--ids", "fork.1"],
                     exit: 0, index: .exactly(["fork.1", "prev.1"]), queue: .done, checks: "the escaped child is stopped too") { context in
                try expectLeftoverStopped(context)
                #expect(context.logText.contains("stopped 1 process(es) the extension left running outside its process group"), "\(context.logText)")
            },
            Scenario(name: "floods stderr (12 MiB, one 1 MiB line)", spec: spec("stderr_flood.py"), exit: 0,
                     index: .exactly(["flood.1"]), queue: .done, checks: "the log rotated, at most 8 MiB kept") { context in
                #expect(FileManager.default.fileExists(atPath: logPath(context.bundleDirectory) + ".1"), "the log was not rotated")
            },
            Scenario(name: "never reads its stdin (a 400 KB request)", spec: spec("never_reads_stdin.sh", configure: timeouts),
                     request: ["--ids-from", "@many-ids"], exit: 75, says: ["idleSeconds (1 s)"], index: .unchanged, queue: .retryQueued,
                     checks: "the host is not blocked on the full pipe"),
            Scenario(name: "writes at a trickle, within the idle timeout", spec: spec("trickle.py", ["0.3", "8"], configure: timeouts), exit: 0,
                     index: .exactly((1...8).map { "trickle.\($0)" }), queue: .done, checks: "each message resets the idle timeout"),
            Scenario(name: "writes at a trickle, slower than the idle timeout", spec: spec("trickle.py", ["1.6", "3"], configure: timeouts), exit: 75,
                     says: ["idleSeconds (1 s)"], index: .unchanged, queue: .retryQueued),
            Scenario(name: "writes at a trickle past the request timeout",
                     spec: spec("trickle.py", ["0.2", "1000"]) { $0.idleSeconds = 1; $0.requestSeconds = 2 }, exit: 75,
                     says: ["requestSeconds (2 s)"], index: .unchanged, queue: .retryQueued, checks: "messages do not reset the request timeout"),
            Scenario(name: "is replaced on disk during the run", spec: spec("replace_self.sh"), request: ["--ids", "replaced.1"], exit: 0,
                     index: .exactly(["prev.1", "replaced.1"]), queue: .done,
                     checks: "the run finishes on the old code; the next run starts the new file") { context in
                #expect(try titles(context, query: "ocelot") == ["Original Ocelot"])
                let again = try context.run(["run", "com.example.fault.replace-self", "--ids", "replaced.1"])
                #expect(again.status == 0, "\(again)")
                #expect(try titles(context, query: "seahorse") == ["Successor Seahorse"])
                #expect(try titles(context, query: "ocelot") == [])
            },
            Scenario(name: "allocates without end (limits.addressSpaceMiB 256)", spec: spec("runaway.py", ["memory"]) { $0.addressSpaceMiB = 256 },
                     exit: 75, says: ["exited with status 1", "limits its address space to 256 MiB", "MemoryError"],
                     index: .unchanged, queue: .retryQueued, checks: "the limit ends it; the reason is named"),
            Scenario(name: "spins without end (limits.cpuSeconds 1)", spec: spec("runaway.py", ["cpu"]) { $0.cpuSeconds = 1 },
                     exit: 75, says: ["CPU time limit", "limits.cpuSeconds = 1"], index: .unchanged, queue: .retryQueued,
                     checks: "the limit ends it; the reason is named"),
        ]
        return matrix.enumerated().map { number, scenario in
            var scenario = scenario
            scenario.number = number + 1
            return scenario
        }
    }()

    @Test("fault scenario", .compactMapIssues { issue in FaultMatrix.record.noteIssue(); return issue },
          arguments: FaultInjectionTests.scenarios)
    func faultScenario(_ scenario: Scenario) throws {
        let issuesBefore = FaultMatrix.record.issues
        var observed: String? = nil
        defer {
            // A scenario that threw has its error recorded after this: it counts as failed here.
            let passed = observed != nil && FaultMatrix.record.issues == issuesBefore
            FaultMatrix.record.finish(scenario.name, passed: passed)
            let expected = scenario.exit == 0 ? "acknowledged (0)" : "exit \(scenario.exit), \(scenario.queue.rawValue)"
            let checks = scenario.checks.isEmpty ? "" : "; \(scenario.checks)"
            print("fault-matrix: | \(scenario.number) | \(scenario.name) | \(expected) | \(observed ?? "stopped by an error")\(checks) | \(passed ? "pass" : "FAIL") |")
        }
        let scratch = try T.makeScratchDirectory()
        defer { try? FileManager.default.removeItem(atPath: scratch) }
        observed = try run(scenario, in: scratch)
    }

    // MARK: Running one scenario

    /// Runs one scenario in its own index and extensions directory under `root`, checks it, and
    /// describes what was observed.
    private func run(_ scenario: Scenario, in root: String) throws -> String {
        let extensions = "\(root)/extensions"
        let index = "\(root)/index/index.sqlite"
        try FileManager.default.createDirectory(atPath: extensions, withIntermediateDirectories: true)
        try FileManager.default.createDirectory(atPath: "\(root)/index", withIntermediateDirectories: true)
        let bundleDirectory = try T.makeBundle(scenario.spec, in: extensions)
        let id = scenario.spec.identifier
        let command = { (arguments: [String], stdin: String?) throws -> T.CommandResult in
            try T.runReindex(["--index", index, "--extensions-path", extensions] + arguments, scratch: root, stdin: stdin, timeout: 90)
        }
        let name = scenario.name
        let seeded = try command(["put", id], #"{"uniqueIdentifier":"prev.1","attributes":{"title":"Previous Pangolin"}}"# + "\n")
        #expect(seeded.status == 0, "\(name): seeding: \(seeded)")

        var request = scenario.request.isEmpty ? ["--all"] : scenario.request
        if let at = request.firstIndex(of: "@many-ids") {
            let file = "\(root)/ids.txt"
            try (1...20_000).map { "item.with.a.longish.identifier.\($0)" }.joined(separator: "\n").write(toFile: file, atomically: true, encoding: .utf8)
            request[at] = file
        }
        let result = try command(["run", id, "--json"] + request, nil)
        #expect(!result.timedOut, "\(name): the command did not finish: \(result)")
        #expect(result.status == scenario.exit, "\(name): \(result)")
        let stdout = try? JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any]
        #expect(stdout?["outcome"] as? String == (scenario.exit == 0 ? "acknowledged" : "failed"), "\(name): \(result.stdout)")
        if scenario.exit != 0 {
            #expect(result.stderr.hasPrefix("error: \(id): "), "\(name): the error does not name the bundle: \(result.stderr)")
            for phrase in scenario.says {
                #expect(result.stderr.contains(phrase), "\(name): the error does not say '\(phrase)': \(result.stderr)")
            }
        }

        // The index.
        let items = try command(["items", id, "--json"], nil)
        let identifiers = ((try? JSONSerialization.jsonObject(with: Data(items.stdout.utf8)) as? [String: Any])?["results"] as? [[String: Any]] ?? [])
            .compactMap { $0["uniqueIdentifier"] as? String }.sorted()
        switch scenario.index {
        case .unchanged: #expect(identifiers == ["prev.1"], "\(name): the index changed: \(items)")
        case .exactly(let expected): #expect(identifiers == expected.sorted(), "\(name): \(items)")
        }
        let check = try command(["check"], nil)
        #expect(check.status == 0, "\(name): the integrity check failed: \(check)")

        // The queue.
        let status = try command(["status", "--json"], nil)
        let bundles = (try? JSONSerialization.jsonObject(with: Data(status.stdout.utf8)) as? [String: Any])?["bundles"] as? [[String: Any]] ?? []
        let entry = bundles.first { $0["bundleIdentifier"] as? String == id }
        let pending = entry?["pending"] as? Int ?? -1, failed = entry?["failed"] as? Int ?? -1
        let counts: [Int] = [pending, failed]
        switch scenario.queue {
        case .done: #expect(counts == [0, 0], "\(name): \(status.stdout)")
        case .retryQueued: #expect(counts == [1, 0], "\(name): \(status.stdout)")
        case .failed: #expect(counts == [0, 1], "\(name): \(status.stdout)")
        }

        // No process of the bundle left running.
        let leftovers = Self.processesRunning(in: bundleDirectory)
        #expect(leftovers == [], "\(name): processes of the bundle are still running: \(leftovers)")
        for pid in leftovers { kill(pid, SIGKILL) }

        // The log stays bounded: the current file and one rotated file, each about 4 MiB at most.
        let log = Self.logPath(bundleDirectory)
        let logBytes = [log, log + ".1"].compactMap { FileSystem.status($0).map { Int($0.size) } }.reduce(0, +)
        #expect(logBytes <= 2 * (4 << 20) + (1 << 20) + 64 << 10, "\(name): the log holds \(logBytes) bytes")

        let logText = T.read(log) ?? ""
        try scenario.extra?(Context(result: result, bundleDirectory: bundleDirectory, logText: logText, run: { try command($0, nil) }))

        let state = pending == 1 ? "retry queued" : failed == 1 ? "failed for good" : pending == 0 ? "done" : "?"
        let indexText: String
        switch scenario.index {
        case .unchanged: indexText = identifiers == ["prev.1"] ? "index unchanged" : "index CHANGED"
        case .exactly: indexText = "\(identifiers.count) item\(identifiers.count == 1 ? "" : "s")"
        }
        return "exit \(result.status), \(state), \(indexText), \(leftovers.isEmpty ? "no process left" : "\(leftovers.count) processes LEFT"), log \(logBytes < 1024 ? "\(logBytes) bytes" : "\(logBytes >> 10) KiB")"
    }

    /// The bundle's log beside the index (`<index dir>/logs/<id>.log`).
    private static func logPath(_ bundleDirectory: String) -> String {
        let root = URL(fileURLWithPath: bundleDirectory).deletingLastPathComponent().deletingLastPathComponent().path
        return "\(root)/index/logs/\(URL(fileURLWithPath: bundleDirectory).lastPathComponent).log"
    }

    /// Live processes whose working directory is in `directory` (an extension runs in its bundle
    /// directory, and so does everything it starts unless it moves).
    private static func processesRunning(in directory: String) -> [pid_t] {
        let resolved = URL(fileURLWithPath: directory).resolvingSymlinksInPath().path
        return T.processesStillRunning(after: 2) { pid in
            guard let cwd = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/\(pid)/cwd") else { return false }
            return cwd == resolved || cwd.hasPrefix(resolved + "/")
        }
    }

    private static func expectLeftoverStopped(_ context: Context) throws {
        let text = try #require(T.read("\(context.bundleDirectory)/leftover.pid"), "the fixture did not record its child")
        let pid = try #require(pid_t(text.trimmingCharacters(in: .whitespacesAndNewlines)))
        #expect(T.isNotRunning(pid), "the left-over child \(pid) is still running")
    }

    private static func titles(_ context: Context, query: String) throws -> [String] {
        let result = try context.run(["search", query, "--json"])
        let results = (try? JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any])?["results"] as? [[String: Any]] ?? []
        return results.compactMap { $0["title"] as? String }
    }
}

/// What the matrix's scenarios recorded, for each row's verdict and the summary line.
enum FaultMatrix {
    static let record = Record()

    final class Record: Sendable {
        private struct State {
            var issues = 0
            var scenarios = 0
            var failed: [String] = []
        }
        private let state = Mutex(State())

        /// How many issues the scenarios have recorded so far.
        var issues: Int { state.withLock { $0.issues } }

        func noteIssue() { state.withLock { $0.issues += 1 } }

        func finish(_ scenario: String, passed: Bool) {
            state.withLock {
                $0.scenarios += 1
                if !passed { $0.failed.append(scenario) }
            }
        }

        var summary: String {
            state.withLock { state in
                let failed = state.failed
                return "fault-matrix: \(state.scenarios) scenarios, \(state.scenarios - failed.count) passed, \(failed.count) failed\(failed.isEmpty ? "" : ": " + failed.joined(separator: ", "))"
            }
        }
    }

    /// Prints the summary line once the suite's scenarios have run.
    struct Summary: SuiteTrait, TestScoping {
        func provideScope(for test: Test, testCase: Test.Case?, performing function: @Sendable () async throws -> Void) async throws {
            defer { print(FaultMatrix.record.summary) }
            try await function()
        }
    }
}
