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
