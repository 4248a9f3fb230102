import BenchSupport
import CLibPQ
import Foundation
import PostgresHarness
import ReindexHost
import ReindexProtocol
import ReindexStore
import ReindexSystem

/// The PostgreSQL scenarios, on a private server the benchmark starts itself (`initdb` into a
/// temporary directory, a Unix socket, `fsync=off` as in the tests — the figures are the host's
/// and the server's work, not the disk's):
/// - postgres: `reindex run` of a reindexAll of N small items into a PostgreSQL index, against a
///   raw libpq loader putting the same items into the same schema in one transaction (`COPY`
///   into a temporary table, then one `INSERT … SELECT` computing a weighted `tsvector` on the
///   server, where the host sends the one it made);
///   the host's peak memory; then the search scenario's queries, p50/p99, over the largest
///   count of items in PostgreSQL beside SQLite over the same items;
/// - fleet: R queued requests of an extension that waits 0.2 s per request, done by 1 and by 4
///   `reindex serve --concurrency 1` workers on one index; and that none ran twice.
extension Bench {
    func startPostgres() throws -> PostgresServer {
        log("postgres: starting a private server (initdb, pg_ctl)")
        do { return try PostgresServer() } catch {
            throw ReindexError(.cannotStart, "\(error)")
        }
    }

    func postgresThroughput() throws {
        let server = try startPostgres()
        defer { server.destroy() }
        for count in options.items {
            let label = "\(count / 1000)k small"
            log("postgres \(label): generating items for the raw loader")
            let prepared = try (0..<count).map { n -> ValidatedItem in try ItemValidator.validate(BenchItems.item(n, large: false).json) }
            let extensions = work + "/ext-pg-\(count)"
            _ = try makeBundle(in: extensions, items: count, large: false)
            var host = Sample(), raw = Sample(), memory = Sample(), ratio = Sample()
            for round in 0..<options.rounds {
                for runHost in (round % 2 == 0 ? [true, false] : [false, true]) {
                    let schema = "bench_\(runHost ? "host" : "raw")_\(count)_\(round)"
                    if runHost {
                        setenv("REINDEX_PG_SCHEMA", schema, 1)
                        defer { unsetenv("REINDEX_PG_SCHEMA") }
                        let result = try runCommand(reindexBinary, ["--index", server.connectionString, "--extensions-path", extensions, "run", "com.example.bench.indexer", "--json"], sampleMemory: true)
                        guard result.status == 0 else { throw ReindexError(.internal, "reindex run into PostgreSQL failed (\(result.status)): \(result.output)") }
                        host.add(Double(count) / result.seconds)
                        memory.add(Double(result.peakKiB) / 1024)
                    } else {
                        raw.add(Double(count) / (try rawPostgresLoad(prepared, server: server, schema: schema)))
                    }
                    try server.psql("DROP SCHEMA \(schema) CASCADE")
                }
                if let h = host.values.last, let r = raw.values.last { ratio.add(h / r) }
                log("postgres \(label) round \(round + 1): host \(fmt(host.values.last ?? 0, 0)) items/s, raw libpq \(fmt(raw.values.last ?? 0, 0)) items/s, host peak \(fmt(memory.values.last ?? 0)) MiB")
            }
            rows.append(["reindexAll \(label) into PostgreSQL (items/s)", "\(fmt(host.median, 0)) (\(fmt(host.min, 0))–\(fmt(host.max, 0)))",
                         "\(fmt(raw.median, 0)) (\(fmt(raw.min, 0))–\(fmt(raw.max, 0))) raw libpq COPY",
                         "\(fmt(ratio.median, 2))× raw (per-round \(fmt(ratio.min, 2))–\(fmt(ratio.max, 2)))"])
            rows.append(["host peak RSS, \(label) into PostgreSQL (MiB)", "\(fmt(memory.median)) (\(fmt(memory.min))–\(fmt(memory.max)))", "-", ""])
            results.append(("postgres_throughput_\(count)_small", .object([
                ("hostItemsPerSecond", .double(host.median)), ("rawItemsPerSecond", .double(raw.median)),
                ("ratio", .double(ratio.median)), ("ratioMin", .double(ratio.min)), ("ratioMax", .double(ratio.max)),
                ("hostPeakMiB", .double(memory.median)),
            ])))
        }
        if let count = options.items.max() { try postgresSearch(server: server, count: count) }
    }

