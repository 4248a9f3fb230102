import CLibPQ
import ReindexProtocol
import ReindexSystem

/// Where a PostgreSQL index lives, as the user gave it (`postgresql://…`, `postgres://…` or a
/// libpq keyword string), and the schema the host keeps its tables in.
public struct PostgresLocation: Sendable, Equatable {
    /// The connection string passed to libpq, unchanged.
    public var connectionString: String
    /// The schema of the host's tables: `REINDEX_PG_SCHEMA`, else a `search_path` set through
    /// `options=-csearch_path=…`, else `reindex`.
    public var schema: String

    /// Whether `index` names a PostgreSQL database rather than a SQLite file.
    public static func isConnectionString(_ index: String) -> Bool {
        if index.hasPrefix("postgresql://") || index.hasPrefix("postgres://") { return true }
        // A libpq keyword string: `host=… dbname=…` (a path never starts with `word=`).
        guard !index.hasPrefix("/") && !index.hasPrefix("."), let equals = index.firstIndex(of: "=") else { return false }
        let keyword = index[..<equals]
        let known = ["host", "hostaddr", "port", "dbname", "user", "password", "service", "options", "sslmode", "application_name", "connect_timeout", "passfile"]
        return known.contains(String(keyword))
    }

    public init(_ connectionString: String, environment: [String: String] = [:]) throws(ReindexError) {
        self.connectionString = connectionString
        var schema = environment["REINDEX_PG_SCHEMA"] ?? ""
        if schema.isEmpty, let path = Self.searchPath(inOptions: Self.option("options", in: connectionString) ?? "") { schema = path }
        if schema.isEmpty { schema = "reindex" }
        guard schema.utf8.count <= 63, let first = schema.unicodeScalars.first, first == "_" || (first.properties.isAlphabetic && first.isASCII),
              schema.unicodeScalars.allSatisfy({ $0.isASCII && ($0.properties.isAlphabetic || ("0"..."9").contains($0) || $0 == "_") })
        else {
            throw ReindexError(.usage, "\(Self.masked(connectionString)): the schema name '\(schema)' is not a plain identifier (letters, digits and _, at most 63 bytes)")
        }
        self.schema = schema.lowercased()
    }

    /// The value of a connection parameter, from a URI's query or a keyword string.
    static func option(_ name: String, in connection: String) -> String? {
        if connection.hasPrefix("postgres") {
            guard let query = connection.split(separator: "?", maxSplits: 1).dropFirst().first else { return nil }
            for pair in query.split(separator: "&") {
                let parts = pair.split(separator: "=", maxSplits: 1)
                if parts.count == 2 && parts[0] == name { return percentDecoded(String(parts[1])) }
            }
            return nil
        }
        for pair in connection.split(separator: " ") {
            let parts = pair.split(separator: "=", maxSplits: 1)
            if parts.count == 2 && parts[0] == name { return String(parts[1]).trimmingQuotes }
        }
        return nil
    }

    /// The first schema of a `-c search_path=…` in libpq's `options`.
    static func searchPath(inOptions options: String) -> String? {
        let spaced = options.replacingAll("-c ", with: "-c")
        for part in spaced.split(separator: " ") where part.hasPrefix("-csearch_path=") {
            let value = part.dropFirst("-csearch_path=".count)
            return value.split(separator: ",").first.map { String($0).trimmingQuotes }
        }
        return nil
    }

