import CSQLite
import ReindexProtocol
import ReindexSystem

/// The searchable index: one SQLite database file in WAL mode holding the items of every bundle,
/// their full-text index, the request queue and the run history.
///
/// One `IndexStore` is one connection, used from one thread at a time. Several processes (the
/// command and `reindex serve`) share the file safely; writers wait for each other up to the
/// busy timeout. Every SQL statement of the host lives in this folder.
public final class IndexStore {
    /// What opening found.
    public struct OpenReport: Sendable, Equatable {
        /// The database did not exist (or was unusable) and a fresh one was created.
        public var created: Bool = false
        /// Why the previous database was unusable, when it was: the caller should queue
        /// `reindexAll` (`indexLost`) for every bundle.
        public var lostReason: String? = nil
        /// Where the unusable database was moved, kept for inspection.
        public var movedAsideTo: String? = nil
    }

    public let path: String
    package let connection: SQLiteConnection
    public private(set) var openReport: OpenReport
    var statements: [String: SQLiteStatement] = [:]
    /// Per-connection state of queries (SQLite/Ranking.swift).
    let queryState = QueryState()
    /// How long a statement waits for another connection's lock, in milliseconds.
    let busyTimeout: Int32
    let openedInode: UInt64
    let openedDevice: UInt64

    /// Opens the index at `path`, creating it when `create` (commands that write) and it does
    /// not exist. Only an index of ours is ever changed: a file that is not one (a text file, a
    /// directory, another program's database) is refused with `.ioError` naming what it is, and
    /// left as it was. An index of ours that is truncated or corrupt is moved aside with a
    /// timestamp and replaced by a fresh one; the report says so. Without `create`, a missing
    /// index is `.noInput` naming the path.
    public static func open(path: String, create: Bool = true, busyTimeoutMilliseconds: Int32 = 60_000) throws(ReindexError) -> IndexStore {
        var report = OpenReport()
        if let st = FileSystem.status(path) {
            if !st.isRegularFile {
                throw notOurs(path, "it is \(st.isDirectory ? "a directory" : "not a regular file")")
            }
        } else if !create {
            throw ReindexError(.noInput, "\(path): there is no index here (nothing has been indexed with this --index yet, or the path is mistyped); 'reindex run' or 'reindex serve' creates it")
        } else {
            try FileSystem.makeDirectories(FileSystem.directoryName(path))
            report.created = true
        }
        do {
            do {
                return try IndexStore(path: path, report: report, busyTimeout: busyTimeoutMilliseconds)
            } catch let error as StoreError where error.sqliteCode.map({ [SQLITE_READONLY, SQLITE_CANTOPEN].contains($0 & 0xff) }) == true
                && !FileSystem.isWritable(FileSystem.directoryName(path)) {
                // SQLite reads an index in write-ahead-log mode through a shared-memory file beside
                // it, which it cannot make in a directory this user may not write: read the file
                // itself, unless the log holds commits that are not in it yet.
                if let log = FileSystem.status(path + "-wal"), log.size > 0 {
                    throw ReindexError(.ioError, "\(path): cannot read the index: its write-ahead log \(path)-wal holds changes that are not in the index yet, and reading them needs \(path)-shm, which this user may not create in \(FileSystem.directoryName(path)); open it once as a user who may write that directory (any 'reindex search' does), or search as that user")
                }
                return try IndexStore(path: path, report: report, busyTimeout: busyTimeoutMilliseconds, immutable: true)
            }
        } catch let error as StoreError where error.code == .damaged {
            guard looksLikeOurs(path) else {
                throw notOurs(path, describeForeign(path))
            }
            report.lostReason = describeDamage(path) ?? "the database is corrupt (\(error.message))"
            report.movedAsideTo = try moveAside(path)
            report.created = true
            do {
                return try IndexStore(path: path, report: report, busyTimeout: busyTimeoutMilliseconds)
            } catch {
                throw ReindexError(.ioError, "\(path): cannot create a fresh index: \(error)")
            }
        } catch let error as ReindexError {
            throw error
        } catch let error as StoreError {
            throw error.explained(index: path, doing: "cannot open the index")
        } catch {
            throw ReindexError(.ioError, "\(path): cannot open the index: \(error)")
        }
    }

    /// The `application_id` in the header of every index this host creates ("RDIX").
    static let applicationID: Int64 = 0x5244_4958

    /// The refusal to touch a file that is not an index of ours.
    static func notOurs(_ path: String, _ what: String) -> ReindexError {
        ReindexError(.ioError, "\(path): not a reindex index (\(what)); refusing to change it. Give --index (REINDEX_INDEX) the path of an index, or of a file that does not exist yet")
    }

