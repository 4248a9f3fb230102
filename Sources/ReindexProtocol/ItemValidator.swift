import Foundation

// Over 450 lines on purpose: the protocol's item is one table of attribute keys, their types
// and limits, and the one validator that enforces them; split, a key's type and its check would
// live apart.

/// The attribute keys protocol version 1 defines, with the type each must have.

public enum AttributeKind: Sendable {
    case string, stringList, number, boolean, date, base64
}

public enum AttributeSchema {
    /// Every known attribute and its type. Unknown keys are kept and returned, but not searched.
    public static let kinds: [String: AttributeKind] = [
        "title": .string, "displayName": .string, "contentDescription": .string, "textContent": .string,
        "contentType": .string, "contentURL": .string, "thumbnailURL": .string, "relatedUniqueIdentifier": .string,
        "keywords": .stringList, "alternateNames": .stringList, "authors": .stringList,
        "emailAddresses": .stringList, "phoneNumbers": .stringList,
        "rating": .number, "rankingHint": .number, "latitude": .number, "longitude": .number,
        "supportsPhoneCall": .boolean, "supportsNavigation": .boolean,
        "startDate": .date, "endDate": .date, "contentCreationDate": .date, "contentModificationDate": .date,
        "thumbnailData": .base64,
    ]

    /// Each known attribute's type and, for searched ones, its full-text column; for those the
    /// store keeps in columns of their own (`filtered`), their position there.
    public static let slots: [String: (kind: AttributeKind, searchColumn: Int?, filterColumn: Int?)] = {
        var result: [String: (kind: AttributeKind, searchColumn: Int?, filterColumn: Int?)] = [:]
        for (key, kind) in kinds { result[key] = (kind, searched.firstIndex(of: key), filtered.firstIndex(of: key)) }
        return result
    }()

    /// The attributes the store keeps in indexed columns of their own, for filters and sorting:
    /// `contentType` (text), then numbers (dates as seconds since 1970), in `FilterValues` order.
    public static let filtered: [String] = [
        "contentType", "rating", "rankingHint", "startDate", "endDate", "contentCreationDate", "contentModificationDate",
    ]

    /// The attributes that are full-text searched, in the order of the index's columns.
    public static let searched: [String] = [
        "title", "displayName", "alternateNames", "contentDescription", "textContent", "keywords", "authors",
    ]
}

/// The attributes of a searchable item: Core Spotlight's `CSSearchableItemAttributeSet`, in JSON.
///
/// Known attributes have typed properties; anything else goes in `custom` and is stored and
/// returned as given, but not searched.
public struct SearchableItemAttributes: Sendable, Equatable, Codable {
    public var title: String?
    public var displayName: String?
    public var contentDescription: String?
    public var textContent: String?
    public var contentType: String?
    public var contentURL: String?
    public var thumbnailURL: String?
    public var relatedUniqueIdentifier: String?
    public var keywords: [String]?
    public var alternateNames: [String]?
    public var authors: [String]?
    public var emailAddresses: [String]?
    public var phoneNumbers: [String]?
    public var rating: Double?
    public var rankingHint: Double?
    public var latitude: Double?
    public var longitude: Double?
    public var supportsPhoneCall: Bool?
    public var supportsNavigation: Bool?
    public var startDate: Date?
    public var endDate: Date?
    public var contentCreationDate: Date?
    public var contentModificationDate: Date?
    /// Thumbnail bytes (sent as base64).
    public var thumbnailData: [UInt8]?
    /// Attributes the protocol does not define, kept as given.
    public var custom: [String: JSONValue]

