import BenchSupport
import CSQLite
import Foundation
import ReindexHost
import ReindexSystem
import ReindexStore
import ReindexProtocol

/// `swift run -c release reindex-bench [--quick] [--items N,N] [--rounds R] [--json FILE]
/// [--fleet-requests N] [--only throughput,ack,start,search,discovery,postgres,fleet,…]`
///
/// Every scenario measures the project against its baseline side by side, alternating, over
/// several rounds, and reports the median and the spread (min–max):
/// - throughput: `reindex run` of a `reindexAll` of N items from a Swift SDK extension into the
///   committed index, against a raw loader inserting the same items into the same schema with
///   prepared statements in one transaction; plus the host's peak resident memory;
/// - ack: `reindex run BUNDLE --ids one-item` against starting the extension alone;
/// - start: `reindex --version` against `sqlite3 --version`, a whole `reindex search` process
///   against the `sqlite3` command's same FTS5 query, and `run --ids` against a bare start of a
///   Swift, a Python and a TypeScript SDK extension (`StartScenario.swift`; `--only start`).
/// Processes are timed from spawn to a blocking wait (`TimedProcess`), never by polling.
/// - search: p50/p99 of one-word, two-word and prefix queries over the largest index, and words
///   and pairs typed a letter at a time, each key its first search;
/// - discovery: `reindex list` over 10, 100 and 1,000 bundles;
/// - python: the throughput scenario with extensions in other languages instead of the Swift one: a
///   plain Python one, one on the Python SDK and one on the TypeScript SDK;
/// - concurrency: how long other commands wait for the index while a request is open and idle,
///   `serve --concurrency 2` with two extensions that pause mid-request, and searches during a
///   replacement (none may see two generations).
/// - postgres, fleet: the PostgreSQL index (see `PostgresScenarios.swift`);
/// - desktop: GNOME Shell's and KRunner's calls over a private session bus to `reindex desktop
///   serve` on the search index, typed a letter at a time (`DesktopScenario.swift`; `--only desktop`);
/// - sandbox: the cost of the sandbox — the ack latency and the reindexAll throughput of the
///   same extension sandboxed and with `"sandbox": false` (not in the default set: `--only sandbox`);
/// - relevance: the ranking on a corpus of this machine's packages, manual pages and documentation
///   against a reference BM25F, and its search latency (`RelevanceScenario.swift`; `--only relevance`);
/// - app: an application's `LocalIndex`, one put per item in batches of 1,000 with a client
///   state against one put of all, on SQLite and PostgreSQL (`AppIndexScenario.swift`; not in the
///   default set: `--only app`).
@main
struct ReindexBench {
    struct Options {
        var items = [100_000, 1_000_000]
        var rounds = 3
        var json: String? = nil
        var only: Set<String> = ["throughput", "python", "ack", "start", "search", "discovery", "concurrency", "postgres", "fleet"]
        var fleetRequests = 400
    }

    /// Says what went wrong and exits 1 (a missing binary, a failed run), rather than trapping
    /// with a backtrace.
    static func main() {
        do {
            try start()
        } catch {
            FileHandle.standardError.write(Data("reindex-bench: \(error)\n".utf8))
            exit(1)
        }
    }

    static func start() throws {
        var options = Options()
        var arguments = Array(CommandLine.arguments.dropFirst())
        func value(of argument: String) -> String {
            guard !arguments.isEmpty else {
                FileHandle.standardError.write(Data("reindex-bench: \(argument) needs a value\n".utf8))
                exit(64)
            }
            return arguments.removeFirst()
        }
        while !arguments.isEmpty {
            let argument = arguments.removeFirst()
            switch argument {
            case "--quick": options.items = [20_000]; options.rounds = 2; options.fleetRequests = 40
            case "--items": options.items = value(of: argument).split(separator: ",").compactMap { Int($0) }
            case "--rounds": options.rounds = Int(value(of: argument)) ?? 3
            case "--json": options.json = value(of: argument)
            case "--only": options.only = Set(value(of: argument).split(separator: ",").map(String.init))
            case "--fleet-requests": options.fleetRequests = Int(value(of: argument)) ?? 400
            case "--help", "-h":
                print("usage: reindex-bench [--quick] [--items N,N] [--rounds R] [--json FILE] [--fleet-requests N] [--only throughput,python,ack,start,search,discovery,concurrency,postgres,fleet,sandbox,desktop,relevance,app]")
                return
            default:
                FileHandle.standardError.write(Data("reindex-bench: unknown argument \(argument)\n".utf8))
                exit(64)
            }
        }
        let bench = try Bench(options: options)
        try bench.run()
    }
}

/// A measured quantity over rounds.
struct Sample {
    var values: [Double] = []
    mutating func add(_ value: Double) { values.append(value) }
    var median: Double {
        let sorted = values.sorted()
        guard !sorted.isEmpty else { return .nan }
        return sorted.count % 2 == 1 ? sorted[sorted.count / 2] : (sorted[sorted.count / 2 - 1] + sorted[sorted.count / 2]) / 2
    }
    var min: Double { values.min() ?? .nan }
    var max: Double { values.max() ?? .nan }
    func percentile(_ p: Double) -> Double {
        let sorted = values.sorted()
        guard !sorted.isEmpty else { return .nan }
        let index = Swift.min(sorted.count - 1, Int((Double(sorted.count) * p).rounded(.up)) - 1)
        return sorted[Swift.max(0, index)]
    }
}

func fmt(_ value: Double, _ digits: Int = 1) -> String {
    guard value.isFinite else { return "-" }
    var scale = 1.0
    for _ in 0..<digits { scale *= 10 }
    let rounded = (value * scale).rounded() / scale
    if digits == 0 { return String(Int(rounded)) }
    return String(rounded)
}

/// A difference with its sign: `+0.52`, `−0.21`.
func signed(_ value: Double, _ digits: Int) -> String {
    (value < 0 ? "−" : "+") + fmt(abs(value), digits)
}

func pad(_ text: String, _ width: Int) -> String {
    text.count >= width ? text : text + String(repeating: " ", count: width - text.count)
}

final class Bench {
    let options: ReindexBench.Options
    let work: String
    let reindexBinary: String
    let extensionBinary: String
    var rows: [[String]] = []
    var results: [(String, JSONValue)] = []
    var largestIndex: String?

    init(options: ReindexBench.Options) throws {
        self.options = options
        let me = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath()
        let directory = me.deletingLastPathComponent()
        reindexBinary = directory.appendingPathComponent("reindex").path
        extensionBinary = directory.appendingPathComponent("BenchIndexer").path
        for binary in [reindexBinary, extensionBinary] where !FileManager.default.isExecutableFile(atPath: binary) {
            throw ReindexError(.usage, "\(binary) is missing: build everything first (swift build -c release)")
        }
        work = NSTemporaryDirectory() + "reindex-bench-\(getpid())"
        try FileManager.default.createDirectory(atPath: work, withIntermediateDirectories: true)
    }

