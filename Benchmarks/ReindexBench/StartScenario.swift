import Foundation
import ReindexHost
import ReindexSystem
import ReindexStore
import ReindexProtocol

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A whole process, timed from just before `posix_spawn` to the return of a blocking `wait4`:
/// no polling quantum, and the output goes to a file (a pipe read only after exit would block a
/// chatty child). With `sampleMemory`, a thread reads the child's VmHWM every 20 ms (for peak
/// memory only; the timing does not depend on it).
struct TimedProcess {
    var seconds: Double
    var status: Int32
    var peakKiB: Int
    var outputPath: String

    static func run(_ path: String, _ arguments: [String], stdinPath: String = "/dev/null", outputPath: String,
                    environment: [String: String]? = nil, sampleMemory: Bool = false) throws -> TimedProcess {
        var actions = FileActions()
        defer { actions.destroy() }
        posix_spawn_file_actions_addopen(&actions.value, 0, stdinPath, O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions.value, 1, outputPath, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        posix_spawn_file_actions_addopen(&actions.value, 2, "/dev/null", O_WRONLY, 0)
        // Everything the child gets is prepared before the clock starts.
        let argv: [UnsafeMutablePointer<CChar>?] = ([path] + arguments).map { strdup($0) } + [nil]
        let envp: [UnsafeMutablePointer<CChar>?]? = environment.map { $0.map { strdup("\($0.key)=\($0.value)") } + [nil] }
        defer {
            for pointer in argv { free(pointer) }
            for pointer in envp ?? [] { free(pointer) }
        }
        var pid: pid_t = 0
        let start = Clock.monotonic()
        let error: Int32
        if let envp { error = posix_spawn(&pid, path, &actions.value, nil, argv, envp) }
        else { error = posix_spawn(&pid, path, &actions.value, nil, argv, environ) }
        guard error == 0 else { throw ReindexError(.internal, "cannot start \(path): \(String(cString: strerror(error)))") }
        let sampler = sampleMemory ? MemorySampler(pid: pid) : nil
        var status: Int32 = 0
        var usage = rusage()
        while wait4(pid, &status, 0, &usage) < 0 && errno == EINTR {}
        let seconds = Clock.monotonic() - start
        let peak = max(sampler?.stop() ?? 0, sampleMemory ? 0 : Int(usage.ru_maxrss))
        // Exit status, or 128 + the signal that ended it (as a shell reports it).
        let code = status & 0x7f == 0 ? (status >> 8) & 0xff : 128 + (status & 0x7f)
        return TimedProcess(seconds: seconds, status: code, peakKiB: peak, outputPath: outputPath)
    }

    var output: String { (try? String(contentsOfFile: outputPath, encoding: .utf8)) ?? "" }
}

/// posix_spawn_file_actions_t, whose type differs between Glibc (a struct) and Darwin (a pointer).
private struct FileActions {
    #if canImport(Glibc)
    var value = posix_spawn_file_actions_t()
    #else
    var value: posix_spawn_file_actions_t? = nil
    #endif
    init() { posix_spawn_file_actions_init(&value) }
    mutating func destroy() { posix_spawn_file_actions_destroy(&value) }
}

/// Reads /proc/PID/status's VmHWM every 20 ms on its own thread until stopped.
private final class MemorySampler: @unchecked Sendable {
    private let lock = NSLock()
    private var running = true
    private var peak = 0
    private let done = DispatchSemaphore(value: 0)

    init(pid: pid_t) {
        let thread = Thread { [self] in
            while lock.withLock({ running }) {
                if let text = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8),
                   let line = text.split(separator: "\n").first(where: { $0.hasPrefix("VmHWM:") }),
                   let kib = Int(line.split(separator: " ", omittingEmptySubsequences: true).dropFirst().first ?? "") {
                    lock.withLock { peak = Swift.max(peak, kib) }
                }
                usleep(20_000)
            }
            done.signal()
        }
        thread.start()
    }

    func stop() -> Int {
        lock.withLock { running = false }
        done.wait()
        return lock.withLock { peak }
    }
}

/// The machine's load averages (1, 5, 15 minutes), for the report beside timings.
func loadAverage() -> String {
    var loads = [Double](repeating: 0, count: 3)
    guard getloadavg(&loads, 3) == 3 else { return "unknown" }
    return loads.map { fmt($0, 2) }.joined(separator: " ")
}

extension Bench {
    // MARK: Start

