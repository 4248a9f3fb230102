import CSQLite
import Foundation
import PostgresHarness
import ReindexProtocol
import ReindexStore
import ReindexSystem

/// relevance (`--only relevance`): the ranking on a real corpus made from this machine, against a
/// reference BM25F computed independently.
///
/// The corpus: every package of the APT lists (`/var/lib/apt/lists/*Packages*`, decompressed by
/// `apt-helper cat-file`) and of `/var/lib/dpkg/status` (title the package name,
/// contentDescription the short description, textContent the long one where the source has it,
/// keywords the section and debtags, authors the maintainer), every manual page `man -k .` lists
/// (title the name, displayName `name(section)`, contentDescription the one-line description),
/// and the first lines of each `/usr/share/doc/*/README*` and `copyright` (title the package and
/// file, textContent the lines). It is written as JSON lines into a bundle and indexed by `reindex
/// run` with the plain Python extension (`Benchmarks/bench_indexer.py`), like any extension.
///
/// The reference: the same text — copied from the indexed full-text columns of the live items, so
/// the tokens are the same — in a plain FTS5 table of its own (same tokenizer, `unicode61
/// remove_diacritics 2`), ranked by FTS5's `bm25()` with the store's column weights, ties by
/// identifier; like the store, items where every word matches whole come before items that match
/// only because the last word is a prefix. For each query of `RelevanceQueries`, the overlap is
/// the share of the reference's top 10 found in the store's top 10 (`IndexStore.search`, first
/// page of 20), and the latency that search's, in process.
///
/// Then the same corpus is indexed into PostgreSQL (a private server, as the postgres scenario
/// starts) and the same queries run there (`PostgresStore.query`, first page of 20): its overlap
/// with the reference, its latency, and how many of its first pages are SQLite's, item for
/// item and in order — what "identical pages on both backends" asks of the relevance order.
extension Bench {
    func relevance() throws {
        log("relevance: building the corpus from this machine's packages, manual pages and documentation")
        let extensions = work + "/ext-relevance"
        let itemsFile = extensions + "/com.example.bench.corpus/items.jsonl"
        let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("bench_indexer.py").path
        _ = try makeBundle(in: extensions, items: 0, large: false, identifier: "com.example.bench.corpus", executable: script,
                           environment: ["BENCH_ITEMS_FILE": itemsFile])
        let corpus = RelevanceCorpus()
        try corpus.build(into: itemsFile)
        log("relevance: \(corpus.count) items (\(corpus.counts.map { "\($0.value) \($0.key)" }.sorted().joined(separator: ", "))); indexing")
        let index = work + "/relevance.sqlite"
        let run = try runCommand(reindexBinary, ["--index", index, "--extensions-path", extensions, "run", "com.example.bench.corpus", "--json"])
        guard run.status == 0 else { throw ReindexError(.internal, "reindex run of the corpus failed (\(run.status)): \(run.output)") }
        let store = try IndexStore.open(path: index)
        let items = try store.itemCount(bundle: "com.example.bench.corpus")
        log("relevance: indexed \(items) items in \(fmt(run.seconds)) s; building the reference")
        let reference = try RelevanceReference(index: index, path: work + "/relevance-reference.sqlite")

        var overlaps: [(query: String, overlap: Double, kind: String)] = []
        var latency: [String: Sample] = [:]
        for (kind, queries) in RelevanceQueries.all {
            var sample = Sample()
            // The floor: FTS5's own bm25() ordering the same words' matches (a first page of 20),
            // over the reference's copy of the same text.
            var raw = Sample()
            for round in 0..<3 {
                for query in queries {
                    let start = Clock.monotonic()
                    let page = try store.search(query, limit: 20)
                    let ms = (Clock.monotonic() - start) * 1000
                    if round > 0 {
                        sample.add(ms)
                        let rawStart = Clock.monotonic()
                        _ = try reference.top(query, count: 20)
                        raw.add((Clock.monotonic() - rawStart) * 1000)
                    }
                    if round == 0 {
                        let expected = try reference.top(query, count: 10)
                        guard !expected.isEmpty else { log("relevance: no match for \(query)"); continue }
                        let found = Set(page.prefix(10).map(\.uniqueIdentifier))
                        overlaps.append((query, Double(expected.filter(found.contains).count) / Double(expected.count), kind))
                    }
                }
            }
            latency[kind] = sample
            rows.append(["relevance corpus, search \(kind), first page of 20 (ms)", "p50 \(fmt(sample.percentile(0.5), 2)), p99 \(fmt(sample.percentile(0.99), 2))",
                         "FTS5 bm25(): p50 \(fmt(raw.percentile(0.5), 2)), p99 \(fmt(raw.percentile(0.99), 2))",
                         "\(fmt(sample.percentile(0.5) / raw.percentile(0.5), 2))× at p50; \(queries.count) queries × 2, \(items) items"])
        }
        let average = overlaps.map(\.overlap).reduce(0, +) / Double(Swift.max(1, overlaps.count))
        let worst = overlaps.sorted { $0.overlap != $1.overlap ? $0.overlap < $1.overlap : $0.query < $1.query }.prefix(5)
        for kind in RelevanceQueries.all.map(\.0) {
            let mine = overlaps.filter { $0.kind == kind }.map(\.overlap)
            log("relevance: top-10 overlap, \(kind): average \(fmt(mine.reduce(0, +) / Double(Swift.max(1, mine.count)), 3)) over \(mine.count) queries")
        }
        let worstText = worst.map { "\"\($0.query)\" \(fmt($0.overlap, 1))" }.joined(separator: ", ")
        rows.append(["relevance corpus, top-10 overlap with BM25F", "average \(fmt(average, 3)), min \(fmt(overlaps.map(\.overlap).min() ?? .nan, 2))",
                     "FTS5 bm25() with the same weights", "\(overlaps.count) queries; worst: \(worstText)"])
        results.append(("relevance", .object([
            ("items", .integer(Int64(items))), ("queries", .integer(Int64(overlaps.count))),
            ("averageOverlap", .double(average)), ("minimumOverlap", .double(overlaps.map(\.overlap).min() ?? .nan)),
            ("worst", .array(worst.map { .object([("query", .string($0.query)), ("overlap", .double($0.overlap))]) })),
            ("latency", .object(latency.sorted { $0.key < $1.key }.map { ($0.key, .object([("p50Ms", .double($0.value.percentile(0.5))), ("p99Ms", .double($0.value.percentile(0.99)))])) })),
        ])))
        try relevanceOnPostgres(extensions: extensions, sqlite: store, reference: reference)
    }

