import ReindexHost
import ReindexStore
import ReindexProtocol
import ReindexSystem

/// `reindex debug BUNDLE_ID`: the `mdutil -cr` of this host. Forces a request with every timeout
/// off, prints how to attach a debugger before the extension does any work, optionally holds it
/// until one attaches, streams its stderr and traces the protocol (then as `run`, `ForcedRun`).
package struct DebugCommand: RequestCommand, SandboxedCommand {
    package static let name = "debug"
    package static let summary = "run a request in debug mode: no timeouts, attach a debugger, trace the protocol"
    package static let discussion = """
            The request runs now, whatever the queue and backoff say, with every timeout off.
            Before the extension does any work its PID and the attach commands (lldb, gdb, a VS Code
            launch.json entry) are printed to stderr; its stderr is streamed live, prefixed 'ext|'.
            With --wait-for-debugger an SDK extension waits in the SDK's gate; any other extension is
            started stopped just before exec, so attaching and continuing starts it.
            The process name for attach-by-name tools is the executable's file name.
            The extension runs in its sandbox, as under 'reindex run' (a debugger attaches to it from
            outside all the same); the host prints what the sandbox grants.
            Ends with the same summary and exit codes as 'reindex run'. See docs/DEBUGGING.md.
            With --replay REQUEST_ID (from 'reindex runs BUNDLE_ID') it replays a recorded session
            instead: the recorded initialize, request, batch/commit replies and $/cancel, against a
            scratch index (removed afterwards), and reports whether the extension sent what it sent
            then, or its first divergence. Exit status 0 when the replay ran, matched or not; 66 when
            there is no such recording; 65 when the recording is damaged.
            """

    package static let bundle = Argument<Self, String>("BUNDLE_ID", help: "the bundle to debug")
    package static let waitForDebugger = Option<Self, Double>(
        "wait-for-debugger", optionalValue: "SECONDS",
        help: "hold the extension until a debugger attaches (give up after SECONDS; default: wait forever)",
        as: .last { (option, text) throws(ReindexError) in
            if text.isEmpty { return 0 }
            guard let seconds = Double(text), seconds >= 0 else {
                throw ReindexError(.usage, "--\(option) takes a number of seconds, got '\(text)'")
            }
            return seconds
        })
    /// `--trace` (true: whole payloads with `--trace=full`).
    package static let trace = Option<Self, Bool>(
        "trace", optionalValue: "full", help: "print every protocol message with direction, time and size (--trace=full: whole payloads)",
        completion: .values(["full"]),
        as: .last { (option, text) throws(ReindexError) in
            switch text {
            case "": return false
            case "full": return true
            default: throw ReindexError(.usage, "--\(option) takes no value or 'full', got '\(text)'")
            }
        })
    package static let scratchIndex = Flag<Self>("scratch-index", help: "run against a throwaway copy of the index file (a SQLite index)")
    package static let printAttach = Flag<Self>("print-attach", help: "print the process name and attach commands, then go on without waiting")
    package static let noSandbox = Flag<Self>("no-sandbox", help: "run the extension without its sandbox (to tell whether the sandbox is what stops it)")
    package static let replay = Option<Self, Int>("replay", value: "REQUEST_ID",
                                                  help: "replay the recorded session of this request (see 'reindex runs') against a scratch index and compare",
                                                  as: .positiveInteger)
    package static let arguments: [any DeclaredArgument<Self>] = [bundle]
    package static var options: [any DeclaredOption<Self>] {
        requestOptions + [reason, waitForDebugger, trace, scratchIndex, printAttach, noSandbox, requireSandbox, replay]
    }

    package let bundle: String
    package let request: RequestSelection.Asked
    /// Seconds to wait for a debugger (0: for ever), or nil not to wait.
    package let waitSeconds: Double?
    /// nil: no trace; true: whole payloads.
    package let traceFull: Bool?
    package let scratchIndex: Bool
    package let printAttach: Bool
    package let noSandbox: Bool
    package let requireSandbox: Bool
    /// The request whose recorded session is replayed, or nil for a new request.
    package let replayRequest: Int?

    package init(_ arguments: Arguments<Self>) throws(ReindexError) {
        bundle = arguments[Self.bundle]
        request = try Self.request(arguments)
        waitSeconds = try arguments.value(Self.waitForDebugger)
        traceFull = try arguments.value(Self.trace)
        scratchIndex = arguments[Self.scratchIndex]
        printAttach = arguments[Self.printAttach]
        noSandbox = arguments[Self.noSandbox]
        requireSandbox = arguments[Self.requireSandbox]
        replayRequest = try arguments.value(Self.replay)
        if replayRequest != nil && (request.ids != nil || request.idsFrom != nil || request.resume) {
            throw ReindexError(.usage, "--replay plays the recorded request as it was: it takes no --ids, --ids-from or --resume")
        }
    }

    package func run(_ context: CommandContext) throws -> Int32 {
        let bundle = try context.findBundle(self.bundle)
        if let replayRequest { return try ReplayRun.execute(self, requestID: Int64(replayRequest), bundle: bundle, context: context) }
        let selection = try RequestSelection(request)

        // The index: the real one, or a throwaway copy of it.
        var indexPath = context.paths.index
        var scratchDirectory: String? = nil
        defer { if let scratchDirectory { BundleLint.removeTree(scratchDirectory) } }
        if scratchIndex {
            let directory = FileSystem.join(context.environment["TMPDIR"] ?? "/tmp", "reindex-debug-\(getpid())")
            try FileSystem.makeDirectories(directory)
            scratchDirectory = directory
            indexPath = try Index.scratchCopy(of: context.paths.index, in: directory)
            Console.err("debug: using a scratch copy of the index: \(indexPath) (removed afterwards)")
        }
        var scratchContext = context
        scratchContext.paths.index = indexPath
        if scratchDirectory != nil { scratchContext.paths.logs = FileSystem.join(scratchDirectory!, "logs") }
        let store = try scratchContext.openIndex()
        var options = try sessionOptions(bundle: bundle, context: context, scratchContext: scratchDirectory != nil ? scratchContext : nil)
        // A session against a scratch copy is not recorded: its request ids are the copy's.
        if scratchDirectory == nil { options.recordsAs = "debug" }
        return try ForcedRun.execute(context: scratchContext, bundle: bundle, selection: selection, options: options, store: store).status
    }

    /// The session options of debug mode (`scratchContext`: the paths of a scratch index the
    /// session uses instead of the real one, which then stays out of the extension's reach too).
    func sessionOptions(bundle: DiscoveredBundle, context: CommandContext, scratchContext: CommandContext?) throws(ReindexError) -> SessionOptions {
        let waitSeconds = self.waitSeconds, printAttach = self.printAttach
        var options = SessionOptions()
        options.debug = true
        options.sandbox = try SandboxReport.options(required: requireSandbox, disabled: noSandbox, context: context)
        options.sandbox.paths = (scratchContext ?? context).paths
        // Against a scratch copy the real index, locks and logs stay out of reach too.
        if scratchContext != nil { options.sandbox.alsoProtect = [context.paths] }
        // No timeouts at all: after the acknowledgement the extension may sit at a breakpoint
        // for as long as the developer likes; Ctrl-C moves the shutdown on.
        options.exitGraceSeconds = .infinity
        options.waitForDebuggerSeconds = waitSeconds
        // A host killed outright takes the extension with it: nothing stays waiting in a gate.
        options.diesWithHost = true
        // debugpy and Node's inspector listen on a loopback port (and debugpy talks to its adapter
        // on another), so TCP is allowed in debug mode whatever the manifest says.
        options.sandbox.allowsNetwork = true
        let gate = Debugging.implementsGate(bundle)
        // Without a gate, nothing listens for debugpy or the inspector: only native debuggers fit.
        let runtime = gate ? Debugging.runtime(bundle) : .native
        let scriptRuntime = Debugging.runtime(bundle)
        // --print-attach prints the commands and goes on: nothing waits.
        if printAttach { options.waitForDebuggerSeconds = nil }
        // An extension with a gate waits in it, and its reply to initialize is the sign that a
        // debugger attached (or the gate gave up); the host waits for that reply, as always,
        // stoppable by Ctrl-C. Any other extension is held before exec, and the host waits,
        // stoppably too, until a debugger traces it.
        let holds = !printAttach && !gate && waitSeconds != nil
        options.holdBeforeExecSeconds = holds ? waitSeconds : nil
        options.waitForTracerSeconds = holds ? waitSeconds : nil
        let name = Debugging.processName(bundle)
        options.onStderrLine = { Console.err("ext| \($0)") }
        if let traceFull {
            let printer = TracePrinter(full: traceFull)
            options.onTrace = { printer.record($0, $1) }
        }
        let environment = context.environment
        options.onSpawn = { process in
            Console.err("debug: \(bundle.identifier): extension pid \(process.pid), process name \(name), \(scriptRuntime == .native ? "native code" : scriptRuntime.rawValue)")
            if let launch = process.launch { Console.err("debug: \(launch.summary)") }
            Console.err("debug: timeouts are off; \(runtime.debugger) fits this extension; attach with one of:")
            for command in Debugging.attachCommands(pid: process.pid, bundle: bundle, runtime: runtime, environment: environment) { Console.err("  \(command)") }
            guard let waitSeconds, !printAttach else { return }
            let limit = waitSeconds > 0 ? " (giving up after \(Int(waitSeconds)) s)" : ""
            if gate {
                Console.err("debug: waiting for a debugger to attach to pid \(process.pid)\(limit): it waits in the SDK's debugger gate until \(runtime.debugger) attaches; Ctrl-C stops it")
            } else {
                Console.err("debug: waiting for a debugger to attach to pid \(process.pid)\(limit); it is held just before exec: attach, then continue, and the debugger follows the exec into the extension; Ctrl-C stops it")
                if scriptRuntime != .native {
                    Console.err("debug: this \(scriptRuntime.rawValue) script does not use the SDK, so only a native debugger can attach before it runs; to debug its \(scriptRuntime.rawValue) code, use the SDK's gate (see docs/DEBUGGING.md)")
                }
            }
        }
        let report: (Int32, Bool) -> Void = { pid, attached in
            if attached {
                Console.err("debug: debugger attached to pid \(pid)")
            } else if let waitSeconds {
                Console.err("debug: no debugger attached within \(Int(waitSeconds)) s; going on without one")
            }
        }
        options.onTracerWaitEnded = report
        if gate && waitSeconds != nil && !printAttach {
            // The gate answered initialize: it opened. A native debugger is seen in /proc; for
            // debugpy and the inspector the gate's own line (ext|) says who came.
            options.onInitialized = { process in
                if runtime == .native {
                    report(process.pid, Debugging.isTraced(process.pid) == true)
                } else {
                    Console.err("debug: the gate opened: the extension runs (its line above says whether \(runtime.debugger) attached)")
                }
            }
        }
        return options
    }
}