    /// How fast a process of the project starts, each against its floor in the same run,
    /// alternating which goes first, over many rounds; the figure is the median of the per-round
    /// ratios (steadier than the ratio of medians on a shared machine):
    /// - `reindex --version` against `sqlite3 --version`;
    /// - `reindex search WORD` on the search index against the `sqlite3` command running the same
    ///   FTS5 query (the items joined, best first, 20 rows) on the same file;
    /// - `reindex run BUNDLE --ids one` against a bare start of the same extension (stdin at EOF:
    ///   it starts, reads nothing and exits), for the Swift, Python and TypeScript SDKs.
    func startLatency() throws {
        let rounds = Swift.max(20, options.rounds * 10)
        log("start: load average \(loadAverage()) before; \(rounds) rounds per pair")
        let sqlite3 = "/usr/bin/sqlite3"
        let haveSQLite3 = FileManager.default.isExecutableFile(atPath: sqlite3)
        if haveSQLite3 {
            try startPair("start: reindex --version (ms)", key: "startVersion", rounds: rounds,
                          project: (reindexBinary, ["--version"]), floor: (sqlite3, ["--version"]), floorName: "sqlite3 --version")
            let index = try searchIndex()
            for word in ["swift", "hopper"] {
                let sql = "SELECT items.uid, items.attributes FROM items_fts JOIN items ON items.rowid = items_fts.rowid "
                    + "WHERE items_fts MATCH '\(word)' ORDER BY items_fts.rank LIMIT 20"
                try startPair("start: reindex search \(word), whole process (ms)", key: "startSearch_\(word)", rounds: rounds,
                              project: (reindexBinary, ["--index", index, "search", word]), floor: (sqlite3, ["-readonly", index, sql]),
                              floorName: "sqlite3, the same FTS5 query")
            }
        } else {
            rows.append(["start: reindex --version, search", "-", "-", "\(sqlite3) is missing"])
        }

        // The extensions: one item asked for, after a first reindexAll filled the index.
        let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        let swiftExtensions = work + "/ext-start-swift"
        _ = try makeBundle(in: swiftExtensions, items: 100, large: false)
        var extensions: [(name: String, path: String, bundle: String, executable: String, id: String)] = [
            ("Swift SDK", swiftExtensions, "com.example.bench.indexer", extensionBinary, "item.7"),
        ]
        let python = repository.appendingPathComponent("Examples/python").path
        extensions.append(("Python SDK", python, "com.example.bookshelf.indexer", python + "/bookshelf/bookshelf.py", "book.1"))
        let node = repository.appendingPathComponent("Examples/typescript").path
        if FileManager.default.fileExists(atPath: repository.appendingPathComponent("SDKs/typescript/dist/index.js").path) {
            extensions.append(("TypeScript SDK", node, "com.example.notes.indexer", node + "/notes/notes.mjs", "note.groceries"))
        } else {
            rows.append(["start: TypeScript SDK", "-", "-", "SDKs/typescript/dist is missing (npm run build there)"])
        }
        for entry in extensions {
            let index = work + "/start-\(entry.bundle).sqlite"
            let first = try TimedProcess.run(reindexBinary, ["--index", index, "--extensions-path", entry.path, "run", entry.bundle],
                                             outputPath: work + "/start-first.out")
            guard first.status == 0 else {
                rows.append(["start: run --ids one item, \(entry.name)", "-", "-", "the first run failed (\(first.status)): \(first.output.prefix(200))"])
                continue
            }
            try startPair("start: run --ids one item, \(entry.name) (ms)", key: "startAck_\(entry.name.split(separator: " ")[0].lowercased())", rounds: rounds,
                          project: (reindexBinary, ["--index", index, "--extensions-path", entry.path, "run", entry.bundle, "--ids", entry.id]),
                          floor: (entry.executable, []), floorName: "bare start of the extension")
        }
        log("start: load average \(loadAverage()) after")
        results.append(("startLoadAverage", .string(loadAverage())))
    }

    /// One pair: the project's command and its floor, alternating which goes first, `rounds`
    /// times; a row with both medians (min–max) and the median of the per-round ratios.
    func startPair(_ label: String, key: String, rounds: Int, project: (String, [String]), floor: (String, [String]), floorName: String) throws {
        var mine = Sample(), base = Sample(), ratio = Sample()
        let output = work + "/start.out"
        for round in 0..<rounds {
            for runProject in (round % 2 == 0 ? [true, false] : [false, true]) {
                let command = runProject ? project : floor
                let result = try TimedProcess.run(command.0, command.1, outputPath: output)
                // A bare extension may end as it likes (stdin at EOF); the project must succeed.
                guard !runProject || result.status == 0 else {
                    throw ReindexError(.internal, "\(label): \(command.0) \(command.1.joined(separator: " ")) failed (\(result.status)): \(result.output.prefix(300))")
                }
                (runProject ? { mine.add(result.seconds * 1000) } : { base.add(result.seconds * 1000) })()
            }
            if let a = mine.values.last, let b = base.values.last { ratio.add(a / b) }
        }
        rows.append([label, "\(fmt(mine.median, 2)) (\(fmt(mine.min, 2))–\(fmt(mine.max, 2)))",
                     "\(fmt(base.median, 2)) (\(fmt(base.min, 2))–\(fmt(base.max, 2))) \(floorName)",
                     "\(fmt(ratio.median, 2))× (per-round \(fmt(ratio.min, 2))–\(fmt(ratio.max, 2))), \(rounds) rounds, load \(loadAverage())"])
        results.append((key, .object([("ms", .double(mine.median)), ("floorMs", .double(base.median)), ("ratio", .double(ratio.median)),
                                      ("ratioMin", .double(ratio.min)), ("ratioMax", .double(ratio.max))])))
    }
}