    public init(
        title: String? = nil, displayName: String? = nil, contentDescription: String? = nil, textContent: String? = nil,
        contentType: String? = nil, contentURL: String? = nil, thumbnailURL: String? = nil, relatedUniqueIdentifier: String? = nil,
        keywords: [String]? = nil, alternateNames: [String]? = nil, authors: [String]? = nil,
        emailAddresses: [String]? = nil, phoneNumbers: [String]? = nil,
        rating: Double? = nil, rankingHint: Double? = nil, latitude: Double? = nil, longitude: Double? = nil,
        supportsPhoneCall: Bool? = nil, supportsNavigation: Bool? = nil,
        startDate: Date? = nil, endDate: Date? = nil, contentCreationDate: Date? = nil, contentModificationDate: Date? = nil,
        thumbnailData: [UInt8]? = nil, custom: [String: JSONValue] = [:]
    ) {
        self.title = title; self.displayName = displayName; self.contentDescription = contentDescription
        self.textContent = textContent; self.contentType = contentType; self.contentURL = contentURL
        self.thumbnailURL = thumbnailURL; self.relatedUniqueIdentifier = relatedUniqueIdentifier
        self.keywords = keywords; self.alternateNames = alternateNames; self.authors = authors
        self.emailAddresses = emailAddresses; self.phoneNumbers = phoneNumbers
        self.rating = rating; self.rankingHint = rankingHint; self.latitude = latitude; self.longitude = longitude
        self.supportsPhoneCall = supportsPhoneCall; self.supportsNavigation = supportsNavigation
        self.startDate = startDate; self.endDate = endDate
        self.contentCreationDate = contentCreationDate; self.contentModificationDate = contentModificationDate
        self.thumbnailData = thumbnailData; self.custom = custom
    }

    /// The attributes as the wire's JSON object.
    /// One member of the attributes object, as `forEachMember` reports it.
    enum Member {
        case string(String), strings([String]), number(Double), bool(Bool), other(JSONValue)

        var json: JSONValue {
            switch self {
            case .string(let s): return .string(s)
            case .strings(let list): return .array(list.map(JSONValue.string))
            case .number(let n): return .double(n)
            case .bool(let b): return .bool(b)
            case .other(let value): return value
            }
        }
    }

    /// Every member that is set, in the wire's order (known attributes, then custom ones sorted).
    /// The one list of attributes that both `json` and `writeJSON` follow.
    func forEachMember(_ body: (String, Member) -> Void) {
        func s(_ k: String, _ v: String?) { if let v { body(k, .string(v)) } }
        func l(_ k: String, _ v: [String]?) { if let v { body(k, .strings(v)) } }
        func n(_ k: String, _ v: Double?) { if let v { body(k, .number(v)) } }
        func b(_ k: String, _ v: Bool?) { if let v { body(k, .bool(v)) } }
        func d(_ k: String, _ v: Date?) { if let v { body(k, .string(RFC3339.format(v.timeIntervalSince1970))) } }
        s("title", title); s("displayName", displayName); s("contentDescription", contentDescription)
        s("textContent", textContent); s("contentType", contentType); s("contentURL", contentURL)
        s("thumbnailURL", thumbnailURL); s("relatedUniqueIdentifier", relatedUniqueIdentifier)
        l("keywords", keywords); l("alternateNames", alternateNames); l("authors", authors)
        l("emailAddresses", emailAddresses); l("phoneNumbers", phoneNumbers)
        n("rating", rating); n("rankingHint", rankingHint); n("latitude", latitude); n("longitude", longitude)
        b("supportsPhoneCall", supportsPhoneCall); b("supportsNavigation", supportsNavigation)
        d("startDate", startDate); d("endDate", endDate)
        d("contentCreationDate", contentCreationDate); d("contentModificationDate", contentModificationDate)
        if let thumbnailData { body("thumbnailData", .string(Base64.encode(thumbnailData))) }
        if !custom.isEmpty {
            // A known key appears here only as `null`: how a partial update removes it.
            for key in custom.keys.sorted() where AttributeSchema.kinds[key] == nil || custom[key] == .null {
                if let value = custom[key] { body(key, .other(value)) }
            }
        }
    }

