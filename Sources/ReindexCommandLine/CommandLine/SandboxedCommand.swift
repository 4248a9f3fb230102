/// Commands that start an extension under its sandbox: `validate`, `run`, `debug`.
package protocol SandboxedCommand: ReindexCommand {}

extension SandboxedCommand {
    package static var requireSandbox: Flag<Self> {
        Flag("require-sandbox",
             help: "refuse to run the extension unsandboxed: no Landlock here, \"sandbox\": false in its manifest, or \"network\": false the kernel cannot enforce (exit 69)")
    }
}
