import ReindexHost
import ReindexStore
import ReindexProtocol
import ReindexSystem

/// `reindex run` and its relatives: force one request now through the supervisor, show progress,
/// and report it in the contract's form.
package enum ForcedRun {
    /// Runs (or, with `queueOnly`, queues) a request and prints the summary; returns the exit code.
    package static func execute(
        context: CommandContext, bundle: DiscoveredBundle, selection: RequestSelection,
        options baseOptions: SessionOptions, store: any IndexBackend, printSummary: Bool = true
    ) throws(ReindexError) -> (status: Int32, result: RequestResult?) {
        let runner = RequestRunner(paths: context.paths)
        var sandbox = baseOptions.sandbox
        if sandbox.paths == nil { sandbox.paths = context.paths }
        try SandboxReport.prepare(bundle, options: sandbox, context: context)
        var options = baseOptions
        options.environment = context.environment
        options.sandbox = sandbox
        let progress = ProgressDisplay(label: bundle.identifier)
        let json = context.json
        if options.onProgress == nil && !json { options.onProgress = { progress.update($0) } }
        let cancel = CancelSignal()
        options.cancelFD = cancel.readFD
        let result: RequestResult
        do {
            result = try runner.force(selection, bundle: bundle, store: store, options: options) { note in
                Console.err("note: \(bundle.identifier): \(note)")
            }
        } catch {
            progress.finish()
            throw error
        }
        progress.finish()
        if printSummary { report(result, bundle: bundle, json: json, logPath: runner.paths.logFile(for: bundle.identifier)) }
        if let failure = result.failure {
            return (failure.code.exitCode, result)
        }
        return (0, result)
    }

    /// The summary of one request, in the contract's JSON or as text.
    package static func report(_ result: RequestResult, bundle: DiscoveredBundle, json: Bool, logPath: String? = nil) {
        // On a terminal the first ten; every one is in --json (up to its bound) and in the log.
        let shown = result.rejections.prefix(10)
        for rejection in shown { Console.err("warning: \(bundle.identifier): \(rejection)") }
        for warning in result.warnings { Console.err("warning: \(bundle.identifier): \(warning)") }
        if result.counts.rejected > shown.count {
            let log = logPath.map { " and in the bundle's log (\($0))" } ?? " and in the bundle's log"
            Console.err("warning: \(bundle.identifier): \(result.counts.rejected - shown.count) more item(s) rejected; every rejection with its reason is in 'reindex run --json' (rejections)\(log)")
        }
        let seconds = (result.durationSeconds * 1000).rounded() / 1000
        if json {
            var members: [(String, JSONValue)] = [
                ("bundleIdentifier", .string(bundle.identifier)),
                ("request", .string(result.request.kind.rawValue)),
                ("outcome", .string(result.acknowledged ? "acknowledged" : "failed")),
                ("put", .integer(Int64(result.counts.put))),
                ("deleted", .integer(Int64(result.counts.deleted))),
                ("rejected", .integer(Int64(result.counts.rejected))),
                ("removedNotPut", .integer(Int64(result.counts.removed))),
                ("ignoredUpdates", .integer(Int64(result.counts.ignoredUpdates))),
                ("durationSeconds", .double(seconds)),
                ("requestId", .integer(result.request.id)),
                ("reason", .string(result.request.reason.rawValue)),
            ]
            if !result.warnings.isEmpty { members.append(("warnings", .array(result.warnings.map(JSONValue.string)))) }
            members.append(("rejections", .array(result.rejections.map { rejection in
                .object([("uniqueIdentifier", rejection.uniqueIdentifier.map(JSONValue.string) ?? .null), ("reason", .string(rejection.reason))])
            })))
            members.append(("rejectionsNotListed", .integer(Int64(max(0, result.counts.rejected - result.rejections.count)))))
            if let failure = result.failure {
                members.append(("error", .string(failure.message)))
                members.append(("failure", .string(failure.kind.rawValue)))
                members.append(("retry", .string(result.stateAfter != .failed ? "queued" : failure.isFinal ? "none: a retry would do the same" : "none: attempts used up")))
            }
            Console.json(.object(members))
        } else if result.failure == nil {
            var removed = result.counts.removed > 0 ? "; removed \(result.counts.removed) item(s) that this run did not put" : ""
            if result.counts.ignoredUpdates > 0 { removed += "; ignored \(result.counts.ignoredUpdates) update(s) of items that do not exist" }
            Console.out("\(bundle.identifier): \(result.request.kind.rawValue) acknowledged: put \(result.counts.put), deleted \(result.counts.deleted - result.counts.removed), rejected \(result.counts.rejected)\(removed) in \(seconds) s")
        }
        if let failure = result.failure {
            var error = ReindexError(failure.code, failure.message, stderrTail: failure.stderrTail)
            switch result.stateAfter {
            case .failed where failure.isFinal: error.message += " — not retried: a retry would do the same"
            case .failed: error.message += " — no retry: the request has used its \(result.request.maxAttempts) attempts"
            case .pending: error.message += failure.requeuesWithoutPenalty ? " — the request is back in the queue" : " — a retry is queued (attempt \(result.request.attempts) of \(result.request.maxAttempts))"
            case .running: error.message += " — the request stays marked running; the next 'reindex run' of the bundle or 'reindex serve' takes it over"
            default: break
            }
            if bundle.manifest.sandbox.isEnabled, SandboxSupport.current.abi != nil,
               failure.stderrTail.contains(where: { $0.contains("Permission denied") || $0.contains("EACCES") || $0.contains("Operation not permitted") }) {
                error.message += "\nhint: the extension runs sandboxed and was denied something; if it needs a path, declare it in its manifest"
                    + " (\"sandbox\": {\"read\": […], \"write\": […]}; see docs/SECURITY.md), or compare with 'reindex debug \(bundle.identifier) --no-sandbox'"
            }
            Console.report(error)
        }
    }
}