    /// Whether a file SQLite could not read was an index of ours before it was damaged: our
    /// `application_id` in an intact header, or our schema's text on its first pages (an index
    /// made before the id was set, or one whose header was overwritten). Only called once SQLite
    /// has given up on the file (reading it here could drop this process's locks on a healthy one).
    static func looksLikeOurs(_ path: String) -> Bool {
        guard let bytes = FileSystem.readPrefix(path, count: 1 << 20) else { return false }
        let magic = Array("SQLite format 3".utf8) + [0]
        if bytes.count >= 100 && Array(bytes[0..<16]) == magic {
            let id = Int64(bytes[68]) << 24 | Int64(bytes[69]) << 16 | Int64(bytes[70]) << 8 | Int64(bytes[71])
            if id == applicationID { return true }
        }
        let signature = Array("CREATE TABLE bundles(".utf8)
        guard bytes.count >= signature.count else { return false }
        for start in 0...(bytes.count - signature.count) where bytes[start] == signature[0] {
            if Array(bytes[start..<(start + signature.count)]) == signature { return true }
        }
        return false
    }

    /// What a file that is not an index looks like, for the refusal.
    static func describeForeign(_ path: String) -> String {
        guard let bytes = FileSystem.readPrefix(path, count: 4096), !bytes.isEmpty else { return "it cannot be read" }
        if bytes.starts(with: Array("SQLite format 3".utf8)) { return "a damaged SQLite database that is not one of ours" }
        let text = bytes.allSatisfy { $0 == 9 || $0 == 10 || $0 == 13 || ($0 >= 32 && $0 != 127) || $0 >= 0x80 }
        if text, let line = String(decoding: bytes, as: UTF8.self).split(separator: "\n").first {
            return "a text file beginning \"\(line.prefix(40))\""
        }
        return "binary data of \(FileSystem.status(path)?.size ?? 0) bytes, not a SQLite database"
    }

    /// Refuses a readable SQLite database that belongs to another program: one with tables but
    /// neither our `application_id` nor our tables. An empty database is ours to fill.
    private static func checkOwnership(_ connection: SQLiteConnection, path: String) throws {
        let id = try connection.scalar("PRAGMA application_id") ?? 0
        if id == applicationID { return }
        let statement = try connection.prepare("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")
        var tables: [String] = []
        while try statement.step() { if let name = statement.text(0) { tables.append(name) } }
        if tables.isEmpty || (tables.contains("bundles") && tables.contains("items")) { return }
        throw notOurs(path, "a SQLite database of another program, with the tables \(tables.prefix(5).joined(separator: ", "))\(tables.count > 5 ? ", …" : "")")
    }

    /// Opens the index; `immutable` reads the file as it is, without locks (`SQLiteConnection`),
    /// for an index whose directory this process may not write. Such an index is only read.
    private init(path: String, report: OpenReport, busyTimeout: Int32, immutable: Bool = false) throws {
        self.path = path
        self.openReport = report
        connection = try SQLiteConnection(path: path, immutable: immutable)
        connection.setBusyTimeout(milliseconds: busyTimeout)
        self.busyTimeout = busyTimeout
        try Self.checkOwnership(connection, path: path)
        try Self.checkTruncation(connection, path: path)
        if !immutable { try Self.enableWAL(connection, waitingUpTo: Double(busyTimeout) / 1000) }
        try connection.execute("PRAGMA synchronous=NORMAL; PRAGMA cache_size=-16000; PRAGMA temp_store=MEMORY;")
        let st = FileSystem.status(path)
        openedInode = st?.inode ?? 0
        openedDevice = st?.device ?? 0
        try migrate(readOnly: immutable)
    }

    /// Switches the database to write-ahead logging. The switch needs the database to itself for
    /// a moment and SQLite does not wait for that, so when several processes open a brand-new
    /// index at once it is retried until `seconds` have passed.
    private static func enableWAL(_ connection: SQLiteConnection, waitingUpTo seconds: Double) throws(StoreError) {
        let until = Clock.monotonic() + seconds
        var delay: useconds_t = 1_000
        while true {
            do {
                try connection.execute("PRAGMA journal_mode=WAL")
                return
            } catch where error.code == .busy && Clock.monotonic() < until {
                usleep(delay)
                delay = min(delay * 2, 50_000)
            }
        }
    }

