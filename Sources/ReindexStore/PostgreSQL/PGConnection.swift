import CLibPQ
import ReindexProtocol
import ReindexSystem

extension String {
    var trimmingQuotes: String {
        var s = Substring(self)
        while let f = s.first, f == "'" || f == "\"" { s = s.dropFirst() }
        while let l = s.last, l == "'" || l == "\"" { s = s.dropLast() }
        return String(s)
    }

    func replacingAll(_ target: String, with replacement: String) -> String {
        guard !target.isEmpty else { return self }
        var result = ""
        var rest = Substring(self)
        while let range = rest.range(of: target) {
            result += rest[..<range.lowerBound]
            result += replacement
            rest = rest[range.upperBound...]
        }
        return result + rest
    }
}

/// The rows of one statement's result.
public final class PGResult {
    let handle: OpaquePointer?
    public let rowCount: Int
    /// Rows changed by an INSERT/UPDATE/DELETE.
    public let affected: Int

    init(_ handle: OpaquePointer?) {
        self.handle = handle
        rowCount = handle.map { Int(PQntuples($0)) } ?? 0
        let tuples = handle.flatMap { String(cString: PQcmdTuples($0)) } ?? ""
        affected = Int(tuples) ?? 0
    }

    deinit { if let handle { PQclear(handle) } }

    public func isNull(_ row: Int, _ column: Int) -> Bool {
        guard let handle else { return true }
        return PQgetisnull(handle, Int32(row), Int32(column)) == 1
    }

    public func text(_ row: Int, _ column: Int) -> String? {
        guard let handle, !isNull(row, column), let value = PQgetvalue(handle, Int32(row), Int32(column)) else { return nil }
        return String(cString: value)
    }

    public func int64(_ row: Int, _ column: Int) -> Int64 { text(row, column).flatMap { Int64($0) } ?? 0 }
    public func int(_ row: Int, _ column: Int) -> Int { Int(int64(row, column)) }
    public func double(_ row: Int, _ column: Int) -> Double { optionalDouble(row, column) ?? 0 }
    public func optionalDouble(_ row: Int, _ column: Int) -> Double? { text(row, column).flatMap { Double($0) } }
    public func bool(_ row: Int, _ column: Int) -> Bool { text(row, column) == "t" }
}

/// One libpq connection, used from one thread at a time. Statements with parameters are prepared
/// once per connection and reused.
public final class PGConnection {
    let handle: OpaquePointer
    /// Host and port as libpq resolved them, for messages.
    public let hostDescription: String
    private var prepared: [String: String] = [:]
    public private(set) var inTransaction = false

    /// Connects; a failure names the host and port and says what libpq said.
    public init(_ connectionString: String) throws(StoreError) {
        // libpq is loaded here, at the first PostgreSQL connection, never at start (CLibPQ).
        guard reindex_libpq_load() != 0 else {
            throw StoreError(postgres: nil, message: "a PostgreSQL index needs libpq, which cannot be loaded (\(String(cString: reindex_libpq_error()))); install it: apt-get install libpq5, brew install libpq",
                                context: PostgresLocation.masked(connectionString), connectionLost: false)
        }
        guard let conn = PQconnectdb(connectionString) else {
            throw StoreError(postgres: nil, message: "libpq could not allocate a connection", context: PostgresLocation.masked(connectionString), connectionLost: true)
        }
        let host = PQhost(conn).map { String(cString: $0) } ?? "localhost"
        let port = PQport(conn).map { String(cString: $0) } ?? "5432"
        hostDescription = host.hasPrefix("/") ? "socket \(host)/.s.PGSQL.\(port)" : "\(host) port \(port)"
        guard PQstatus(conn) == CONNECTION_OK else {
            let message = String(cString: PQerrorMessage(conn)).trimmingCharacters(in: "\n ")
            PQfinish(conn)
            throw StoreError(postgres: nil, message: "cannot connect to PostgreSQL at \(hostDescription): \(message.replacingAll("\n", with: "; "))",
                                context: "", connectionLost: true)
        }
        handle = conn
        // Notices (such as "relation already exists, skipping") are not for the user.
        PQsetNoticeProcessor(conn, { _, _ in }, nil)
    }

