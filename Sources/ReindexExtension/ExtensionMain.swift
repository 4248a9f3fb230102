import CReindexSystem
import Foundation
import ReindexProtocol
import ReindexSystem

/// The SDK's run loop. `IndexExtension.main()` calls `run(_:)`; call it yourself from your own
/// entry point if you prefer.
public enum ExtensionMain {
    /// The name of the running executable.
    public static var executableName: String {
        (CommandLine.arguments.first.map { ($0 as NSString).lastPathComponent }) ?? "extension"
    }

    /// Runs the protocol over stdin/stdout until the host closes stdin, then exits with status 0.
    ///
    /// Before anything else it protects the protocol stream: the protocol moves to a private
    /// descriptor and descriptor 1 is pointed at stderr, so a stray `print` lands in the log
    /// instead of corrupting the stream. Then, when `REINDEX_WAIT_FOR_DEBUGGER` is set, it waits
    /// for a debugger (see `DebuggerGate`). SIGTERM ends the process cleanly.
    public static func run(_ handler: some IndexRequestHandler) async -> Never {
        prepare()
        let protocolFD = StdoutProtection.engage()
        let connection = HostConnection(outFD: protocolFD)
        let termination = DispatchSource.makeSignalSource(signal: SIGTERM, queue: .global())
        signal(SIGTERM, SIG_IGN)
        termination.setEventHandler {
            connection.close()
            fflush(nil)
            exit(0)
        }
        termination.resume()
        await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
            let thread = Thread {
                readLoop(connection: connection, handler: handler)
                done.resume()
            }
            thread.name = "reindex-protocol-reader"
            thread.start()
        }
        connection.close()
        fflush(nil)
        exit(0)
    }

    /// Protects stdout and, when `REINDEX_WAIT_FOR_DEBUGGER` is set, waits in the debugger gate;
    /// once per process. `IndexExtension.main()` calls it before it makes the handler, `run`
    /// again (a no-op then); call it first thing in your own entry point before making yours.
    public static func prepare() {
        _ = prepared
    }

    private static let prepared: Void = {
        _ = StdoutProtection.engage()
        DebuggerGate.waitIfRequested()
    }()

    /// Reads the host's messages from stdin until EOF.
    static func readLoop(connection: HostConnection, handler: some IndexRequestHandler) {
        var reader = LineReader()
        var buffer = [UInt8](repeating: 0, count: 64 << 10)
        while true {
            let n = buffer.withUnsafeMutableBytes { raw in retryingOnInterrupt { read(0, raw.baseAddress, raw.count) } }
            if n <= 0 { return }
            do {
                try buffer.withUnsafeBytes { raw in
                    try reader.feed(UnsafeRawBufferPointer(rebasing: raw[0..<n])) { line, offset in
                        do {
                            connection.handle(try Message.decode(line: line), handler: handler)
                        } catch {
                            FileHandle.standardError.write(Data("reindex-extension: ignored an unreadable line from the host at byte \(offset): \(error)\n".utf8))
                        }
                    }
                }
            } catch {
                FileHandle.standardError.write(Data("reindex-extension: \(error)\n".utf8))
                return
            }
        }
    }
}

/// Moves the protocol off descriptor 1.
public enum StdoutProtection {
    /// Duplicates stdout to a private close-on-exec descriptor for the protocol and points
    /// descriptor 1 at stderr. Returns the protocol descriptor.
    /// Once per process: later calls return the same descriptor.
    public static func engage() -> Int32 {
        protocolFD
    }

    private static let protocolFD: Int32 = {
        fflush(nil)
        let protocolFD = fcntl(1, F_DUPFD_CLOEXEC, 3)
        guard protocolFD >= 0 else { return 1 }
        dup2(2, 1)
        return protocolFD
    }()
}

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
