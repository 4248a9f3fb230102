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
        let made = try FullTextTokenizer.ofIndex(connection, index: path)
        queryState.tokenizer = made
        return made
    }
}