    /// The store's limit: the same rows into the same schema (made by the store), with libpq
    /// alone — `COPY` of the items' text into a temporary table, then one `INSERT … SELECT`
    /// computing a weighted `tsvector` on the server (the `reindex_search` configuration, which
    /// made the store's documents before the host made them), in one transaction. (Prepared
    /// single-row `INSERT`s are slower: a round trip per item.) Returns seconds.
    func rawPostgresLoad(_ items: [ValidatedItem], server: PostgresServer, schema: String) throws -> Double {
        _ = try Index.open(server.connectionString, environment: ["REINDEX_PG_SCHEMA": schema])  // creates the schema
        guard let conn = PQconnectdb(server.connectionString), PQstatus(conn) == CONNECTION_OK else {
            throw ReindexError(.cannotStart, "raw loader: cannot connect to \(server.connectionString)")
        }
        defer { PQfinish(conn) }
        func run(_ sql: String) throws {
            let result = PQexec(conn, sql)
            defer { PQclear(result) }
            let status = PQresultStatus(result)
            guard status == PGRES_COMMAND_OK || status == PGRES_TUPLES_OK || status == PGRES_COPY_IN else {
                throw ReindexError(.internal, "raw loader: \(String(cString: PQerrorMessage(conn))) in \(sql.prefix(80))")
            }
        }
        /// COPY's text format: backslash, tab, newline and carriage return escaped; NULL is \N.
        func field(_ text: String?, into line: inout [UInt8]) {
            guard let text else { line.append(contentsOf: Array("\\N".utf8)); return }
            for byte in text.utf8 {
                switch byte {
                case UInt8(ascii: "\\"): line.append(contentsOf: [92, 92])
                case UInt8(ascii: "\t"): line.append(contentsOf: [92, UInt8(ascii: "t")])
                case UInt8(ascii: "\n"): line.append(contentsOf: [92, UInt8(ascii: "n")])
                case UInt8(ascii: "\r"): line.append(contentsOf: [92, UInt8(ascii: "r")])
                default: line.append(byte)
                }
            }
        }
        func join(_ a: String?, _ b: String?) -> String? {
            guard let a else { return b }
            guard let b else { return a }
            return a + "\n" + b
        }
        let start = Clock.monotonic()
        try run("SET search_path TO \(schema); BEGIN")
        try run("CREATE TEMPORARY TABLE load(u text, d text, e double precision, a text, wa text, wb text, wc text, wd text) ON COMMIT DROP")
        try run("COPY load FROM STDIN")
        var buffer: [UInt8] = []
        buffer.reserveCapacity(1 << 20)
        for item in items {
            let text = item.searchText
            let columns: [String?] = [item.uniqueIdentifier, item.domainIdentifier, item.expiration.map { String($0) },
                                      String(decoding: item.attributesJSON, as: UTF8.self),
                                      join(text[0], text[1]), join(text[5], text[2]), join(text[3], text[6]), text[4]]
            for (n, column) in columns.enumerated() {
                if n > 0 { buffer.append(UInt8(ascii: "\t")) }
                field(column, into: &buffer)
            }
            buffer.append(UInt8(ascii: "\n"))
            if buffer.count >= 1 << 20 {
                guard buffer.withUnsafeBufferPointer({ PQputCopyData(conn, UnsafeRawPointer($0.baseAddress!).assumingMemoryBound(to: CChar.self), Int32($0.count)) }) == 1 else {
                    throw ReindexError(.internal, "raw loader: COPY failed: \(String(cString: PQerrorMessage(conn)))")
                }
                buffer.removeAll(keepingCapacity: true)
            }
        }
        if !buffer.isEmpty {
            _ = buffer.withUnsafeBufferPointer { PQputCopyData(conn, UnsafeRawPointer($0.baseAddress!).assumingMemoryBound(to: CChar.self), Int32($0.count)) }
        }
        guard PQputCopyEnd(conn, nil) == 1 else { throw ReindexError(.internal, "raw loader: COPY end failed") }
        while let result = PQgetResult(conn) {
            defer { PQclear(result) }
            guard PQresultStatus(result) == PGRES_COMMAND_OK else {
                throw ReindexError(.internal, "raw loader: COPY failed: \(String(cString: PQerrorMessage(conn)))")
            }
        }
        try run("""
            INSERT INTO bundles(key, identifier, live_gen) VALUES('com.example.bench.indexer', 'com.example.bench.indexer', 1);
            INSERT INTO items(bundle, gen, uid, domain, expires, attributes, doc)
            SELECT 'com.example.bench.indexer', 1, u, d, e, a,
                setweight(to_tsvector('reindex_search', coalesce(wa, '')), 'A') ||
                setweight(to_tsvector('reindex_search', coalesce(wb, '')), 'B') ||
                setweight(to_tsvector('reindex_search', coalesce(wc, '')), 'C') ||
                setweight(to_tsvector('reindex_search', coalesce(wd, '')), 'D')
            FROM load;
            COMMIT
            """)
        return Clock.monotonic() - start
    }