    /// The corpus in PostgreSQL: overlap with the reference, latency, and first pages equal to SQLite's.
    func relevanceOnPostgres(extensions: String, sqlite: IndexStore, reference: RelevanceReference) throws {
        let server = try startPostgres()
        defer { server.destroy() }
        let schema = "relevance"
        setenv("REINDEX_PG_SCHEMA", schema, 1)
        defer { unsetenv("REINDEX_PG_SCHEMA") }
        log("relevance: indexing the corpus into PostgreSQL")
        let run = try runCommand(reindexBinary, ["--index", server.connectionString, "--extensions-path", extensions, "run", "com.example.bench.corpus", "--json"])
        guard run.status == 0 else { throw ReindexError(.internal, "reindex run of the corpus into PostgreSQL failed (\(run.status)): \(run.output)") }
        let postgres = try PostgresStore.open(try PostgresLocation(server.connectionString, environment: ["REINDEX_PG_SCHEMA": schema]))
        var overlaps: [Double] = []
        var same = 0, sameWholePages = 0, compared = 0
        for (kind, queries) in RelevanceQueries.all {
            var sample = Sample()
            for round in 0..<3 {
                for query in queries {
                    let start = Clock.monotonic()
                    let page = try postgres.query(query, options: QueryOptions(limit: 20)).results.map(\.uniqueIdentifier)
                    let ms = (Clock.monotonic() - start) * 1000
                    if round > 0 { sample.add(ms); continue }
                    let expected = try reference.top(query, count: 10)
                    if !expected.isEmpty {
                        overlaps.append(Double(expected.filter(Set(page.prefix(10)).contains).count) / Double(expected.count))
                    }
                    let sqlitePage = try sqlite.query(query, options: QueryOptions(limit: 20)).results.map(\.uniqueIdentifier)
                    compared += 1
                    if Array(page.prefix(10)) == Array(sqlitePage.prefix(10)) { same += 1 }
                    if page == sqlitePage { sameWholePages += 1 }
                }
            }
            rows.append(["relevance corpus, PostgreSQL, search \(kind), first page of 20 (ms)", "p50 \(fmt(sample.percentile(0.5), 2)), p99 \(fmt(sample.percentile(0.99), 2))",
                         "-", "\(queries.count) queries × 2, after one round that makes the lists"])
        }
        let average = overlaps.reduce(0, +) / Double(Swift.max(1, overlaps.count))
        rows.append(["relevance corpus, PostgreSQL, top-10 overlap with BM25F", "average \(fmt(average, 3)), min \(fmt(overlaps.min() ?? .nan, 2))",
                     "FTS5 bm25() with the same weights", "\(overlaps.count) queries"])
        rows.append(["relevance corpus, PostgreSQL first pages equal to SQLite's", "top 10 in order: \(same) of \(compared); all 20 in order: \(sameWholePages) of \(compared)",
                     "-", "the same BM25F from the same figures (docs/QUERIES.md, \"On PostgreSQL\")"])
        results.append(("relevance_postgres", .object([
            ("averageOverlap", .double(average)), ("minimumOverlap", .double(overlaps.min() ?? .nan)),
            ("samePages", .integer(Int64(same))), ("sameWholePages", .integer(Int64(sameWholePages))), ("queries", .integer(Int64(compared))),
        ])))
    }
}

