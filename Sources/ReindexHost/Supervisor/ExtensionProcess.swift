import ReindexSystem
import ReindexStore
import CReindexSystem
import ReindexProtocol

/// A running extension: its own process group, with the host holding the other ends of its
/// stdin, stdout and stderr (all non-blocking, close-on-exec). The process is always reaped.
public final class ExtensionProcess {
    public let pid: pid_t
    public private(set) var stdinFD: Int32
    public private(set) var stdoutFD: Int32
    public private(set) var stderrFD: Int32
    /// Reads EOF once the child has exec'd, or (stage, errno) if it failed before.
    private var statusFD: Int32
    /// Polls readable once the process has ended (a pidfd), or -1 where the system has none:
    /// a wait for the exit wakes at once instead of at its next timeout.
    public private(set) var exitFD: Int32 = -1
    public private(set) var exit: ProcessExit?
    /// The CPU time (user + system) the process used, once it has been reaped.
    public private(set) var cpuSeconds: Double?
    /// Whether the child waits for a debugger before `exec` (debug mode).
    public let waitsBeforeExec: Bool
    /// The sandbox, priority and private directories the process was started with.
    public let launch: SandboxLaunch?

    /// Spawns `bundle`'s executable in the bundle directory with `environment`.
    ///
    /// With `waitForTracerBeforeExec` (seconds, 0 = forever), the child waits right before `exec`
    /// until a debugger traces it, so the debugger follows the exec and sees the extension from
    /// its first instruction; it execs anyway when the time is up. With `launch`, the child
    /// takes its priority and enters its sandbox before that wait (so a debugger attaches to the
    /// process as it will run); its private temporary directory is removed when the process is
    /// done with (`removePrivateTemporaryDirectory`, or at the latest when this object goes).
    /// With `diesWithHost` (debug mode) the kernel kills the process when the host dies, even
    /// by SIGKILL (Linux).
    public init(bundle: DiscoveredBundle, environment: [String: String], waitForTracerBeforeExec: Double? = nil,
                launch: SandboxLaunch? = nil, diesWithHost: Bool = false) throws(ReindexError) {
        let id = bundle.identifier
        self.launch = launch
        var inPipe: [Int32] = [-1, -1], outPipe: [Int32] = [-1, -1], errPipe: [Int32] = [-1, -1]
        func closeAll() { for fd in inPipe + outPipe + errPipe where fd >= 0 { close(fd) } }
        guard reindex_pipe_cloexec(&inPipe) == 0, reindex_pipe_cloexec(&outPipe) == 0, reindex_pipe_cloexec(&errPipe) == 0 else {
            let e = errno
            closeAll()
            launch?.removeTemporaryDirectory()
            throw ReindexError(.cannotStart, "\(id): cannot create pipes: \(FileSystem.errnoText(e))", errno: e)
        }
        let arguments = [bundle.executablePath] + bundle.manifest.arguments
        let environmentLines = environment.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }
        var argv: [UnsafeMutablePointer<CChar>?] = arguments.map { strdup($0) } + [nil]
        var envp: [UnsafeMutablePointer<CChar>?] = environmentLines.map { strdup($0) } + [nil]
        defer {
            for p in argv { free(p) }
            for p in envp { free(p) }
        }
        var childPID: pid_t = 0
        var status: Int32 = -1
        let limits = bundle.manifest.limits
        let rc = SpawnedChildren.shared.withLock { spawned in bundle.executablePath.withCString { path in
            bundle.directory.withCString { cwd in
                argv.withUnsafeMutableBufferPointer { argvBuffer in
                    envp.withUnsafeMutableBufferPointer { envpBuffer in
                        Self.withSettings(launch) { niceAtLeast, ioIdle, noNewPrivileges, sandbox in
                            var config = reindex_spawn_config(
                                path: path, argv: argvBuffer.baseAddress, envp: envpBuffer.baseAddress, cwd: cwd,
                                stdin_fd: inPipe[0], stdout_fd: outPipe[1], stderr_fd: errPipe[1],
                                wait_for_tracer: waitForTracerBeforeExec.map { Int32(min($0.rounded(.up), 1e6)) } ?? -1,
                                rlimit_as_bytes: Int64(limits.addressSpaceMiB ?? 0) * 1024 * 1024,
                                rlimit_cpu_seconds: Int64(limits.cpuSeconds ?? 0),
                                nice_at_least: niceAtLeast, io_idle: ioIdle, no_new_privs: noNewPrivileges, sandbox: sandbox,
                                die_with_parent: diesWithHost ? 1 : 0, parent_pid: getpid(),
                                reap_descendants: Self.adoptsOrphans ? 1 : 0)
                            let rc = reindex_spawn(&config, &childPID, &status)
                            if rc == 0 { spawned.insert(childPID) }
                            return rc
                        }
                    }
                }
            }
        } }
        close(inPipe[0]); close(outPipe[1]); close(errPipe[1])
        guard rc == 0 else {
            let e = errno
            close(inPipe[1]); close(outPipe[0]); close(errPipe[0])
            launch?.removeTemporaryDirectory()
            throw ReindexError(.cannotStart, "\(id): cannot start \(bundle.executablePath): fork failed: \(FileSystem.errnoText(e))", errno: e)
        }
        pid = childPID
        exitFD = reindex_exit_fd(childPID)
        stdinFD = inPipe[1]
        stdoutFD = outPipe[0]
        stderrFD = errPipe[0]
        statusFD = status
        waitsBeforeExec = waitForTracerBeforeExec != nil
        reindex_set_nonblocking(stdinFD, 1)
        reindex_set_nonblocking(stdoutFD, 1)
        reindex_set_nonblocking(stderrFD, 1)
        if !waitsBeforeExec {
            try checkExec(bundle: bundle)
        }
    }

    /// The launch's settings for the C shim, or the defaults (no sandbox, priority unchanged).
    private static func withSettings<T>(_ launch: SandboxLaunch?, _ body: (Int32, Int32, Int32, UnsafePointer<reindex_sandbox>?) -> T) -> T {
        guard let launch else { return body(-1, 0, 0, nil) }
        return launch.withSpawnSettings(body)
    }

    /// Removes the private temporary directory the extension was given; call once it and its
    /// process group have ended.
    public func removePrivateTemporaryDirectory() {
        launch?.removeTemporaryDirectory()
    }

    /// Waits for the exec to happen (or fail) and reports a failure before exec precisely.
    public func checkExec(bundle: DiscoveredBundle) throws(ReindexError) {
        guard statusFD >= 0 else { return }
        var payload: (Int32, Int32) = (0, 0)
        let n = withUnsafeMutableBytes(of: &payload) { buffer in retryingOnInterrupt { read(statusFD, buffer.baseAddress, buffer.count) } }
        close(statusFD)
        statusFD = -1
        guard n == MemoryLayout<(Int32, Int32)>.size else { return }
        _ = waitForExit(blocking: true)
        closePipes()
        removePrivateTemporaryDirectory()
        let (stage, code) = payload
        let what: String
        switch stage {
        case 1: what = "cannot enter the bundle directory \(bundle.directory)"
        case 2: what = "cannot execute \(bundle.executablePath)\(launch?.profile != nil && (code == EACCES || code == EPERM) ? " in its sandbox" : "")"
        case 4: what = "cannot apply the manifest's resource limits"
        case 5: what = "cannot set no_new_privs for its sandbox"
        case 6: what = "cannot enter its sandbox (Landlock)"
        case 7: what = "cannot enter its sandbox (the seccomp filter against chmod, chown and utimes)"
        default: what = "cannot set up its standard descriptors"
        }
        var hint = code == ENOEXEC ? " (not a binary and no #! line?)" : ""
        // The kernel says "no such file" for a script whose interpreter is missing: name it.
        if stage == 2, code == ENOENT,
           let interpreter = InterpreterResolver.missingInterpreter(of: bundle.executablePath, workingDirectory: bundle.directory) {
            hint = " (its #! line names \(interpreter), which does not exist)"
        }
        throw ReindexError(.cannotStart, "\(bundle.identifier): \(what): \(FileSystem.errnoText(code))\(hint)", errno: code)
    }

    /// Reaps the child if it has exited; with `blocking`, waits for it.
    @discardableResult
    public func waitForExit(blocking: Bool) -> ProcessExit? {
        if let exit { return exit }
        var status: Int32 = 0
        var usage = rusage()
        while true {
            let rc = wait4(pid, &status, blocking ? 0 : WNOHANG, &usage)
            if rc == pid {
                SpawnedChildren.shared.withLock { _ = $0.remove(pid) }
                cpuSeconds = Double(usage.ru_utime.tv_sec) + Double(usage.ru_utime.tv_usec) / 1e6
                    + Double(usage.ru_stime.tv_sec) + Double(usage.ru_stime.tv_usec) / 1e6
                if reindex_wifexited(status) != 0 {
                    exit = .exited(reindex_wexitstatus(status))
                } else if reindex_wifsignaled(status) != 0 {
                    exit = .signaled(reindex_wtermsig(status))
                } else {
                    continue  // stopped/continued: not an exit
                }
                return exit
            }
            if rc < 0 && errno == EINTR { continue }
            if rc < 0 && errno == ECHILD {
                SpawnedChildren.shared.withLock { _ = $0.remove(pid) }
                exit = .exited(-1)
                return exit
            }
            return nil
        }
    }

    /// Sends a signal to the extension's whole process group.
    public func signalGroup(_ signal: Int32) {
        kill(-pid, signal)
    }

    /// Whether any process of the extension's group is still alive. Processes that have died
    /// but wait to be reaped by their new parent do not count (on Linux, read from /proc).
    public var groupIsAlive: Bool {
        guard kill(-pid, 0) == 0 else { return false }
        #if os(Linux)
        guard let names = FileSystem.list("/proc") else { return true }
        for name in names where name.first?.isNumber == true {
            if let stat = ProcessStat(name), stat.group == pid && !stat.isZombie { return true }
        }
        return false
        #else
        return true
        #endif
    }

    // MARK: Processes that leave the group

    /// Whether this process adopts its extensions' orphans (see `adoptOrphans()`).
    nonisolated(unsafe) public private(set) static var adoptsOrphans = false

    /// Makes this process the child subreaper of the extensions it starts (Linux), so a process an
    /// extension leaves behind outside its process group — a daemon that called `setsid` — is
    /// re-parented to the host instead of to init, and `stopEscapedProcesses` can find and stop
    /// it. Each extension is then started as the subreaper of its own descendants, so what its
    /// children leave while it runs stays below it and reaches the host only when the extension
    /// itself has ended. The `reindex` command calls this once at start, before any thread
    /// exists; a process that also starts children of its own (a test runner) should not.
    public static func adoptOrphans() {
        adoptsOrphans = reindex_become_child_subreaper() == 0
    }

    /// Stops what this extension left running outside its process group, and reaps what died.
    ///
    /// With `adoptOrphans()` in effect, every process an extension started is below it while it
    /// runs (it is their subreaper) and becomes the host's child when it ends. The host starts
    /// no children but extensions, so a live child of the host that is not an extension it
    /// spawned and waits for is something an ended extension left: it is killed with its process
    /// group and reaped, whatever its environment, name or session. The children it leaves are
    /// adopted in turn, so the sweep repeats until a pass stops nothing. (In `serve`, a sweep may
    /// stop what another extension that has just ended left; that one's own sweep finds less.)
    /// Returns the pids stopped.
    public func stopEscapedProcesses() -> [pid_t] {
        #if os(Linux)
        guard Self.adoptsOrphans else { return [] }
        let host = getpid()
        var stopped: [pid_t] = []
        for _ in 0..<64 {
            var stoppedThisPass = false
            // The host's own children lists, else every process (a kernel without the lists).
            let candidates = ProcessStat.childrenOfThisProcess() ?? FileSystem.list("/proc") ?? []
            for name in candidates where name.first?.isNumber == true {
                guard let child = pid_t(name), let stat = ProcessStat(name), stat.parent == host else { continue }
                let group = stat.group
                var status: Int32 = 0
                SpawnedChildren.shared.withLock { spawned in
                    // The extensions this host spawned are waited for by their owners.
                    guard !spawned.contains(child) else { return }
                    if stat.isZombie {
                        _ = waitpid(child, &status, WNOHANG)
                        return
                    }
                    if group == child { kill(-child, SIGKILL) }  // it made a group of its own: all of it
                    kill(child, SIGKILL)
                    _ = retryingOnInterrupt { waitpid(child, &status, 0) }
                    stopped.append(child)
                    stoppedThisPass = true
                }
            }
            if !stoppedThisPass { break }
        }
        return stopped
        #else
        return []
        #endif
    }

    public func closeStdin() {
        if stdinFD >= 0 { close(stdinFD); stdinFD = -1 }
    }

    public func closeStdout() {
        if stdoutFD >= 0 { close(stdoutFD); stdoutFD = -1 }
    }

    public func closeStderr() {
        if stderrFD >= 0 { close(stderrFD); stderrFD = -1 }
    }

    public func closePipes() {
        closeStdin()
        closeStdout()
        closeStderr()
        if statusFD >= 0 { close(statusFD); statusFD = -1 }
        if exitFD >= 0 { close(exitFD); exitFD = -1 }
    }

    deinit {
        closePipes()
        if exit == nil {
            signalGroup(SIGKILL)
            _ = waitForExit(blocking: true)
        }
        removePrivateTemporaryDirectory()
    }
}

/// The extension processes this host spawned and has not reaped yet: their owners wait for them,
/// so the sweep of adopted orphans (`stopEscapedProcesses`) must never reap one. Spawning and
/// the sweep's reaping happen under its lock, so a new child is registered before any sweep can
/// see it. (A pid freed by its owner's reap is forgotten just after; Linux hands pids out in
/// order, so it is not reused in that moment.)
enum SpawnedChildren {
    static let shared = Locked(Set<pid_t>())
}

extension ExtensionProcess {
    /// Starts a child of the host that is not an extension (the desktop service beside `serve
    /// --desktop`) with `spawn`, registered as the extensions are, under the same lock, so the
    /// sweep of adopted orphans never stops or reaps it. Its owner waits for it and then calls
    /// `companionEnded`.
    package static func startCompanion(_ spawn: () throws -> pid_t) rethrows -> pid_t {
        try SpawnedChildren.shared.withLock { spawned in
            let pid = try spawn()
            spawned.insert(pid)
            return pid
        }
    }

    /// Forgets a companion its owner has reaped.
    package static func companionEnded(_ pid: pid_t) {
        _ = SpawnedChildren.shared.withLock { $0.remove(pid) }
    }
}
