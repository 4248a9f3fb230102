import Foundation

// The one validator of the protocol's item: it enforces the types and limits of the attribute
// table (AttributeSchema.swift). The item an author builds is `SearchableItem`, the one the
// host stores `ValidatedItem`.

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