/// The benchmark's fixed queries, chosen from words of the corpus (packages, manual pages and
/// documentation of a Debian system): one word, two words, and prefixes (the last word as typed
/// so far).
enum RelevanceQueries {
    static let oneWord = [
        "sqlite", "python", "kernel", "font", "editor", "audio", "video", "firmware", "compiler", "perl",
        "ruby", "java", "haskell", "rust", "golang", "gnome", "kde", "qt", "gtk", "xml",
        "json", "http", "ssl", "password", "backup", "terminal", "shell", "database", "postgresql", "mysql",
        "image", "pdf", "printer", "bluetooth", "wireless", "network", "dns", "ldap", "kerberos", "emacs",
        "vim", "git", "latex", "game", "chess", "music", "math", "statistics", "docker", "systemd",
        "locale", "manager", "library", "documentation", "daemon",
    ]
    static let twoWords = [
        "password manager", "text editor", "web server", "http server", "image viewer", "music player", "video editor",
        "file manager", "window manager", "version control", "python library", "perl module", "ruby library", "java library",
        "font family", "development files", "debug symbols", "command line", "regular expression", "network monitor",
        "disk usage", "package manager", "mail client", "pdf viewer", "spell checker", "screen reader", "unit test",
        "game engine", "virtual machine", "machine learning", "database server", "static analysis", "chess engine",
        "audio codec", "terminal emulator", "shared library",
    ]
    static let prefix = [
        "sql", "pyth", "kern", "edi", "aud", "comp", "datab", "netw", "gra", "prin",
        "blue", "pass", "term", "wind", "mus", "gam", "stat", "crypt", "compr", "shel",
        "libx", "xor", "text edi", "web serv", "password man", "file man", "music pla", "debug sym", "image vie", "mail cli",
    ]
    static let all: [(String, [String])] = [("one word", oneWord), ("two words", twoWords), ("prefix", prefix)]
}

/// The corpus as JSON lines of items.
final class RelevanceCorpus {
    private(set) var count = 0
    private(set) var counts: [String: Int] = [:]
    private var handle: FileHandle? = nil
    private var seen = Set<String>()

    func build(into path: String) throws {
        _ = FileManager.default.createFile(atPath: path, contents: nil)
        handle = try FileHandle(forWritingTo: URL(fileURLWithPath: path))
        defer { try? handle?.close() }
        // dpkg's status first: it has the long descriptions; the lists add every other package.
        try packages(String(decoding: (FileManager.default.contents(atPath: "/var/lib/dpkg/status") ?? Data()), as: UTF8.self))
        let lists = ((try? FileManager.default.contentsOfDirectory(atPath: "/var/lib/apt/lists")) ?? []).filter { $0.contains("_Packages") }.sorted()
        for list in lists {
            try packages(try output("/usr/lib/apt/apt-helper", ["cat-file", "/var/lib/apt/lists/" + list]))
        }
        try manualPages(try output("/usr/bin/man", ["-k", "."]))
        try documentation()
    }

