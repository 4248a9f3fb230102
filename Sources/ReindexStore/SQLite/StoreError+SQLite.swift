import CSQLite

/// SQLite's result codes, sorted into the store's codes.
extension StoreError {
    /// An error SQLite reported with the (extended) result code `resultCode`.
    public init(sqlite resultCode: Int32, message: String, context: String) {
        self.init(Self.code(sqlite: resultCode), message, context: context, sqliteCode: resultCode)
    }

    static func code(sqlite resultCode: Int32) -> Code {
        switch resultCode & 0xFF {
        case SQLITE_CORRUPT, SQLITE_NOTADB: return .damaged
        case SQLITE_BUSY, SQLITE_LOCKED: return .busy
        case SQLITE_FULL: return .full
        case SQLITE_IOERR, SQLITE_CANTOPEN, SQLITE_READONLY, SQLITE_PERM, SQLITE_NOLFS, SQLITE_AUTH: return .unavailable
        case SQLITE_ERROR, SQLITE_TOOBIG, SQLITE_NOMEM, SQLITE_RANGE: return .invalid
        default: return .internal
        }
    }
}
