import ReindexStore
import ReindexSystem
import ReindexHost
import ReindexProtocol

/// `reindex validate DIR [--run [--check NAME]]`: checks one bundle directory; with `--run`, the
/// conformance suite (`BundleLint`).
package struct ValidateCommand: SandboxedCommand {
    package static let name = "validate"
    package static let summary = "check one bundle directory"
    package static let discussion = """
            Shows what the extension's sandbox lets it use besides the system (its directory, its
            interpreter's installation, its data and temporary directories, the manifest's
            sandbox.read and sandbox.write), and warns when its manifest turns the sandbox off.
            --run prints one line per check (pass, fail or skipped, with its evidence), or with --json
            {"bundleIdentifier", "valid", "checks": [{"name", "rule", "result", "evidence"}], "put", "deleted", "rejected"}.
            A check stops at the first violation that decides it; it never waits out a timeout.
            Exit status: 0 valid (with --run: every check passed), 65 invalid manifest (also: a declared
            path inside the index, the logs or another bundle) or a failed check, 66 no such directory,
            69 --require-sandbox refused to run it unsandboxed.
            """

    package static let directory = Argument<Self, String>("DIR", help: "the bundle directory (holding manifest.json)")
    package static let runSuite = Flag<Self>(
        "run", help: "also run the conformance suite: start the extension against a scratch index and check every rule of the protocol")
    package static let check = Option<Self, String>(
        "check", value: "NAME",
        help: "with --run, run only this check (initialize, version-negotiation, reindexAll, reindexAll-resume, reindexItems, unknown-request, cancel, batch-commit, stdout-clean, exit, no-leftover-processes)")
    package static let arguments: [any DeclaredArgument<Self>] = [directory]
    package static let options: [any DeclaredOption<Self>] = [runSuite, check, requireSandbox]

    package let directory: String
    package let runSuite: Bool
    package let check: String?
    package let requireSandbox: Bool

    package init(_ arguments: Arguments<Self>) throws(ReindexError) {
        directory = arguments[Self.directory]
        runSuite = arguments[Self.runSuite]
        check = try arguments.value(Self.check)
        requireSandbox = arguments[Self.requireSandbox]
    }

    package func run(_ context: CommandContext) throws -> Int32 {
        // The manifest's warnings (misspelt keys) first, on stderr, one `warning:` line each.
        if case .success(let bundle) = Discovery.load(directory: directory) {
            for warning in bundle.warnings { Console.err("warning: \(warning)") }
        }
        return try validate(context)
    }

    func validate(_ context: CommandContext) throws -> Int32 {
        guard FileSystem.isDirectory(directory) else {
            throw ReindexError(.bundleNotFound, "\(directory): no such bundle directory")
        }
        let bundle: DiscoveredBundle
        switch Discovery.load(directory: directory) {
        case .success(let found): bundle = found
        case .failure(let problem):
            throw ReindexError(.invalidData, problem.reason)
        }
        let sandbox = try SandboxReport.options(required: requireSandbox, context: context)
        // The sandbox it would get here: a declared path inside the index, the logs or another
        // bundle makes the manifest invalid (65).
        var profile: SandboxProfile? = nil
        if bundle.manifest.sandbox.isEnabled, SandboxSupport.current.abi != nil {
            profile = try SandboxProfile.preview(bundle: bundle, paths: context.paths, hostEnvironment: context.environment)
        }
        let warnings = SandboxReport.bundleWarnings(bundle).map { "\(bundle.identifier): \($0)" }
        if runSuite {
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

    func lint(_ bundle: DiscoveredBundle, _ context: CommandContext, sandbox: SandboxOptions, warnings: [String]) throws -> Int32 {
        for warning in SandboxSupport.current.warnings(for: bundle, options: sandbox) where !sandbox.required {
            Console.err("warning: \(warning)")
        }
        // Refused before any check runs: the suite would only fail every check for the same reason.
        try SandboxLaunch.checkRequired(bundle: bundle, options: sandbox)
        let report = try BundleLint.run(bundle: bundle, environment: context.environment, only: check, sandbox: sandbox)
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