    /// Brings the schema to the newest version, in one transaction (the write lock makes a
    /// second process opening a new index at the same time wait, then find it migrated). An
    /// index opened `readOnly` (`immutable`) is only checked to be at it.
    private func migrate(readOnly: Bool = false) throws {
        let current = try connection.scalar("PRAGMA user_version") ?? 0
        if current == Int64(SQLiteSchema.migrations.count) {
            // Touch the tables so a database damaged past its header is noticed now.
            _ = try connection.scalar("SELECT count(*) FROM sqlite_master")
            _ = try connection.scalar("SELECT live_gen FROM bundles LIMIT 1")
            return
        }
        if current > Int64(SQLiteSchema.migrations.count) { throw newerSchema(current) }
        if readOnly {
            throw ReindexError(.ioError, "\(path): cannot read the index: it has schema \(current) and this reindex reads schema \(SQLiteSchema.migrations.count), and its directory \(FileSystem.directoryName(path)) may not be written by this user, so it cannot be brought up to date; open it once as a user who may write there")
        }
        try connection.execute("BEGIN IMMEDIATE")
        do throws(StoreError) {
            let version = Int(try connection.scalar("PRAGMA user_version") ?? 0)
            if version > SQLiteSchema.migrations.count { throw newerSchema(Int64(version)) }
            if version < SQLiteSchema.migrations.count { try prepareQueries() }   // functions the migrations use
            for migration in SQLiteSchema.migrations.dropFirst(version) { try connection.execute(migration) }
            if version < 7 { try fillTypedAttributes() }
            try connection.execute("PRAGMA user_version = \(SQLiteSchema.migrations.count)")
            try connection.execute("PRAGMA application_id = \(Self.applicationID)")
            try connection.execute("COMMIT")
        } catch {
            try? connection.execute("ROLLBACK")
            throw error
        }
    }

    private func newerSchema(_ version: Int64) -> StoreError {
        StoreError(.newerSchema, "the index was written by a newer reindex (schema \(version))", context: path, sqliteCode: SQLITE_ERROR)
    }

    /// Deletes the items matching `condition` (SQL over `items`' columns with `?1`… parameters
    /// that `bind` sets) and their full-text rows; returns how many items went.
    @discardableResult
    func deleteItems(where condition: String, _ bind: (SQLiteStatement) -> Void) throws(StoreError) -> Int {
        try forgetRankedItems(where: condition, bind)
        let fts = try statement("DELETE FROM items_fts WHERE rowid IN (SELECT id FROM items WHERE \(condition))")
        bind(fts)
        try fts.run()
        if try hasTypedAttributes() {
            let typed = try statement("DELETE FROM item_attributes WHERE item IN (SELECT id FROM items WHERE \(condition))")
            bind(typed)
            try typed.run()
        }
        if try hasAttributeText() {
            let ids = try statement("SELECT id FROM items WHERE \(condition)")
            bind(ids)
            var rows: [Int64] = []
            while try ids.step() { rows.append(ids.int64(0)) }
            ids.reset()
            for row in rows { try deleteAttributeText(item: row) }
        }
        let items = try statement("DELETE FROM items WHERE \(condition)")
        bind(items)
        try items.run()
        return connection.changes
    }

    /// A cached prepared statement.
    func statement(_ sql: String) throws(StoreError) -> SQLiteStatement {
        if let cached = statements[sql] { return cached.reset() }
        let prepared = try connection.prepare(sql)
        statements[sql] = prepared
        return prepared
    }

    /// Runs `body` in one write transaction (BEGIN IMMEDIATE … COMMIT), rolling back on error;
    /// inside a transaction already open, it just runs.
    public func transaction<T>(_ body: () throws -> T) throws -> T {
        try within("BEGIN IMMEDIATE", body, { $0 })
    }

    /// Runs `body` as one read transaction: every statement in it sees the same snapshot of the
    /// index, so a commit by another process in between never shows half. Inside a transaction
    /// already open, it just runs.
    public func read<T>(_ body: () throws(StoreError) -> T) throws(StoreError) -> T {
        try within("BEGIN", body)
    }

    /// Runs `body` between `begin` and COMMIT (ROLLBACK on error), or just runs it inside a
    /// transaction already open: the one mechanism under `read`, `writeTransaction` and
    /// `transaction`. `wrap` turns the store's own errors into the caller's error type.
    func within<T>(_ begin: String, _ body: () throws(StoreError) -> T) throws(StoreError) -> T {
        try within(begin, body, { $0 })
    }

    func within<T, E: Error>(_ begin: String, _ body: () throws(E) -> T, _ wrap: (StoreError) -> E) throws(E) -> T {
        if connection.isInTransaction { return try body() }
        do { try connection.execute(begin) } catch { throw wrap(error) }
        queryState.upkeep.fresh = false
        do throws(E) {
            let result = try body()
            do { try connection.execute("COMMIT") } catch { throw wrap(error) }
            return result
        } catch {
            try? connection.execute("ROLLBACK")
            throw error
        }
    }

