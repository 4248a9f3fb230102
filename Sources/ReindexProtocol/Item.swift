import Foundation

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
    public var json: JSONValue {
        var m: [(String, JSONValue)] = []
        func s(_ k: String, _ v: String?) { if let v { m.append((k, .string(v))) } }
        func l(_ k: String, _ v: [String]?) { if let v { m.append((k, .array(v.map(JSONValue.string)))) } }
        func n(_ k: String, _ v: Double?) { if let v { m.append((k, .double(v))) } }
        func b(_ k: String, _ v: Bool?) { if let v { m.append((k, .bool(v))) } }
        func d(_ k: String, _ v: Date?) { if let v { m.append((k, .string(RFC3339.format(v.timeIntervalSince1970)))) } }
        s("title", title); s("displayName", displayName); s("contentDescription", contentDescription)
        s("textContent", textContent); s("contentType", contentType); s("contentURL", contentURL)
        s("thumbnailURL", thumbnailURL); s("relatedUniqueIdentifier", relatedUniqueIdentifier)
        l("keywords", keywords); l("alternateNames", alternateNames); l("authors", authors)
        l("emailAddresses", emailAddresses); l("phoneNumbers", phoneNumbers)
        n("rating", rating); n("rankingHint", rankingHint); n("latitude", latitude); n("longitude", longitude)
        b("supportsPhoneCall", supportsPhoneCall); b("supportsNavigation", supportsNavigation)
        d("startDate", startDate); d("endDate", endDate)
        d("contentCreationDate", contentCreationDate); d("contentModificationDate", contentModificationDate)
        if let thumbnailData { m.append(("thumbnailData", .string(Base64.encode(thumbnailData)))) }
        for key in custom.keys.sorted() where AttributeSchema.kinds[key] == nil {
            if let value = custom[key] { m.append((key, value)) }
        }
        return .object(m)
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

    public init(uniqueIdentifier: String, domainIdentifier: String? = nil, expirationDate: Date? = nil, attributes: SearchableItemAttributes = .init()) {
        self.uniqueIdentifier = uniqueIdentifier
        self.domainIdentifier = domainIdentifier
        self.expirationDate = expirationDate
        self.attributes = attributes
    }

    /// The item as the wire's JSON object.
    public var json: JSONValue {
        var members: [(String, JSONValue)] = [("uniqueIdentifier", .string(uniqueIdentifier))]
        if let domainIdentifier { members.append(("domainIdentifier", .string(domainIdentifier))) }
        if let expirationDate { members.append(("expirationDate", .string(RFC3339.format(expirationDate.timeIntervalSince1970)))) }
        members.append(("attributes", attributes.json))
        return .object(members)
    }

    /// Reads and validates an item from the wire's JSON.
    public init(json: JSONValue, path: String = "item") throws(FieldError) {
        let validated = try ItemValidator.validate(json, path: path)
        uniqueIdentifier = validated.uniqueIdentifier
        domainIdentifier = validated.domainIdentifier
        expirationDate = validated.expiration.map { Date(timeIntervalSince1970: $0) }
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
public struct ValidatedItem: Sendable, Equatable {
    public var uniqueIdentifier: String
    public var domainIdentifier: String?
    /// Seconds since 1970, or nil for an item that does not expire.
    public var expiration: Double?
    /// The searched attributes in `AttributeSchema.searched` order; lists joined by newlines.
    public var searchText: [String?]
    /// The attributes object as compact JSON text (unknown keys included).
    public var attributesJSON: [UInt8]
}

/// Checks items against protocol version 1, one at a time, so a bad item is rejected alone.
public enum ItemValidator {
    public static let maximumIdentifierBytes = 1024

    /// Validates one item, or says exactly which field is wrong.
    public static func validate(_ json: JSONValue, path: String = "item") throws(FieldError) -> ValidatedItem {
        let reader = try FieldReader.object(json, path: path)
        guard let uid = try reader.string("uniqueIdentifier") else {
            throw FieldError(path: reader.childPath("uniqueIdentifier"), expected: "is required (a string)", got: nil)
        }
        let length = uid.utf8.count
        guard length >= 1 && length <= maximumIdentifierBytes else {
            throw FieldError(path: reader.childPath("uniqueIdentifier"), expected: "1 to \(maximumIdentifierBytes) UTF-8 bytes", got: "\(length) bytes")
        }
        let domain = try reader.string("domainIdentifier")
        var expiration: Double? = nil
        if let text = try reader.string("expirationDate") {
            guard let seconds = RFC3339.parse(text) else {
                throw FieldError(path: reader.childPath("expirationDate"), expected: "an RFC 3339 date", got: JSONValue.string(text).preview())
            }
            expiration = seconds
        }
        var searchText = [String?](repeating: nil, count: AttributeSchema.searched.count)
        var attributesJSON: [UInt8] = [UInt8(ascii: "{"), UInt8(ascii: "}")]
        if let attributes = json["attributes"], !attributes.isNull {
            let attributesPath = reader.childPath("attributes")
            guard case .object(let members) = attributes else {
                throw FieldError(path: attributesPath, expected: "an object", got: FieldReader.describe(attributes))
            }
            for (key, value) in members {
                guard let kind = AttributeSchema.kinds[key] else { continue }
                try check(value, kind: kind, path: "\(attributesPath).\(key)")
            }
            for (column, key) in AttributeSchema.searched.enumerated() {
                switch attributes[key] {
                case .string(let s)?: searchText[column] = s
                case .array(let list)?: searchText[column] = list.compactMap(\.stringValue).joined(separator: "\n")
                default: break
                }
            }
            attributesJSON = JSONWriter.bytes(attributes)
        }
        return ValidatedItem(uniqueIdentifier: uid, domainIdentifier: domain, expiration: expiration, searchText: searchText, attributesJSON: attributesJSON)
    }

    private static func check(_ value: JSONValue, kind: AttributeKind, path: String) throws(FieldError) {
        if value.isNull { return }
        switch kind {
        case .string:
            guard case .string = value else { throw FieldError(path: path, expected: "a string", got: FieldReader.describe(value)) }
        case .stringList:
            guard case .array(let list) = value else { throw FieldError(path: path, expected: "an array of strings", got: FieldReader.describe(value)) }
            for (n, element) in list.enumerated() {
                guard case .string = element else { throw FieldError(path: "\(path)[\(n)]", expected: "a string", got: FieldReader.describe(element)) }
            }
        case .number:
            guard value.doubleValue != nil else { throw FieldError(path: path, expected: "a number", got: FieldReader.describe(value)) }
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
