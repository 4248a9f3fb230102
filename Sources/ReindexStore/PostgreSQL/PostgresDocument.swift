import CSQLite
import ReindexProtocol

/// An item's full-text document on PostgreSQL, made by the host as a `tsvector` literal from the
/// tokens SQLite's full-text index makes of the same text (FTS5's `unicode61 remove_diacritics 2`,
/// through `FullTextTokenizer`): both backends split and fold words with one piece of code, so a
/// word finds the same items on both (`user@example.com` holds `example`, `4.5` is `4` then `5`).
///
/// Each searched attribute has a *slot* of positions: attribute `s` of `AttributeSchema.searched`
/// (and, after them, `customSlot` for the searchable declared attributes) holds positions
/// `s × 2048 + 1` to `s × 2048 + 2047`, its `n`-th token at `s × 2048 + n` (from the 2047th on,
/// at the slot's last). So a phrase (`<->`) never joins the end of one attribute to the start of
/// the next, and an attribute's own words are the document's positions in its slot
/// (`reindex_slots`, schema migration 11), which the checks of one attribute read instead of
/// splitting its text again. Each position also carries the attribute's weight class (A to D,
/// `BuiltInAttribute.FullText.postgresClass`; the declared attributes C), which a comparison on
/// one attribute reads. A token longer than a `tsvector` lexeme may be (2,046 bytes, less the
/// mark) is kept in its stored form (`storedWord`): its first 2,000 bytes or so, a separator no
/// token holds and a hash of it all, as a query's word is looked up; past 256
/// positions of one token, the first 256 are kept, as PostgreSQL keeps them. A `tsvector`'s
/// words and positions may take 1 MiB at most: an item with more (megabytes of text in many
/// words) keeps the words met first, attribute by attribute in `searched` order, up to
/// `lexemeBudget` bytes, where the server's parser made the whole batch fail, and is marked
/// (`overflowMark`): its other words are in its exact positions only, where a query finds them.
///
/// The words of the title and of authors are in the document twice: as they are, and marked with
/// their slot (`#0word`, `#6word`: `#` is never in a token), at the same positions. Those two
/// share their weight class with another attribute (displayName; contentDescription), and a
/// `cdw` comparison on one of them asks of every match whether a word is in it: `doc @@
/// '#6word'` answers in C, where reading the attribute's positions in SQL (`reindex_slots`) is
/// slow.
///
/// Beside the document the host makes what BM25F reads (`Made`): the item's length and each
/// word's weighted frequency, exactly as SQLite's full-text index has them. And where the
/// document had to leave positions out (an attribute past its 2,047th token, a word past its
/// 256th occurrence, the 1 MiB) or holds a word longer than `storedBytes`, every position of
/// every word, exactly (`Made.places`; such a word also whole, marked): the phrases, the words
/// of some attributes and the long prefixes of such an item are found and counted there, as
/// SQLite finds them (schema migration 15).
final class PostgresDocument {
    static let slotWidth = 2048
    /// The slot of the searchable declared attributes, after the built-in ones.
    static let customSlot = AttributeSchema.searched.count
    static let longestLexeme = 2046
    /// The bytes of words and positions one document keeps, below the `tsvector`'s 1 MiB.
    static let lexemeBudget = 1_000_000
    /// The positions of one word a `tsvector` keeps.
    static let positionsKept = 256
    /// The positions of one slot in an item's exact positions (`Made.places`): slot `s`'s `n`-th
    /// token is at `s × placesSlotWidth + n` (a line of the protocol, 16 MiB, holds fewer tokens).
    static let placesSlotWidth = 1 << 24
    /// The slots whose words are also in the document marked (`marked(_:slot:)`): title, authors.
    static let markedSlots: Set<Int> = Set(slots(["title", "authors"]))

    /// A word as the document holds it marked with its attribute's slot.
    static func marked(_ word: String, slot: Int) -> String { "#\(slot)" + word }

    /// Each slot's weight class letter.
    static let weightClasses: [UInt8] = AttributeSchema.table.compactMap { $0.fullText.map { UInt8($0.postgresClass.asciiValue ?? 68) } }
        + [UInt8(ascii: "C")]