    static func percentDecoded(_ text: String) -> String {
        var bytes: [UInt8] = []
        var iterator = Array(text.utf8).makeIterator()
        while let byte = iterator.next() {
            if byte == UInt8(ascii: "%"), let high = iterator.next(), let low = iterator.next(),
               let value = UInt8(String(decoding: [high, low], as: UTF8.self), radix: 16) {
                bytes.append(value)
            } else if byte == UInt8(ascii: "+") {
                bytes.append(UInt8(ascii: " "))
            } else {
                bytes.append(byte)
            }
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// The connection string with any password replaced by `***`, fit to print.
    public static func masked(_ connection: String) -> String {
        if connection.hasPrefix("postgres") {
            var result = connection
            // postgresql://user:password@host…: the password is between the first ':' after the
            // scheme and the last '@' of the authority.
            if let schemeEnd = result.range(of: "://") {
                let rest = result[schemeEnd.upperBound...]
                let authorityEnd = rest.firstIndex(where: { $0 == "/" || $0 == "?" }) ?? rest.endIndex
                let authority = rest[..<authorityEnd]
                if let at = authority.lastIndex(of: "@"), let colon = authority[..<at].firstIndex(of: ":") {
                    result.replaceSubrange(result.index(after: colon)..<at, with: "***")
                }
            }
            return maskPasswordParameter(result, separator: "&")
        }
        return maskPasswordParameter(connection, separator: " ")
    }

    private static func maskPasswordParameter(_ text: String, separator: Character) -> String {
        var parts: [String] = []
        var masked = false
        for piece in text.split(separator: separator, omittingEmptySubsequences: false) {
            // In a URI the first parameter follows '?'.
            if let q = piece.firstIndex(of: "?"), piece[piece.index(after: q)...].hasPrefix("password=") {
                parts.append(String(piece[...q]) + "password=***")
                masked = true
            } else if piece.hasPrefix("password=") {
                parts.append("password=***")
                masked = true
            } else {
                parts.append(String(piece))
            }
        }
        return masked ? parts.joined(separator: String(separator)) : text
    }

    /// The location fit to print: password masked.
    public var displayName: String { Self.masked(connectionString) }
}

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

/// Text-array literals for parameters (`{"a","b",NULL}`), so many rows go in one statement.
/// A text array literal (`{"a","b",NULL}`) built byte by byte from UTF-8 fields, ready for
/// libpq (NUL-terminated by `finish`). PostgreSQL text cannot hold NUL, so NUL bytes are left out.
struct PGArrayBuilder {
    private(set) var bytes: [UInt8]
    private var count = 0

    init(capacity: Int = 1 << 16) {
        bytes = []
        bytes.reserveCapacity(capacity)
        bytes.append(UInt8(ascii: "{"))
    }

    /// Adds one element: the fields joined by newlines, those absent skipped; NULL when all are.
    mutating func append(_ first: UnsafeRawBufferPointer?, _ second: UnsafeRawBufferPointer? = nil) {
        if count > 0 { bytes.append(UInt8(ascii: ",")) }
        count += 1
        guard first != nil || second != nil else {
            bytes.append(contentsOf: [UInt8(ascii: "N"), UInt8(ascii: "U"), UInt8(ascii: "L"), UInt8(ascii: "L")])
            return
        }
        bytes.append(UInt8(ascii: "\""))
        if let first { escape(first) }
        if let second {
            if first != nil { bytes.append(0x0A) }
            escape(second)
        }
        bytes.append(UInt8(ascii: "\""))
    }

    mutating func append(_ text: String?) {
        guard var text else { return append(nil, nil) }
        text.withUTF8 { append(UnsafeRawBufferPointer($0)) }
    }

    private mutating func escape(_ field: UnsafeRawBufferPointer) {
        var plain = true
        for byte in field where byte == 0x22 || byte == 0x5C || byte == 0 { plain = false; break }
        if plain { bytes.append(contentsOf: field); return }
        for byte in field {
            if byte == 0 { continue }
            if byte == 0x22 || byte == 0x5C { bytes.append(0x5C) }
            bytes.append(byte)
        }
    }

    /// The literal, NUL-terminated.
    mutating func finish() -> [UInt8] {
        bytes.append(UInt8(ascii: "}"))
        bytes.append(0)
        return bytes
    }
}

enum PGArray {
    static func literal(_ values: [String?]) -> String {
        var out = "{"
        out.reserveCapacity(values.count * 16)
        for (n, value) in values.enumerated() {
            if n > 0 { out += "," }
            guard let value else { out += "NULL"; continue }
            out += "\""
            for ch in value.unicodeScalars {
                if ch == "\"" || ch == "\\" { out += "\\" }
                out.unicodeScalars.append(ch)
            }
            out += "\""
        }
        return out + "}"
    }

    static func parse(_ literal: String?) -> [String] {
        guard let literal, literal.count >= 2 else { return [] }
        var result: [String] = []
        var current = ""
        var quoted = false, escaped = false, wasQuoted = false
        for ch in literal.dropFirst().dropLast() {
            if escaped { current.append(ch); escaped = false; continue }
            if quoted {
                if ch == "\\" { escaped = true } else if ch == "\"" { quoted = false } else { current.append(ch) }
                continue
            }
            if ch == "\"" { quoted = true; wasQuoted = true; continue }
            if ch == "," {
                result.append(current); current = ""; wasQuoted = false
                continue
            }
            current.append(ch)
        }
        if !current.isEmpty || wasQuoted { result.append(current) }
        return result
    }
}
