import CReindexSystem
import Foundation
import ReindexSystem

/// The wait-for-debugger gate of debug mode.
public enum DebuggerGate {
    /// When `REINDEX_WAIT_FOR_DEBUGGER` is set: lets any process trace this one (Yama), prints the
    /// PID to stderr and waits until a debugger is attached, or the given seconds pass (0 waits
    /// forever). Does nothing otherwise.
    public static func waitIfRequested() {
        // One variable read, not the whole environment made into a dictionary at every start.
        waitIfRequested(value: getenv("REINDEX_WAIT_FOR_DEBUGGER").map { String(cString: $0) })
    }

    /// The same, reading `REINDEX_WAIT_FOR_DEBUGGER` from `environment`.
    public static func waitIfRequested(environment: [String: String]) {
        waitIfRequested(value: environment["REINDEX_WAIT_FOR_DEBUGGER"])
    }

    private static func waitIfRequested(value: String?) {
        guard let value, let seconds = Double(value) else { return }
        reindex_allow_any_tracer()
        let pid = getpid()
        let limit = seconds > 0 ? " (at most \(Int(seconds)) s)" : ""
        FileHandle.standardError.write(Data("reindex-extension: pid \(pid) is waiting for a debugger to attach\(limit): lldb -p \(pid) or gdb -p \(pid)\n".utf8))
        let start = Date()
        while reindex_is_traced() != 1 {
            if seconds > 0 && Date().timeIntervalSince(start) >= seconds {
                FileHandle.standardError.write(Data("reindex-extension: no debugger attached within \(Int(seconds)) s; continuing without one\n".utf8))
                return
            }
            usleep(50_000)
        }
        FileHandle.standardError.write(Data("reindex-extension: debugger attached to pid \(pid); continuing\n".utf8))
    }
}