    /// The weight class of a searched attribute (`AttributeSchema.searched` name).
    static func weightClass(_ name: String) -> Character? {
        AttributeSchema.searched.firstIndex(of: name).map { Character(Unicode.Scalar(weightClasses[$0])) }
    }

    /// The slots of these searched attributes (`AttributeSchema.searched` names).
    static func slots(_ names: [String]) -> [Int] { names.compactMap { AttributeSchema.searched.firstIndex(of: $0) } }

    private let tokenizer: FullTextTokenizer
    /// The document being made: each token's positions, each a position and weight letter.
    private var positions: [String: [(UInt16, UInt8)]] = [:]
    private var slot = 0
    private var marking = false
    private var count = 0
    private var lexemeBytes = 0
    /// Each word's weighted frequency over the searched attributes (`frequencies`).
    private var weighted: [String: Int] = [:]
    /// The tokens of the searched attributes so far (`length`).
    private var tokens = 0
    /// Whether the document left a position out (`Made.places`).
    private var clipped = false
    /// Whether it left a word out (`overflowMark`).
    private var overflowed = false
    /// Each word's every position (`Made.places`), while `recording`: the second reading of a
    /// clipped document's text.
    private var exact: [String: [Int]] = [:]
    private var recording = false

    init() throws(StoreError) { tokenizer = try .standalone() }

    /// Adds the tokens of `text` to the document being made, in `slot`.
    func add(_ text: UnsafeRawBufferPointer?, slot: Int) {
        guard let text, let base = text.baseAddress, text.count > 0 else { return }
        self.slot = slot
        marking = Self.markedSlots.contains(slot)
        count = 0
        tokenizer.scan(base.assumingMemoryBound(to: UInt8.self), count: text.count, context: Unmanaged.passUnretained(self).toOpaque()) { context, _, token, length, _, _ in
            guard let context, let token, length > 0 else { return SQLITE_OK }
            let document = Unmanaged<PostgresDocument>.fromOpaque(context).takeUnretainedValue()
            document.note(token, Int(length))
            return SQLITE_OK
        }
    }

    private func note(_ token: UnsafePointer<CChar>, _ length: Int) {
        count += 1
        var word = token.withMemoryRebound(to: UInt8.self, capacity: length) {
            String(decoding: UnsafeBufferPointer(start: $0, count: length), as: UTF8.self)
        }
        var length = length
        let whole = length > Self.storedBytes ? word : nil
        if length > Self.longestWord {
            word = Self.storedWord(word)
            length = word.utf8.count
        }
        if recording {
            let place = slot * Self.placesSlotWidth + min(count, Self.placesSlotWidth - 1)
            exact[word, default: []].append(place)
            if let whole { exact[Self.longWordMark + whole, default: []].append(place) }
            return
        }
        let searched = slot < Self.customSlot
        if searched { tokens += 1 }
        if count >= Self.slotWidth || whole != nil { clipped = true }
        if searched { weighted[word, default: 0] += Self.slotWeights[slot] }
        let position = UInt16(slot * Self.slotWidth + min(count, Self.slotWidth - 1))
        place(word, length: length, at: position)
        if marking { place(Self.marked(word, slot: slot), length: length + 2, at: position) }
    }

    /// The longest word a document holds as it is: the longest lexeme, less the mark of the
    /// title's and authors' words.
    static let longestWord = longestLexeme - 2
    /// The bytes of a longer word its stored form begins with (at most; cut at a character).
    static let storedBytes = 2_000
    /// Before a word longer than `storedBytes` whole, in an item's exact positions (`Made.places`,
    /// which such an item keeps): a prefix longer than that finds the words it begins there
    /// (U+0002, never in a token).
    static let longWordMark = "\u{2}"
    /// A word of the document of an item whose words did not all fit in it (the `tsvector`'s
    /// 1 MiB): such an item keeps every word in its exact positions (`Made.places`), and a
    /// query finds the items so marked there too (U+0004, never in a token; schema migration 16).
    static let overflowMark = "\u{4}"

    /// The first `storedBytes` bytes or so of a word, cut at a character, as its stored form
    /// begins (`storedWord`): every word a longer prefix begins holds them in the document.
    static func storedHead(_ word: String) -> String {
        let bytes = Array(word.utf8)
        guard bytes.count > storedBytes else { return word }
        var kept = storedBytes
        while kept > 0, bytes[kept] & 0xC0 == 0x80 { kept -= 1 }
        return String(decoding: bytes[..<kept], as: UTF8.self)
    }