    /// The first attribute that holds a number JSON cannot spell (NaN, an infinity), as a path
    /// (`rating`, `scores[2]` of a custom attribute), with the number; nil when every number is
    /// finite. Written to the wire, such a number would become `null`.
    public var firstNonFiniteNumber: (attribute: String, value: Double)? {
        var found: (attribute: String, value: Double)?
        forEachMember { key, member in
            guard found == nil else { return }
            switch member {
            case .number(let n) where !n.isFinite: found = (key, n)
            case .other(let value): if let at = value.firstNonFiniteNumber(path: key) { found = (at.path, at.value) }
            default: break
            }
        }
        return found
    }

    public var json: JSONValue {
        var members: [(String, JSONValue)] = []
        forEachMember { key, member in members.append((key, member.json)) }
        return .object(members)
    }

    /// Appends the attributes' compact JSON to `output` directly (the same text as
    /// `JSONWriter.write(json, …)`, without building the tree).
    public func writeJSON(into output: inout [UInt8]) {
        output.append(UInt8(ascii: "{"))
        var first = true
        forEachMember { key, member in
            if !first { output.append(UInt8(ascii: ",")) }
            first = false
            JSONWriter.writeString(key, into: &output)
            output.append(UInt8(ascii: ":"))
            switch member {
            case .string(let s): JSONWriter.writeString(s, into: &output)
            case .strings(let list):
                output.append(UInt8(ascii: "["))
                for (n, s) in list.enumerated() {
                    if n > 0 { output.append(UInt8(ascii: ",")) }
                    JSONWriter.writeString(s, into: &output)
                }
                output.append(UInt8(ascii: "]"))
            case .number(let n): JSONWriter.appendDouble(n, into: &output)
            case .bool(let b): output.append(contentsOf: (b ? "true" : "false").utf8)
            case .other(let value): JSONWriter.write(value, into: &output)
            }
        }
        output.append(UInt8(ascii: "}"))
    }

    /// Reads attributes from the wire's JSON object, checking the type of every known key.
    public init(json: JSONValue, path: String = "attributes") throws(FieldError) {
        let r = try FieldReader.object(json, path: path)
        func date(_ key: String) throws(FieldError) -> Date? {
            guard let text = try r.string(key) else { return nil }
            guard let seconds = RFC3339.parse(text) else {
                throw FieldError(path: r.childPath(key), expected: "an RFC 3339 date", got: JSONValue.string(text).preview())
            }
            return Date(timeIntervalSince1970: seconds)
        }
        self.init(
            title: try r.string("title"), displayName: try r.string("displayName"),
            contentDescription: try r.string("contentDescription"), textContent: try r.string("textContent"),
            contentType: try r.string("contentType"), contentURL: try r.string("contentURL"),
            thumbnailURL: try r.string("thumbnailURL"), relatedUniqueIdentifier: try r.string("relatedUniqueIdentifier"),
            keywords: try r.stringArray("keywords"), alternateNames: try r.stringArray("alternateNames"),
            authors: try r.stringArray("authors"), emailAddresses: try r.stringArray("emailAddresses"),
            phoneNumbers: try r.stringArray("phoneNumbers"),
            rating: try r.number("rating"), rankingHint: try r.number("rankingHint"),
            latitude: try r.number("latitude"), longitude: try r.number("longitude"),
            supportsPhoneCall: try r.bool("supportsPhoneCall"), supportsNavigation: try r.bool("supportsNavigation"),
            startDate: try date("startDate"), endDate: try date("endDate"),
            contentCreationDate: try date("contentCreationDate"), contentModificationDate: try date("contentModificationDate")
        )
        if let text = try r.string("thumbnailData") {
            guard let bytes = Base64.decode(text) else {
                throw FieldError(path: r.childPath("thumbnailData"), expected: "base64", got: JSONValue.string(text).preview())
            }
            thumbnailData = bytes
        }
        for (key, value) in json.objectValue ?? [] where AttributeSchema.kinds[key] == nil {
            custom[key] = value
        }
    }

    public init(from decoder: Decoder) throws {
        let value = try JSONValue(from: decoder)
        do { try self.init(json: value) } catch {
            throw DecodingError.dataCorrupted(.init(codingPath: decoder.codingPath, debugDescription: error.description))
        }
    }

