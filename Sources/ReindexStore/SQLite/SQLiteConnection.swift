import CSQLite
import ReindexProtocol
import ReindexSystem

private let transient = unsafeBitCast(-1, to: sqlite3_destructor_type.self)

/// One SQLite connection. Not shared between threads: each thread that needs the index opens its
/// own, and SQLite's locking (WAL, busy timeout) coordinates them.
package final class SQLiteConnection {
    let handle: OpaquePointer
    package let path: String
    private var busyWait: BusyWait?

    /// Opens `path`. `immutable` reads it as a file nothing changes: read-only, without locks or
    /// the write-ahead log's shared memory (SQLite's `immutable` URI parameter), for an index in a
    /// directory this process may not write.
    package init(path: String, readOnly: Bool = false, immutable: Bool = false) throws(StoreError) {
        var db: OpaquePointer?
        var flags = (readOnly || immutable ? SQLITE_OPEN_READONLY : (SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE)) | SQLITE_OPEN_NOMUTEX
        var name = path
        if immutable {
            flags |= SQLITE_OPEN_URI
            name = "file:" + Self.uriPath(path) + "?immutable=1"
        }
        let rc = sqlite3_open_v2(name, &db, flags, nil)
        guard rc == SQLITE_OK, let db else {
            let message = db.map { String(cString: sqlite3_errmsg($0)) } ?? "cannot open"
            if let db { sqlite3_close_v2(db) }
            throw StoreError(sqlite: rc, message: message, context: path)
        }
        handle = db
        self.path = path
        sqlite3_extended_result_codes(db, 1)
    }

    deinit {
        sqlite3_close_v2(handle)
    }

    /// This connection's FTS5 API (`SELECT fts5(?1)` with a pointer bound, as SQLite documents).
    func fts5API() throws(StoreError) -> UnsafeMutablePointer<fts5_api> {
        var api: UnsafeMutablePointer<fts5_api>? = nil
        var statement: OpaquePointer?
        guard sqlite3_prepare_v2(handle, "SELECT fts5(?1)", -1, &statement, nil) == SQLITE_OK else { throw error(SQLITE_ERROR, "fts5_api") }
        withUnsafeMutablePointer(to: &api) { pointer in
            _ = sqlite3_bind_pointer(statement, 1, pointer, "fts5_api_ptr", nil)
            _ = sqlite3_step(statement)
        }
        sqlite3_finalize(statement)
        guard let api, api.pointee.iVersion >= 2 else {
            throw StoreError(sqlite: SQLITE_ERROR, message: "this SQLite has no usable FTS5 API", context: path)
        }
        return api
    }

    /// `path` as the path of a `file:` URI: `%`, `?` and `#` escaped.
    static func uriPath(_ path: String) -> String {
        var escaped = ""
        for scalar in path.unicodeScalars {
            switch scalar {
            case "%": escaped += "%25"
            case "?": escaped += "%3f"
            case "#": escaped += "%23"
            default: escaped.unicodeScalars.append(scalar)
            }
        }
        return escaped
    }

    /// Whether the database is open read-only (its file, or its directory, may not be written).
    var isReadOnly: Bool { sqlite3_db_readonly(handle, "main") == 1 }

    func error(_ rc: Int32, _ context: String) -> StoreError {
        StoreError(sqlite: sqlite3_extended_errcode(handle), message: String(cString: sqlite3_errmsg(handle)), context: context)
    }

    /// Runs one or more statements that return no rows.
    package func execute(_ sql: String) throws(StoreError) {
        var errorMessage: UnsafeMutablePointer<CChar>?
        let rc = sqlite3_exec(handle, sql, nil, nil, &errorMessage)
        if rc != SQLITE_OK {
            let message = errorMessage.map { String(cString: $0) } ?? String(cString: sqlite3_errmsg(handle))
            sqlite3_free(errorMessage)
            throw StoreError(sqlite: sqlite3_extended_errcode(handle), message: message, context: String(sql.prefix(80)))
        }
    }

    package func prepare(_ sql: String) throws(StoreError) -> SQLiteStatement {
        var statement: OpaquePointer?
        let rc = sqlite3_prepare_v3(handle, sql, -1, UInt32(SQLITE_PREPARE_PERSISTENT), &statement, nil)
        guard rc == SQLITE_OK, let statement else { throw error(rc, String(sql.prefix(120))) }
        return SQLiteStatement(statement, connection: self, sql: sql)
    }

    package var changes: Int { Int(sqlite3_changes(handle)) }
    package var lastInsertRowID: Int64 { sqlite3_last_insert_rowid(handle) }
    package var isInTransaction: Bool { sqlite3_get_autocommit(handle) == 0 }

    package func setBusyTimeout(milliseconds: Int32) { sqlite3_busy_timeout(handle, milliseconds) }

    /// Waits for other writers up to `seconds`, giving up early (SQLITE_BUSY) as soon as
    /// `cancelFD` becomes readable, so a cancelled request is not stuck behind another's lock.
    package func setBusyWait(seconds: Double, cancelFD: Int32?) {
        let context = BusyWait(limit: seconds, cancelFD: cancelFD ?? -1)
        busyWait = context
        sqlite3_busy_handler(handle, { raw, count in
            guard let raw else { return 0 }
            let wait = Unmanaged<BusyWait>.fromOpaque(raw).takeUnretainedValue()
            return wait.shouldRetry(count: count) ? 1 : 0
        }, Unmanaged.passUnretained(context).toOpaque())
    }

    /// The first column of the first row of a query, as an integer.
    package func scalar(_ sql: String) throws(StoreError) -> Int64? {
        let statement = try prepare(sql)
        guard try statement.step() else { return nil }
        return statement.isNull(0) ? nil : statement.int64(0)
    }
}

