import ReindexHost
import ReindexStore
import ReindexProtocol
import ReindexSystem

/// `reindex debug`: the `mdutil -cr` of this host. Forces a request with every timeout off,
/// prints how to attach a debugger before the extension does any work, optionally holds it
/// until one attaches, streams its stderr and traces the protocol.
public enum DebugRun {
    public static func execute(context: CommandContext) throws(ReindexError) -> Int32 {
        let bundle = try context.findBundle(context.arguments.positional[0])
        let selection = try RequestSelection(context)
        let arguments = context.arguments
        var waitSeconds: Double? = nil
        if let text = arguments.value("wait-for-debugger") {
            if text.isEmpty {
                waitSeconds = 0
            } else {
                guard let seconds = Double(text), seconds >= 0 else {
                    throw ReindexError(.usage, "--wait-for-debugger takes a number of seconds, got '\(text)'")
                }
                waitSeconds = seconds
            }
        }
        let traceFull: Bool
        switch arguments.value("trace") {
        case nil, ""?: traceFull = false
        case "full"?: traceFull = true
        case let other?: throw ReindexError(.usage, "--trace takes no value or 'full', got '\(other)'")
        }
        let tracing = arguments.has("trace")

        // The index: the real one, or a throwaway copy of it.
        var indexPath = context.paths.index
        var scratchDirectory: String? = nil
        if arguments.flag("scratch-index") {
            let directory = FileSystem.join(context.environment["TMPDIR"] ?? "/tmp", "reindex-debug-\(getpid())")
            try FileSystem.makeDirectories(directory)
            scratchDirectory = directory
            indexPath = FileSystem.join(directory, "index.sqlite")
            if FileSystem.exists(context.paths.index) {
                let real = try IndexStore.open(path: context.paths.index)
                do { try real.copy(to: indexPath) } catch {
                    throw ReindexError(.ioError, "cannot copy the index to a scratch file: \(error)")
                }
            }
            Console.err("debug: using a scratch copy of the index: \(indexPath) (removed afterwards)")
        }
        defer { if let scratchDirectory { BundleLint.removeTree(scratchDirectory) } }
        var scratchContext = context
        scratchContext.paths.index = indexPath
        if scratchDirectory != nil { scratchContext.paths.logs = FileSystem.join(scratchDirectory!, "logs") }
        let store = try scratchContext.openStore()

        var options = SessionOptions()
        options.debug = true
        options.sandbox = try SandboxReport.options(context)
        options.sandbox.paths = scratchContext.paths
        // Against a scratch copy the real index, locks and logs stay out of reach too.
        if scratchDirectory != nil { options.sandbox.alsoProtect = [context.paths] }
        // No timeouts at all: after the acknowledgement the extension may sit at a breakpoint
        // for as long as the developer likes; Ctrl-C moves the shutdown on.
        options.exitGraceSeconds = .infinity
        options.waitForDebuggerSeconds = waitSeconds
        let gate = Debugging.implementsGate(bundle)
        let printAttach = arguments.flag("print-attach")
        // --print-attach prints the commands and goes on: nothing waits.
        if printAttach { options.waitForDebuggerSeconds = nil }
        options.holdBeforeExecSeconds = (printAttach || gate) ? nil : waitSeconds
        let name = Debugging.processName(bundle)
        options.onStderrLine = { Console.err("ext| \($0)") }
        if tracing {
            let printer = TracePrinter(full: traceFull)
            options.onTrace = { printer.record($0, $1) }
        }
        // Read here, not in the closure: capturing `options` would box it, and the box would hold
        // the closure that holds the box (a cycle LeakSanitizer reports).
        let heldBeforeExec = options.holdBeforeExecSeconds != nil
        options.onSpawn = { process in
            Console.err("debug: \(bundle.identifier): extension pid \(process.pid), process name \(name)")
            if let launch = process.launch { Console.err("debug: \(launch.summary)") }
            Console.err("debug: timeouts are off; attach with one of:")
            for command in Debugging.attachCommands(pid: process.pid, bundle: bundle) { Console.err("  \(command)") }
            guard let waitSeconds, !printAttach else { return }
            let how = heldBeforeExec
                ? "it is held just before exec; attach, then continue: the debugger follows the exec into the extension"
                : "it waits in the SDK's debugger gate"
            let limit = waitSeconds > 0 ? " (giving up after \(Int(waitSeconds)) s)" : ""
            Console.err("debug: waiting for a debugger to attach to pid \(process.pid)\(limit); \(how)")
            let attached = Debugging.waitForTracer(pid: process.pid, seconds: waitSeconds)
            if attached {
                Console.err("debug: debugger attached to pid \(process.pid)")
            } else {
                Console.err("debug: no debugger attached within \(Int(waitSeconds)) s; going on without one")
            }
        }
        return try ForcedRun.execute(context: scratchContext, bundle: bundle, selection: selection, options: options, store: store).status
    }
}
