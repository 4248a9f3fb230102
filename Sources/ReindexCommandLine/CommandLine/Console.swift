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

/// The state every command starts from: the global options, resolved paths and the environment.
package struct CommandContext: Sendable {
    package var paths: HostPaths
    package var environment: [String: String]
    /// `--json`: print JSON instead of text.
    package var json: Bool
    /// Whether opening a SQLite index that does not exist creates it (commands that write);
    /// commands that only read say there is none (`ReindexCommand.onlyReadsIndex`).
    package var createsIndex = true

    package init(paths: HostPaths, environment: [String: String], json: Bool) {
        self.paths = paths
        self.environment = environment
        self.json = json
    }

    /// From the global options (`--index`, `--extensions-path`, `--json`) and the environment.
    package init<Command: ReindexCommand>(_ arguments: Arguments<Command>, environment: [String: String]) throws(ReindexError) {
        self.init(paths: HostPaths(extensionsPath: try arguments.value(Global.extensionsPath), index: try arguments.value(Global.index), environment: environment),
                  environment: environment, json: arguments[Global.json])
        createsIndex = !Command.onlyReadsIndex
    }

    /// Discovers bundles and finds one by identifier, or fails with exit 66 naming what exists.
    package func findBundle(_ identifier: String) throws(ReindexError) -> DiscoveredBundle {
        let result = Discovery.discover(paths)
        if let bundle = result.bundle(identifier) { return bundle }
        if let problem = result.problems.first(where: { $0.bundleIdentifier?.lowercased() == identifier.lowercased() }) {
            throw ReindexError(.invalidData, "\(identifier): bundle is not usable: \(problem.reason)")
        }
        let known = result.bundles.map(\.identifier)
        var hint = known.isEmpty ? "no bundles were found on the search path (see 'reindex paths')" : "known bundles: \(known.joined(separator: ", "))"
        // A refused manifest is not read, so its bundle may be the one asked for: say so.
        let unnamed = result.problems.filter { $0.bundleIdentifier == nil }
        if !unnamed.isEmpty {
            hint += "; refused without reading their identifier (see 'reindex list'): "
                + unnamed.prefix(3).map(\.reason).joined(separator: "; ") + (unnamed.count > 3 ? "; and \(unnamed.count - 3) more" : "")
        }
        throw ReindexError(.bundleNotFound, "\(identifier): no such bundle on the search path\(Suggestion.clause(for: identifier, among: known)); \(hint)")
    }
}

extension CommandContext {
    /// Says on stderr when the index was lost and queues `reindexAll` (`indexLost`) for every
    /// discovered bundle when the store says it must (a new PostgreSQL schema quietly).
    private func rebuildIfLost(_ store: any IndexBackend) {
        guard let loss = store.lossAtOpen else { return }
        if let warning = loss.warning { Console.err("warning: \(warning)") }
        let queued = queueIndexLost(store)
        if loss.warning != nil, queued > 0 { Console.err("warning: queued reindexAll (indexLost) for \(queued) bundle(s); 'reindex serve' or 'reindex run' will rebuild them") }
    }

    /// Opens the index whichever database holds it: a SQLite file or a PostgreSQL database. An
    /// index lost and made anew, or created, gets its rebuilds queued.
    package func openIndex() throws(ReindexError) -> any IndexBackend {
        let store = try Index.open(paths.index, environment: environment, create: createsIndex)
        rebuildIfLost(store)
        return store
    }

    /// Opens the index for the query language, whichever database holds it.
    package func openQueries() throws(ReindexError) -> any IndexQueries {
        let index = try openIndex()
        guard let queries = index as? any IndexQueries else {
            throw ReindexError(.internal, "\(index.displayLocation): this index does not answer queries")
        }
        return queries
    }

    /// Queues `reindexAll` with reason `indexLost` for every discovered bundle; returns how many.
    @discardableResult
    package func queueIndexLost(_ store: any IndexBackend) -> Int {
        var queued = 0
        for bundle in Discovery.discover(paths).bundles {
            if (try? store.enqueue(bundleIdentifier: bundle.identifier, kind: .reindexAll, reason: .indexLost, maxAttempts: bundle.manifest.retry.maxAttempts)) != nil {
                queued += 1
            }
        }
        return queued
    }
}

/// Reads standard input line by line with bounded memory: never more than one line (of at most
/// `maximumLineLength` bytes) is held. A longer line is not held at all: it is skipped and
/// reported to `onOverlong` with its number and length, and reading goes on.
package struct StandardInputLines {
    /// `beforeWaiting` runs whenever no input is ready, just before the read that waits for it.
    package static func forEach(
        maximumLineLength: Int = LineReader.defaultMaximumLineLength, beforeWaiting: () throws -> Void = {},
        onOverlong: (_ lineNumber: Int, _ length: Int) throws -> Void = { number, length in
            throw ReindexError(.invalidData, "stdin line \(number) is longer than \(LineReader.defaultMaximumLineLength) bytes (\(length) bytes)")
        },
        _ body: (UnsafeRawBufferPointer, Int) throws -> Void
    ) throws {
        var buffer = [UInt8](repeating: 0, count: 256 << 10)
        var pending: [UInt8] = []
        var skipping = false
        var skippedLength = 0
        var lineNumber = 0
        while true {
            // Input paused (nothing for 10 ms): the caller may commit what it has before waiting.
            var ready = [pollfd(fd: 0, events: Int16(POLLIN), revents: 0)]
            if poll(&ready, 1, 0) == 0 && poll(&ready, 1, 10) == 0 { try beforeWaiting() }
            let n = buffer.withUnsafeMutableBytes { raw in retryingOnInterrupt { read(0, raw.baseAddress, raw.count) } }
            if n < 0 { throw ReindexError(.ioError, "cannot read stdin: \(FileSystem.errnoText())") }
            if n == 0 { break }
            try buffer.withUnsafeBytes { raw in
                var start = 0
                while start < n {
                    let newline = raw[start..<n].firstIndex(of: 0x0A)
                    let end = newline ?? n
                    let segment = UnsafeRawBufferPointer(rebasing: raw[start..<end])
                    if skipping {
                        skippedLength += segment.count
                    } else if pending.count + segment.count > maximumLineLength {
                        skipping = true
                        skippedLength = pending.count + segment.count
                        pending = []
                    } else if newline != nil && pending.isEmpty {
                        lineNumber += 1
                        try body(segment, lineNumber)
                    } else {
                        pending.append(contentsOf: segment)
                        if newline != nil {
                            lineNumber += 1
                            try pending.withUnsafeBytes { try body($0, lineNumber) }
                            pending.removeAll(keepingCapacity: pending.count <= 1 << 20)
                        }
                    }
                    if newline != nil && skipping {
                        lineNumber += 1
                        skipping = false
                        try onOverlong(lineNumber, skippedLength)
                    }
                    start = end + 1
                }
            }
        }
        if skipping {
            lineNumber += 1
            try onOverlong(lineNumber, skippedLength)
        } else if !pending.isEmpty {
            lineNumber += 1
            try pending.withUnsafeBytes { try body($0, lineNumber) }
        }
    }
}
