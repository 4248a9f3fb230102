import ReindexHost
import ReindexProtocol

extension Reindex {
    static func validate(_ context: CommandContext) throws -> Int32 {
        let directory = context.arguments.positional[0]
        guard FileSystem.isDirectory(directory) else {
            throw ReindexError(.bundleNotFound, "\(directory): no such bundle directory")
        }
        let bundle: DiscoveredBundle
        switch Discovery.load(directory: directory) {
        case .success(let found): bundle = found
        case .failure(let problem):
            throw ReindexError(.invalidData, problem.reason)
        }
        if context.arguments.flag("run") {
            return try lint(bundle, context)
        }
        if context.json {
            Console.json(.object([("valid", true), ("bundleIdentifier", .string(bundle.identifier)),
                                  ("path", .string(bundle.directory)), ("executable", .string(bundle.executablePath)),
                                  ("manifest", bundle.manifest.json)]))
        } else {
            Console.out("\(bundle.directory): valid bundle \(bundle.identifier) \(bundle.manifest.version), executable \(bundle.executablePath)")
        }
        return 0
    }

    static func lint(_ bundle: DiscoveredBundle, _ context: CommandContext) throws -> Int32 {
        let report = try BundleLint.run(bundle: bundle, environment: context.environment)
        let status: Int32 = report.failure.map { $0.code.exitCode } ?? (report.problems.isEmpty ? 0 : ReindexError.Code.protocolViolation.exitCode)
        if context.json {
            Console.json(.object([
                ("bundleIdentifier", .string(bundle.identifier)), ("valid", .bool(status == 0)),
                ("put", .integer(Int64(report.counts.put))), ("deleted", .integer(Int64(report.counts.deleted))),
                ("rejected", .integer(Int64(report.counts.rejected))),
                ("problems", .array(report.problems.map(JSONValue.string))),
                ("error", report.failure.map { .string($0.message) } ?? .null),
            ]))
        } else {
            for note in report.notes { Console.out("\(bundle.identifier): \(note)") }
            Console.out("\(bundle.identifier): reindexAll against a scratch index: put \(report.counts.put), deleted \(report.counts.deleted), rejected \(report.counts.rejected)")
            for problem in report.problems { Console.out("problem: \(problem)") }
            if report.failure == nil && report.problems.isEmpty { Console.out("\(bundle.identifier): no protocol problems found") }
        }
        if let failure = report.failure {
            Console.report(ReindexError(failure.code, failure.message, stderrTail: report.stderrTail))
        } else if !report.problems.isEmpty {
            Console.report(ReindexError(.protocolViolation, "\(bundle.identifier): \(report.problems.count) protocol problem(s) found"))
        }
        return status
    }
}
