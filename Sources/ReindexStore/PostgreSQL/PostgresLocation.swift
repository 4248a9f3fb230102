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
