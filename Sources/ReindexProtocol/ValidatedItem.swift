import Foundation

/// An item that passed validation, in the form the host stores: identity, expiry, the searched
/// text, and the attributes as compact JSON.
///
/// Its text lives in one buffer (a header of field bounds, then UTF-8), so making, passing and
/// freeing an item costs one allocation however many fields it has — this is the host's per-item
/// hot path.
public struct ValidatedItem: Sendable, Equatable {
    /// The text fields, in buffer order.
    public enum Field: Int, Sendable, CaseIterable {
        case uniqueIdentifier = 0, domainIdentifier
        case title, displayName, alternateNames, contentDescription, textContent, keywords, authors
        case attributes
        /// `contentType`, kept apart for its indexed column.
        case contentType
        /// The full-text fields in `AttributeSchema.searched` order.
        public static let searched: [Field] = AttributeSchema.searched.map { key in
            guard let field = allCases.first(where: { $0.attributeKey == key }) else {
                preconditionFailure("the attribute table searches '\(key)', which has no text field")
            }
            return field
        }

        /// The attribute a text field holds (nil for the identifiers and the attributes' JSON).
        /// A switch, not reflection: `searched` is made at every start.
        public var attributeKey: String? {
            switch self {
            case .title: "title"
            case .displayName: "displayName"
            case .alternateNames: "alternateNames"
            case .contentDescription: "contentDescription"
            case .textContent: "textContent"
            case .keywords: "keywords"
            case .authors: "authors"
            case .contentType: "contentType"
            case .uniqueIdentifier, .domainIdentifier, .attributes: nil
            }
        }
    }

    static let fieldCount = Field.allCases.count
    static let headerBytes = fieldCount * 2 * MemoryLayout<Int32>.size

    /// Header (start and end of each field as Int32; start -1 when absent), then the text.
    let storage: [UInt8]
    /// Seconds since 1970, or nil for an item that does not expire.
    public let expiration: Double?
    /// The numeric attributes the store keeps in indexed columns (`AttributeSchema.filtered`).
    public let filters: FilterValues
    /// A partial update (`"isUpdate": true`): its attributes are to be merged into the existing
    /// item of its identifier (`null` removes one), see `merged(into:…)`. Its `attributesJSON`
    /// keeps the `null`s.
    public let isUpdate: Bool

    /// Builds an item from its parts.
    public init(uniqueIdentifier: String, domainIdentifier: String?, expiration: Double?, searchText: [String?], attributesJSON: [UInt8],
                isUpdate: Bool = false, contentType: String? = nil, filters: FilterValues = FilterValues()) {
        var builder = Builder()
        builder.add(.uniqueIdentifier, uniqueIdentifier)
        builder.add(.domainIdentifier, domainIdentifier)
        for (field, text) in zip(Field.searched, searchText) { builder.add(field, text) }
        builder.addBytes(.attributes, attributesJSON)
        builder.add(.contentType, contentType)
        self.init(storage: builder.finish(), expiration: expiration, isUpdate: isUpdate, filters: filters)
    }

    init(storage: [UInt8], expiration: Double?, isUpdate: Bool = false, filters: FilterValues = FilterValues()) {
        self.storage = storage
        self.expiration = expiration
        self.isUpdate = isUpdate
        self.filters = filters
    }

    /// Calls `body` with the field's UTF-8 bytes, or nil when the field is absent.
    @inline(__always)
    public func withField<R>(_ field: Field, _ body: (UnsafeRawBufferPointer?) throws -> R) rethrows -> R {
        try storage.withUnsafeBytes { raw in
            let start = Int(raw.load(fromByteOffset: field.rawValue * 8, as: Int32.self))
            if start < 0 { return try body(nil) }
            let end = Int(raw.load(fromByteOffset: field.rawValue * 8 + 4, as: Int32.self))
            return try body(UnsafeRawBufferPointer(rebasing: raw[start..<end]))
        }
    }

    public func text(_ field: Field) -> String? {
        withField(field) { $0.map { String(decoding: $0, as: UTF8.self) } }
    }

    public var uniqueIdentifier: String { text(.uniqueIdentifier) ?? "" }
    public var domainIdentifier: String? { text(.domainIdentifier) }
    /// The searched attributes in `AttributeSchema.searched` order; lists joined by newlines.
    public var searchText: [String?] { Field.searched.map(text) }
    /// The attributes object as compact JSON text (unknown keys included).
    public var attributesJSON: [UInt8] { withField(.attributes) { $0.map { Array($0) } ?? Array("{}".utf8) } }

    /// Accumulates fields into one buffer.
    struct Builder {
        var header = [Int32](repeating: -1, count: ValidatedItem.fieldCount * 2)
        var body: [UInt8] = []

        init(capacity: Int = 256) { body.reserveCapacity(capacity) }

        mutating func add(_ field: Field, _ text: String?) {
            guard var text else { return }
            let start = body.count
            text.withUTF8 { body.append(contentsOf: $0) }
            mark(field, start)
        }

        mutating func addBytes(_ field: Field, _ bytes: [UInt8]) {
            let start = body.count
            body.append(contentsOf: bytes)
            mark(field, start)
        }

        /// Adds a list joined by newlines.
        mutating func add(_ field: Field, joining list: [JSONValue]) {
            let start = body.count
            var first = true
            for case .string(var text) in list {
                if !first { body.append(0x0A) }
                first = false
                text.withUTF8 { body.append(contentsOf: $0) }
            }
            mark(field, start)
        }

        /// Writes a JSON value straight into the buffer as the field.
        mutating func addJSON(_ field: Field, _ value: JSONValue) {
            let start = body.count
            JSONWriter.write(value, into: &body)
            mark(field, start)
        }

        /// Follows the field just added with its `WordParts` line, when it has one.
        mutating func addWordParts(_ field: Field) {
            let start = Int(header[field.rawValue * 2]) - ValidatedItem.headerBytes
            guard start >= 0, let split = body.withUnsafeBytes({ WordParts.splitLine(UnsafeRawBufferPointer(rebasing: $0[start...])) }) else { return }
            body.append(0x0A)
            body.append(contentsOf: split)
            mark(field, start)
        }

        mutating func mark(_ field: Field, _ start: Int) {
            header[field.rawValue * 2] = Int32(start + ValidatedItem.headerBytes)
            header[field.rawValue * 2 + 1] = Int32(body.count + ValidatedItem.headerBytes)
        }

        func finish() -> [UInt8] {
            var storage = [UInt8]()
            storage.reserveCapacity(ValidatedItem.headerBytes + body.count)
            header.withUnsafeBytes { storage.append(contentsOf: $0) }
            storage.append(contentsOf: body)
            return storage
        }
    }
}
