// D-Bus desktop search (sd-bus) exists on Linux only.
#if os(Linux)
import ReindexHost
import ReindexSystem

/// `reindex desktop serve` as a child of `reindex serve --desktop`: its own process, so the
/// applications it opens are its children and never look like something an extension left
/// behind; registered with the host so its sweep of escaped processes leaves it alone.
package struct DesktopCompanion {
    package let pid: pid_t

    /// Starts `arguments` (the reindex executable, its global options, `desktop serve`).
    package static func start(_ arguments: [String]) throws(ReindexError) -> DesktopCompanion {
        do {
            return DesktopCompanion(pid: try ExtensionProcess.startCompanion { try Opening.start(arguments, newSession: false) })
        } catch let error as ReindexError {
            throw error
        } catch {
            throw ReindexError(.cannotStart, "cannot start the desktop service: \(error)")
        }
    }

    /// SIGTERM, then waits for it (SIGKILL after five seconds); returns its wait status, or nil
    /// when it was already gone.
    @discardableResult
    package func stop() -> Int32? {
        defer { ExtensionProcess.companionEnded(pid) }
        _ = kill(pid, SIGTERM)
        var status: Int32 = 0
        for _ in 0..<500 {
            let r = waitpid(pid, &status, WNOHANG)
            if r == pid { return status }
            if r < 0 { return nil }
            usleep(10_000)  // polling its exit, five seconds at most
        }
        _ = kill(pid, SIGKILL)
        return waitpid(pid, &status, 0) == pid ? status : nil
    }
}
#endif