/// A prepared statement, reusable: `reset` and bind again.
package final class SQLiteStatement {
    let handle: OpaquePointer
    unowned let connection: SQLiteConnection
    let sql: String

    init(_ handle: OpaquePointer, connection: SQLiteConnection, sql: String) {
        self.handle = handle
        self.connection = connection
        self.sql = sql
    }

    deinit { sqlite3_finalize(handle) }

    @discardableResult
    package func reset() -> SQLiteStatement {
        sqlite3_reset(handle)
        sqlite3_clear_bindings(handle)
        return self
    }

    /// Rewinds the statement, keeping its bindings.
    package func rewind() { sqlite3_reset(handle) }

    package enum ColumnType { case integer, double, text, blob, null }

    package func columnType(_ column: Int32) -> ColumnType {
        switch sqlite3_column_type(handle, column) {
        case SQLITE_INTEGER: return .integer
        case SQLITE_FLOAT: return .double
        case SQLITE_TEXT: return .text
        case SQLITE_BLOB: return .blob
        default: return .null
        }
    }

    package func bind(_ index: Int32, _ value: String?) {
        guard var text = value else { sqlite3_bind_null(handle, index); return }
        text.withUTF8 { utf8 in bindText(index, UnsafeRawBufferPointer(utf8)) }
    }

    /// Binds UTF-8 bytes as text, or NULL for nil.
    package func bindText(_ index: Int32, _ raw: UnsafeRawBufferPointer?) {
        guard let raw else { sqlite3_bind_null(handle, index); return }
        bindText(index, raw)
    }

    private func bindText(_ index: Int32, _ raw: UnsafeRawBufferPointer) {
        if let base = raw.baseAddress, raw.count > 0 {
            sqlite3_bind_text(handle, index, base.assumingMemoryBound(to: CChar.self), Int32(raw.count), transient)
        } else {
            sqlite3_bind_text(handle, index, "", 0, transient)
        }
    }

    /// Binds bytes as a BLOB (an empty one for no bytes).
    package func bindBlob(_ index: Int32, _ bytes: [UInt8]) {
        _ = bytes.withUnsafeBytes { raw in
            if let base = raw.baseAddress, raw.count > 0 {
                sqlite3_bind_blob(handle, index, base, Int32(raw.count), transient)
            } else {
                sqlite3_bind_zeroblob(handle, index, 0)
            }
        }
    }

    package func bind(_ index: Int32, _ value: Int64?) {
        guard let value else { sqlite3_bind_null(handle, index); return }
        sqlite3_bind_int64(handle, index, value)
    }

    package func bind(_ index: Int32, _ value: Int?) { bind(index, value.map(Int64.init)) }

    /// Binds bytes as a blob.
    package func bind(_ index: Int32, blob: [UInt8]) {
        blob.withUnsafeBytes { raw in
            _ = sqlite3_bind_blob(handle, index, raw.baseAddress ?? UnsafeRawPointer(bitPattern: 1), Int32(raw.count), transient)
        }
    }

    package func bind(_ index: Int32, _ value: Double?) {
        guard let value else { sqlite3_bind_null(handle, index); return }
        sqlite3_bind_double(handle, index, value)
    }

    /// Steps once: true when a row is available, false when done.
    @discardableResult
    package func step() throws(StoreError) -> Bool {
        let rc = sqlite3_step(handle)
        switch rc {
        case SQLITE_ROW: return true
        case SQLITE_DONE: return false
        default:
            let error = connection.error(rc, String(sql.prefix(120)))
            sqlite3_reset(handle)
            throw error
        }
    }

    /// Runs to completion and resets.
    package func run() throws(StoreError) {
        defer { sqlite3_reset(handle) }
        while try step() {}
    }

    package func isNull(_ column: Int32) -> Bool { sqlite3_column_type(handle, column) == SQLITE_NULL }
    package func int64(_ column: Int32) -> Int64 { sqlite3_column_int64(handle, column) }
    package func int(_ column: Int32) -> Int { Int(sqlite3_column_int64(handle, column)) }
    package func double(_ column: Int32) -> Double { sqlite3_column_double(handle, column) }
    package func optionalDouble(_ column: Int32) -> Double? { isNull(column) ? nil : double(column) }

    package func text(_ column: Int32) -> String? {
        guard let pointer = sqlite3_column_text(handle, column) else { return nil }
        let count = Int(sqlite3_column_bytes(handle, column))
        return String(decoding: UnsafeBufferPointer(start: pointer, count: count), as: UTF8.self)
    }

    /// A TEXT column's bytes as SQLite holds them, valid until the next step or reset; nil for NULL.
    func withText<R>(_ column: Int32, _ body: (UnsafePointer<UInt8>, Int) -> R) -> R? {
        guard let pointer = sqlite3_column_text(handle, column) else { return nil }
        return body(pointer, Int(sqlite3_column_bytes(handle, column)))
    }

    /// A BLOB column's bytes (empty for NULL or an empty BLOB).
    package func blob(_ column: Int32) -> [UInt8] {
        // The pointer first, then the size (SQLite's order: the size is of the value as fetched).
        let pointer = sqlite3_column_blob(handle, column)
        let count = Int(sqlite3_column_bytes(handle, column))
        guard let pointer, count > 0 else { return [] }
        return Array(UnsafeRawBufferPointer(start: pointer, count: count))
    }

    package func bytes(_ column: Int32) -> [UInt8] {
        guard let pointer = sqlite3_column_text(handle, column) else { return [] }
        let count = Int(sqlite3_column_bytes(handle, column))
        return Array(UnsafeBufferPointer(start: pointer, count: count))
    }
}

/// The state of a busy handler: when waiting started, how long it may last, what cancels it.
final class BusyWait {
    let limit: Double
    let cancelFD: Int32
    private var started = 0.0

    init(limit: Double, cancelFD: Int32) {
        self.limit = limit
        self.cancelFD = cancelFD
    }

    func shouldRetry(count: Int32) -> Bool {
        let now = Clock.monotonic()
        if count == 0 { started = now }
        if now - started >= limit { return false }
        if cancelFD >= 0 {
            var fds = [pollfd(fd: cancelFD, events: Int16(POLLIN), revents: 0)]
            if poll(&fds, 1, 0) > 0 { return false }
        }
        usleep(count < 10 ? 2_000 : 20_000)
        return true
    }
}
