import ReindexStore
import ReindexSystem
import ReindexHost
import ReindexProtocol

/// `reindex status`: index health, per-bundle item counts, running, queued and failed requests,
/// last runs.
package struct StatusCommand: ReindexCommand {
    package static let name = "status"
    package static let summary = "index health, per-bundle item counts, running, queued and failed requests, last runs"
    package static let discussion = """
            A running request is shown with its extension's last progress. A failed request counts until a later
            run of the bundle succeeds (any reindexAll, or a reindexItems after a failed reindexItems); then it is
            moot, and only --failed lists it. A bundle the index knows but the search path no longer has is marked
            'not installed': 'reindex serve' removes its items after its removal grace (default 1 hour).
            """

    package static let failed = Flag<Self>("failed", help: "also list failed requests that a later success made moot")
    package static let options: [any DeclaredOption<Self>] = [failed]

    /// `--failed`: also the failed requests a later success made moot.
    package let showMoot: Bool

    package init(_ arguments: Arguments<Self>) {
        showMoot = arguments[Self.failed]
    }

    package func run(_ context: CommandContext) throws -> Int32 {
        let store = try context.openIndex()
        // A fleet's index also reports its hosts and workers (Status+Fleet.swift).
        if let fleet = store.fleet { return try Self.fleetStatus(context, fleet) }
        let discovered = Discovery.discover(context.paths).bundles
        // One snapshot for the whole report.
        let statuses = try store.snapshot { () throws -> [BundleStatus] in
            var identifiers: [String] = discovered.map(\.identifier)
            var seen = Set(identifiers.map { $0.lowercased() })
            for known in try store.knownBundles() where seen.insert(known.key).inserted { identifiers.append(known.identifier) }
            var statuses: [BundleStatus] = []
            for identifier in identifiers { statuses.append(try store.status(bundle: identifier)) }
            return statuses
        }
        let healthy = store.lossAtOpen == nil
        let installed = Set(discovered.map(\.key))
        let moot: [String: [QueuedRequest]] = showMoot
            ? Dictionary(grouping: try store.requests(state: .failed), by: \.bundleKey) : [:]
        var warnings: [String: [String]] = [:]
        for bundle in discovered { warnings[bundle.key] = SandboxReport.bundleWarnings(bundle) }
        if context.json {
            Console.json(.object([
                ("index", .object([("path", .string(store.displayLocation)), ("healthy", .bool(healthy))])),
                ("sandbox", SandboxSupport.current.json),
                ("bundles", .array(statuses.map { status in
                    var members = Self.bundleJSON(status)
                    members.append(("superseded", .integer(Int64(status.superseded))))
                    members.append(("installed", .bool(installed.contains(status.bundleIdentifier.lowercased()))))
                    if let since = status.missingSince { members.append(("missingSince", .string(RFC3339.format(since)))) }
                    if showMoot {
                        members.append(("failedHistory", .array((moot[status.bundleIdentifier.lowercased()] ?? []).map { request in
                            .object([("requestId", .integer(request.id)), ("request", .string(request.kind.rawValue)),
                                     ("failedAt", .string(RFC3339.format(request.updated))), ("error", request.lastError.map(JSONValue.string) ?? .null)])
                        })))
                    }
                    if let found = warnings[status.bundleIdentifier.lowercased()], !found.isEmpty { members.append(("warnings", .array(found.map(JSONValue.string)))) }
                    return .object(members)
                })),
            ]))
            return 0
        }
        Console.out("Index: \(store.displayLocation) (\(healthy ? "healthy" : "was lost and recreated"))")
        Console.out("Sandbox: \(SandboxSupport.current)")
        if statuses.isEmpty { Console.out("No bundles.") }
        for status in statuses {
            var line = "\(status.bundleIdentifier): \(status.items) item(s)"
            if !installed.contains(status.bundleIdentifier.lowercased()) {
                if let since = status.missingSince {
                    let left = max(0, 3600 - (Clock.now() - since))
                    line += " — not installed (missing since \(RFC3339.format(since)); 'reindex serve' removes its items after its removal grace, \(Int(left / 60)) min left at the default 1 hour)"
                } else {
                    line += " — not installed ('reindex serve' removes its items once it has been missing for the removal grace)"
                }
            }
            if status.running > 0 { line += ", \(status.running) running" }
            if status.pending > 0 { line += ", \(status.pending) queued" }
            if status.failed > 0 { line += ", \(status.failed) failed" }
            if status.superseded > 0 { line += ", \(status.superseded) earlier failure(s) superseded" }
            Console.out(line)
            for running in status.runningRequests {
                var text = "    running: \(running.kind.rawValue) (\(running.reason)) request \(running.id) since \(RFC3339.format(running.since))"
                if let progress = running.progress {
                    text += ", progress \(progress.completed)" + (progress.total.map { "/\($0)" } ?? "") + (progress.message.map { " — \($0)" } ?? "")
                }
                Console.out(text)
            }
            for reason in status.failedReasons { Console.out("    failed: \(reason)") }
            if showMoot {
                for request in moot[status.bundleIdentifier.lowercased()] ?? [] {
                    Console.out("    failed at \(RFC3339.format(request.updated)): \(request.kind.rawValue) request \(request.id): \(request.lastError ?? "")")
                }
            }
            for warning in warnings[status.bundleIdentifier.lowercased()] ?? [] { Console.out("    warning: \(warning)") }
            if let run = status.lastRun {
                Console.out("    last run: \(run.kind.rawValue) (\(run.reason)) \(run.outcome) at \(RFC3339.format(run.ended)): put \(run.counts.put), deleted \(run.counts.deleted), rejected \(run.counts.rejected)" + (run.error.map { " — \($0)" } ?? ""))
            }
        }
        return 0
    }

    /// The members of a bundle's `status --json` object both indexes give (cli.md): counts,
    /// failures, the last run, and what runs now with its last progress.
    static func bundleJSON(_ status: BundleStatus) -> [(String, JSONValue)] {
        var members: [(String, JSONValue)] = [
            ("bundleIdentifier", .string(status.bundleIdentifier)),
            ("items", .integer(Int64(status.items))),
            ("pending", .integer(Int64(status.pending + status.running))),
            ("failed", .integer(Int64(status.failed))),
        ]
        if !status.failedReasons.isEmpty { members.append(("failures", .array(status.failedReasons.map(JSONValue.string)))) }
        if let run = status.lastRun { members.append(("lastRun", runJSON(run))) }
        members.append(("running", .array(status.runningRequests.map { running in
            var fields: [(String, JSONValue)] = [
                ("requestId", .integer(running.id)), ("request", .string(running.kind.rawValue)),
                ("reason", .string(running.reason.rawValue)), ("since", .string(RFC3339.format(running.since))),
            ]
            if let progress = running.progress {
                var progressMembers: [(String, JSONValue)] = [("completed", .integer(progress.completed))]
                if let total = progress.total { progressMembers.append(("total", .integer(total))) }
                if let message = progress.message { progressMembers.append(("message", .string(message))) }
                fields.append(("progress", .object(progressMembers)))
            }
            return .object(fields)
        })))
        return members
    }

    static func runJSON(_ run: RunRecord) -> JSONValue {
        .object([
            ("request", .string(run.kind.rawValue)), ("reason", .string(run.reason.rawValue)),
            ("outcome", .string(run.outcome)), ("started", .string(RFC3339.format(run.started))),
            ("ended", .string(RFC3339.format(run.ended))), ("put", .integer(Int64(run.counts.put))),
            ("deleted", .integer(Int64(run.counts.deleted))), ("rejected", .integer(Int64(run.counts.rejected))),
            ("error", run.error.map(JSONValue.string) ?? .null),
        ])
    }
}