    /// A word as the document holds it, and as a query looks it up: itself, or, longer than
    /// `longestWord` (a run of thousands of letters, which a `tsvector` cannot hold), its first
    /// `storedBytes` bytes, U+0001 (never in a token: the tokenizer splits at it) and the
    /// 64-bit FNV-1a hash of all its bytes in hex. So such a word finds the items that hold it
    /// on PostgreSQL as on SQLite, and a prefix of up to `storedBytes` bytes finds it too.
    static func storedWord(_ word: String) -> String {
        guard word.utf8.count > longestWord else { return word }
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in word.utf8 { hash = (hash ^ UInt64(byte)) &* 0x0000_0100_0000_01b3 }
        let hex = String(hash, radix: 16)
        return storedHead(word) + "\u{1}" + String(repeating: "0", count: 16 - hex.count) + hex
    }

    /// Adds one position of `word` (`length` bytes), if the document has room for it.
    private func place(_ word: String, length: Int, at position: UInt16) {
        let place = (position, Self.weightClasses[slot])
        // What the word takes in the `tsvector`: itself, aligned to 2 bytes, its count of
        // positions and 2 bytes per position; PostgreSQL keeps 256 of one word's positions.
        if let places = positions[word] {
            guard places.count < Self.positionsKept, places[places.count - 1].0 != position, lexemeBytes + 2 <= Self.lexemeBudget else {
                clipped = true
                return
            }
            lexemeBytes += 2
            positions[word]?.append(place)
        } else {
            let cost = (length + 1) / 2 * 2 + 4
            guard lexemeBytes + cost <= Self.lexemeBudget else {
                clipped = true
                overflowed = true
                return
            }
            lexemeBytes += cost
            positions[word] = [place]
        }
    }

    /// Each searched attribute's weight in the score (`Ranking.weights`), as a whole number.
    static let slotWeights: [Int] = AttributeSchema.searchWeights.map { Int($0) }

    /// What the host makes of one item: its document, and what the score reads beside it.
    struct Made {
        /// The `tsvector` literal.
        var document: [UInt8]
        /// The tokens of its searched attributes, as the full-text index counts them (FTS5's
        /// `xColumnSize` over every column): the score's `len(d)`.
        var length: Int
        /// A JSON object of each word of its searched attributes to its weighted frequency — Σ
        /// over its occurrences of their attribute's weight, the score's `f` — exact, past the
        /// positions a document keeps.
        var frequencies: [UInt8]
        /// Nil when the document holds every position and no word longer than `storedBytes`;
        /// else a JSON object of each word (as the document holds it; one longer than
        /// `storedBytes` also whole after `longWordMark`) to its every position, slot by slot
        /// (`placesSlotWidth`) and counted from 1 in its slot: `items.places`, which the
        /// phrases, the words of some attributes and the long prefixes read in such an item
        /// (`reindex_places`, schema migration 15).
        var places: [UInt8]?
        /// Whether the document left words out, and is marked (`overflowMark`).
        var overflowed = false
    }

    /// Documents made for one statement, as its array parameters: the `tsvector` literals, the
    /// lengths and the frequencies, in the items' order.
    struct Columns {
        var documents = PGArrayBuilder(capacity: 1 << 18)
        var lengths = PGArrayBuilder(capacity: 1 << 10)
        var frequencies = PGArrayBuilder(capacity: 1 << 18)
        var places = PGArrayBuilder(capacity: 1 << 10)

        mutating func append(_ made: Made) {
            documents.append(made.document)
            lengths.append(String(made.length))
            frequencies.append(made.frequencies)
            places.append(made.places)
        }
    }

    /// The document of `item`, as a `tsvector` literal: its searched attributes, and the text of
    /// its declared attributes that are `searchable` (the bundle's declarations of them); with
    /// its length and words' frequencies (`Made`).
    func make(_ item: ValidatedItem, searchable: [String: AttributeDeclaration]) -> Made {
        read(item, searchable: searchable)
        guard clipped else { return finish() }
        // The text read again, for every position.
        recording = true
        read(item, searchable: searchable)
        recording = false
        return finish()
    }

