import ReindexHost
import ReindexStore
import ReindexProtocol
import ReindexSystem

/// Output for the command: stdout for results, stderr for errors and progress.
package enum Console {
    package static func out(_ text: String) {
        var line = text
        if !line.hasSuffix("\n") { line += "\n" }
        writeAll(1, Array(line.utf8))
    }

    package static func err(_ text: String) {
        var line = text
        if !line.hasSuffix("\n") { line += "\n" }
        writeAll(2, Array(line.utf8))
    }

    /// Prints a JSON document on one line of stdout.
    package static func json(_ value: JSONValue) { writeAll(1, LineWriter.line(value)) }

    /// Reports an error in the contract's form: `error: …`, then the extension's stderr tail.
    package static func report(_ error: ReindexError) {
        var text = "error: \(error.message)\n"
        if !error.stderrTail.isEmpty {
            text += "the extension's last stderr lines:\n"
            for line in error.stderrTail { text += "  | \(line)\n" }
        }
        writeAll(2, Array(text.utf8))
    }

    package static var stderrIsTerminal: Bool { isatty(2) == 1 }

    package static func writeAll(_ fd: Int32, _ bytes: [UInt8]) {
        ReindexSystem.writeAll(fd, bytes)
    }
}
