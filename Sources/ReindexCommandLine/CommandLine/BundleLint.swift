import ReindexHost
import ReindexStore
import ReindexProtocol
import ReindexSystem

/// `reindex validate DIR --run`: the conformance suite. It starts the bundle against a scratch
/// index and checks, one named check each, every rule of the protocol an extension must follow
/// (docs/PROTOCOL.md's checklist), with the evidence for each result. A check stops at the first
/// violation that decides it — it never waits out a timeout a violation has already settled.
package enum BundleLint {
    /// One rule, and what the run showed of it.
    package struct Check: Sendable {
        package enum Result: String, Sendable { case pass, fail, skipped }
        package var name: String
        package var rule: String
        package var result: Result
        package var evidence: String
    }

    /// Every check, in the order they run, with the rule it checks.
    /// How long the suite listens after a reindexAll's acknowledgement for messages that should
    /// have come before it.
    static let settleSeconds = 1.0

    package static let rules: [(name: String, rule: String)] = [
        ("initialize", "answers initialize first, with protocolVersion, extension name and version, and capabilities"),
        ("version-negotiation", "offered only an unsupported version, replies -32602 with data.supported and data.requested"),
        ("reindexAll", "acknowledges a reindexAll with clientState null, every item valid"),
        ("early-acknowledgement", "sends nothing for a request after acknowledging it: the work is done before the handler returns"),
        ("empty-reindexAll", "a reindexAll puts items, or says its data is empty on purpose with allowEmpty"),
        ("all-rejected", "not every item of the reindexAll is rejected"),
        ("attribute-names", "names every attribute as built in or declared in the manifest, or unlike them all (no 'keyword' for 'keywords')"),
        ("reindexAll-resume", "acknowledges a reindexAll that carries the client state it committed"),
        ("reindexItems", "acknowledges a reindexItems of present and missing identifiers"),
        ("unknown-request", "answers a request it does not know with -32601"),
        ("cancel", "answers $/cancel with -32800 within 5 s (or has already acknowledged)"),
        ("batch-commit", "every batch/commit is well-formed (a client state of at most 250 bytes, base64) and waits for its reply"),
        ("stdout-clean", "writes nothing but protocol messages on stdout, one per line"),
        ("exit", "exits with status 0 within 5 s of stdin closing"),
        ("no-leftover-processes", "leaves no process behind"),
    ]

    package struct Report: Sendable {
        package var checks: [Check] = []
        package var counts = WriteCounts()
        package var stderrTail: [String] = []
        /// Every required check ran and passed.
        package var passed: Bool { checks.allSatisfy { $0.result != .fail } && checks.contains { $0.result == .pass } }
    }

    /// Runs the suite, or only the check named `only`. `sandbox` says how the extension is
    /// sandboxed; its real paths stay out of reach, and its data directory is a scratch one too.
    package static func run(bundle: DiscoveredBundle, environment: [String: String], only: String? = nil,
                           sandbox: SandboxOptions = SandboxOptions()) throws(ReindexError) -> Report {
        if let only, !rules.contains(where: { $0.name == only }) {
            throw ReindexError(.usage, "--check: no check named '\(only)'; the checks are \(rules.map(\.name).joined(separator: ", "))")
        }
        let scratch = FileSystem.join(SandboxLaunch.temporaryRoot(environment), "reindex-validate-\(getpid())-\(Int(Clock.now() * 1000))")
        try FileSystem.makeDirectories(scratch)
        defer { removeTree(scratch) }
        var paths = HostPaths(extensionsPath: nil, index: FileSystem.join(scratch, "index.sqlite"), environment: environment)
        paths.data = FileSystem.join(scratch, "data")
        let store = try IndexStore.open(path: paths.index)
        var sandboxOptions = sandbox
        sandboxOptions.alsoProtect += sandbox.paths.map { [$0] } ?? []
        sandboxOptions.paths = paths
        // Ctrl-C, SIGTERM and SIGHUP cancel through the protocol and stop the extension's group.
        let interrupt = CancelSignal()
        var suite = Suite(bundle: bundle, store: store, environment: environment, scratch: scratch)
        suite.interruptFD = interrupt.readFD
        suite.sandbox = sandboxOptions
        suite.runAll()
        var report = Report()
        report.counts = suite.counts
        report.stderrTail = suite.stderrTail
        report.checks = rules.map { rule in
            suite.results[rule.name] ?? Check(name: rule.name, rule: rule.rule, result: .skipped, evidence: suite.skipReason ?? "not run")
        }
        if let only { report.checks = report.checks.filter { $0.name == only } }
        return report
    }

    final class Collector: @unchecked Sendable {
        var problems: [String] = []
        /// Of `problems`, those that were messages for a request after its acknowledgement.
        var afterAcknowledgement: [String] = []
        /// The SDKs' own notices (stderr) of writes they refused because the request was
        /// already answered: the same mistake, caught before it reached stdout.
        var refusedLateWrites: [String] = []
    }

    /// Whether a stderr line is an SDK's notice of a write made after its request was answered
    /// (Swift: "put after request 1 was acknowledged"; Python and TypeScript: "request 1 was
    /// already acknowledged").
    static func isLateWriteNotice(_ line: String) -> Bool {
        line.contains("was already acknowledged") || (line.contains("after request ") && line.contains(" was acknowledged"))
    }

    /// Whether a violation the session survived is a message that came after its request was
    /// acknowledged (or while none was outstanding): work that went on after the handler returned.
    static func isAfterAcknowledgement(_ problem: String) -> Bool {
        problem.contains("was acknowledged") || problem.contains("while no request was outstanding")
    }

    /// The suite's state while it runs: one main session (initialize, both reindexAlls,
    /// reindexItems, the unknown request, shutdown), and one fresh process each for the version
    /// negotiation and the cancel.
    struct Suite {
        let bundle: DiscoveredBundle
        let store: IndexStore
        let environment: [String: String]
        let scratch: String
        var results: [String: Check] = [:]
        var counts = WriteCounts()
        var stderrTail: [String] = []
        var skipReason: String?
        let stdout = Collector()
        var sessions = 0
        var interruptFD: Int32?
        var sandbox = SandboxOptions()

        init(bundle: DiscoveredBundle, store: IndexStore, environment: [String: String], scratch: String) {
            self.bundle = bundle
            self.store = store
            self.environment = environment
            self.scratch = scratch
        }

        mutating func record(_ name: String, _ result: Check.Result, _ evidence: String) {
            let rule = BundleLint.rules.first { $0.name == name }?.rule ?? ""
            results[name] = Check(name: name, rule: rule, result: result, evidence: evidence)
        }

        mutating func session(offering versions: [Int]? = nil, cancelFD: Int32? = nil) -> ExtensionSession {
            var options = SessionOptions()
            options.environment = environment
            options.offeredProtocolVersions = versions
            options.cancelFD = cancelFD ?? interruptFD
            options.sandbox = sandbox
            let stdout = self.stdout
            // Lint mode: problems the session survives are collected, so one run shows them all.
            options.onStderrLine = { line in
                if BundleLint.isLateWriteNotice(line) { stdout.refusedLateWrites.append(line) }
            }
            options.onRecoverableViolation = { problem in
                if BundleLint.isAfterAcknowledgement(problem) { stdout.afterAcknowledgement.append(problem) } else { stdout.problems.append(problem) }
            }
            sessions += 1
            store.prepareForSession(cancelFD: options.cancelFD)
            return ExtensionSession(bundle: bundle, store: store, logPath: FileSystem.join(scratch, "extension-\(sessions).log"), options: options)
        }

        func enqueue(_ kind: RequestKind, identifiers: [String] = []) -> QueuedRequest? {
            try? store.enqueue(bundleIdentifier: bundle.identifier, kind: kind, identifiers: identifiers, reason: .forced, maxAttempts: 1, coalesce: false)
        }

        mutating func runAll() {
            mainSession()
            versionNegotiation()
            cancel()
            // A pretty-printed message is one mistake, however many lines and sessions show it.
            var stray: [String] = []
            for problem in stdout.problems where !(problem.contains("pretty-printed") && stray.contains { $0.contains("pretty-printed") }) {
                stray.append(problem)
            }
            record("stdout-clean", stray.isEmpty ? .pass : .fail,
                   stray.isEmpty ? "no stray output in \(sessions) session(s)" : stray.prefix(5).joined(separator: "; ") + (stray.count > 5 ? " (and \(stray.count - 5) more)" : ""))
        }

        /// initialize, reindexAll, the resumed reindexAll, reindexItems, an unknown request, exit.
        mutating func mainSession() {
            let session = session()
            defer { stderrTail = session.log.lastLines }
            let started = Clock.monotonic()
            do {
                try session.start()
            } catch {
                record("initialize", .fail, error.message)
                skipReason = "the extension did not get past initialize"
                _ = session.shutdown(graceful: false)
                return
            }
            if let reply = session.initializeResult {
                let named = !reply.extensionName.isEmpty
                record("initialize", named ? .pass : .fail,
                       "protocol \(reply.protocolVersion), extension \"\(reply.extensionName)\" \(reply.extensionVersion), in \(milliseconds(Clock.monotonic() - started)) ms"
                       + (named ? "" : "; result.extension.name is empty"))
            }
            var alive = true
            // reindexAll, fresh.
            var committedState: String?
            var putIdentifier: String?
            if let request = enqueue(.reindexAll) {
                let outcome = session.perform(request) { _, _ throws(StoreError) in }
                counts = outcome.counts
                let rejected = outcome.rejections.prefix(3).map(\.description).joined(separator: "; ")
                if let failure = outcome.failure, failure.kind != .allRejected {
                    record("reindexAll", .fail, failure.message)
                    alive = failure.kind == .refused
                } else if outcome.counts.rejected > 0 {
                    record("reindexAll", .fail, "\(outcome.counts.rejected) item(s) rejected: " + rejected)
                } else {
                    record("reindexAll", .pass, "acknowledged: put \(outcome.counts.put), deleted \(outcome.counts.deleted)")
                }
                // A handler that returned before its work was done sends the rest after the
                // acknowledgement: listen for a moment of quiet.
                let acknowledged = outcome.failure == nil || outcome.failure?.kind == .allRejected
                if acknowledged { try? session.settle(seconds: BundleLint.settleSeconds) }
                let late = stdout.afterAcknowledgement + stdout.refusedLateWrites
                if let failure = outcome.failure, failure.message.contains(" returned while ") {
                    // The SDK refused to acknowledge for the author: a thread was still at work.
                    record("early-acknowledgement", .fail, failure.message)
                } else if !acknowledged {
                    record("early-acknowledgement", .skipped, "the reindexAll was not acknowledged")
                } else if late.isEmpty {
                    record("early-acknowledgement", .pass, "nothing arrived in the \(BundleLint.settleSeconds) s after the acknowledgement")
                } else {
                    record("early-acknowledgement", .fail, "\(late.count) message(s) came after the reindexAll was acknowledged, so the handler returned before its work was done "
                           + "(a thread not joined, an await forgotten, an unstructured Task): " + late.prefix(3).joined(separator: "; "))
                }
                // An undeclared attribute is kept as a custom one: near a known name, it is a typo.
                let misspelt = session.takeWarnings().filter(MisspeltAttributes.isWarning)
                record("attribute-names", misspelt.isEmpty ? .pass : .fail,
                       misspelt.isEmpty ? "no attribute of the \(outcome.counts.put + outcome.counts.rejected) item(s) looks like a misspelt built-in or declared one"
                                        : misspelt.prefix(3).joined(separator: "; ") + (misspelt.count > 3 ? " (and \(misspelt.count - 3) more)" : ""))
                if outcome.counts.rejected > 0 && outcome.counts.put == 0 {
                    record("all-rejected", .fail, "all \(outcome.counts.rejected) item(s) of the reindexAll were rejected, so the host publishes nothing (exit 65): " + rejected)
                } else {
                    record("all-rejected", .pass, "put \(outcome.counts.put), rejected \(outcome.counts.rejected)")
                }
                if !acknowledged {
                    record("empty-reindexAll", .skipped, "the reindexAll was not acknowledged")
                } else if outcome.counts.put > 0 {
                    record("empty-reindexAll", .pass, "put \(outcome.counts.put) item(s)")
                } else if session.lastAcknowledgementAllowsEmpty {
                    record("empty-reindexAll", .pass, "put nothing and acknowledged with allowEmpty: the data is empty on purpose")
                } else {
                    record("empty-reindexAll", .fail, "the reindexAll put no item and its acknowledgement has no allowEmpty; against an index that holds the bundle's items the host "
                           + "would refuse to publish it (exit 76). Put the items before returning, or acknowledge with allowEmpty if the data really is empty")
                }
                committedState = (try? store.request(request.id))??.clientState
                putIdentifier = (try? store.items(bundle: bundle.identifier, limit: 1))?.first?.uniqueIdentifier
            }
            // reindexAll with the client state it committed.
            if !alive {
                record("reindexAll-resume", .skipped, "the session ended at reindexAll")
            } else if let state = committedState, var request = enqueue(.reindexAll) {
                request.clientState = state
                let outcome = session.perform(request) { _, _ throws(StoreError) in }
                if let failure = outcome.failure {
                    record("reindexAll-resume", .fail, "with clientState \(state): \(failure.message)")
                    alive = failure.kind == .refused
                } else {
                    record("reindexAll-resume", .pass, "with clientState \(state): acknowledged, put \(outcome.counts.put)")
                }
            } else {
                record("reindexAll-resume", .skipped, "not applicable: the reindexAll committed no batch with a client state")
            }
            // reindexItems of an item it has and one it does not.
            let missing = "reindex.validate.missing.\(getpid())"
            if !alive {
                record("reindexItems", .skipped, "the session ended at an earlier check")
            } else if let request = enqueue(.reindexItems, identifiers: [putIdentifier, missing].compactMap { $0 }) {
                let outcome = session.perform(request) { _, _ throws(StoreError) in }
                if let failure = outcome.failure {
                    record("reindexItems", .fail, "identifiers \(request.identifiers): \(failure.message)")
                    alive = failure.kind == .refused
                } else if outcome.counts.rejected > 0 {
                    record("reindexItems", .fail, "\(outcome.counts.rejected) item(s) rejected: " + outcome.rejections.prefix(3).map(\.description).joined(separator: "; "))
                } else {
                    let kept = ((try? store.items(bundle: bundle.identifier, limit: 100_000)) ?? []).contains { $0.uniqueIdentifier == missing }
                    record("reindexItems", .pass, "identifiers \(request.identifiers): acknowledged, put \(outcome.counts.put), deleted \(outcome.counts.deleted)"
                           + (kept ? "; note: it indexed \(missing), an identifier it cannot have" : ""))
                }
            }
            // A request it cannot know.
            if !alive {
                record("unknown-request", .skipped, "the session ended at an earlier check")
            } else {
                do {
                    switch try session.probe(method: "reindex/conformanceProbe", params: .object([]), seconds: 5) {
                    case .failure(let error)? where error.code == RPCError.methodNotFound:
                        record("unknown-request", .pass, "replied \(error.code) (\(error.message))")
                    case .failure(let error)?:
                        record("unknown-request", .fail, "replied error \(error.code) (\(error.message)), expected -32601")
                    case .success?:
                        record("unknown-request", .fail, "replied with a result, expected error -32601")
                    case nil:
                        record("unknown-request", .fail, "no reply within 5 s")
                    }
                } catch {
                    record("unknown-request", .fail, error.message)
                    alive = false
                }
            }
            record("batch-commit", session.commitsRefused.isEmpty ? .pass : .fail,
                   session.commitsRefused.isEmpty ? "\(session.commitsAccepted) commit(s), each accepted"
                                                  : "refused: " + session.commitsRefused.prefix(3).joined(separator: "; "))
            // stdin closes: exit 0, soon, alone. (Whatever happened before, unless it already exited.)
            let exitedBefore = session.process?.exit
            let closing = Clock.monotonic()
            let exit = session.shutdown(graceful: true)
            let took = Clock.monotonic() - closing
            switch exit {
            case let exit? where exitedBefore != nil:
                record("exit", .skipped, "the extension had already ended (it \(exit)) before stdin was closed")
            case .exited(0)? where took <= 5:
                record("exit", .pass, "exited with status 0 \(milliseconds(took)) ms after stdin closed")
            case let exit?:
                record("exit", .fail, "after stdin closed the extension \(exit) after \(milliseconds(took)) ms (expected status 0 within 5 s)")
            case nil:
                record("exit", .skipped, "the extension never started")
            }
            record("no-leftover-processes", session.leftBehind == 0 ? .pass : .fail,
                   session.leftBehind == 0 ? "nothing left in its process group or outside it" : "\(session.leftBehind) process(es) left behind were stopped by the host")
        }

        /// A fresh process offered only protocol version 999.
        mutating func versionNegotiation() {
            let session = session(offering: [999])
            defer { _ = session.shutdown(graceful: false) }
            do {
                try session.start()
                record("version-negotiation", .fail, "it accepted protocol version \(session.initializeResult?.protocolVersion ?? 0) when offered only [999]")
            } catch where error.kind == .versionMismatch && error.message.contains("the extension supports [") {
                record("version-negotiation", .pass, String(error.message.drop { $0 != ":" }.dropFirst().drop { $0 == " " }))
            } catch where error.kind == .versionMismatch {
                record("version-negotiation", .fail, error.message + " (expected -32602 with data.supported and data.requested)")
            } catch {
                record("version-negotiation", .fail, error.message)
            }
        }

        /// A fresh process, a reindexAll, and $/cancel right behind it.
        mutating func cancel() {
            var fds: [Int32] = [-1, -1]
            guard pipe(&fds) == 0 else { record("cancel", .skipped, "cannot make a pipe"); return }
            defer { close(fds[0]); close(fds[1]) }
            let session = session(cancelFD: fds[0])
            defer { _ = session.shutdown(graceful: false) }
            do { try session.start() } catch {
                record("cancel", .fail, error.message)
                return
            }
            guard let request = enqueue(.reindexAll) else { record("cancel", .skipped, "cannot queue the request"); return }
            var byte: UInt8 = 1
            _ = write(fds[1], &byte, 1)
            let sent = Clock.monotonic()
            let outcome = session.perform(request) { _, _ throws(StoreError) in }
            let took = milliseconds(Clock.monotonic() - sent)
            switch outcome.failure {
            case nil:
                record("cancel", .pass, "it acknowledged before the cancel took effect (\(took) ms)")
            case let failure? where failure.kind == .cancelled && failure.message.contains("did not answer"):
                record("cancel", .fail, "no reply to $/cancel within 5 s")
            case let failure? where failure.kind == .cancelled:
                record("cancel", .pass, "replied -32800 \(took) ms after $/cancel")
            case let failure?:
                record("cancel", .fail, failure.message)
            }
        }
    }

    static func milliseconds(_ seconds: Double) -> Int { Int((seconds * 1000).rounded()) }

    static func removeTree(_ path: String) {
        FileSystem.removeTree(path)
    }
}