    private func output(_ executable: String, _ arguments: [String]) throws -> String {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = FileHandle(forWritingAtPath: "/dev/null")
        try process.run()
        let data = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return String(decoding: data, as: UTF8.self)
    }

    private func write(_ kind: String, _ uid: String, _ attributes: [(String, JSONValue)]) {
        guard seen.insert(uid).inserted else { return }
        handle?.write(Data(LineWriter.line(.object([("uniqueIdentifier", .string(uid)), ("attributes", .object(attributes))]))))
        count += 1
        counts[kind, default: 0] += 1
    }

    /// Debian control stanzas (Packages files, dpkg's status).
    private func packages(_ text: String) throws {
        for stanza in text.components(separatedBy: "\n\n") {
            var fields: [String: String] = [:]
            var current: String? = nil
            for line in stanza.split(separator: "\n", omittingEmptySubsequences: true) {
                if line.first == " " || line.first == "\t", let name = current {
                    fields[name, default: ""] += "\n" + line.dropFirst()
                } else if let colon = line.firstIndex(of: ":") {
                    let name = String(line[..<colon])
                    fields[name] = String(line[line.index(after: colon)...]).trimmingCharacters(in: .whitespaces)
                    current = name
                }
            }
            guard let name = fields["Package"], !name.isEmpty else { continue }
            let description = fields["Description"] ?? fields["Description-en"] ?? ""
            let lines = description.split(separator: "\n", omittingEmptySubsequences: false)
            let short = lines.first.map(String.init) ?? ""
            let long = lines.dropFirst().map { $0 == "." ? "" : String($0) }.joined(separator: "\n").trimmingCharacters(in: .whitespacesAndNewlines)
            var attributes: [(String, JSONValue)] = [("title", .string(name))]
            if !short.isEmpty { attributes.append(("contentDescription", .string(short))) }
            if !long.isEmpty { attributes.append(("textContent", .string(long))) }
            var keywords: [JSONValue] = []
            if let section = fields["Section"] { keywords.append(.string(section)) }
            if let tags = fields["Tag"] {
                for tag in tags.split(whereSeparator: { $0 == "," || $0 == "\n" }) {
                    let trimmed = tag.trimmingCharacters(in: .whitespaces)
                    if !trimmed.isEmpty { keywords.append(.string(trimmed)) }
                }
            }
            if !keywords.isEmpty { attributes.append(("keywords", .array(keywords))) }
            if let maintainer = fields["Maintainer"] {
                let person = maintainer.split(separator: "<").first.map { $0.trimmingCharacters(in: .whitespaces) } ?? maintainer
                if !person.isEmpty { attributes.append(("authors", .array([.string(person)]))) }
            }
            write("packages", "deb:" + name, attributes)
        }
    }

    /// `man -k .`: `name (section) - description`.
    private func manualPages(_ text: String) throws {
        for line in text.split(separator: "\n") {
            guard let open = line.firstIndex(of: "("), let close = line[open...].firstIndex(of: ")"),
                  let dash = line[close...].range(of: " - ") else { continue }
            let name = line[..<open].trimmingCharacters(in: .whitespaces)
            let section = String(line[line.index(after: open)..<close])
            let description = line[dash.upperBound...].trimmingCharacters(in: .whitespaces)
            guard !name.isEmpty else { continue }
            write("manual pages", "man:\(name).\(section)", [
                ("title", .string(name)), ("displayName", .string("\(name)(\(section))")),
                ("contentDescription", .string(description)), ("keywords", .array([.string("manual"), .string("section \(section)")])),
            ])
        }
    }

