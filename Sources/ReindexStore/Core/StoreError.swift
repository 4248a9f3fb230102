import ReindexProtocol
import ReindexSystem

/// The one error of both indexes: what went wrong as a stable `code` (busy, damaged, full, …),
/// the database's own words (`message`), the statement or file involved (`context`), and the
/// underlying result code (`sqliteCode` or `sqlState`) for a person reading a report. Each
/// backend sorts its own codes into these once (StoreError+SQLite.swift,
/// StoreError+PostgreSQL.swift); what a code means to the person who ran a command, and its exit
/// code, is `explained(index:doing:query:)`, here.
public struct StoreError: Error, Sendable, CustomStringConvertible {
    /// What kind of store failure this is, whichever database reported it.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        public let name: String

        /// Another writer held the index past the wait (SQLite `BUSY`/`LOCKED`), or a PostgreSQL
        /// transaction collided with another's (serialization failure, deadlock, lock not
        /// available, statement cancelled): the same work may get through later.
        public static let busy = Code(name: "busy")
        /// The database file or its pages are damaged (SQLite `CORRUPT`/`NOTADB`, SQLSTATE
        /// `XX001`/`XX002`).
        public static let damaged = Code(name: "damaged")
        /// No space left to write (SQLite `FULL`, SQLSTATE `53100`).
        public static let full = Code(name: "full")
        /// The connection to the PostgreSQL server is gone (SQLSTATE class `08`, a server that
        /// stopped or restarted, a terminated backend); the server rolled back what was open.
        public static let connectionLost = Code(name: "connectionLost")
        /// The index was written by a newer reindex, whose schema this one does not know.
        public static let newerSchema = Code(name: "newerSchema")
        /// The index cannot be opened, read or written: permissions, a read-only file, I/O
        /// errors, or a PostgreSQL error of no other code.
        public static let unavailable = Code(name: "unavailable")
        /// The database would not run a statement as it was made: a limit (too large, too deep,
        /// out of memory), a value it cannot take, a syntax error. From a query, the query's
        /// shape is at fault.
        public static let invalid = Code(name: "invalid")
        /// A PostgreSQL worker's lease on its request expired and another worker took it over:
        /// nothing of this attempt is published.
        public static let leaseLost = Code(name: "leaseLost")
        /// A failure the host does not expect of a working database (SQLite `MISUSE`, …).
        public static let `internal` = Code(name: "internal")

        public var description: String { name }
    }

    public var code: Code
    public var message: String
    public var context: String
    /// SQLite's extended result code, when SQLite reported the error.
    public var sqliteCode: Int32?
    /// PostgreSQL's five-character SQLSTATE, when the server answered with one.
    public var sqlState: String?

    public init(_ code: Code, _ message: String, context: String = "", sqliteCode: Int32? = nil, sqlState: String? = nil) {
        self.code = code
        self.message = message
        self.context = context
        self.sqliteCode = sqliteCode
        self.sqlState = sqlState
    }

    /// A serialization failure or a deadlock: the transaction may simply be run again.
    public var isRetryable: Bool { sqlState == "40001" || sqlState == "40P01" }

    public var description: String {
        if let sqliteCode { return "\(context): \(message) (SQLite code \(sqliteCode))" }
        let state = sqlState.map { " (SQLSTATE \($0))" } ?? ""
        return context.isEmpty ? "\(message)\(state)" : "\(context): \(message)\(state)"
    }

    /// What this failure means to the person who ran the command, with its exit code (cli.md):
    /// busy or a lost connection is worth trying again (75, naming who holds a SQLite index
    /// where the system tells); damaged (with what to do), full, unavailable, a newer schema
    /// or a statement the index would not run are the index that cannot be used (74). From a
    /// `query`, a statement the index would not run is the query's shape (65, "query: …"),
    /// without the database's words about SQL the user did not write. The one place a store
    /// error becomes a message and an exit code.
    public func explained(index path: String, doing what: String? = nil, query: Bool = false) -> ReindexError {
        let doing = what.map { "\($0): " } ?? ""
        let underlying = sqliteCode.map { "SQLite result code \($0)" } ?? sqlState.map { "SQLSTATE \($0)" } ?? "no result code"
        switch code {
        case .damaged:
            return ReindexError(.ioError, "\(doing)the index at \(path) is damaged (\(message)); run 'reindex reset' to rebuild it from the extensions (it keeps the damaged file aside)")
        case .busy where sqliteCode != nil:
            let writing = !(context.uppercased().hasPrefix("SELECT") || context.uppercased().hasPrefix("PRAGMA"))
            let lock = writing ? "its write lock" : "a lock"
            let holders = IndexStore.processesUsing(index: path)
            let who = holders.isEmpty ? "another program" : holders.joined(separator: ", ")
            return ReindexError(.requestFailed, "\(doing)the index at \(path) is busy: \(who) held \(lock) past the busy timeout; try again later")
        case .busy:
            return ReindexError(.requestFailed, "\(doing)the index at \(path) is busy (\(message)); try again later")
        case .connectionLost:
            return ReindexError(.requestFailed, "\(doing)\(message); try again")
        case .leaseLost:
            return ReindexError(.requestFailed, "\(doing)\(message)")
        case .full:
            return ReindexError(.ioError, "\(doing)cannot write the index at \(path): the disk is full (\(message))")
        case .invalid where query:
            return ReindexError(.invalidData, "query: the index cannot run a query of this shape (\(underlying)); use fewer words and comparisons or less nesting")
        case .internal where query:
            return ReindexError(.internal, "\(what ?? "query"): the index failed with \(underlying) (an internal error; please report it with the query)")
        case .internal:
            return ReindexError(.internal, "\(doing)\(self)")
        default:
            // unavailable, newerSchema, invalid outside a query
            return ReindexError(.ioError, "\(doing)cannot use the index at \(path): \(sqliteCode != nil ? message : description)")
        }
    }
}
