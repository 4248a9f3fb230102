import ReindexHost
import ReindexProtocol

extension StatusCommand {
    /// `reindex status` of a PostgreSQL index: the bundles as for SQLite, with the hosts that
    /// have each installed, and the fleet's workers with what each runs now.
    static func fleetStatus(_ context: CommandContext, _ store: any FleetQueue) throws -> Int32 {
        let discovered = Discovery.discover(context.paths).bundles
        var identifiers: [String] = discovered.map(\.identifier)
        var seen = Set(identifiers.map { $0.lowercased() })
        for known in try store.knownBundles() where seen.insert(known.key).inserted { identifiers.append(known.identifier) }
        let statuses = try identifiers.map { try store.status(bundle: $0) }
        let workers = try store.workers()
        let installed = Set(discovered.map(\.key))
        if context.json {
            Console.json(.object([
                ("index", .object([("path", .string(store.displayLocation)), ("healthy", .bool(true))])),
                ("bundles", .array(try statuses.map { status in
                    var members = bundleJSON(status)
                    members.append(("installed", .bool(installed.contains(status.bundleIdentifier.lowercased()))))
                    members.append(("hosts", .array(try store.hosts(bundle: status.bundleIdentifier).map(JSONValue.string))))
                    return .object(members)
                })),
                ("workers", .array(workers.map(\.json))),
            ]))
            return 0
        }
        Console.out("Index: \(store.displayLocation)")
        if statuses.isEmpty { Console.out("No bundles.") }
        for status in statuses {
            let hosts = try store.hosts(bundle: status.bundleIdentifier)
            Console.out("\(status.bundleIdentifier): \(status.items) item(s), \(status.pending) pending, \(status.running) running, \(status.failed) failed"
                + (hosts.isEmpty ? "; installed on no host" : "; installed on \(hosts.joined(separator: ", "))"))
            if let run = status.lastRun { Console.out("  last run: \(run.kind.rawValue) \(run.outcome) at \(RFC3339.format(run.ended))") }
            for reason in status.failedReasons { Console.out("  failed: \(reason)") }
        }
        Console.out("Workers: \(workers.isEmpty ? "none" : "")")
        for worker in workers {
            Console.out("  \(worker.host) pid \(worker.pid), last seen \(RFC3339.format(worker.lastSeen))"
                + (worker.running.isEmpty ? ", idle" : ", running \(worker.running.joined(separator: ", "))"))
        }
        return 0
    }
}
