import ReindexProtocol

/// Which way a protocol message went.
public enum TraceDirection: String, Sendable {
    case toExtension = "host→ext"
    case fromExtension = "ext→host"
}

/// How a session behaves: timeouts, debug mode, and hooks for progress, tracing and stderr.
public struct SessionOptions {
    /// Debug mode: `REINDEX_DEBUG=1`, `initialize` says `debug: true`, and no timeouts apply.
    public var debug = false
    /// Seconds the extension should wait for a debugger (`REINDEX_WAIT_FOR_DEBUGGER`; 0 = forever).
    public var waitForDebuggerSeconds: Double? = nil
    /// Hold the process before `exec` until a debugger traces it (for extensions without the
    /// SDK's gate): seconds, 0 = forever, nil = do not hold.
    public var holdBeforeExecSeconds: Double? = nil
    /// After spawning, wait (on the host's side, cancellably) until a debugger traces the process:
    /// seconds, 0 = forever, nil = do not wait. For an extension held before `exec`.
    public var waitForTracerSeconds: Double? = nil
    /// Told the process and whether a debugger attached when that wait ends.
    public var onTracerWaitEnded: ((Int32, Bool) -> Void)? = nil
    /// Called once the extension answered `initialize` (debug mode: an SDK's gate opened).
    public var onInitialized: ((ExtensionProcess) -> Void)? = nil
    /// The kernel kills the extension if the host dies, even by SIGKILL (debug mode: nothing may
    /// be left waiting in a debugger gate).
    public var diesWithHost = false
    /// A descriptor that becomes readable when the request should be cancelled (Ctrl-C, SIGTERM).
    public var cancelFD: Int32? = nil
    /// How long an extension has to answer `$/cancel` before it is stopped.
    public var cancelGraceSeconds: Double = 5
    /// Shutdown: seconds after closing stdin before SIGTERM, and after SIGTERM before SIGKILL.
    public var exitGraceSeconds: Double = 5
    public var termGraceSeconds: Double = 2
    public var environment: [String: String] = [:]
    public var onProgress: ((ProgressParams) -> Void)? = nil
    public var onTrace: ((TraceDirection, UnsafeRawBufferPointer) -> Void)? = nil
    public var onStderrLine: ((String) -> Void)? = nil
    /// Lint mode (`validate --run`): protocol problems the session can survive are reported here
    /// and the session goes on, so one run shows every problem; others still end the request.
    public var onRecoverableViolation: ((String) -> Void)? = nil
    /// The protocol versions `initialize` offers (the conformance suite offers only an unsupported
    /// one, to see the extension decline); nil: the host's own.
    public var offeredProtocolVersions: [Int]? = nil
    /// Called once the process exists (debug mode prints the attach commands here).
    public var onSpawn: ((ExtensionProcess) -> Void)? = nil
    /// The sandbox: Landlock rules, private directories, `--require-sandbox`, `--no-sandbox`.
    public var sandbox = SandboxOptions()
    /// Record the session (`Recording.swift`) as run by this command ("run", "serve", "debug"),
    /// unless the manifest says `"record": false`; nil: not recorded.
    public var recordsAs: String? = nil
    /// Replay mode: the host's side comes from this recording, and the extension's messages are
    /// compared with it (`ReplayPlayer.swift`); nothing the host would send of its own is sent.
    public var replay: ReplayPlayer? = nil

    public init() {}
}
