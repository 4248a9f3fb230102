import ReindexHost
import ReindexStore
import ReindexSystem
import ReindexProtocol

/// `reindex runs BUNDLE_ID`: the bundle's recorded sessions, newest first, each replayable with
/// `reindex debug BUNDLE_ID --replay REQUEST_ID`.
package struct RunsCommand: ReindexCommand {
    package static let name = "runs"
    package static let summary = "the recorded sessions of a bundle, newest first (replay one with 'debug --replay')"
    package static let discussion = """
            The host records every session of run, serve and debug: each message in both directions
            with its time, beside the logs (see 'reindex paths'), readable by the user only. It keeps
            a bundle's last 20 sessions within 64 MiB, dropping the oldest. A manifest with
            "record": false is never recorded. Recordings hold the items the extension sent.
            Replay one with 'reindex debug BUNDLE_ID --replay REQUEST_ID'.
            Exit status: 0 (also when nothing is recorded), 66 unknown bundle.
            """

    package static let bundle = Argument<Self, String>("BUNDLE_ID", help: "the bundle")
    package static let arguments: [any DeclaredArgument<Self>] = [bundle]
    package static let options: [any DeclaredOption<Self>] = []

    package let bundle: String

    package init(_ arguments: Arguments<Self>) throws(ReindexError) {
        bundle = arguments[Self.bundle]
    }

    package func run(_ context: CommandContext) throws -> Int32 {
        let bundle = try context.findBundle(self.bundle)
        let (runs, problems) = Recording.list(directory: context.paths.recordingsDirectory(for: bundle.identifier))
        for problem in problems { Console.err("warning: \(bundle.identifier): \(problem.message)") }
        if context.json {
            Console.json(.object([("runs", .array(runs.map { run in
                var members: [(String, JSONValue)] = [
                    ("requestId", .integer(run.header.requestID)), ("request", .string(run.header.request.rawValue)),
                    ("reason", .string(run.header.reason)), ("outcome", .string(run.outcome)),
                    ("started", .string(RFC3339.format(run.header.started))), ("messages", .integer(Int64(run.messages))),
                    ("mode", .string(run.header.mode)), ("hostVersion", .string(run.header.hostVersion)),
                    ("truncated", .bool(run.truncated)), ("file", .string(run.path)),
                ]
                if let error = run.error { members.append(("error", .string(error))) }
                return .object(members)
            }))]))
            return 0
        }
        guard !runs.isEmpty else {
            Console.out("No recorded sessions of \(bundle.identifier).")
            return 0
        }
        let rows = [["REQUEST", "KIND", "REASON", "OUTCOME", "STARTED", "MESSAGES", "BY"]] + runs.map { run in
            [String(run.header.requestID), run.header.request.rawValue, run.header.reason, run.outcome + (run.truncated ? " (truncated)" : ""),
             RFC3339.format(run.header.started), String(run.messages), run.header.mode]
        }
        let widths = (0..<rows[0].count).map { column in rows.map { $0[column].count }.max() ?? 0 }
        for row in rows {
            Console.out(zip(row, widths).map { $0.0.padding(toWidth: $0.1) }.joined(separator: "  ").trimmingWhitespace)
        }
        Console.out("Replay one: reindex debug \(bundle.identifier) --replay REQUEST [--wait-for-debugger] [--trace]")
        return 0
    }
}

private extension String {
    func padding(toWidth width: Int) -> String { self + String(repeating: " ", count: max(0, width - count)) }
}