    /// Adds the item's searched attributes, each in its slot, and its searchable declared ones.
    private func read(_ item: ValidatedItem, searchable: [String: AttributeDeclaration]) {
        for (slot, field) in ValidatedItem.Field.searched.enumerated() {
            item.withField(field) { add($0, slot: slot) }
        }
        if !searchable.isEmpty, var text = Self.customText(item, searchable: searchable) {
            text.withUTF8 { add(UnsafeRawBufferPointer($0), slot: Self.customSlot) }
        }
    }

    /// The text of the item's `searchable` declared attributes, with their camel-case parts.
    static func customText(_ item: ValidatedItem, searchable: [String: AttributeDeclaration]) -> String? {
        guard let attributes = try? JSONParser.parse(item.attributesJSON), case .object(let members) = attributes else { return nil }
        var parts: [String] = []
        for (key, value) in members where searchable[key] != nil {
            switch value {
            case .string(let s): parts.append(s)
            case .array(let list): parts.append(contentsOf: list.compactMap(\.stringValue))
            default: break
            }
        }
        return parts.isEmpty ? nil : WordParts.expanded(parts.joined(separator: "\n"))
    }

    /// The document made since the last call (`'word':1A,2A 'other':2049B`), and a new one begun.
    func finish() -> Made {
        if overflowed { positions[Self.overflowMark] = [(1, UInt8(ascii: "D"))] }
        let made = Made(document: literal(), length: tokens, frequencies: frequencyObject(),
                        places: clipped ? jsonObject(exact) { bytes, places in
                            bytes.append(UInt8(ascii: "["))
                            for (n, place) in places.enumerated() {
                                if n > 0 { bytes.append(UInt8(ascii: ",")) }
                                bytes.append(contentsOf: String(place).utf8)
                            }
                            bytes.append(UInt8(ascii: "]"))
                        } : nil, overflowed: overflowed)
        positions.removeAll(keepingCapacity: true)
        weighted.removeAll(keepingCapacity: true)
        exact.removeAll()
        clipped = false
        overflowed = false
        lexemeBytes = 0
        tokens = 0
        return made
    }

    /// `weighted` as a JSON object (`{"word":10,"other":3}`).
    private func frequencyObject() -> [UInt8] {
        jsonObject(weighted) { bytes, f in bytes.append(contentsOf: String(f).utf8) }
    }

    /// A JSON object of each word to its value, written by `value`.
    private func jsonObject<Value>(_ members: [String: Value], _ value: (inout [UInt8], Value) -> Void) -> [UInt8] {
        var bytes: [UInt8] = [UInt8(ascii: "{")]
        bytes.reserveCapacity(members.count * 12 + 2)
        for (word, member) in members {
            if bytes.count > 1 { bytes.append(UInt8(ascii: ",")) }
            bytes.append(0x22)
            for byte in word.utf8 {
                if byte == 0x22 || byte == 0x5C {
                    bytes.append(0x5C)
                    bytes.append(byte)
                } else if byte < 0x20 {
                    bytes.append(contentsOf: Array("\\u00".utf8))
                    bytes.append(contentsOf: [Self.hex[Int(byte >> 4)], Self.hex[Int(byte & 15)]])
                } else {
                    bytes.append(byte)
                }
            }
            bytes.append(0x22)
            bytes.append(UInt8(ascii: ":"))
            value(&bytes, member)
        }
        bytes.append(UInt8(ascii: "}"))
        return bytes
    }

    private static let hex = Array("0123456789abcdef".utf8)

    /// The `tsvector` literal of the document being made.
    private func literal() -> [UInt8] {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(positions.count * 16)
        for (word, places) in positions {
            if !bytes.isEmpty { bytes.append(0x20) }
            bytes.append(0x27)
            for byte in word.utf8 {
                if byte == 0x27 || byte == 0x5C { bytes.append(byte == 0x27 ? 0x27 : 0x5C) }
                bytes.append(byte)
            }
            bytes.append(0x27)
            bytes.append(UInt8(ascii: ":"))
            for (n, (position, weight)) in places.enumerated() {
                if n > 0 { bytes.append(UInt8(ascii: ",")) }
                bytes.append(contentsOf: String(position).utf8)
                bytes.append(weight)
            }
        }
        return bytes
    }
}