    /// The SQLite search scenario's queries — one word, two words, a prefix, filters, filters
    /// with words, sorted pages — through the query language (what `reindex search` and
    /// `SearchIndex` run) over the same items in PostgreSQL and in SQLite, side by side. The
    /// items carry rankingHints and the declared attribute `level`, as in that scenario.
    func postgresSearch(server: PostgresServer, count: Int) throws {
        log("postgres: loading \(count) items with hints and a declared attribute into both indexes, for search")
        let extensions = work + "/ext-pg-search"
        _ = try makeBundle(in: extensions, items: count, large: false, environment: ["BENCH_EXTRA": "1"],
                           declarations: .object([("level", .object([("type", .string("number"))]))]))
        let schema = "bench_search"
        setenv("REINDEX_PG_SCHEMA", schema, 1)
        let loaded = try runCommand(reindexBinary, ["--index", server.connectionString, "--extensions-path", extensions, "run", "com.example.bench.indexer"])
        unsetenv("REINDEX_PG_SCHEMA")
        let sqlitePath = work + "/pg-beside.sqlite"
        let beside = try runCommand(reindexBinary, ["--index", sqlitePath, "--extensions-path", extensions, "run", "com.example.bench.indexer"])
        guard loaded.status == 0, beside.status == 0 else { throw ReindexError(.internal, "loading the search indexes failed (\(loaded.status), \(beside.status))") }
        // Settled as autovacuum leaves a table some time after a bulk load (statistics, hint bits,
        // the visibility map), so the first searches measure the search and not the load's wake.
        try server.psql("VACUUM (ANALYZE) \(schema).items")
        let postgres = try Index.openForQueries(server.connectionString, environment: ["REINDEX_PG_SCHEMA": schema])
        let sqlite = try IndexStore.open(path: sqlitePath)
        let one = ["engineering", "swift", "park", "hopper", "design", "kubernetes", "finance", "zoë", "legal", "rust"]
        let two = ["ada park", "staff engineer", "swift compilers", "grace hopper", "support lead", "sales analyst", "linux rust", "zoe muller"]
        let prefix = ["eng", "sw", "hop", "des", "kub", "fin", "mül", "sta", "pri", "ta"]
        var scenarios: [(String, [(String, QueryOptions)], Int)] = [
            ("one word", one.map { ($0, QueryOptions(limit: 20)) }, 5),
            ("two words", two.map { ($0, QueryOptions(limit: 20)) }, 5),
            ("prefix", prefix.map { ($0, QueryOptions(limit: 20)) }, 5),
            // A word of one attribute (its own rank lists), and phrases.
            ("one word of one attribute", one.prefix(5).map { (#"title == "\#($0)"cdw"#, QueryOptions(limit: 20)) }
                + one.suffix(5).map { (#"contentDescription == "\#($0)"cdw"#, QueryOptions(limit: 20)) }, 5),
            ("phrase", two.map { (#"* == "\#($0)"cdw"#, QueryOptions(limit: 20)) }, 5),
        ]
        for (name, query) in [("filter only", #"domainIdentifier == "com.example.bench.engineering" && keywords == "swift""#),
                              ("filter + words", #"park && domainIdentifier == "com.example.bench.design""#),
                              ("filter only, selective", "rating >= 4.9"),
                              ("filter only, date", "contentModificationDate >= $time.today(-30)"),
                              ("filter only, hint", "rankingHint >= 5"),
                              ("filter only, declared attribute", "level >= 998"),
                              ("filter + words, declared attribute", "park && level == 500")] {
            scenarios.append(("query \(name)", [(query, QueryOptions(limit: 20))], 20))
        }
        scenarios.append(("--sort rating:desc, every item", [("", QueryOptions(limit: 20, sort: [QuerySort(attribute: "rating", descending: true)]))], 20))
        scenarios.append(("--sort contentModificationDate:desc, every item",
                          [("", QueryOptions(limit: 20, sort: [QuerySort(attribute: "contentModificationDate", descending: true)]))], 20))
        for (name, queries, repeats) in scenarios {
            // The first search of each query apart, as in the SQLite rows: of a common word it
            // reads every match and makes the word's rank lists; of a filter it meets a cold cache.
            var pgFirst = Sample(), liteFirst = Sample()
            for (query, options) in queries {
                for onPostgres in [true, false] {
                    let start = Clock.monotonic()
                    if onPostgres { _ = try postgres.query(query, options: options) } else { _ = try sqlite.query(query, options: options) }
                    let ms = (Clock.monotonic() - start) * 1000
                    if onPostgres { pgFirst.add(ms) } else { liteFirst.add(ms) }
                }
            }
            var pg = Sample(), lite = Sample()
            for round in 0..<repeats {
                for (query, options) in queries {
                    for onPostgres in (round % 2 == 0 ? [true, false] : [false, true]) {
                        let start = Clock.monotonic()
                        if onPostgres { _ = try postgres.query(query, options: options) } else { _ = try sqlite.query(query, options: options) }
                        let ms = (Clock.monotonic() - start) * 1000
                        if onPostgres { pg.add(ms) } else { lite.add(ms) }
                    }
                }
            }
            rows.append(["\(name), \(count / 1000)k items, PostgreSQL, first page of 20 (ms)", "p50 \(fmt(pg.percentile(0.5), 2)), p99 \(fmt(pg.percentile(0.99), 2))",
                         "SQLite p50 \(fmt(lite.percentile(0.5), 2)), p99 \(fmt(lite.percentile(0.99), 2))",
                         (queries.count == 1 ? queries[0].0.isEmpty ? "every item" : queries[0].0 : "\(pg.values.count) queries each")
                            + "; the first search of each apart: PostgreSQL p50 \(fmt(pgFirst.percentile(0.5), 2)), max \(fmt(pgFirst.max, 2)); SQLite p50 \(fmt(liteFirst.percentile(0.5), 2)), max \(fmt(liteFirst.max, 2))"])
            results.append(("postgres_\(name.filter { $0.isLetter || $0 == " " }.replacingOccurrences(of: " ", with: "_"))", .object([
                ("p50Ms", .double(pg.percentile(0.5))), ("p99Ms", .double(pg.percentile(0.99))),
                ("sqliteP50Ms", .double(lite.percentile(0.5))), ("sqliteP99Ms", .double(lite.percentile(0.99))), ("items", .integer(Int64(count))),
                ("firstP50Ms", .double(pgFirst.percentile(0.5))), ("firstMaxMs", .double(pgFirst.max)),
            ])))
        }
        try postgresTyped(postgres, sqlite, count: count)
        try postgresAfterWrites(server: server, schema: schema, words: one, count: count)
    }

    /// A word searched right after a write to another bundle, as on a fleet, which writes all
    /// the time: its kept count brought up to date from the write, against the same search
    /// with no count kept, which counts the word's items again, as every search after a write
    /// did before counts were brought up to date. One item written before each search.
    func postgresAfterWrites(server: PostgresServer, schema: String, words: [String], count: Int) throws {
        let store = try PostgresStore.open(try PostgresLocation(server.connectionString, environment: ["REINDEX_PG_SCHEMA": schema]))
        // Twice: a word whose first pass is whole in its list has its second pass's list made by
        // its next search, which the rounds would otherwise measure (when the earlier rows'
        // lists pushed it out: a schema keeps `maximumLists` of them).
        for _ in 0..<2 {
            for word in words { _ = try store.query(word, options: QueryOptions(limit: 20)) }
        }
        var updated = Sample(), counted = Sample()
        for round in 0..<3 {
            for (n, word) in words.enumerated() {
                for recount in (round % 2 == 0 ? [false, true] : [true, false]) {
                    let writes = try store.makeWriter(bundleIdentifier: "com.example.bench.writer", scope: .direct, requestID: nil, declarations: [:])
                    try writes.put(ItemValidator.validate(JSONParser.parse(text: #"{"uniqueIdentifier": "w\#(round).\#(n).\#(recount)", "attributes": {"title": "written"}}"#)))
                    _ = try writes.acknowledge(with: { _ in })
                    // (This word's counts only: the others stay kept for their own searches.)
                    if recount { try server.psql("DELETE FROM \(schema).unit_frequencies WHERE position('\(word)' in phrase) > 0") }
                    let start = Clock.monotonic()
                    _ = try store.query(word, options: QueryOptions(limit: 20))
                    let ms = (Clock.monotonic() - start) * 1000
                    if recount { counted.add(ms) } else { updated.add(ms) }
                }
            }
        }
        rows.append(["one word after a write, \(count / 1000)k items, PostgreSQL, first page of 20 (ms)",
                     "p50 \(fmt(updated.percentile(0.5), 2)), p99 \(fmt(updated.percentile(0.99), 2))",
                     "counted again: p50 \(fmt(counted.percentile(0.5), 2)), p99 \(fmt(counted.percentile(0.99), 2))",
                     "\(updated.values.count) searches, each after one item written to another bundle; its count brought up to date, "
                        + "against the same search with no count kept"])
        results.append(("postgres_after_a_write", .object([
            ("p50Ms", .double(updated.percentile(0.5))), ("p99Ms", .double(updated.percentile(0.99))),
            ("countedP50Ms", .double(counted.percentile(0.5))), ("countedP99Ms", .double(counted.percentile(0.99))), ("items", .integer(Int64(count))),
        ])))
    }

    /// `typedKeys` and `typedPairKeys` on both backends over the same items: each key its first search.
    func postgresTyped(_ postgres: any IndexQueries, _ sqlite: IndexStore, count: Int) throws {
        typealias Keys = ((String) throws -> Void) throws -> (Sample, Sample)
        let kinds: [(name: String, first: String, keys: Keys, row: (Sample, Sample) -> [String])] = [
            ("postgres_search_as_typed", "twoLettersP50Ms", { try Self.typedKeys($0) }, { Self.typedRow($0, $1, items: count, backend: ", PostgreSQL") }),
            ("postgres_pairs_as_typed", "firstKeysP50Ms", { try Self.typedPairKeys($0) }, { Self.typedPairRow($0, $1, items: count, backend: ", PostgreSQL") }),
        ]
        for kind in kinds {
            let (pgFirst, pgLater) = try kind.keys { _ = try postgres.query($0, options: QueryOptions(limit: 20)) }
            let (_, liteLater) = try kind.keys { _ = try sqlite.query($0, options: QueryOptions(limit: 20)) }
            var row = kind.row(pgLater, pgFirst)
            row[2] = "SQLite p50 \(fmt(liteLater.percentile(0.5), 2)), p90 \(fmt(liteLater.percentile(0.9), 2)), max \(fmt(liteLater.max, 2))"
            rows.append(row)
            results.append((kind.name, .object([("p50Ms", .double(pgLater.percentile(0.5))), ("p90Ms", .double(pgLater.percentile(0.9))),
                                                ("maxMs", .double(pgLater.max)), (kind.first, .double(pgFirst.percentile(0.5))),
                                                ("sqliteP50Ms", .double(liteLater.percentile(0.5)))])))
        }
    }

    // MARK: The fleet

    /// `requests` bundles, each queued once (a new bundle's reindexAll) whose extension waits
    /// 0.2 s mid-request, as a connector waiting on a remote API does; the time until every
    /// request is done with 1 worker and with 4, each `reindex serve --concurrency 1`, on one
    /// PostgreSQL index; and how many requests ran more than once (none may).
    func fleetScaling() throws {
        let server = try startPostgres()
        defer { server.destroy() }
        let requests = options.fleetRequests
        let extensions = work + "/ext-fleet"
        for n in 0..<requests {
            _ = try makeBundle(in: extensions, items: 10, large: false, identifier: "com.example.fleet.b\(n)",
                               environment: ["BENCH_SLEEP_SECONDS": "0.2"], sandboxed: false)
        }
        var seconds: [Int: Double] = [:]
        for workers in [1, 4] {
            let schema = "fleet_\(workers)"
            setenv("REINDEX_PG_SCHEMA", schema, 1)
            defer { unsetenv("REINDEX_PG_SCHEMA") }
            // The schema first, so the measurement does not include creating it.
            _ = try Index.open(server.connectionString, environment: ["REINDEX_PG_SCHEMA": schema])
            log("fleet: \(requests) requests, \(workers) worker(s)")
            let start = Clock.monotonic()
            var processes: [Process] = []
            for _ in 0..<workers {
                let process = Process()
                process.executableURL = URL(fileURLWithPath: reindexBinary)
                process.arguments = ["--index", server.connectionString, "--extensions-path", extensions, "serve", "--concurrency", "1", "--rescan", "3600"]
                process.standardInput = FileHandle(forReadingAtPath: "/dev/null")
                process.standardOutput = FileHandle(forWritingAtPath: "/dev/null")
                process.standardError = FileHandle(forWritingAtPath: "/dev/null")
                try process.run()
                processes.append(process)
            }
            let watcher = try PGConnection(server.connectionString)
            while true {
                let done = try watcher.query("SELECT count(*) FILTER (WHERE state = 'done'), count(*) FROM \(schema).requests")
                if done.int(0, 0) == requests && done.int(0, 1) == requests { break }
                if Clock.monotonic() - start > 1800 { throw ReindexError(.internal, "fleet: not done after 30 minutes (\(done.int(0, 0)) of \(requests))") }
                usleep(50_000)
            }
            let elapsed = Clock.monotonic() - start
            for process in processes { kill(process.processIdentifier, SIGTERM) }
            for process in processes { process.waitUntilExit() }
            let twice = try watcher.query("""
                SELECT count(*) FROM (SELECT request_id FROM \(schema).runs WHERE outcome = 'acknowledged' GROUP BY request_id HAVING count(*) > 1) t
                """).int(0, 0)
            seconds[workers] = elapsed
            log("fleet: \(workers) worker(s): \(fmt(elapsed, 2)) s; requests run twice: \(twice)")
            rows.append(["fleet: \(requests) queued requests that wait 0.2 s, \(workers) worker(s) (s)", fmt(elapsed, 2),
                         workers == 1 ? "-" : "\(fmt(seconds[1] ?? 0, 2)) with 1 worker",
                         workers == 1 ? "requests run twice: \(twice)" : "\(fmt((seconds[1] ?? 0) / elapsed, 2))× 1 worker; requests run twice: \(twice)"])
            results.append(("fleet_\(workers)", .object([("seconds", .double(elapsed)), ("runTwice", .integer(Int64(twice))), ("requests", .integer(Int64(requests)))])))
        }
    }
}
