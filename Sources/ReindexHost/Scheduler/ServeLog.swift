import ReindexStore
import ReindexProtocol
import ReindexSystem

/// Plain, greppable log lines on stderr: `TIME serve LEVEL: message`.
enum ServeLog {
    static func line(_ level: String, _ message: String) {
        writeErrorLine("\(RFC3339.format(Clock.now())) serve \(level): \(message)")
    }
    static func info(_ message: String) { line("info", message) }
    static func warning(_ message: String) { line("warning", message) }
    static func error(_ message: String) { line("error", message) }
}
