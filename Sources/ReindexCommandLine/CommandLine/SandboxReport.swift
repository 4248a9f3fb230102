import ReindexHost
import ReindexStore
import ReindexSystem
import ReindexProtocol

/// What the commands say about the sandbox: the options `--require-sandbox` and `--no-sandbox`,
/// the warnings before a run, the checks of a manifest's declared paths, and what `validate`,
/// `list`, `status` and `paths` show.
package enum SandboxReport {
    /// `--require-sandbox` and (for `debug`) `--no-sandbox`, for the command's host paths.
    package static func options(required: Bool, disabled: Bool = false, context: CommandContext) throws(ReindexError) -> SandboxOptions {
        var options = SandboxOptions()
        options.required = required
        options.disabled = disabled
        if options.required && options.disabled {
            throw ReindexError(.usage, "--require-sandbox and --no-sandbox cannot be used together")
        }
        options.paths = context.paths
        return options
    }

    /// Before a run: says (`warning: …` on stderr) when the extension will not run as its
    /// manifest asks, and refuses a manifest whose declared paths reach what no extension may
    /// (exit 65, naming the key). `--require-sandbox` refusals come from the start itself (69).
    package static func prepare(_ bundle: DiscoveredBundle, options: SandboxOptions, context: CommandContext) throws(ReindexError) {
        if !options.required {
            for warning in SandboxSupport.current.warnings(for: bundle, options: options) { Console.err("warning: \(warning)") }
        }
        guard bundle.manifest.sandbox.isEnabled, !options.disabled, SandboxSupport.current.abi != nil else { return }
        _ = try SandboxProfile.preview(bundle: bundle, paths: options.paths ?? context.paths, alsoProtect: options.alsoProtect,
                                       hostEnvironment: context.environment)
    }

    /// The warnings `list`, `status` and `validate` show for a bundle: its sandbox turned off,
    /// and a `#!` interpreter this machine does not have (the kernel would say "no such file" for
    /// the script itself at every start).
    package static func bundleWarnings(_ bundle: DiscoveredBundle) -> [String] {
        var warnings: [String] = []
        if !bundle.manifest.sandbox.isEnabled { warnings.append(SandboxOptions.offWarning) }
        if let interpreter = InterpreterResolver.missingInterpreter(of: bundle.executablePath, workingDirectory: bundle.directory) {
            warnings.append("the executable's #! line names \(interpreter), which does not exist here: the extension cannot start")
        }
        return warnings
    }

    /// `validate`'s account of the sandbox: what the bundle gets beyond the system, and notes.
    package static func describe(_ profile: SandboxProfile?, bundle: DiscoveredBundle) -> [String] {
        let support = SandboxSupport.current
        guard bundle.manifest.sandbox.isEnabled else { return ["sandbox: off (\"sandbox\": false in the manifest)"] }
        guard let profile else { return ["sandbox: \(support) — the extension runs unsandboxed here"] }
        let network = profile.network ? "network allowed" : "no TCP connections or listening (\"network\": false)"
        var lines = ["sandbox: \(support); \(network); priority \(bundle.manifest.priority.rawValue); besides the system it may use:"]
        for grant in profile.requested {
            lines.append("  \(grant.access.name): \(grant.path)  (\(grant.why))")
        }
        for note in profile.notes { lines.append("note: \(note)") }
        return lines
    }

    package static func json(_ profile: SandboxProfile?, bundle: DiscoveredBundle) -> JSONValue {
        var members: [(String, JSONValue)] = [
            ("enabled", .bool(bundle.manifest.sandbox.isEnabled)),
            ("support", SandboxSupport.current.json),
            ("network", .bool(bundle.manifest.sandbox.network)),
            ("priority", .string(bundle.manifest.priority.rawValue)),
        ]
        if let profile {
            members.append(("grants", .array(profile.requested.map { grant in
                .object([("path", .string(grant.path)), ("access", .string(grant.access.name)), ("why", .string(grant.why))])
            })))
            members.append(("notes", .array(profile.notes.map(JSONValue.string))))
        }
        return .object(members)
    }
}
