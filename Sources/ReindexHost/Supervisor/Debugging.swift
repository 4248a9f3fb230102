import ReindexStore
import CReindexSystem
import ReindexProtocol
import ReindexSystem

/// What debug mode needs to know about a process and its debugger.
public enum Debugging {
    /// The name debuggers and `ps` show for the extension: its executable's file name.
    public static func processName(_ bundle: DiscoveredBundle) -> String {
        String(bundle.executablePath.split(separator: "/").last ?? "")
    }

    /// The exact commands to attach to `pid`.
    public static func attachCommands(pid: Int32, bundle: DiscoveredBundle) -> [String] {
        let name = processName(bundle)
        let launch = #"{ "name": "Attach to \#(name)", "type": "lldb", "request": "attach", "pid": \#(pid) }"#
        return [
            "lldb -p \(pid)",
            "gdb -p \(pid)",
            "VS Code (CodeLLDB) launch.json configuration: \(launch)",
        ]
    }

    /// Whether a debugger traces `pid` (Linux: `TracerPid` in /proc; Darwin: `P_TRACED` from
    /// sysctl), or nil when there is no such process.
    public static func isTraced(_ pid: Int32) -> Bool? {
        switch reindex_process_is_traced(pid) {
        case 1: return true
        case 0: return false
        default: return nil
        }
    }

    /// Whether the executable waits for a debugger by itself (the SDK's gate): it mentions
    /// `REINDEX_WAIT_FOR_DEBUGGER`. Other extensions are started stopped before `exec` instead.
    public static func implementsGate(_ bundle: DiscoveredBundle) -> Bool {
        let needle = Array("REINDEX_WAIT_FOR_DEBUGGER".utf8)
        let fd = open(bundle.executablePath, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        var buffer = [UInt8](repeating: 0, count: 1 << 20)
        var carry: [UInt8] = []
        while true {
            let n = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if n <= 0 { return false }
            let window = carry + buffer[0..<n]
            let found = window.withUnsafeBytes { haystack in
                needle.withUnsafeBytes { needleBytes in
                    reindex_contains(haystack.baseAddress, haystack.count, needleBytes.baseAddress, needleBytes.count) == 1
                }
            }
            if found { return true }
            carry = Array(window.suffix(needle.count - 1))
        }
    }

    /// Waits until a debugger traces `pid`, or `seconds` pass (nil or 0: forever), checking every
    /// 50 ms. Returns whether one attached. `stillWaiting` is called about once a second.
    public static func waitForTracer(pid: Int32, seconds: Double?, stillWaiting: (Double) -> Void = { _ in }) -> Bool {
        let start = Clock.monotonic()
        var lastNotice = start
        while true {
            guard let traced = isTraced(pid) else { return false }  // the process is gone
            if traced { return true }
            let now = Clock.monotonic()
            if let seconds, seconds > 0, now - start >= seconds { return false }
            if now - lastNotice >= 1 { lastNotice = now; stillWaiting(now - start) }
            usleep(50_000)
        }
    }
}
