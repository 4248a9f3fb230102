/// A custom attribute a bundle declares in its manifest (`"attributes": {NAME: {…}}`, an
/// addition to protocol version 1): its type, and whether and how it is searched.
public struct AttributeDeclaration: Sendable, Equatable, Codable {
    public enum Kind: String, Sendable, Equatable, Codable, CaseIterable {
        case string, number, date, bool, strings
    }

    public var kind: Kind
    /// `NAME == "words"w` searches it through the full-text index.
    public var searchable: Bool
    /// Plain words search it too (scored like `textContent`). Implies `searchable`.
    public var searchableByDefault: Bool
    /// The value is an array (`strings` always is; `string` with `multiValued` is the same as `strings`).
    public var multiValued: Bool

    public init(kind: Kind, searchable: Bool = false, searchableByDefault: Bool = false, multiValued: Bool = false) {
        self.kind = kind
        self.searchable = searchable || searchableByDefault
        self.searchableByDefault = searchableByDefault
        self.multiValued = multiValued || kind == .strings
    }

    /// The type items must give the attribute, in the built-in attributes' terms.
    public var attributeKind: AttributeKind {
        switch kind {
        case .string: return multiValued ? .stringList : .string
        case .strings: return .stringList
        case .number: return .number
        case .date: return .date
        case .bool: return .boolean
        }
    }

    /// At most this many attributes of a bundle may be searchable (each item keeps one
    /// full-text row per searchable attribute it has).
    public static let maximumSearchable = 64

    /// Names that cannot be declared: the built-in attributes and the names queries give the
    /// item's identity.
    public static let reservedNames: Set<String> = Set(AttributeSchema.kinds.keys).union([
        "uniqueIdentifier", "domainIdentifier", "bundleIdentifier", "expirationDate", "isUpdate", "attributes",
    ])

    /// Whether `name` can be declared: a letter or `_`, then letters, digits and `_` (so a query
    /// can name it), at most 64 characters.
    public static func isValidName(_ name: String) -> Bool {
        guard let first = name.unicodeScalars.first, name.unicodeScalars.count <= 64 else { return false }
        func letter(_ c: Unicode.Scalar) -> Bool { ("a"..."z").contains(c) || ("A"..."Z").contains(c) || c == "_" }
        return letter(first) && name.unicodeScalars.allSatisfy { letter($0) || ("0"..."9").contains($0) }
    }

    /// Reads the manifest's `attributes` object; errors name the key path.
    public static func parseAll(_ value: JSONValue?, path: String = "attributes") throws(FieldError) -> [String: AttributeDeclaration] {
        guard let value, !value.isNull else { return [:] }
        guard case .object(let members) = value else {
            throw FieldError(path: path, expected: "an object of attribute declarations", got: FieldReader.describe(value))
        }
        var result: [String: AttributeDeclaration] = [:]
        for (name, declaration) in members {
            let at = "\(path).\(name)"
            guard isValidName(name) else {
                throw FieldError(path: at, expected: "an attribute name of letters, digits and '_' (not starting with a digit, at most 64 characters)", got: JSONValue.string(name).preview())
            }
            guard !reservedNames.contains(name) else {
                throw FieldError(path: at, expected: "a name that is not a built-in attribute", got: "'\(name)', which is built in")
            }
            result[name] = try parse(declaration, path: at)
        }
        let searchable = result.values.filter(\.searchable).count
        guard searchable <= maximumSearchable else {
            throw FieldError(path: path, expected: "at most \(maximumSearchable) searchable attributes", got: "\(searchable)")
        }
        return result
    }

    static func parse(_ value: JSONValue, path: String) throws(FieldError) -> AttributeDeclaration {
        let r = try FieldReader.object(value, path: path, what: "an object such as {\"type\": \"string\", \"searchable\": true}")
        guard let typeName = try r.string("type") else {
            throw FieldError(path: r.childPath("type"), expected: "is required (string, number, date, bool or strings)", got: nil)
        }
        guard let kind = Kind(rawValue: typeName) else {
            throw FieldError(path: r.childPath("type"), expected: "string, number, date, bool or strings", got: JSONValue.string(typeName).preview())
        }
        let searchable = try r.bool("searchable") ?? false
        let byDefault = try r.bool("searchableByDefault") ?? false
        let multiValued = try r.bool("multiValued") ?? false
        if (searchable || byDefault) && !(kind == .string || kind == .strings) {
            throw FieldError(path: r.childPath(byDefault ? "searchableByDefault" : "searchable"), expected: "false for a \(kind.rawValue) attribute (only string and strings attributes are searched)", got: "true")
        }
        if multiValued && !(kind == .string || kind == .strings) {
            throw FieldError(path: r.childPath("multiValued"), expected: "false for a \(kind.rawValue) attribute (multiValued is for string attributes; use type strings)", got: "true")
        }
        return AttributeDeclaration(kind: kind, searchable: searchable, searchableByDefault: byDefault, multiValued: multiValued)
    }

    /// The declaration as the manifest writes it.
    public var json: JSONValue {
        .object([("type", .string(kind.rawValue)), ("searchable", .bool(searchable)),
                 ("searchableByDefault", .bool(searchableByDefault)), ("multiValued", .bool(multiValued))])
    }

    /// Declarations as one JSON object, names sorted (how the index stores them).
    public static func json(_ all: [String: AttributeDeclaration]) -> JSONValue {
        .object(all.sorted { $0.key < $1.key }.map { ($0.key, $0.value.json) })
    }

    /// Checks one item's value of the attribute; `null` is always allowed (no value).
    public func check(_ value: JSONValue, path: @autoclosure () -> String) throws(FieldError) {
        try ItemValidator.check(value, kind: attributeKind, path: path)
    }
}
