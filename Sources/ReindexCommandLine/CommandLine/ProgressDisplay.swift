import ReindexHost
import ReindexStore
import ReindexSystem
import ReindexProtocol

/// Shows `$/progress`: a redrawn bar on a terminal, a plain line every few seconds otherwise.
package final class ProgressDisplay {
    let terminal: Bool
    let label: String
    private var lastPlain = 0.0
    private var drawn = false

    package init(label: String, terminal: Bool = Console.stderrIsTerminal) {
        self.label = label
        self.terminal = terminal
    }

    package func update(_ progress: ProgressParams) {
        var text: String
        if let total = progress.total, total > 0 {
            // Total whatever the extension sent: a count below zero shows as 0%.
            let fraction = max(0, min(1, Double(progress.completed) / Double(total)))
            let width = 24
            let filled = Int(fraction * Double(width))
            text = "[" + String(repeating: "#", count: filled) + String(repeating: "-", count: width - filled) + "] "
            text += "\(Int(fraction * 100))% \(progress.completed)/\(total)"
        } else {
            text = "\(progress.completed) done"
        }
        if let message = progress.message, !message.isEmpty { text += " — " + message }
        if terminal {
            Console.writeAll(2, Array(("\r\u{1B}[K" + label + " " + String(text.prefix(120))).utf8))
            drawn = true
        } else {
            let now = Clock.monotonic()
            if now - lastPlain >= 2 {
                lastPlain = now
                Console.err("progress: \(label) \(text)")
            }
        }
    }

    /// Clears the bar before the summary is printed.
    package func finish() {
        if terminal && drawn { Console.writeAll(2, Array("\r\u{1B}[K".utf8)) }
        drawn = false
    }
}
