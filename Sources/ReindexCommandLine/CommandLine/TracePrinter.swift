import ReindexHost
import ReindexStore
import ReindexSystem
import ReindexProtocol

/// `--trace`: prints every protocol message with its direction, time and size. Payloads longer
/// than `limit` characters are shortened unless `full`.
package final class TracePrinter {
    package let full: Bool
    package let limit: Int
    let start = Clock.monotonic()
    let write: (String) -> Void

    package init(full: Bool, limit: Int = 160, write: @escaping (String) -> Void = { Console.err($0) }) {
        self.full = full
        self.limit = limit
        self.write = write
    }

    /// One trace line: `+0.012s host→ext  142 B  {"jsonrpc":…}`.
    package func record(_ direction: TraceDirection, _ line: UnsafeRawBufferPointer) {
        let elapsed = Clock.monotonic() - start
        let time = "+\(DurationText.milliseconds(elapsed))s"
        var text = String(decoding: line, as: UTF8.self)
        if !full && text.count > limit {
            let shown = String(text.prefix(limit))
            text = shown + "… (\(line.count - shown.utf8.count) more bytes; --trace=full shows all)"
        }
        write("trace \(time) \(direction.rawValue) \(line.count) B  \(text)")
    }
}
