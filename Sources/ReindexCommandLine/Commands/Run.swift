import ReindexStore
import ReindexSystem
import ReindexHost
import ReindexProtocol

/// `reindex run BUNDLE_ID`: forces a request now through the supervisor and waits for its
/// acknowledgement (`ForcedRun`), or with `--queue` only queues it for `reindex serve`.
package struct RunCommand: RequestCommand, SandboxedCommand {
    package static let name = "run"
    package static let summary = "force a request now and wait for its acknowledgement"
    package static let discussion = """
            Shows a progress bar on a terminal; prints a summary (put, deleted, rejected, duration).
            A forced reindexAll starts fresh (clientState null): when an earlier attempt left committed
            batches, they are discarded and the summary says how many items went; --resume resumes from
            its last client state instead. Only retries by 'reindex serve' resume by themselves.
            Ctrl-C, SIGTERM and SIGHUP (a closed terminal) send $/cancel to the extension; the request
            goes back to the queue.
            The extension runs in its sandbox (see docs/SECURITY.md); where the system has no
            Landlock it runs unsandboxed after a warning, unless --require-sandbox is given.
            Exit status: 0 acknowledged, 65 invalid manifest (a declared sandbox path inside the index,
            the logs or another bundle), 66 no such bundle, 69 the extension could not be started (also:
            --require-sandbox refused to run it unsandboxed), 75 the request failed (crash, timeout,
            refusal, cancel, a full disk; a retry is queued), 76 protocol violation.
            """

    package static let bundle = Argument<Self, String>("BUNDLE_ID", help: "the bundle to ask")
    package static let queue = Flag<Self>("queue", help: "only queue the request for 'reindex serve' and return")
    package static let arguments: [any DeclaredArgument<Self>] = [bundle]
    package static var options: [any DeclaredOption<Self>] { requestOptions + [reason, queue, requireSandbox] }

    package let bundle: String
    package let request: RequestSelection.Asked
    package let queue: Bool
    package let requireSandbox: Bool

    package init(_ arguments: Arguments<Self>) throws(ReindexError) {
        bundle = arguments[Self.bundle]
        request = try Self.request(arguments)
        queue = arguments[Self.queue]
        requireSandbox = arguments[Self.requireSandbox]
    }

    package func run(_ context: CommandContext) throws -> Int32 {
        let bundle = try context.findBundle(self.bundle)
        let selection = try RequestSelection(request)
        let store = try context.openIndex()
        if queue {
            let request = try store.enqueue(bundleIdentifier: bundle.identifier, kind: selection.kind, identifiers: selection.identifiers,
                                            reason: selection.reason, maxAttempts: bundle.manifest.retry.maxAttempts)
            if context.json {
                Console.json(.object([("bundleIdentifier", .string(bundle.identifier)), ("request", .string(request.kind.rawValue)),
                                      ("outcome", "queued"), ("requestId", .integer(request.id))]))
            } else {
                Console.out("\(bundle.identifier): queued \(request.kind.rawValue) as request \(request.id) for 'reindex serve'")
            }
            return 0
        }
        var options = SessionOptions()
        options.sandbox = try SandboxReport.options(required: requireSandbox, context: context)
        options.recordsAs = "run"
        return try ForcedRun.execute(context: context, bundle: bundle, selection: selection, options: options, store: store).status
    }
}
