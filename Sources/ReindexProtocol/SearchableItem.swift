import Foundation

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
