import CSQLite
import ReindexProtocol
import ReindexSystem

/// One of FTS5's tokenizers, made through `fts5_api`, splitting text as the full-text index
/// does (folded tokens, in order). Used on its connection's thread only.
final class FullTextTokenizer {
    private var tokenizer = fts5_tokenizer()
    private var instance: OpaquePointer?
    /// The connection a tokenizer made outside any index belongs to (`standalone`).
    private var owner: SQLiteConnection?

    /// The full-text index's tokenizer (`unicode61 remove_diacritics 2`, as `items_fts` is
    /// declared) on `connection`; `index` names it in an error.
    static func ofIndex(_ connection: SQLiteConnection, index: String) throws(StoreError) -> FullTextTokenizer {
        try FullTextTokenizer(api: connection.fts5API(), name: "unicode61", arguments: ["remove_diacritics", "2"], index: index)
    }

    /// The full-text index's tokenizer on an in-memory connection of its own: the words of the
    /// PostgreSQL index are made by the same code as SQLite's (`PostgresDocument`), so both
    /// split and fold them alike.
    static func standalone() throws(StoreError) -> FullTextTokenizer {
        let connection = try SQLiteConnection(path: ":memory:")
        let made = try ofIndex(connection, index: "the word splitter")
        made.owner = connection
        return made
    }

    init(api: UnsafeMutablePointer<fts5_api>, name: String, arguments: [String], index: String) throws(StoreError) {
        var userData: UnsafeMutableRawPointer? = nil
        var rc = api.pointee.xFindTokenizer(api, name, &userData, &tokenizer)
        guard rc == SQLITE_OK, let create = tokenizer.xCreate else {
            throw StoreError(sqlite: rc, message: "FTS5 has no tokenizer '\(name)'", context: index)
        }
        let strings = arguments.map { strdup($0) }
        defer { for string in strings { free(string) } }
        var pointers = strings.map { UnsafePointer($0) }
        rc = pointers.withUnsafeMutableBufferPointer { buffer in
            create(userData, buffer.baseAddress, Int32(buffer.count), &instance)
        }
        guard rc == SQLITE_OK, instance != nil else {
            throw StoreError(sqlite: rc, message: "cannot make the tokenizer '\(name)'", context: index)
        }
    }

    deinit {
        if let instance { tokenizer.xDelete?(instance) }
    }

    /// Calls `callback` with each token of `count` bytes at `text` (FTS5's `xToken`, `context` its
    /// first argument).
    func scan(_ text: UnsafePointer<UInt8>, count: Int, context: UnsafeMutableRawPointer,
              _ callback: @convention(c) (UnsafeMutableRawPointer?, Int32, UnsafePointer<CChar>?, Int32, Int32, Int32) -> Int32) {
        text.withMemoryRebound(to: CChar.self, capacity: count) { chars in
            _ = tokenizer.xTokenize?(instance, context, FTS5_TOKENIZE_DOCUMENT, chars, Int32(count), callback)
        }
    }

    /// The tokens of `text`, as the index stores them.
    func tokens(of text: String) -> [String] {
        final class Collected { var tokens: [String] = [] }
        let collected = Collected()
        var text = text
        text.withUTF8 { bytes in
            bytes.withMemoryRebound(to: CChar.self) { chars in
                _ = tokenizer.xTokenize?(instance, Unmanaged.passUnretained(collected).toOpaque(), FTS5_TOKENIZE_DOCUMENT,
                                         chars.baseAddress, Int32(chars.count)) { context, _, token, length, _, _ in
                    guard let context, let token else { return SQLITE_OK }
                    let collected = Unmanaged<Collected>.fromOpaque(context).takeUnretainedValue()
                    collected.tokens.append(token.withMemoryRebound(to: UInt8.self, capacity: Int(length)) {
                        String(decoding: UnsafeBufferPointer(start: $0, count: Int(length)), as: UTF8.self)
                    })
                    return SQLITE_OK
                }
            }
        }
        return collected.tokens
    }
}

/// The words of a text as the full-text index splits and folds them, for code without a
/// connection of its own (the PostgreSQL query compiler): one standalone tokenizer behind a lock.
enum FullTextWords {
    private static let shared: Locked<FullTextTokenizer?> = Locked(try? FullTextTokenizer.standalone())

    /// The tokens of `text`, as the index stores them; none when SQLite has no FTS5 (then no
    /// index can be made either).
    static func tokens(_ text: String) -> [String] {
        shared.withLock { $0?.tokens(of: text) ?? [] }
    }
}