    deinit { PQfinish(handle) }

    /// Whether the connection is still usable.
    public var isHealthy: Bool { !lost && PQstatus(handle) == CONNECTION_OK }
    /// The server ended this connection (it may take libpq a moment to notice by itself).
    private var lost = false
    /// The server process serving this connection (`pg_backend_pid()`).
    public var backendPID: Int32 { PQbackendPID(handle) }
    /// The connection's socket, for poll(2) while waiting for notifications.
    public var socket: Int32 { PQsocket(handle) }

    private func check(_ result: OpaquePointer?, _ sql: String) throws(StoreError) -> PGResult {
        let wrapped = PGResult(result)
        let status = result.map { PQresultStatus($0) } ?? PGRES_FATAL_ERROR
        switch status {
        case PGRES_COMMAND_OK, PGRES_TUPLES_OK, PGRES_EMPTY_QUERY, PGRES_COPY_IN:
            return wrapped
        default:
            let state = result.flatMap { PQresultErrorField($0, Int32(UInt8(ascii: "C"))) }.map { String(cString: $0) }
            var message = result.flatMap { PQresultErrorField($0, Int32(UInt8(ascii: "M"))) }.map { String(cString: $0) }
                ?? String(cString: PQerrorMessage(handle)).trimmingCharacters(in: "\n ")
            if message.isEmpty { message = "the server did not answer" }
            let lost = PQstatus(handle) != CONNECTION_OK || state?.hasPrefix("08") == true || state == "57P01" || state == "57P02" || state == "57P03"
            if lost {
                inTransaction = false
                self.lost = true
            }
            let statement = sql.split(separator: "\n").first.map(String.init) ?? sql
            throw StoreError(postgres: state, message: lost ? "the connection to PostgreSQL at \(hostDescription) was lost: \(message)" : message,
                                context: statement.count > 120 ? String(statement.prefix(120)) + "…" : statement, connectionLost: lost)
        }
    }

    /// Runs one or more statements without parameters.
    @discardableResult
    public func execute(_ sql: String) throws(StoreError) -> PGResult {
        try finishSent()
        let result = try check(PQexec(handle, sql), sql)
        return result
    }

    /// Runs one statement with text parameters ($1…), prepared on first use.
    @discardableResult
    public func query(_ sql: String, _ parameters: [String?] = []) throws(StoreError) -> PGResult {
        try finishSent()
        let name = try preparedName(sql, parameters.count)
        return try withParameters(parameters) { values throws(StoreError) in
            try check(PQexecPrepared(handle, name, Int32(parameters.count), values, nil, nil, 0), sql)
        }
    }

    /// The statement sent by `send` whose result has not been read yet.
    private var sent: String?

    /// Sends one statement with parameters and returns without waiting for it: the server runs
    /// it while the caller prepares the next one (a bulk load overlaps the host's work with the
    /// server's). Its result — an error included — is read by the next statement on this
    /// connection, or by `finishSent`, before anything else runs.
    public func send(_ sql: String, _ parameters: [String?]) throws(StoreError) {
        try finishSent()
        let name = try preparedName(sql, parameters.count)
        let queued = withParameters(parameters) { values in
            PQsendQueryPrepared(handle, name, Int32(parameters.count), values, nil, nil, 0)
        }
        guard queued == 1 else { _ = try check(nil, sql); return }
        sent = sql
    }

    /// Waits for the statement `send` sent, if any, and throws its error.
    public func finishSent() throws(StoreError) {
        guard let sql = sent else { return }
        sent = nil
        var first: OpaquePointer?
        while let result = PQgetResult(handle) {
            if first == nil { first = result } else { PQclear(result) }
        }
        _ = try check(first, sql)
    }