    // MARK: Health

    /// Says what is wrong with a file SQLite found corrupt, from its header and size. Only called
    /// once SQLite has given up on the file, since reading it ourselves could drop the process's
    /// locks on a healthy database.
    static func describeDamage(_ path: String) -> String? {
        guard let st = FileSystem.status(path), let bytes = FileSystem.readPrefix(path, count: 100) else { return nil }
        let magic = Array("SQLite format 3".utf8) + [0]
        if bytes.count < 100 || Array(bytes[0..<16]) != magic { return "not a SQLite database (bad header)" }
        var pageSize = Int(bytes[16]) << 8 | Int(bytes[17])
        if pageSize == 1 { pageSize = 65536 }
        let pages = Int(bytes[28]) << 24 | Int(bytes[29]) << 16 | Int(bytes[30]) << 8 | Int(bytes[31])
        if pages > 0 && pageSize >= 512 && Int64(pages * pageSize) > st.size {
            return "the database file is truncated (\(st.size) bytes, its header says \(pages * pageSize))"
        }
        return nil
    }

    /// Detects a main database file shorter than its own header says (a truncated copy), when no
    /// write-ahead log holds the missing pages.
    private static func checkTruncation(_ connection: SQLiteConnection, path: String) throws(StoreError) {
        guard let st = FileSystem.status(path), st.size > 0 else { return }
        if let wal = FileSystem.status(path + "-wal"), wal.size > 0 { return }
        let pages = try connection.scalar("PRAGMA page_count") ?? 0
        let pageSize = try connection.scalar("PRAGMA page_size") ?? 4096
        if pages * pageSize > st.size {
            throw StoreError(sqlite: SQLITE_CORRUPT, message: "the database file is truncated (\(st.size) bytes, its header says \(pages * pageSize))", context: path)
        }
    }

    /// Moves a damaged database (and its WAL and shared-memory files) aside, with a timestamp.
    package static func moveAside(_ path: String, label: String = "corrupt") throws(ReindexError) -> String {
        let stamp = String(RFC3339.format(Double(time(nil))).filter { $0 != ":" && $0 != "-" })
        var target = "\(path).\(label)-\(stamp)"
        // Never replace an earlier kept copy (two in one second).
        var attempt = 2
        while FileSystem.exists(target) || FileSystem.exists(target + "-wal") {
            target = "\(path).\(label)-\(stamp)-\(attempt)"
            attempt += 1
        }
        for suffix in ["", "-wal", "-shm"] where FileSystem.exists(path + suffix) {
            guard rename(path + suffix, target + suffix) == 0 else {
                throw ReindexError(.ioError, "\(path)\(suffix): cannot move the \(label == "corrupt" ? "damaged " : "")index aside to \(target)\(suffix): \(FileSystem.errnoText())", errno: errno)
            }
        }
        return target
    }

    /// Moves the database at `path` aside (kept with a timestamp) so the next open starts fresh.
    /// Returns where it went, or nil when there was none.
    public static func erase(path: String) throws(ReindexError) -> String? {
        guard let st = FileSystem.status(path) else { return nil }
        if !st.isRegularFile { throw notOurs(path, "it is \(st.isDirectory ? "a directory" : "not a regular file")") }
        if st.size > 0 && !looksLikeOurs(path) { throw notOurs(path, describeForeign(path)) }
        return try moveAside(path, label: "reset")
    }

    /// Writes a consistent copy of the whole database to `path` (`VACUUM INTO`).
    public func copy(to path: String) throws(StoreError) {
        let statement = try connection.prepare("VACUUM INTO ?1")
        statement.bind(1, path)
        try statement.run()
    }

    /// SQLite's own integrity check (`PRAGMA integrity_check`); an empty list means healthy.
    public func integrityCheck(quick: Bool = false, fullText: Bool = true) throws(StoreError) -> [String] {
        var problems: [String] = []
        do {
            let statement = try connection.prepare(quick ? "PRAGMA quick_check" : "PRAGMA integrity_check")
            while try statement.step() {
                if let line = statement.text(0), line != "ok" { problems.append(line) }
            }
        } catch where error.code == .damaged {
            // Damage bad enough that the check itself cannot read the file is a finding too.
            problems.append(error.message)
            return problems
        }
        if problems.isEmpty && fullText {
            let fts = try connection.prepare("INSERT INTO items_fts(items_fts, rank) VALUES('integrity-check', 0)")
            do { try fts.run() } catch where error.code == .busy {
                // Busy is not damage: say so as what it is.
                throw error
            } catch { problems.append("full-text index: \(error.message)") }
        }
        return problems
    }
}
