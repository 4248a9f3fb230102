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
        let sandbox = try SandboxReport.options(context)
        // The sandbox it would get here: a declared path inside the index, the logs or another
        // bundle makes the manifest invalid (65).
        var profile: SandboxProfile? = nil
        if bundle.manifest.sandbox.isEnabled, SandboxSupport.current.abi != nil {
            profile = try SandboxProfile.preview(bundle: bundle, paths: context.paths, hostEnvironment: context.environment)
        }
        let warnings = SandboxReport.bundleWarning(bundle).map { ["\(bundle.identifier): \($0)"] } ?? []
        if context.arguments.flag("run") {
            return try lint(bundle, context, sandbox: sandbox, warnings: warnings)
        }
        if context.json {
            Console.json(.object([("valid", true), ("bundleIdentifier", .string(bundle.identifier)),
                                  ("path", .string(bundle.directory)), ("executable", .string(bundle.executablePath)),
                                  ("manifest", bundle.manifest.json), ("sandbox", SandboxReport.json(profile, bundle: bundle)),
                                  ("warnings", .array(warnings.map(JSONValue.string)))]))
        } else {
            Console.out("\(bundle.directory): valid bundle \(bundle.identifier) \(bundle.manifest.version), executable \(bundle.executablePath)")
            for line in SandboxReport.describe(profile, bundle: bundle) { Console.out(line) }
        }
        for warning in warnings { Console.err("warning: \(warning)") }
        return 0
    }

    static func lint(_ bundle: DiscoveredBundle, _ context: CommandContext, sandbox: SandboxOptions, warnings: [String]) throws -> Int32 {
        for warning in SandboxSupport.current.warnings(for: bundle, options: sandbox) where !sandbox.required {
            Console.err("warning: \(warning)")
        }
        let report = try BundleLint.run(bundle: bundle, environment: context.environment, sandbox: sandbox)
        let status: Int32 = report.failure.map { $0.code.exitCode } ?? (report.problems.isEmpty ? 0 : ReindexError.Code.protocolViolation.exitCode)
        if context.json {
            Console.json(.object([
                ("bundleIdentifier", .string(bundle.identifier)), ("valid", .bool(status == 0)),
                ("put", .integer(Int64(report.counts.put))), ("deleted", .integer(Int64(report.counts.deleted))),
                ("rejected", .integer(Int64(report.counts.rejected))),
                ("problems", .array(report.problems.map(JSONValue.string))),
                ("warnings", .array(warnings.map(JSONValue.string))),
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