    private func preparedName(_ sql: String, _ count: Int) throws(StoreError) -> String {
        if let known = prepared[sql] { return known }
        let name = "s\(prepared.count)"
        _ = try check(PQprepare(handle, name, sql, Int32(count), nil), sql)
        prepared[sql] = name
        return name
    }

    /// `send` with parameters already in libpq's text form, each NUL-terminated (nil: NULL): a
    /// bulk statement's arrays built straight from the items' bytes (`PGArrayBuilder`), with no
    /// intermediate strings and no copy on the way to libpq.
    public func send(_ sql: String, bytes parameters: [[UInt8]?]) throws(StoreError) {
        try finishSent()
        let name = try preparedName(sql, parameters.count)
        var pointers: [UnsafePointer<CChar>?] = []
        pointers.reserveCapacity(parameters.count)
        let queued = Self.withPointers(parameters[...], &pointers) { values in
            PQsendQueryPrepared(handle, name, Int32(values.count), values, nil, nil, 0)
        }
        guard queued == 1 else { _ = try check(nil, sql); return }
        sent = sql
    }

    /// Calls `body` with a pointer to each parameter's bytes, all valid at once.
    private static func withPointers(_ rest: ArraySlice<[UInt8]?>, _ pointers: inout [UnsafePointer<CChar>?],
                                     _ body: ([UnsafePointer<CChar>?]) -> Int32) -> Int32 {
        guard let first = rest.first else { return body(pointers) }
        guard let bytes = first else {
            pointers.append(nil)
            return withPointers(rest.dropFirst(), &pointers, body)
        }
        return bytes.withUnsafeBufferPointer { buffer in
            buffer.withMemoryRebound(to: CChar.self) { chars in
                pointers.append(chars.baseAddress)
                return withPointers(rest.dropFirst(), &pointers, body)
            }
        }
    }

    private func withParameters<T, E: Error>(_ parameters: [String?], _ body: ([UnsafePointer<CChar>?]) throws(E) -> T) throws(E) -> T {
        let cStrings: [UnsafeMutablePointer<CChar>?] = parameters.map { $0.flatMap { strdup($0) } }
        defer { for pointer in cStrings { free(pointer) } }
        return try body(cStrings.map { $0.map { UnsafePointer($0) } })
    }

    /// Runs `body` in one transaction (READ COMMITTED), committing at the end or rolling back on
    /// an error. Inside a transaction already open, it just runs.
    public func transaction<T>(_ body: () throws -> T) throws -> T {
        if inTransaction { return try body() }
        try begin()
        do {
            let result = try body()
            try commit()
            return result
        } catch {
            rollback()
            throw error
        }
    }

    /// Opens a transaction (`characteristics`: e.g. `ISOLATION LEVEL REPEATABLE READ READ ONLY`).
    public func begin(_ characteristics: String = "") throws(StoreError) {
        try execute(characteristics.isEmpty ? "BEGIN" : "BEGIN " + characteristics)
        inTransaction = true
    }

    public func commit() throws(StoreError) {
        inTransaction = false
        try execute("COMMIT")
    }

    public func rollback() {
        inTransaction = false
        try? finishSent()
        if isHealthy { _ = try? execute("ROLLBACK") }
    }

    /// Notifications received (after `LISTEN`), reading what the socket has without blocking.
    public func notifications() -> [(channel: String, payload: String)] {
        PQconsumeInput(handle)
        var result: [(channel: String, payload: String)] = []
        while let notify = PQnotifies(handle) {
            result.append((String(cString: notify.pointee.relname), String(cString: notify.pointee.extra)))
            PQfreemem(notify)
        }
        return result
    }

    /// A string literal for SQL text built by the host (identifiers it chose, never user input
    /// in statements that take parameters).
    public static func quoteIdentifier(_ name: String) -> String {
        "\"" + name.replacingAll("\"", with: "\"\"") + "\""
    }
}

extension String {
    func trimmingCharacters(in set: String) -> String {
        var s = Substring(self)
        while let f = s.first, set.contains(f) { s = s.dropFirst() }
        while let l = s.last, set.contains(l) { s = s.dropLast() }
        return String(s)
    }
}