    deinit { try? FileManager.default.removeItem(atPath: work) }

    func log(_ text: String) { FileHandle.standardError.write(Data("bench: \(text)\n".utf8)) }

    func run() throws {
        log("machine: \(ProcessInfo.processInfo.activeProcessorCount) cores, \(ProcessInfo.processInfo.physicalMemory >> 30) GiB; work dir \(work)")
        if options.only.contains("throughput") { try throughput() }
        if options.only.contains("ack") { try acknowledgementLatency() }
        if options.only.contains("start") { try startLatency() }
        if options.only.contains("search") { try searchLatency() }
        #if os(Linux)
        if options.only.contains("desktop") { try desktopLatency() }
        #endif
        if options.only.contains("relevance") { try relevance() }
        if options.only.contains("discovery") { try discovery() }
        if options.only.contains("python") { try scriptThroughput() }
        if options.only.contains("concurrency") { try concurrency() }
        if options.only.contains("sandbox") { try sandboxCost() }
        if options.only.contains("postgres") { try postgresThroughput() }
        if options.only.contains("fleet") { try fleetScaling() }
        if options.only.contains("app") { try appIndexing() }
        print("")
        print("| scenario | project | baseline | ratio / note |")
        print("| --- | --- | --- | --- |")
        for row in rows { print("| " + row.joined(separator: " | ") + " |") }
        if let path = options.json {
            let data = LineWriter.line(.object(results))
            try Data(data).write(to: URL(fileURLWithPath: path))
            log("wrote \(path)")
        }
    }

    // MARK: Bundles

    func makeBundle(in directory: String, items: Int, large: Bool, identifier: String = "com.example.bench.indexer",
                    executable: String? = nil, environment: [String: String] = [:], sandboxed: Bool = true,
                    sandboxRead: [String] = [], declarations: JSONValue? = nil) throws -> String {
        let bundle = directory + "/" + identifier
        try FileManager.default.createDirectory(atPath: bundle, withIntermediateDirectories: true)
        var variables: [(String, JSONValue)] = [("BENCH_ITEMS", .string(String(items))), ("BENCH_SIZE", .string(large ? "large" : "small"))]
        for (key, value) in environment.sorted(by: { $0.key < $1.key }) { variables.append((key, .string(value))) }
        var members: [(String, JSONValue)] = [
            ("manifestVersion", 1), ("bundleIdentifier", .string(identifier)), ("executable", .string(executable ?? extensionBinary)),
            ("environment", .object(variables)),
            ("timeouts", .object([("startupSeconds", 60), ("idleSeconds", 600), ("requestSeconds", 36000)])),
        ]
        if !sandboxed {
            members.append(("sandbox", false))
        } else if !sandboxRead.isEmpty {
            members.append(("sandbox", .object([("read", .array(sandboxRead.map { .string($0) }))])))
        }
        if let declarations { members.append(("attributes", declarations)) }
        let manifest: JSONValue = .object(members)
        try Data(JSONWriter.bytes(manifest)).write(to: URL(fileURLWithPath: bundle + "/manifest.json"))
        return bundle
    }

    /// Runs a command, timed from spawn to a blocking wait (`TimedProcess`); with `sampleMemory`,
    /// its peak resident memory (VmHWM) is sampled every 20 ms meanwhile.
    func runCommand(_ path: String, _ arguments: [String], stdinPath: String? = nil,
                    sampleMemory: Bool = false) throws -> (seconds: Double, peakKiB: Int, status: Int32, output: String) {
        let outputPath = work + "/output-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: outputPath) }
        let result = try TimedProcess.run(path, arguments, stdinPath: stdinPath ?? "/dev/null", outputPath: outputPath, sampleMemory: sampleMemory)
        return (result.seconds, result.peakKiB, result.status, result.output)
    }

    // MARK: Throughput and memory