    public func encode(to encoder: Encoder) throws { try json.encode(to: encoder) }
}

/// One searchable item: Core Spotlight's `CSSearchableItem`.
public struct SearchableItem: Sendable, Equatable, Codable {
    /// Identifies the item within its bundle: 1 to 1024 UTF-8 bytes.
    public var uniqueIdentifier: String
    /// Groups items so they can be deleted together; `a.b` contains `a.b.c`.
    public var domainIdentifier: String?
    /// After this moment searches no longer return the item.
    public var expirationDate: Date?
    public var attributes: SearchableItemAttributes
    /// A partial update: the attributes set here are merged into the item already indexed under
    /// this identifier (an attribute set to `.null` in `attributes.custom`, a known one too, is
    /// removed); when no such item exists the host ignores the update and counts it. Core
    /// Spotlight's `isUpdate`.
    public var isUpdate: Bool

    public init(uniqueIdentifier: String, domainIdentifier: String? = nil, expirationDate: Date? = nil,
                attributes: SearchableItemAttributes = .init(), isUpdate: Bool = false) {
        self.uniqueIdentifier = uniqueIdentifier
        self.domainIdentifier = domainIdentifier
        self.expirationDate = expirationDate
        self.attributes = attributes
        self.isUpdate = isUpdate
    }

