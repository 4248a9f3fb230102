import CSQLite
import ReindexProtocol
import ReindexSystem

// A search narrowed to earlier results: the desktop's subsearch (GNOME Shell's
// GetSubsearchResultSet), where each letter typed refines the results already shown. Searching
// the new words afresh costs what the words cost over the whole index — two common words, the
// last a prefix, read both words' whole posting lists — while the answer can only be among the
// few results shown. So each of those is checked alone: its full-text row read by row id and
// split by the full-text index's own tokenizer, the words looked for in it as a search looks.

extension IndexStore {
    /// The items of `candidates`, in their order, that are live, unexpired and hold every word of
    /// `words` as a search's plain words do: each word (the tokens the full-text index makes of
    /// it, in a row) in one of the full-text attributes, the last also as a prefix. Words with
    /// anything but letters, digits and spaces are searched afresh (`refineBySearching`).
    public func refine(_ candidates: [ItemKey], words: String, now: Double) throws(ReindexError) -> [SearchResult] {
        guard Self.arePlainWords(words) else { return try refineBySearching(candidates, words: words, now: now) }
        do {
            return try read { () throws(StoreError) -> [SearchResult] in
                let tokenizer = try fullTextTokenizer()
                let terms = words.split(whereSeparator: \.isWhitespace).map { tokenizer.tokens(of: String($0)) }.filter { !$0.isEmpty }
                guard !terms.isEmpty else { return [] }
                let item = try statement("""
                    SELECT b.identifier, i.uid, i.domain, i.expires, i.attributes, i.id
                    FROM items i JOIN bundles b ON b.key = i.bundle AND b.live_gen = i.gen
                    WHERE i.bundle = ?1 AND i.uid = ?2 AND (i.expires IS NULL OR i.expires > ?3)
                    """)
                defer { item.reset() }
                var results: [SearchResult] = []
                var seen = Set<Int64>()
                for candidate in candidates {
                    item.reset()
                    item.bind(1, candidate.bundle.lowercased())
                    item.bind(2, candidate.uniqueIdentifier)
                    item.bind(3, now)
                    guard try item.step() else { continue }
                    let id = item.int64(5)
                    guard seen.insert(id).inserted else { continue }
                    let (row, found) = try fullTextRow(id)
                    defer { row.reset() }
                    guard found else { continue }
                    let columns = (0..<AttributeSchema.searched.count).map { tokenizer.tokens(of: row.text(Int32($0)) ?? "") }
                    let holdsAll = terms.indices.allSatisfy { n in
                        columns.contains { Self.holds($0, terms[n], lastAsPrefix: n == terms.count - 1) }
                    }
                    if holdsAll { results.append(result(item, score: nil)) }
                }
                return results
            }
        } catch {
            throw error.explained(index: path, doing: "search failed")
        }
    }

    /// Only letters, digits and white space: what the full-text index's words are made of, so
    /// the check above and a search agree.
    static func arePlainWords(_ text: String) -> Bool {
        text.unicodeScalars.allSatisfy { Folding.isWordCharacter($0) || $0.properties.isWhitespace }
    }

    /// Whether `phrase` occurs in `tokens` as consecutive tokens, its last one also as the start
    /// of a token when `lastAsPrefix`.
    static func holds(_ tokens: [String], _ phrase: [String], lastAsPrefix: Bool) -> Bool {
        guard tokens.count >= phrase.count else { return false }
        for start in 0...(tokens.count - phrase.count) {
            var all = true
            for (n, wanted) in phrase.enumerated() {
                let token = tokens[start + n]
                let last = n == phrase.count - 1
                if !(token == wanted || (last && lastAsPrefix && token.hasPrefix(wanted))) { all = false; break }
            }
            if all { return true }
        }
        return false
    }

    /// The full-text index's tokenizer (`unicode61 remove_diacritics 2`, as `items_fts` is
    /// declared), made once per connection.
    func fullTextTokenizer() throws(StoreError) -> FullTextTokenizer {
        if let made = queryState.tokenizer { return made }
        let made = try FullTextTokenizer(api: fts5API(), name: "unicode61", arguments: ["remove_diacritics", "2"], index: path)
        queryState.tokenizer = made
        return made
    }
}

extension IndexQueries {
    /// `refine` by a search of `words` among its first matches (at least 200, as many as
    /// there are candidates up to 1,000), keeping the candidates found, in their order.
    public func refineBySearching(_ candidates: [ItemKey], words: String, now: Double) throws(ReindexError) -> [SearchResult] {
        let limit = max(200, min(candidates.count, 1000))
        var options = QueryOptions(limit: limit)
        options.now = now
        let found = try query(words, options: options).results
        var byKey: [ItemKey: SearchResult] = [:]
        for result in found { byKey[ItemKey(bundle: result.bundleIdentifier.lowercased(), uniqueIdentifier: result.uniqueIdentifier)] = result }
        var seen = Set<ItemKey>()
        return candidates.compactMap { candidate in
            let key = ItemKey(bundle: candidate.bundle.lowercased(), uniqueIdentifier: candidate.uniqueIdentifier)
            guard seen.insert(key).inserted else { return nil }
            return byKey[key]
        }
    }
}

extension PostgresStore {
    /// On PostgreSQL, a search among the first matches (`refineBySearching`).
    public func refine(_ candidates: [ItemKey], words: String, now: Double) throws(ReindexError) -> [SearchResult] {
        try refineBySearching(candidates, words: words, now: now)
    }
}

/// An item of a bundle, by identifiers.
public struct ItemKey: Hashable, Sendable {
    public var bundle: String
    public var uniqueIdentifier: String

    public init(bundle: String, uniqueIdentifier: String) {
        self.bundle = bundle
        self.uniqueIdentifier = uniqueIdentifier
    }
}

/// One of FTS5's tokenizers, made through `fts5_api`, splitting text as the full-text index
/// does (folded tokens, in order). Used on its connection's thread only.
final class FullTextTokenizer {
    private var tokenizer = fts5_tokenizer()
    private var instance: OpaquePointer?

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
