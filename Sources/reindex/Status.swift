import ReindexHost
import ReindexProtocol

extension Reindex {
    static func status(_ context: CommandContext) throws -> Int32 {
        let store = try context.openStore()
        let discovered = Discovery.discover(context.paths).bundles
        var identifiers: [String] = discovered.map(\.identifier)
        var seen = Set(identifiers.map { $0.lowercased() })
        for known in try store.knownBundles() where seen.insert(known.key).inserted { identifiers.append(known.identifier) }
        let statuses = try identifiers.map { identifier throws -> BundleStatus in try store.status(bundle: identifier) }
        let healthy = store.openReport.lostReason == nil
        var warnings: [String: String] = [:]
        for bundle in discovered { warnings[bundle.key] = SandboxReport.bundleWarning(bundle) }
        if context.json {
            Console.json(.object([
                ("index", .object([("path", .string(store.path)), ("healthy", .bool(healthy))])),
                ("sandbox", SandboxSupport.current.json),
                ("bundles", .array(statuses.map { status in
                    var members: [(String, JSONValue)] = [
                        ("bundleIdentifier", .string(status.bundleIdentifier)),
                        ("items", .integer(Int64(status.items))),
                        ("pending", .integer(Int64(status.pending + status.running))),
                        ("failed", .integer(Int64(status.failed))),
                    ]
                    if !status.failedReasons.isEmpty { members.append(("failures", .array(status.failedReasons.map(JSONValue.string)))) }
                    if let run = status.lastRun { members.append(("lastRun", runJSON(run))) }
                    if let warning = warnings[status.bundleIdentifier.lowercased()] { members.append(("warnings", .array([.string(warning)]))) }
                    return .object(members)
                })),
            ]))
            return 0
        }
        Console.out("Index: \(store.path) (\(healthy ? "healthy" : "was lost and recreated"))")
        Console.out("Sandbox: \(SandboxSupport.current)")
        if statuses.isEmpty { Console.out("No bundles.") }
        for status in statuses {
            var line = "\(status.bundleIdentifier): \(status.items) item(s)"
            if status.pending + status.running > 0 { line += ", \(status.pending + status.running) queued" }
            if status.failed > 0 { line += ", \(status.failed) failed" }
            Console.out(line)
            for reason in status.failedReasons { Console.out("    failed: \(reason)") }
            if let warning = warnings[status.bundleIdentifier.lowercased()] { Console.out("    warning: \(warning)") }
            if let run = status.lastRun {
                Console.out("    last run: \(run.kind.rawValue) (\(run.reason)) \(run.outcome) at \(RFC3339.format(run.ended)): put \(run.counts.put), deleted \(run.counts.deleted), rejected \(run.counts.rejected)" + (run.error.map { " — \($0)" } ?? ""))
            }
        }
        return 0
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

    static func check(_ context: CommandContext) throws -> Int32 {
        let store = try context.openStore()
        let problems = try store.integrityCheck()
        let lost = store.openReport.lostReason
        if context.json {
            Console.json(.object([("index", .string(store.path)), ("healthy", .bool(problems.isEmpty && lost == nil)),
                                  ("problems", .array(problems.map(JSONValue.string))), ("lostReason", lost.map(JSONValue.string) ?? .null)]))
        } else if problems.isEmpty && lost == nil {
            Console.out("\(store.path): healthy")
        } else {
            if let lost { Console.out("\(store.path): was lost (\(lost)) and has been recreated; rebuilds are queued") }
            for problem in problems { Console.out("\(store.path): \(problem)") }
        }
        if !problems.isEmpty {
            Console.err("error: the index at \(store.path) is damaged; run 'reindex reset' to rebuild it from the extensions")
            return ReindexError.Code.invalidData.exitCode
        }
        return 0
    }

    static func reset(_ context: CommandContext) throws -> Int32 {
        let aside = try IndexStore.erase(path: context.paths.index)
        let store = try IndexStore.open(path: context.paths.index)
        let queued = context.queueIndexLost(store)
        if context.json {
            Console.json(.object([("index", .string(store.path)), ("keptAs", aside.map(JSONValue.string) ?? .null), ("queued", .integer(Int64(queued)))]))
        } else {
            Console.out("\(store.path): erased" + (aside.map { " (the old database is kept as \($0))" } ?? "") + "; queued reindexAll (indexLost) for \(queued) bundle(s)")
        }
        return 0
    }
}
