import ReindexStore
import ReindexSystem
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
        // Refused before any check runs: the suite would only fail every check for the same reason.
        try SandboxLaunch.checkRequired(bundle: bundle, options: sandbox)
        let report = try BundleLint.run(bundle: bundle, environment: context.environment, only: context.arguments.value("check"), sandbox: sandbox)
        let status: Int32 = report.passed ? 0 : ReindexError.Code.invalidData.exitCode
        if context.json {
            Console.json(.object([
                ("bundleIdentifier", .string(bundle.identifier)), ("valid", .bool(report.passed)),
                ("checks", .array(report.checks.map { check in
                    .object([("name", .string(check.name)), ("rule", .string(check.rule)), ("result", .string(check.result.rawValue)),
                             ("evidence", .string(check.evidence))])
                })),
                ("put", .integer(Int64(report.counts.put))), ("deleted", .integer(Int64(report.counts.deleted))),
                ("rejected", .integer(Int64(report.counts.rejected))),
                ("warnings", .array(warnings.map(JSONValue.string))),
            ]))
        } else {
            let width = (report.checks.map(\.name.count).max() ?? 0) + 2
            for check in report.checks {
                let mark = check.result == .pass ? "pass" : check.result == .fail ? "FAIL" : "skip"
                Console.out("\(mark)  \(check.name)\(String(repeating: " ", count: max(1, width - check.name.count)))\(check.evidence)")
            }
            let failed = report.checks.filter { $0.result == .fail }.count
            Console.out("\(bundle.identifier): " + (report.passed ? "every check passed" : "\(failed) check(s) failed"))
        }
        if !report.passed {
            let names = report.checks.filter { $0.result == .fail }.map(\.name).joined(separator: ", ")
            Console.report(ReindexError(.invalidData, "\(bundle.identifier): the conformance suite failed: \(names)", stderrTail: report.stderrTail))
        }
        return status
    }
}
