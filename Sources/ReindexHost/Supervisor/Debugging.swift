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

    /// What runs the extension's code, and so which debugger fits it.
    public enum Runtime: String, Sendable {
        /// A compiled executable (Swift, C, …) or a script whose interpreter gdb/lldb debug.
        case native
        /// Python: debugpy (VS Code's Python debugger).
        case python
        /// Node.js: its inspector (Chrome DevTools, VS Code, `node inspect`).
        case node

        /// The debugger, for messages.
        public var debugger: String {
            switch self {
            case .native: return "gdb or lldb"
            case .python: return "debugpy"
            case .node: return "Node's inspector"
            }
        }
    }

    /// The environment variables that choose the SDK gates' ports (passed to the extension in
    /// debug mode when set) and their defaults.
    public static let portVariables: [Runtime: String] = [.python: "REINDEX_DEBUGPY_PORT", .node: "REINDEX_INSPECTOR_PORT"]
    public static let defaultPorts: [Runtime: Int] = [.python: 5678, .node: 9229]

    /// The port the gate of `runtime` listens on, given the host's environment.
    public static func port(_ runtime: Runtime, environment: [String: String]) -> Int {
        portVariables[runtime].flatMap { environment[$0] }.flatMap { Int($0) } ?? defaultPorts[runtime] ?? 0
    }

    /// The runtime of `bundle`'s executable: a script's `#!` line (through `env`), or the
    /// executable's own name (a manifest that names `/usr/bin/python3` with the script as an argument).
    public static func runtime(_ bundle: DiscoveredBundle) -> Runtime {
        var names = [processName(bundle)]
        if let head = FileSystem.readPrefix(bundle.executablePath, count: 256), head.starts(with: Array("#!".utf8)) {
            let line = String(decoding: head.prefix { $0 != 10 }, as: UTF8.self)
            names += line.dropFirst(2).split(separator: " ").map { String($0.split(separator: "/").last ?? "") }
        }
        for name in names {
            if name.hasPrefix("python") { return .python }
            if name == "node" || name.hasPrefix("node") && name.dropFirst(4).allSatisfy(\.isNumber) { return .node }
        }
        return .native
    }

    /// The exact commands to attach to `pid`: those of the debugger that fits the runtime first,
    /// then the native ones (which debug a script's interpreter).
    public static func attachCommands(pid: Int32, bundle: DiscoveredBundle, runtime: Runtime = .native,
                                      environment: [String: String] = [:]) -> [String] {
        let name = processName(bundle)
        var commands: [String] = []
        switch runtime {
        case .python:
            let port = port(.python, environment: environment)
            commands += [
                "debugpy on 127.0.0.1:\(port): VS Code launch.json configuration: { \"name\": \"Attach to \(name)\", \"type\": \"debugpy\", \"request\": \"attach\", \"connect\": { \"host\": \"127.0.0.1\", \"port\": \(port) } }",
                "  (the extension's Python needs debugpy: python3 -m pip install debugpy; another port: REINDEX_DEBUGPY_PORT=N reindex debug …)",
            ]
        case .node:
            let port = port(.node, environment: environment)
            commands += [
                "node inspect 127.0.0.1:\(port)",
                "Chrome: chrome://inspect, Configure… 127.0.0.1:\(port), then inspect",
                "VS Code launch.json configuration: { \"name\": \"Attach to \(name)\", \"type\": \"node\", \"request\": \"attach\", \"address\": \"127.0.0.1\", \"port\": \(port) }",
                "  (another port: REINDEX_INSPECTOR_PORT=N reindex debug …)",
            ]
        case .native:
            break
        }
        let launch = #"{ "name": "Attach to \#(name)", "type": "lldb", "request": "attach", "pid": \#(pid) }"#
        commands += [
            "lldb -p \(pid)",
            "gdb -p \(pid)",
            "VS Code (CodeLLDB) launch.json configuration: \(launch)",
        ]
        return commands
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

    /// Whether the executable waits for a debugger by itself (an SDK's gate): it mentions
    /// `REINDEX_WAIT_FOR_DEBUGGER` (a Swift extension links the SDK; any extension may read it), or
    /// it is a Python script that imports the SDK (`reindex_extension`) or a Node script that
    /// imports it (`reindex-extension`). Other extensions are started stopped before `exec` instead.
    public static func implementsGate(_ bundle: DiscoveredBundle) -> Bool {
        var needles = ["REINDEX_WAIT_FOR_DEBUGGER"]
        switch runtime(bundle) {
        case .python: needles.append("reindex_extension")
        case .node: needles.append("reindex-extension")
        case .native: break
        }
        return needles.contains { mentions(bundle.executablePath, Array($0.utf8)) }
    }

    /// Whether the file at `path` holds `needle`, read in blocks of 1 MiB.
    static func mentions(_ path: String, _ needle: [UInt8]) -> Bool {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
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
}