    func throughput() throws {
        for large in [false, true] {
            for count in options.items {
                let label = "\(count / 1000)k \(large ? "large" : "small")"
                log("throughput \(label): generating items for the raw loader")
                // What the extension's items become in the store; the raw loader gets it for free.
                let prepared = try (0..<count).map { n -> ValidatedItem in try ItemValidator.validate(BenchItems.item(n, large: large).json) }
                let extensions = work + "/ext-\(count)-\(large)"
                _ = try makeBundle(in: extensions, items: count, large: large)
                var host = Sample(), raw = Sample(), memory = Sample(), ratio = Sample(), store = Sample(), storeRatio = Sample()
                for round in 0..<options.rounds {
                    let hostIndex = work + "/host-\(count)-\(large)-\(round).sqlite"
                    let rawIndex = work + "/raw-\(count)-\(large)-\(round).sqlite"
                    // Alternate which goes first.
                    let order: [Bool] = round % 2 == 0 ? [true, false] : [false, true]
                    // The store alone (no extension, no JSON): the same items through StagedWrites,
                    // in process, one transaction — against the raw loader of this round.
                    let storeIndex = work + "/store-\(count)-\(large)-\(round).sqlite"
                    let storeSeconds = try storeLoad(prepared, into: storeIndex)
                    store.add(Double(count) / storeSeconds)
                    for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: storeIndex + suffix) }
                    for runHost in order {
                        if runHost {
                            let result = try runCommand(reindexBinary, ["--index", hostIndex, "--extensions-path", extensions, "run", "com.example.bench.indexer", "--json"], sampleMemory: true)
                            guard result.status == 0 else { throw ReindexError(.internal, "reindex run failed (\(result.status)): \(result.output)") }
                            host.add(Double(count) / result.seconds)
                            memory.add(Double(result.peakKiB) / 1024)
                        } else {
                            raw.add(Double(count) / (try rawLoad(prepared, into: rawIndex)))
                        }
                    }
                    // The machine's speed drifts; the ratio within one round (host and raw back to
                    // back) is steadier than the ratio of medians.
                    if let h = host.values.last, let r = raw.values.last { ratio.add(h / r) }
                    if let s = store.values.last, let r = raw.values.last { storeRatio.add(s / r) }
                    log("throughput \(label) round \(round + 1): host \(fmt(host.values.last ?? 0, 0)) items/s, raw \(fmt(raw.values.last ?? 0, 0)) items/s, host peak \(fmt(memory.values.last ?? 0)) MiB")
                    if !(large == false && count == options.items.max() && round == options.rounds - 1) {
                        try? FileManager.default.removeItem(atPath: hostIndex)
                    } else {
                        largestIndex = hostIndex
                    }
                    for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: rawIndex + suffix) }
                }
                rows.append(["reindexAll \(label) (items/s)", "\(fmt(host.median, 0)) (\(fmt(host.min, 0))–\(fmt(host.max, 0)))",
                             "\(fmt(raw.median, 0)) (\(fmt(raw.min, 0))–\(fmt(raw.max, 0)))",
                             "\(fmt(ratio.median, 2))× raw (per-round \(fmt(ratio.min, 2))–\(fmt(ratio.max, 2)))"])
                rows.append(["store bulk insert \(label), in process (items/s)", "\(fmt(store.median, 0)) (\(fmt(store.min, 0))–\(fmt(store.max, 0)))",
                             "\(fmt(raw.median, 0))", "\(fmt(storeRatio.median, 2))× raw (per-round \(fmt(storeRatio.min, 2))–\(fmt(storeRatio.max, 2)))"])
                rows.append(["host peak RSS, \(label) (MiB)", "\(fmt(memory.median)) (\(fmt(memory.min))–\(fmt(memory.max)))", "-", ""])
                results.append(("throughput_\(count)_\(large ? "large" : "small")", .object([
                    ("hostItemsPerSecond", .double(host.median)), ("rawItemsPerSecond", .double(raw.median)),
                    ("ratio", .double(ratio.median)), ("ratioMin", .double(ratio.min)), ("ratioMax", .double(ratio.max)),
                    ("hostPeakMiB", .double(memory.median)),
                    ("storeItemsPerSecond", .double(store.median)), ("storeRatio", .double(storeRatio.median)),
                    ("hostMin", .double(host.min)), ("hostMax", .double(host.max)), ("rawMin", .double(raw.min)), ("rawMax", .double(raw.max)),
                ])))
            }
        }
    }

    /// The limit of the store: the same items into the same schema, prepared statements, one
    /// transaction. Returns seconds.
    func rawLoad(_ items: [ValidatedItem], into path: String) throws -> Double {
        let schemaStore = try IndexStore.open(path: path)  // creates the same schema
        _ = schemaStore
        var db: OpaquePointer?
        guard sqlite3_open(path, &db) == SQLITE_OK, let db else { throw ReindexError(.internal, "cannot open \(path)") }
        defer { sqlite3_close(db) }
        sqlite3_exec(db, "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL; PRAGMA cache_size=-16000;", nil, nil, nil)
        var insert: OpaquePointer?, fts: OpaquePointer?
        // The same row the store writes, filter columns included (the bench items carry a rating).
        sqlite3_prepare_v2(db, "INSERT INTO items(bundle, gen, uid, domain, expires, attributes, content_type, rating) VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)", -1, &insert, nil)
        sqlite3_prepare_v2(db, "INSERT INTO items_fts(rowid, title, displayName, alternateNames, contentDescription, textContent, keywords, authors) VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)", -1, &fts, nil)
        defer { sqlite3_finalize(insert); sqlite3_finalize(fts) }
        let transient = unsafeBitCast(-1, to: sqlite3_destructor_type.self)
        func bindText(_ statement: OpaquePointer?, _ index: Int32, _ text: String?) {
            guard var text else { sqlite3_bind_null(statement, index); return }
            _ = text.withUTF8 { sqlite3_bind_text(statement, index, UnsafeRawPointer($0.baseAddress!).assumingMemoryBound(to: CChar.self), Int32($0.count), transient) }
        }
        func bindField(_ statement: OpaquePointer?, _ index: Int32, _ item: ValidatedItem, _ field: ValidatedItem.Field) {
            item.withField(field) { raw in
                guard let raw, let base = raw.baseAddress else { sqlite3_bind_null(statement, index); return }
                sqlite3_bind_text(statement, index, base.assumingMemoryBound(to: CChar.self), Int32(raw.count), transient)
            }
        }
        let start = Clock.monotonic()
        sqlite3_exec(db, "BEGIN IMMEDIATE", nil, nil, nil)
        for item in items {
            bindText(insert, 1, "com.example.bench.indexer")
            sqlite3_bind_int64(insert, 2, 1)
            bindField(insert, 3, item, .uniqueIdentifier)
            bindField(insert, 4, item, .domainIdentifier)
            sqlite3_bind_null(insert, 5)
            bindField(insert, 6, item, .attributes)
            bindField(insert, 7, item, .contentType)
            if let rating = item.filters.rating { sqlite3_bind_double(insert, 8, rating) } else { sqlite3_bind_null(insert, 8) }
            guard sqlite3_step(insert) == SQLITE_DONE else { throw ReindexError(.internal, "raw insert failed") }
            sqlite3_reset(insert)
            sqlite3_bind_int64(fts, 1, sqlite3_last_insert_rowid(db))
            for (n, field) in ValidatedItem.Field.searched.enumerated() { bindField(fts, Int32(n + 2), item, field) }
            guard sqlite3_step(fts) == SQLITE_DONE else { throw ReindexError(.internal, "raw fts insert failed") }
            sqlite3_reset(fts)
        }
        sqlite3_exec(db, "COMMIT", nil, nil, nil)
        return Clock.monotonic() - start
    }

    /// The store's own bulk path: `LocalIndex` (StagedWrites) over the same prepared items.
    func storeLoad(_ items: [ValidatedItem], into path: String) throws -> Double {
        let index = try LocalIndex(path: path, bundleIdentifier: "com.example.bench.indexer")
        let start = Clock.monotonic()
        try index.put(validated: items)
        return Clock.monotonic() - start
    }

    // MARK: Acknowledgement latency

    func acknowledgementLatency() throws {
        let extensions = work + "/ext-ack"
        _ = try makeBundle(in: extensions, items: 100, large: false)
        let index = work + "/ack.sqlite"
        _ = try runCommand(reindexBinary, ["--index", index, "--extensions-path", extensions, "run", "com.example.bench.indexer"])
        var host = Sample(), bare = Sample()
        let rounds = Swift.max(10, options.rounds * 5)
        for round in 0..<rounds {
            for runHost in (round % 2 == 0 ? [true, false] : [false, true]) {
                if runHost {
                    let result = try runCommand(reindexBinary, ["--index", index, "--extensions-path", extensions, "run", "com.example.bench.indexer", "--ids", "item.7"])
                    guard result.status == 0 else { throw ReindexError(.internal, "reindex run --ids failed (\(result.status))") }
                    host.add(result.seconds * 1000)
                } else {
                    bare.add(try runCommand(extensionBinary, []).seconds * 1000)
                }
            }
        }
        rows.append(["ack latency, run --ids one item (ms)", "\(fmt(host.median)) (\(fmt(host.min))–\(fmt(host.max)))",
                     "\(fmt(bare.median)) (\(fmt(bare.min))–\(fmt(bare.max))) bare extension start", "\(fmt(host.median / bare.median, 2))× bare"])
        results.append(("ackLatency", .object([("hostMs", .double(host.median)), ("bareExtensionMs", .double(bare.median)), ("ratio", .double(host.median / bare.median))])))
    }

    // MARK: The sandbox's cost

    /// The same extension and requests sandboxed and with `"sandbox": false`, alternating which
    /// goes first: `run --ids` of one item (the sandbox is built at every start: the profile in
    /// the host, the Landlock rules in the child) and a reindexAll of the smallest item count.
    func sandboxCost() throws {
        let support = SandboxSupport.current
        guard support.abi != nil else {
            log("sandbox: \(support); nothing to measure")
            rows.append(["sandbox cost", "-", "-", "sandbox \(support)"])
            return
        }
        log("sandbox: \(support)")
        let count = options.items.min() ?? 100_000
        var directories: [Bool: String] = [:]
        for sandboxed in [true, false] {
            let directory = work + "/ext-sandbox-\(sandboxed)"
            _ = try makeBundle(in: directory, items: count, large: false, sandboxed: sandboxed)
            directories[sandboxed] = directory
        }
        func arguments(_ sandboxed: Bool, _ index: String, _ extra: [String]) -> [String] {
            ["--index", index, "--extensions-path", directories[sandboxed]!, "run", "com.example.bench.indexer"] + extra
        }

        // Ack latency: one item, after a first reindexAll has filled each index.
        var ack: [Bool: Sample] = [true: Sample(), false: Sample()]
        for sandboxed in [true, false] {
            let result = try runCommand(reindexBinary, arguments(sandboxed, work + "/sandbox-ack-\(sandboxed).sqlite", []))
            guard result.status == 0 else { throw ReindexError(.internal, "reindex run failed (\(result.status)): \(result.output)") }
        }
        let rounds = Swift.max(10, options.rounds * 5)
        var ackRatio = Sample()
        for round in 0..<rounds {
            for sandboxed in (round % 2 == 0 ? [true, false] : [false, true]) {
                let result = try runCommand(reindexBinary, arguments(sandboxed, work + "/sandbox-ack-\(sandboxed).sqlite", ["--ids", "item.7"]))
                guard result.status == 0 else { throw ReindexError(.internal, "reindex run --ids failed (\(result.status))") }
                ack[sandboxed]!.add(result.seconds * 1000)
            }
            if let on = ack[true]!.values.last, let off = ack[false]!.values.last { ackRatio.add(on / off) }
        }
        let on = ack[true]!, off = ack[false]!
        rows.append(["sandbox: ack latency, run --ids one item (ms)", "\(fmt(on.median)) (\(fmt(on.min))–\(fmt(on.max))) sandboxed",
                     "\(fmt(off.median)) (\(fmt(off.min))–\(fmt(off.max))) \"sandbox\": false",
                     "\(signed(on.median - off.median, 2)) ms; \(fmt(ackRatio.median, 3))× (per-round \(fmt(ackRatio.min, 2))–\(fmt(ackRatio.max, 2))), \(rounds) rounds"])

        // The host's part of every sandboxed start, in process: working out the rules (reading
        // the executable, resolving paths, the protected places).
        let bundle = try Discovery.load(directory: directories[true]! + "/com.example.bench.indexer").get()
        let paths = HostPaths(extensionsPath: directories[true]!, index: work + "/sandbox-ack-true.sqlite", environment: ProcessInfo.processInfo.environment)
        var profileTime = Sample()
        var rules = 0
        for _ in 0..<200 {
            let start = Clock.monotonic()
            rules = try SandboxProfile.preview(bundle: bundle, paths: paths, hostEnvironment: ProcessInfo.processInfo.environment).grants.count
            profileTime.add((Clock.monotonic() - start) * 1000)
        }
        rows.append(["sandbox: working out the rules, in process (ms)", "p50 \(fmt(profileTime.percentile(0.5), 3)), p99 \(fmt(profileTime.percentile(0.99), 3))", "-",
                     "\(rules) Landlock rules; 200 runs"])

        // A whole start without the two process images' own start-up: prepare the launch (rules,
        // private directories), fork, enter the sandbox, exec /bin/true, reap, remove TMPDIR.
        let trueBundleDirectory = work + "/sandbox-true/com.example.bench.true"
        try FileManager.default.createDirectory(atPath: trueBundleDirectory, withIntermediateDirectories: true)
        try Data(#"{"manifestVersion":1,"bundleIdentifier":"com.example.bench.true","executable":"/bin/true"}"#.utf8)
            .write(to: URL(fileURLWithPath: trueBundleDirectory + "/manifest.json"))
        let trueBundle = try Discovery.load(directory: trueBundleDirectory).get()
        var spawn: [Bool: Sample] = [true: Sample(), false: Sample()]
        for round in 0..<400 {
            for sandboxed in (round % 2 == 0 ? [true, false] : [false, true]) {
                var options = SandboxOptions()
                options.paths = paths
                options.disabled = !sandboxed
                let start = Clock.monotonic()
                let launch = try SandboxLaunch(bundle: trueBundle, options: options, environment: ["PATH": "/usr/bin:/bin"],
                                               hostEnvironment: ProcessInfo.processInfo.environment, indexPath: paths.index)
                let process = try ExtensionProcess(bundle: trueBundle, environment: launch.environment, launch: launch)
                process.waitForExit(blocking: true)
                process.closePipes()
                process.removePrivateTemporaryDirectory()
                spawn[sandboxed]!.add((Clock.monotonic() - start) * 1000)
            }
        }
        let spawnOn = spawn[true]!, spawnOff = spawn[false]!
        rows.append(["sandbox: start and reap /bin/true, in process (ms)", "p50 \(fmt(spawnOn.percentile(0.5), 3)), p90 \(fmt(spawnOn.percentile(0.9), 3)) sandboxed",
                     "p50 \(fmt(spawnOff.percentile(0.5), 3)), p90 \(fmt(spawnOff.percentile(0.9), 3)) --no-sandbox",
                     "\(signed(spawnOn.percentile(0.5) - spawnOff.percentile(0.5), 3)) ms at the median; 400 each, alternating"])

        // Throughput: a reindexAll of `count` small items into a fresh index.
        var throughput: [Bool: Sample] = [true: Sample(), false: Sample()]
        var ratio = Sample()
        for round in 0..<options.rounds {
            for sandboxed in (round % 2 == 0 ? [true, false] : [false, true]) {
                let index = work + "/sandbox-all-\(sandboxed)-\(round).sqlite"
                let result = try runCommand(reindexBinary, arguments(sandboxed, index, ["--json"]))
                guard result.status == 0 else { throw ReindexError(.internal, "reindex run failed (\(result.status)): \(result.output)") }
                throughput[sandboxed]!.add(Double(count) / result.seconds)
                for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: index + suffix) }
            }
            if let a = throughput[true]!.values.last, let b = throughput[false]!.values.last { ratio.add(a / b) }
            log("sandbox round \(round + 1): reindexAll \(fmt(throughput[true]!.values.last ?? 0, 0)) items/s sandboxed, \(fmt(throughput[false]!.values.last ?? 0, 0)) without")
        }
        let a = throughput[true]!, b = throughput[false]!
        rows.append(["sandbox: reindexAll \(count / 1000)k small (items/s)", "\(fmt(a.median, 0)) (\(fmt(a.min, 0))–\(fmt(a.max, 0))) sandboxed",
                     "\(fmt(b.median, 0)) (\(fmt(b.min, 0))–\(fmt(b.max, 0))) \"sandbox\": false",
                     "\(fmt(ratio.median, 3))× (per-round \(fmt(ratio.min, 2))–\(fmt(ratio.max, 2)))"])
        results.append(("sandbox", .object([
            ("support", .string(support.description)),
            ("ackSandboxedMs", .double(on.median)), ("ackUnsandboxedMs", .double(off.median)), ("ackRatio", .double(ackRatio.median)),
            ("profileMsP50", .double(profileTime.percentile(0.5))), ("rules", .integer(Int64(rules))),
            ("spawnSandboxedMsP50", .double(spawnOn.percentile(0.5))), ("spawnUnsandboxedMsP50", .double(spawnOff.percentile(0.5))),
            ("items", .integer(Int64(count))),
            ("throughputSandboxed", .double(a.median)), ("throughputUnsandboxed", .double(b.median)), ("throughputRatio", .double(ratio.median)),
        ])))
    }

    // MARK: Search latency

    /// Words typed into a search field, none of whose prefixes the other search rows read.
    static let typedWords = ["counsel", "recruiter", "scientist", "okafor", "garcia", "lindqvist", "typography", "negotiation"]

    /// Each of `typedWords` typed one key at a time from its second letter, each key's prefix
    /// searched once (its first search): the two-letter keys, then every later key.
    static func typedKeys(_ search: (String) throws -> Void) throws -> (twoLetters: Sample, later: Sample) {
        var twoLetters = Sample(), later = Sample()
        for word in typedWords {
            let letters = Array(word)
            for end in 2...letters.count {
                let start = Clock.monotonic()
                try search(String(letters[..<end]))
                let ms = (Clock.monotonic() - start) * 1000
                if end == 2 { twoLetters.add(ms) } else { later.add(ms) }
            }
        }
        return (twoLetters, later)
    }

    /// Pairs typed into a search field: the first word searched alone (its lists made), then the
    /// second typed one key at a time from its first letter. None is read by the other rows.
    static let typedPairs = [("finance", "executive"), ("people", "designer"), ("research", "hamilton"),
                             ("tanaka", "budgeting"), ("rossi", "kubernetes"), ("moreau", "networking")]

    /// Each of `typedPairs` typed: each key's query searched once (its first search). The second
    /// word's one-letter keys (which make the pair's list together), then every later key.
    static func typedPairKeys(_ search: (String) throws -> Void) throws -> (firstKeys: Sample, later: Sample) {
        var firstKeys = Sample(), later = Sample()
        for (word, typed) in typedPairs {
            try search(word)
            let letters = Array(typed)
            for end in 1...letters.count {
                let start = Clock.monotonic()
                try search(word + " " + String(letters[..<end]))
                let ms = (Clock.monotonic() - start) * 1000
                if end == 1 { firstKeys.add(ms) } else { later.add(ms) }
            }
        }
        return (firstKeys, later)
    }

    static func typedPairRow(_ later: Sample, _ firstKeys: Sample, items: Int, backend: String = "") -> [String] {
        ["pairs as typed\(backend), \(items / 1000)k items, each key a first search (ms)",
         "p50 \(fmt(later.percentile(0.5), 2)), p90 \(fmt(later.percentile(0.9), 2)), max \(fmt(later.max, 2))", "-",
         "\(typedPairs.count) pairs, the second word typed from its second letter, \(later.values.count) keys, in process, after the first word "
            + "alone; their one-letter keys before (which make the pair's list together): p50 \(fmt(firstKeys.percentile(0.5), 2)), max \(fmt(firstKeys.max, 2))"]
    }

    static func typedRow(_ later: Sample, _ twoLetters: Sample, items: Int, backend: String = "") -> [String] {
        ["search as typed\(backend), \(items / 1000)k items, each key a first search (ms)",
         "p50 \(fmt(later.percentile(0.5), 2)), p90 \(fmt(later.percentile(0.9), 2)), max \(fmt(later.max, 2))", "-",
         "\(typedWords.count) words typed from their third letter, \(later.values.count) keys, in process; their two-letter keys before "
            + "(which make their lists): p50 \(fmt(twoLetters.percentile(0.5), 2)), max \(fmt(twoLetters.max, 2))"]
    }

    /// The index the search scenarios read: the throughput scenario's largest, else one of the
    /// largest item count whose items carry rankingHints (one in 100), a modification date and
    /// the declared attribute `level`, made once.
    func searchIndex() throws -> String {
        if let largestIndex { return largestIndex }
        let extensions = work + "/ext-search"
        let count = options.items.max() ?? 100_000
        _ = try makeBundle(in: extensions, items: count, large: false, environment: ["BENCH_EXTRA": "1"],
                           declarations: .object([("level", .object([("type", .string("number"))]))]))
        let path = work + "/search.sqlite"
        _ = try runCommand(reindexBinary, ["--index", path, "--extensions-path", extensions, "run", "com.example.bench.indexer"])
        largestIndex = path
        return path
    }

    func searchLatency() throws {
        let path = try searchIndex()
        let store = try IndexStore.open(path: path)
        let items = try store.itemCount(bundle: "com.example.bench.indexer")
        let one = ["engineering", "swift", "park", "hopper", "design", "kubernetes", "finance", "zoë", "legal", "rust"]
        let two = ["ada park", "staff engineer", "swift compilers", "grace hopper", "support lead", "sales analyst", "linux rust", "zoe muller"]
        let prefix = ["eng", "sw", "hop", "des", "kub", "fin", "mül", "sta", "pri", "ta"]
        for (name, queries) in [("one word", one), ("two words", two), ("prefix", prefix)] {
            // The first search of a common word reads all its matches and makes its rank list
            // (SQLite/RankLists.swift); reported apart, then every round reads the lists.
            var first = Sample()
            for query in queries {
                let start = Clock.monotonic()
                _ = try store.search(query, limit: 20)
                first.add((Clock.monotonic() - start) * 1000)
            }
            rows.append(["search \(name), first search of each (ms)", "p50 \(fmt(first.percentile(0.5), 2)), max \(fmt(first.max, 2))", "-", "makes the words' rank lists (a read of every match each), then reads the page from them"])
            var sample = Sample()
            var perQuery = [Sample](repeating: Sample(), count: queries.count)
            for _ in 0..<10 {
                for (n, query) in queries.enumerated() {
                    let start = Clock.monotonic()
                    _ = try store.search(query, limit: 20)
                    let ms = (Clock.monotonic() - start) * 1000
                    sample.add(ms)
                    perQuery[n].add(ms)
                }
            }
            // Each query's own median: which queries make the tail.
            let each = zip(queries, perQuery).map { "\($0) \(fmt($1.percentile(0.5), 2))" }.joined(separator: "; ")
            rows.append(["search \(name), \(items / 1000)k items (ms)", "p50 \(fmt(sample.percentile(0.5), 2)), p99 \(fmt(sample.percentile(0.99), 2))", "-",
                         "limit 20, \(sample.values.count) queries; each query's p50: \(each)"])
            results.append(("search_\(name.replacingOccurrences(of: " ", with: "_"))", .object([("p50Ms", .double(sample.percentile(0.5))), ("p99Ms", .double(sample.percentile(0.99))), ("items", .integer(Int64(items)))])))
            // Cold: a fresh connection per query (what one `reindex search` process pays: the
            // columns each word occurs in are not cached yet).
            var cold = Sample()
            for query in queries {
                let fresh = try IndexStore.open(path: path)
                let start = Clock.monotonic()
                _ = try fresh.search(query, limit: 20)
                cold.add((Clock.monotonic() - start) * 1000)
            }
            rows.append(["search \(name), cold connection (ms)", "p50 \(fmt(cold.percentile(0.5), 2)), max \(fmt(cold.max, 2))", "-", "\(cold.values.count) queries, one new connection each"])
        }
        // A search field: every key a new prefix, and its first search.
        let typing = try IndexStore.open(path: path)
        let (twoLetters, laterKeys) = try Self.typedKeys { _ = try typing.search($0, limit: 20) }
        rows.append(Self.typedRow(laterKeys, twoLetters, items: items))
        results.append(("search_as_typed", .object([("p50Ms", .double(laterKeys.percentile(0.5))), ("p90Ms", .double(laterKeys.percentile(0.9))),
                                                    ("maxMs", .double(laterKeys.max)), ("twoLettersP50Ms", .double(twoLetters.percentile(0.5)))])))
        let (pairFirstKeys, pairLaterKeys) = try Self.typedPairKeys { _ = try typing.search($0, limit: 20) }
        rows.append(Self.typedPairRow(pairLaterKeys, pairFirstKeys, items: items))
        results.append(("pairs_as_typed", .object([("p50Ms", .double(pairLaterKeys.percentile(0.5))), ("p90Ms", .double(pairLaterKeys.percentile(0.9))),
                                                   ("maxMs", .double(pairLaterKeys.max)), ("firstKeysP50Ms", .double(pairFirstKeys.percentile(0.5)))])))
        // The query language: filters alone, filters with words, exact counts, deep pages.
        var languageQueries: [(String, String)] = [
            ("filter only", #"domainIdentifier == "com.example.bench.engineering" && keywords == "swift""#),
            ("filter + words", #"park && domainIdentifier == "com.example.bench.design""#),
            // Selects 0.2% of the items, through the rating column's index.
            ("filter only, selective", "rating >= 4.9"),
        ]
        let declared = try store.declarations(bundle: "com.example.bench.indexer")["level"] != nil
        if declared {
            // A declared attribute, through item_attributes: 0.2% of the items, then 0.1% with words.
            languageQueries.append(("filter only, declared attribute", "level >= 998"))
            languageQueries.append(("filter + words, declared attribute", "park && level == 500"))
        }
        if try store.count("contentModificationDate == *") > 0 {
            // Apple's grammar: a `$time` range (3% of the items) with a word.
            languageQueries.append(("$time range + word", "park && contentModificationDate >= $time.today(-30)"))
            languageQueries.append(("InRange with $time + word", "InRange(kMDItemContentModificationDate, $time.today(-30), $time.now) && swift"))
        }
        rows.append(["items with a rankingHint", declared ? "\(try store.count("rankingHint > 0"))" : "0", "-", "the plain-word rows above rank over them"])
        for (name, query) in languageQueries {
            var sample = Sample()
            for _ in 0..<50 {
                let start = Clock.monotonic()
                _ = try store.query(query, options: QueryOptions(limit: 20))
                sample.add((Clock.monotonic() - start) * 1000)
            }
            rows.append(["query \(name), first page of 20 (ms)", "p50 \(fmt(sample.percentile(0.5), 2)), p99 \(fmt(sample.percentile(0.99), 2))", "-", query])
            results.append(("query_\(name.replacingOccurrences(of: " ", with: "_").replacingOccurrences(of: ",", with: ""))",
                            .object([("p50Ms", .double(sample.percentile(0.5))), ("p99Ms", .double(sample.percentile(0.99)))])))
        }
        // Sorted by an indexed attribute, every item: the first page walks the index.
        for sort in [QuerySort(attribute: "rating"), QuerySort(attribute: "rating", descending: true)]
            + (declared ? [QuerySort(attribute: "level", descending: true)] : []) {
            var sample = Sample()
            for _ in 0..<50 {
                let start = Clock.monotonic()
                _ = try store.query("", options: QueryOptions(limit: 20, sort: [sort]))
                sample.add((Clock.monotonic() - start) * 1000)
            }
            let name = "--sort \(sort.attribute)\(sort.descending ? ":desc" : "")"
            rows.append(["\(name), every item, first page of 20 (ms)", "p50 \(fmt(sample.percentile(0.5), 2)), p99 \(fmt(sample.percentile(0.99), 2))", "-", "\(items) items"])
            results.append(("sort_\(sort.attribute)\(sort.descending ? "_desc" : "")", .object([("p50Ms", .double(sample.percentile(0.5))), ("p99Ms", .double(sample.percentile(0.99)))])))
        }
        var counts = Sample()
        for _ in 0..<10 {
            let start = Clock.monotonic()
            _ = try store.count("engineering")
            counts.add((Clock.monotonic() - start) * 1000)
        }
        rows.append(["count of a common word (ms)", "p50 \(fmt(counts.percentile(0.5), 2)), max \(fmt(counts.max, 2))", "-", "engineering: \(try store.count("engineering")) matches"])
        for (name, query, sort) in [("relevance", "engineering", [QuerySort]()), ("sorted", "engineering", [QuerySort(attribute: "title")])] {
            var first = Sample(), fiftieth = Sample()
            for _ in 0..<3 {
                var cursor: String? = nil
                for page in 1...50 {
                    let start = Clock.monotonic()
                    let result = try store.query(query, options: QueryOptions(limit: 20, after: cursor, sort: sort))
                    let ms = (Clock.monotonic() - start) * 1000
                    if page == 1 { first.add(ms) }
                    if page == 50 { fiftieth.add(ms) }
                    cursor = result.nextCursor
                }
            }
            rows.append(["50th page via --after, \(name) (ms)", "\(fmt(fiftieth.median, 2))", "first page \(fmt(first.median, 2))", "\(fmt(fiftieth.median / first.median, 2))× the first page"])
        }
    }

    // MARK: Discovery

    func discovery() throws {
        var previous: Double? = nil
        for count in [10, 100, 1000] {
            let directory = work + "/discovery-\(count)"
            for n in 0..<count { _ = try makeBundle(in: directory, items: 1, large: false, identifier: "com.example.bench.b\(n)") }
            var sample = Sample()
            for _ in 0..<Swift.max(5, options.rounds) {
                let result = try runCommand(reindexBinary, ["--extensions-path", directory, "list", "--json"])
                sample.add(result.seconds * 1000)
            }
            let growth = previous.map { "\(fmt(sample.median / $0, 1))× the previous for 10× the bundles" } ?? "includes process start"
            previous = sample.median
            rows.append(["reindex list, \(count) bundles (ms)", "\(fmt(sample.median)) (\(fmt(sample.min))–\(fmt(sample.max)))", "-", growth])
            results.append(("discovery_\(count)", .object([("ms", .double(sample.median))])))
        }
    }

    // MARK: Script extensions: plain Python, the Python SDK, the TypeScript SDK

    /// The throughput scenario with extensions in other languages against the raw loader:
    /// `Benchmarks/bench_indexer.py` (no SDK, one json.dumps per put of 2,000 items, which most
    /// authors' extensions look like), `bench_indexer_sdk.py` (the Python SDK, one `index.put` of a
    /// generator) and `bench_indexer_sdk.mjs` (the TypeScript SDK, an awaited `index.put` per 2,000
    /// items). Each reads the same items, one JSON item per line, from a file in its bundle.
    func scriptThroughput() throws {
        let benchmarks = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        let repository = benchmarks.deletingLastPathComponent()
        let pythonSDK = repository.appendingPathComponent("SDKs/python").path
        let typeScriptSDK = repository.appendingPathComponent("SDKs/typescript").path
        var extensions: [(label: String, key: String, script: String, environment: [String: String], read: [String])] = [
            ("plain Python extension", "python", benchmarks.appendingPathComponent("bench_indexer.py").path, [:], []),
            ("Python SDK extension", "python_sdk", benchmarks.appendingPathComponent("bench_indexer_sdk.py").path,
             ["REINDEX_PYTHON_SDK": pythonSDK], [pythonSDK]),
        ]
        if FileManager.default.fileExists(atPath: typeScriptSDK + "/dist/index.js") {
            extensions.append(("TypeScript SDK extension", "typescript_sdk", benchmarks.appendingPathComponent("bench_indexer_sdk.mjs").path,
                               ["REINDEX_TS_SDK": typeScriptSDK], [typeScriptSDK]))
        } else {
            rows.append(["reindexAll, TypeScript SDK extension", "-", "-", "SDKs/typescript/dist is missing (npm run build there)"])
        }
        for count in options.items {
            let label = "\(count / 1000)k small"
            let prepared = try (0..<count).map { n -> ValidatedItem in try ItemValidator.validate(BenchItems.item(n, large: false).json) }
            // The items live in the bundles' directory, which the sandboxed extensions may read.
            let directory = work + "/ext-scripts-\(count)"
            let itemsFile = directory + "/items.jsonl"
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
            _ = FileManager.default.createFile(atPath: itemsFile, contents: nil)
            let handle = try XFileHandle(path: itemsFile)
            for n in 0..<count { handle.write(LineWriter.line(BenchItems.item(n, large: false).json)) }
            handle.close()
            defer { try? FileManager.default.removeItem(atPath: itemsFile) }
            for (name, key, script, environment, read) in extensions {
                let extensionsPath = directory + "/" + key
                _ = try makeBundle(in: extensionsPath, items: count, large: false, executable: script,
                                   environment: environment.merging(["BENCH_ITEMS_FILE": itemsFile]) { $1 }, sandboxRead: read + [directory])
                var host = Sample(), raw = Sample(), ratio = Sample()
                for round in 0..<options.rounds {
                    let hostIndex = work + "/\(key)-\(count)-\(round).sqlite", rawIndex = work + "/\(key)-raw-\(count)-\(round).sqlite"
                    for runHost in (round % 2 == 0 ? [true, false] : [false, true]) {
                        if runHost {
                            let result = try runCommand(reindexBinary, ["--index", hostIndex, "--extensions-path", extensionsPath, "run", "com.example.bench.indexer", "--json"])
                            guard result.status == 0 else { throw ReindexError(.internal, "reindex run of the \(name) failed (\(result.status)): \(result.output)") }
                            host.add(Double(count) / result.seconds)
                        } else {
                            raw.add(Double(count) / (try rawLoad(prepared, into: rawIndex)))
                        }
                    }
                    if let h = host.values.last, let r = raw.values.last { ratio.add(h / r) }
                    log("\(key) \(label) round \(round + 1): host \(fmt(host.values.last ?? 0, 0)) items/s, raw \(fmt(raw.values.last ?? 0, 0)) items/s")
                    for path in [hostIndex, rawIndex] { for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) } }
                }
                rows.append(["reindexAll \(label), \(name) (items/s)", "\(fmt(host.median, 0)) (\(fmt(host.min, 0))–\(fmt(host.max, 0)))",
                             "\(fmt(raw.median, 0)) (\(fmt(raw.min, 0))–\(fmt(raw.max, 0)))",
                             "\(fmt(ratio.median, 2))× raw (per-round \(fmt(ratio.min, 2))–\(fmt(ratio.max, 2)))"])
                results.append(("\(key)_\(count)_small", .object([("hostItemsPerSecond", .double(host.median)), ("rawItemsPerSecond", .double(raw.median)), ("ratio", .double(ratio.median))])))
            }
        }
    }

    // MARK: Concurrency

    func concurrency() throws {
        try waitingBehindAnOpenRequest()
        try serveSideBySide()
        try searchesDuringAReplacement()
    }

    /// `reindex put` into B, `reindex run C --ids` and `reindex check --quick`, 100 times each,
    /// with no request open and then while bundle A's request is open and idle (its extension
    /// waiting after its puts): the difference is the time spent waiting for the index.
    func waitingBehindAnOpenRequest() throws {
        let extensions = work + "/ext-wait"
        let ready = work + "/wait.ready", release = work + "/wait.release"
        // Its handshake files are the benchmark's, outside what a sandboxed extension may write.
        _ = try makeBundle(in: extensions, items: 5000, large: false, identifier: "com.example.bench.open",
                           environment: ["BENCH_READY_FILE": ready, "BENCH_RELEASE_FILE": release], sandboxed: false)
        _ = try makeBundle(in: extensions, items: 100, large: false, identifier: "com.example.bench.c")
        let index = work + "/wait.sqlite"
        let line = work + "/wait-put.jsonl"
        try Data(#"{"uniqueIdentifier":"b.1","attributes":{"title":"Put while another request is open"}}"#.utf8 + [0x0A]).write(to: URL(fileURLWithPath: line))
        let base = ["--index", index, "--extensions-path", extensions]
        _ = try runCommand(reindexBinary, base + ["run", "com.example.bench.c"])
        let commands: [(String, [String], String?)] = [
            ("put into B", base + ["put", "com.example.bench.b"], line),
            ("run C --ids", base + ["run", "com.example.bench.c", "--ids", "item.1"], nil),
            ("check --quick", base + ["check", "--quick"], nil),
        ]
        func measure() throws -> [Sample] {
            var samples = [Sample](repeating: Sample(), count: commands.count)
            for _ in 0..<100 {
                for (n, command) in commands.enumerated() {
                    let result = try runCommand(reindexBinary, command.1, stdinPath: command.2)
                    guard result.status == 0 else { throw ReindexError(.internal, "\(command.0) failed (\(result.status)): \(result.output)") }
                    samples[n].add(result.seconds * 1000)
                }
            }
            return samples
        }
        log("concurrency: 100 tries each with no request open")
        let idle = try measure()
        let open = Process()
        open.executableURL = URL(fileURLWithPath: reindexBinary)
        open.arguments = base + ["run", "com.example.bench.open"]
        open.standardOutput = FileHandle(forWritingAtPath: "/dev/null")
        open.standardError = FileHandle(forWritingAtPath: "/dev/null")
        try open.run()
        while !FileManager.default.fileExists(atPath: ready) { usleep(10_000) }
        log("concurrency: 100 tries each while a request is open and idle")
        let busy = try measure()
        _ = FileManager.default.createFile(atPath: release, contents: nil)
        open.waitUntilExit()
        for (n, command) in commands.enumerated() {
            let waited = busy[n].percentile(0.99) - idle[n].percentile(0.99)
            rows.append(["\(command.0) while another request is open (ms)", "p50 \(fmt(busy[n].percentile(0.5))), p99 \(fmt(busy[n].percentile(0.99)))",
                         "p50 \(fmt(idle[n].percentile(0.5))), p99 \(fmt(idle[n].percentile(0.99))) with none open",
                         "waiting for the index, p99: \(fmt(Swift.max(0, waited))) ms (100 tries)"])
            results.append(("wait_\(command.0.replacingOccurrences(of: " ", with: "_"))", .object([
                ("busyP50Ms", .double(busy[n].percentile(0.5))), ("busyP99Ms", .double(busy[n].percentile(0.99))),
                ("idleP50Ms", .double(idle[n].percentile(0.5))), ("idleP99Ms", .double(idle[n].percentile(0.99))),
            ])))
        }
    }

    /// Two bundles whose extensions pause 5 s in the middle of their reindexAll, queued together
    /// for `serve --concurrency 2`: the time until both are acknowledged (about 5 s when they run
    /// side by side, 10 s when one waits for the other).
    func serveSideBySide() throws {
        let extensions = work + "/ext-serve"
        let index = work + "/serve.sqlite"
        for name in ["a", "b"] {
            _ = try makeBundle(in: extensions, items: 2000, large: false, identifier: "com.example.bench.pause\(name)", environment: ["BENCH_SLEEP_SECONDS": "5"])
        }
        let base = ["--index", index, "--extensions-path", extensions]
        for name in ["a", "b"] { _ = try runCommand(reindexBinary, base + ["run", "com.example.bench.pause\(name)", "--queue"]) }
        let serve = Process()
        serve.executableURL = URL(fileURLWithPath: reindexBinary)
        serve.arguments = base + ["serve", "--concurrency", "2", "--rescan", "60"]
        serve.standardOutput = FileHandle(forWritingAtPath: "/dev/null")
        serve.standardError = FileHandle(forWritingAtPath: "/dev/null")
        let start = Clock.monotonic()
        try serve.run()
        let reader = try IndexStore.open(path: index)
        var seconds = Double.nan
        while Clock.monotonic() - start < 120 {
            if try reader.itemCount(bundle: "com.example.bench.pausea") == 2000, try reader.itemCount(bundle: "com.example.bench.pauseb") == 2000 {
                seconds = Clock.monotonic() - start
                break
            }
            usleep(20_000)
        }
        kill(serve.processIdentifier, SIGTERM)
        serve.waitUntilExit()
        rows.append(["serve --concurrency 2, two extensions pausing 5 s (s)", fmt(seconds, 2), "5 s side by side, 10 s one after the other", "from serve's start to both acknowledged"])
        results.append(("serveSideBySide", .object([("seconds", .double(seconds))])))
    }

    /// Searches (every item, in process) while `reindex run` replaces a bundle's 20,000 items,
    /// again and again until 1,000 searches have run: how many saw two generations at once.
    func searchesDuringAReplacement() throws {
        let extensions = work + "/ext-mixed"
        let index = work + "/mixed.sqlite"
        let count = 20_000
        let base = ["--index", index, "--extensions-path", extensions]
        var searches = 0, mixed = 0, replacements = 0
        var generation = 0
        func bundle(_ tag: Int) throws {
            _ = try makeBundle(in: extensions, items: count, large: false, identifier: "com.example.bench.mixed", environment: ["BENCH_TAG": "g\(tag)"])
        }
        try bundle(generation)
        _ = try runCommand(reindexBinary, base + ["run", "com.example.bench.mixed"])
        let reader = try IndexStore.open(path: index)
        while searches < 1000 {
            generation += 1
            try bundle(generation)
            let run = Process()
            run.executableURL = URL(fileURLWithPath: reindexBinary)
            run.arguments = base + ["run", "com.example.bench.mixed"]
            run.standardOutput = FileHandle(forWritingAtPath: "/dev/null")
            run.standardError = FileHandle(forWritingAtPath: "/dev/null")
            try run.run()
            while run.isRunning && searches < 1000 {
                // Every engineer, old and new: one generation's marks only, or it is mixed.
                let page = try reader.search("engineering", limit: count + 10)
                let seen = Set(page.compactMap { $0.attributes["keywords"]?.arrayValue?.last?.stringValue })
                if seen.count > 1 { mixed += 1 }
                searches += 1
            }
            run.waitUntilExit()
            replacements += 1
        }
        rows.append(["searches during a replacement of 20,000 items", "\(mixed) of \(searches) saw two generations", "-", "\(replacements) replacements"])
        results.append(("mixedGenerations", .object([("searches", .integer(Int64(searches))), ("mixed", .integer(Int64(mixed)))])))
    }
}

/// Appends bytes to a file (for the Python scenario's items).
final class XFileHandle {
    let handle: FileHandle
    init(path: String) throws { handle = try FileHandle(forWritingTo: URL(fileURLWithPath: path)) }
    func write(_ bytes: [UInt8]) { handle.write(Data(bytes)) }
    func close() { try? handle.close() }
}
