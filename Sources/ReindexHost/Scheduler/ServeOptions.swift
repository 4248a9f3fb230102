import ReindexStore
import ReindexProtocol
import ReindexSystem

/// How `reindex serve` behaves.

public struct ServeOptions: Sendable {
    /// At most this many extensions run at once (never two of one bundle).
    public var concurrency = 2
    /// A bundle missing from the search path this long has its items removed.
    public var removalGraceSeconds: Double = 3600
    /// Rescan the search path at least this often, whatever inotify says (the polling fallback).
    public var rescanSeconds: Double = 5
    /// Look at the queue (requests queued by other processes) at least this often.
    public var tickSeconds: Double = 1
    /// Backoff between failed attempts.
    public var backoff = Backoff()
    public var environment: [String: String] = [:]
    /// The extension shutdown sequence (close stdin, SIGTERM, SIGKILL) and the $/cancel grace.
    public var exitGraceSeconds: Double = 5
    public var termGraceSeconds: Double = 2
    public var cancelGraceSeconds: Double = 5
    /// The extensions' sandbox (`--require-sandbox`); its paths are the server's.
    public var sandbox = SandboxOptions()

    public init() {}
}

extension ServeOptions {
    /// The session options of one request a serve worker runs.
    func session(for worker: Worker, paths: HostPaths) -> SessionOptions {
        var session = SessionOptions()
        session.environment = environment
        session.cancelFD = worker.cancelRead
        session.exitGraceSeconds = exitGraceSeconds
        session.termGraceSeconds = termGraceSeconds
        session.cancelGraceSeconds = cancelGraceSeconds
        session.sandbox = sandbox
        session.sandbox.paths = paths
        session.recordsAs = "serve"
        return session
    }
}