    /// Appends the item's compact JSON to `output` directly (the same text as
    /// `JSONWriter.write(json, …)`, without building the tree).
    public func writeJSON(into output: inout [UInt8]) {
        output.append(contentsOf: #"{"uniqueIdentifier":"#.utf8)
        JSONWriter.writeString(uniqueIdentifier, into: &output)
        if let domainIdentifier {
            output.append(contentsOf: #","domainIdentifier":"#.utf8)
            JSONWriter.writeString(domainIdentifier, into: &output)
        }
        if let expirationDate {
            output.append(contentsOf: #","expirationDate":"#.utf8)
            JSONWriter.writeString(RFC3339.format(expirationDate.timeIntervalSince1970), into: &output)
        }
        if isUpdate { output.append(contentsOf: #","isUpdate":true"#.utf8) }
        output.append(contentsOf: #","attributes":"#.utf8)
        attributes.writeJSON(into: &output)
        output.append(UInt8(ascii: "}"))
    }

    /// The item as the wire's JSON object.
    public var json: JSONValue {
        var members: [(String, JSONValue)] = [("uniqueIdentifier", .string(uniqueIdentifier))]
        if let domainIdentifier { members.append(("domainIdentifier", .string(domainIdentifier))) }
        if let expirationDate { members.append(("expirationDate", .string(RFC3339.format(expirationDate.timeIntervalSince1970)))) }
        if isUpdate { members.append(("isUpdate", .bool(true))) }
        members.append(("attributes", attributes.json))
        return .object(members)
    }

    /// Reads and validates an item from the wire's JSON.
    public init(json: JSONValue, path: String = "item") throws(FieldError) {
        let validated = try ItemValidator.validate(json, path: path)
        uniqueIdentifier = validated.uniqueIdentifier
        domainIdentifier = validated.domainIdentifier
        expirationDate = validated.expiration.map { Date(timeIntervalSince1970: $0) }
        isUpdate = validated.isUpdate
        let rawAttributes = json["attributes"].flatMap { $0.isNull ? nil : $0 } ?? .object([])
        attributes = try SearchableItemAttributes(json: rawAttributes, path: path + ".attributes")
    }

    public init(from decoder: Decoder) throws {
        let value = try JSONValue(from: decoder)
        do { try self.init(json: value) } catch {
            throw DecodingError.dataCorrupted(.init(codingPath: decoder.codingPath, debugDescription: error.description))
        }
    }

    public func encode(to encoder: Encoder) throws { try json.encode(to: encoder) }
}

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
        public static let searched: [Field] = [.title, .displayName, .alternateNames, .contentDescription, .textContent, .keywords, .authors]
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

/// Checks items against protocol version 1, one at a time, so a bad item is rejected alone.
public enum ItemValidator {
    /// The members of an item (protocol-v1.md, "Item"); any other is ignored.
    public static let members = ["uniqueIdentifier", "domainIdentifier", "expirationDate", "attributes", "isUpdate"]

    public static let maximumIdentifierBytes = 1024
    static let textContentColumn = AttributeSchema.searched.firstIndex(of: "textContent") ?? 4

    /// Validates one item, or says exactly which field is wrong. `declarations` are the bundle's
    /// custom attributes: their values are type-checked too, and the text of those searchable
    /// by default joins the `textContent` full-text column (unknown keys stay unchecked).
    ///
    /// `undeclared` is told the name of every attribute that is neither built in nor declared
    /// (such an attribute is kept as given, and not searched), and `unknownMember` every member
    /// of the item itself that is none of `members` (it is ignored: `{"title": …}` beside
    /// `uniqueIdentifier` rather than inside `attributes`), for warnings about misspelt names.
    public static func validate(_ json: JSONValue, path: String = "item",
                                declarations: [String: AttributeDeclaration] = [:],
                                undeclared: (String) -> Void = { _ in },
                                unknownMember: (String) -> Void = { _ in }) throws(FieldError) -> ValidatedItem {
        // One pass over the members; key paths are built only when there is an error to report.
        guard case .object(let members) = json else {
            throw FieldError(path: path, expected: "an object", got: FieldReader.describe(json))
        }
        var uidValue: JSONValue? = nil, domainValue: JSONValue? = nil, expirationValue: JSONValue? = nil, attributesValue: JSONValue? = nil
        var isUpdate = false
        for (key, value) in members {
            switch key {
            case "uniqueIdentifier": uidValue = value
            case "domainIdentifier": domainValue = value
            case "expirationDate": expirationValue = value
            case "attributes": attributesValue = value
            case "isUpdate":
                switch value {
                case .bool(let flag): isUpdate = flag
                case .null: isUpdate = false
                default: throw FieldError(path: path + ".isUpdate", expected: "true or false", got: FieldReader.describe(value))
                }
            default: unknownMember(key)
            }
        }
        guard let uidValue, !uidValue.isNull else {
            throw FieldError(path: path + ".uniqueIdentifier", expected: "is required (a string)", got: nil)
        }
        guard case .string(let uid) = uidValue else {
            throw FieldError(path: path + ".uniqueIdentifier", expected: "a string", got: FieldReader.describe(uidValue))
        }
        let length = uid.utf8.count
        guard length >= 1 && length <= maximumIdentifierBytes else {
            throw FieldError(path: path + ".uniqueIdentifier", expected: "1 to \(maximumIdentifierBytes) UTF-8 bytes", got: "\(length) bytes")
        }
        var domain: String? = nil
        if let domainValue, !domainValue.isNull {
            guard case .string(let text) = domainValue else {
                throw FieldError(path: path + ".domainIdentifier", expected: "a string", got: FieldReader.describe(domainValue))
            }
            domain = text
        }
        var expiration: Double? = nil
        if let expirationValue, !expirationValue.isNull {
            guard case .string(let text) = expirationValue else {
                throw FieldError(path: path + ".expirationDate", expected: "a string", got: FieldReader.describe(expirationValue))
            }
            guard let seconds = RFC3339.parse(text) else {
                throw FieldError(path: path + ".expirationDate", expected: "an RFC 3339 date", got: JSONValue.string(text).preview())
            }
            expiration = seconds
        }
        var builder = ValidatedItem.Builder(capacity: 512)
        var filters = FilterValues()
        builder.add(.uniqueIdentifier, uid)
        builder.add(.domainIdentifier, domain)
        if let attributes = attributesValue, !attributes.isNull {
            guard case .object(let attributeMembers) = attributes else {
                throw FieldError(path: path + ".attributes", expected: "an object", got: FieldReader.describe(attributes))
            }
            // The last occurrence of a key wins, as for every JSON object here.
            var searched = [JSONValue?](repeating: nil, count: AttributeSchema.searched.count)
            var byDefault: [(String, JSONValue)] = []
            var contentType: String? = nil
            for (key, value) in attributeMembers {
                guard let slot = AttributeSchema.slots[key] else {
                    if !declarations.isEmpty, let declaration = declarations[key] {
                        try check(value, kind: declaration.attributeKind, path: { path + ".attributes." + key })
                        if declaration.searchableByDefault { byDefault.append((key, value)) }
                    } else {
                        undeclared(key)
                        // Kept as given, so a number JSON cannot spell would be kept as null.
                        if let (at, number) = value.firstNonFiniteNumber(path: path + ".attributes." + key) {
                            throw FieldError(path: at, expected: "a finite number (JSON has no NaN or infinities)", got: JSONValue.spelling(ofNonFinite: number))
                        }
                    }
                    continue
                }
                try check(value, kind: slot.kind, path: { path + ".attributes." + key })
                if let column = slot.searchColumn { searched[column] = value }
                if let column = slot.filterColumn {
                    switch value {
                    case .string(let text) where column == 0: contentType = text
                    case .string(let text): filters[column - 1] = RFC3339.parse(text)
                    case .null: if column == 0 { contentType = nil } else { filters[column - 1] = nil }
                    default: filters[column - 1] = value.doubleValue
                    }
                }
            }
            builder.add(.contentType, contentType)
            if !byDefault.isEmpty {
                // Custom attributes searched by default share the textContent column (the last
                // occurrence of a key wins, as above).
                var seen = Set<String>()
                var texts: [String] = []
                if case .string(let text)? = searched[textContentColumn] { texts.append(text) }
                for (key, value) in byDefault.reversed() where seen.insert(key).inserted {
                    switch value {
                    case .string(let text): texts.append(text)
                    case .array(let list): texts.append(contentsOf: list.compactMap(\.stringValue))
                    default: break
                    }
                }
                searched[textContentColumn] = .string(texts.joined(separator: "\n"))
            }
            for (column, value) in searched.enumerated() {
                let field = ValidatedItem.Field.searched[column]
                switch value {
                case .string(let text)?: builder.add(field, text)
                case .array(let list)?: builder.add(field, joining: list)
                default: continue
                }
                builder.addWordParts(field)
            }
            builder.addJSON(.attributes, attributes)
        } else {
            builder.addBytes(.attributes, Array("{}".utf8))
        }
        return ValidatedItem(storage: builder.finish(), expiration: expiration, isUpdate: isUpdate, filters: filters)
    }

    static func check(_ value: JSONValue, kind: AttributeKind, path makePath: () -> String) throws(FieldError) {
        if value.isNull { return }
        var path: String { makePath() }
        switch kind {
        case .string:
            guard case .string = value else { throw FieldError(path: path, expected: "a string", got: FieldReader.describe(value)) }
        case .stringList:
            guard case .array(let list) = value else { throw FieldError(path: path, expected: "an array of strings", got: FieldReader.describe(value)) }
            for (n, element) in list.enumerated() {
                guard case .string = element else { throw FieldError(path: "\(path)[\(n)]", expected: "a string", got: FieldReader.describe(element)) }
            }
        case .number:
            guard let number = value.doubleValue else { throw FieldError(path: path, expected: "a number", got: FieldReader.describe(value)) }
            guard number.isFinite else {
                throw FieldError(path: path, expected: "a finite number (JSON has no NaN or infinities)", got: FieldReader.describe(value))
            }
        case .boolean:
            guard case .bool = value else { throw FieldError(path: path, expected: "true or false", got: FieldReader.describe(value)) }
        case .date:
            guard case .string(let text) = value, RFC3339.parse(text) != nil else {
                throw FieldError(path: path, expected: "an RFC 3339 date", got: FieldReader.describe(value))
            }
        case .base64:
            guard case .string(let text) = value, Base64.decode(text) != nil else {
                throw FieldError(path: path, expected: "base64 text", got: FieldReader.describe(value))
            }
        }
    }
}