    /// The first 20 lines of each package's README* and copyright under /usr/share/doc.
    private func documentation() throws {
        let root = "/usr/share/doc"
        for package in ((try? FileManager.default.contentsOfDirectory(atPath: root)) ?? []).sorted() {
            let files = ((try? FileManager.default.contentsOfDirectory(atPath: root + "/" + package)) ?? []).sorted()
            for file in files where (file.hasPrefix("README") || file == "copyright") && !file.hasSuffix(".gz") {
                guard let data = FileManager.default.contents(atPath: "\(root)/\(package)/\(file)"), !data.isEmpty else { continue }
                let lines = String(decoding: data.prefix(64 * 1024), as: UTF8.self).split(separator: "\n", omittingEmptySubsequences: false).prefix(20)
                let text = lines.joined(separator: "\n").trimmingCharacters(in: .whitespacesAndNewlines)
                guard !text.isEmpty else { continue }
                write("documents", "doc:\(package)/\(file)", [
                    ("title", .string("\(package) \(file)")), ("textContent", .string(text)), ("keywords", .array([.string("documentation")])),
                ])
            }
        }
    }
}

/// The reference ranking: FTS5's bm25() over a table of its own holding the live items' text.
final class RelevanceReference {
    private var db: OpaquePointer?
    private var select: OpaquePointer?
    /// `AttributeSchema.searched`'s weights, in its order (title, displayName, alternateNames,
    /// contentDescription, textContent, keywords, authors), then 0 for the identifier column.
    static let weights = "10.0, 8.0, 5.0, 2.0, 1.0, 5.0, 3.0, 0.0"

    init(index: String, path: String) throws {
        for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) }
        guard sqlite3_open(path, &db) == SQLITE_OK else { throw ReindexError(.internal, "cannot open \(path)") }
        try exec("""
            ATTACH DATABASE '\(index.replacingOccurrences(of: "'", with: "''"))' AS host;
            CREATE VIRTUAL TABLE t USING fts5(title, displayName, alternateNames, contentDescription, textContent, keywords, authors, uid UNINDEXED,
                tokenize = 'unicode61 remove_diacritics 2');
            INSERT INTO t(title, displayName, alternateNames, contentDescription, textContent, keywords, authors, uid)
                SELECT f.title, f.displayName, f.alternateNames, f.contentDescription, f.textContent, f.keywords, f.authors, i.uid
                FROM host.items_fts f JOIN host.items i ON i.id = f.rowid JOIN host.bundles b ON b.key = i.bundle AND b.live_gen = i.gen;
            DETACH DATABASE host;
            """)
        guard sqlite3_prepare_v2(db, "SELECT uid FROM t WHERE t MATCH ?1 ORDER BY bm25(t, \(Self.weights)), uid LIMIT ?2", -1, &select, nil) == SQLITE_OK else {
            throw ReindexError(.internal, "reference: \(String(cString: sqlite3_errmsg(db)))")
        }
    }

    deinit {
        sqlite3_finalize(select)
        sqlite3_close(db)
    }

    private func exec(_ sql: String) throws {
        guard sqlite3_exec(db, sql, nil, nil, nil) == SQLITE_OK else { throw ReindexError(.internal, "reference: \(String(cString: sqlite3_errmsg(db)))") }
    }

    /// The best `count` identifiers for `query`: every word whole first, then the last word as a
    /// prefix (and not whole).
    func top(_ query: String, count: Int) throws -> [String] {
        let words = query.split(separator: " ").map { "\"" + $0.replacingOccurrences(of: "\"", with: "\"\"") + "\"" }
        let whole = words.joined(separator: " AND ")
        let prefix = (words.dropLast() + [words.last! + "*"]).joined(separator: " AND ") + " NOT (" + whole + ")"
        var result: [String] = []
        for expression in [whole, prefix] where result.count < count {
            sqlite3_reset(select)
            let transient = unsafeBitCast(-1, to: sqlite3_destructor_type.self)
            sqlite3_bind_text(select, 1, expression, -1, transient)
            sqlite3_bind_int(select, 2, Int32(count - result.count))
            var rc = sqlite3_step(select)
            while rc == SQLITE_ROW {
                result.append(String(cString: sqlite3_column_text(select, 0)))
                rc = sqlite3_step(select)
            }
            guard rc == SQLITE_DONE else { throw ReindexError(.internal, "reference: \(String(cString: sqlite3_errmsg(db)))") }
        }
        sqlite3_reset(select)
        return result
    }
}
