import ReindexHost
import ReindexStore
import ReindexProtocol
import ReindexSystem

extension RequestSelection {
    /// What `--all`, `--ids`, `--ids-from FILE|-`, `--reason` and `--resume` said (`RequestCommand`).
    package struct Asked: Sendable {
        package var ids: [String]?
        package var idsFrom: String?
        package var reason: ReindexReason
        package var resume: Bool
    }

    /// The request asked for; reads the `--ids-from` file (or stdin) now.
    package init(_ asked: Asked) throws(ReindexError) {
        if let ids = asked.ids {
            guard !ids.isEmpty else { throw ReindexError(.usage, "--ids needs at least one identifier") }
            self.init(kind: .reindexItems, identifiers: ids, reason: asked.reason, resume: asked.resume)
        } else if let file = asked.idsFrom {
            var ids: [String] = []
            let bytes: [UInt8]
            if file == "-" {
                var collected: [UInt8] = []
                do {
                    try StandardInputLines.forEach { line, _ in collected.append(contentsOf: line); collected.append(0x0A) }
                } catch { throw ReindexError(.ioError, "cannot read identifiers from stdin: \(error)") }
                bytes = collected
            } else {
                bytes = try FileSystem.read(file)
            }
            for line in bytes.split(separator: 0x0A) {
                let id = String(decoding: line, as: UTF8.self).trimmingWhitespace
                if !id.isEmpty { ids.append(id) }
            }
            guard !ids.isEmpty else { throw ReindexError(.invalidData, "\(file): no identifiers in it") }
            self.init(kind: .reindexItems, identifiers: ids, reason: asked.reason, resume: asked.resume)
        } else {
            self.init(kind: .reindexAll, reason: asked.reason, resume: asked.resume)
        }
    }
}
