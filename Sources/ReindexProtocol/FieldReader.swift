/// A problem with one field of a JSON document: where it is, what was expected, what was found.
///
/// `path` is a key path such as `timeouts.idleSeconds` or `params.items[3].uniqueIdentifier`.
public struct FieldError: Error, Sendable, Equatable, CustomStringConvertible {
    public var path: String
    public var expected: String
    public var got: String?

    public init(path: String, expected: String, got: String?) {
        self.path = path
        self.expected = expected
        self.got = got
    }

    /// `path: expected …, got …` (or `path: …` when no value was found).
    public var description: String {
        let where_ = path.isEmpty ? "" : "\(path): "
        if let got { return "\(where_)expected \(expected), got \(got)" }
        return "\(where_)\(expected)"
    }
}

/// Reads typed fields out of a JSON object and reports precise `FieldError`s.
public struct FieldReader: Sendable {
    public let value: JSONValue
    public let path: String

    public init(_ value: JSONValue, path: String = "") {
        self.value = value
        self.path = path
    }

    /// The reader for an object, or an error naming what was found instead.
    public static func object(_ value: JSONValue, path: String, what: String = "an object") throws(FieldError) -> FieldReader {
        guard case .object = value else { throw FieldError(path: path, expected: what, got: describe(value)) }
        return FieldReader(value, path: path)
    }

    public func childPath(_ key: String) -> String { path.isEmpty ? key : "\(path).\(key)" }

    /// How a found value is quoted in an error: strings with quotes, others as short JSON.
    public static func describe(_ value: JSONValue) -> String {
        switch value {
        case .object: return "an object"
        case .array: return "an array"
        default: return value.preview(limit: 40)
        }
    }

    public func contains(_ key: String) -> Bool { value[key] != nil }

    private func raw(_ key: String) -> JSONValue? {
        guard let found = value[key], !found.isNull else { return nil }
        return found
    }

    public func string(_ key: String) throws(FieldError) -> String? {
        guard let found = raw(key) else { return nil }
        guard case .string(let s) = found else { throw FieldError(path: childPath(key), expected: "a string", got: Self.describe(found)) }
        return s
    }

    public func requiredString(_ key: String) throws(FieldError) -> String {
        guard let s = try string(key) else { throw FieldError(path: childPath(key), expected: "is required (a string)", got: nil) }
        return s
    }

    public func bool(_ key: String) throws(FieldError) -> Bool? {
        guard let found = raw(key) else { return nil }
        guard case .bool(let b) = found else { throw FieldError(path: childPath(key), expected: "true or false", got: Self.describe(found)) }
        return b
    }

    public func number(_ key: String) throws(FieldError) -> Double? {
        guard let found = raw(key) else { return nil }
        guard let d = found.doubleValue else { throw FieldError(path: childPath(key), expected: "a number", got: Self.describe(found)) }
        return d
    }

    public func positiveNumber(_ key: String) throws(FieldError) -> Double? {
        guard let found = raw(key) else { return nil }
        guard let d = found.doubleValue, d > 0 else { throw FieldError(path: childPath(key), expected: "a positive number", got: Self.describe(found)) }
        return d
    }

    public func nonNegativeNumber(_ key: String) throws(FieldError) -> Double? {
        guard let found = raw(key) else { return nil }
        guard let d = found.doubleValue, d >= 0 else { throw FieldError(path: childPath(key), expected: "a number of 0 or more", got: Self.describe(found)) }
        return d
    }

    public func integer(_ key: String) throws(FieldError) -> Int64? {
        guard let found = raw(key) else { return nil }
        guard let i = found.integerValue else {
            let expected = Self.isWholeButTooLarge(found) ? "a whole number from \(Int64.min) to \(Int64.max)" : "a whole number"
            throw FieldError(path: childPath(key), expected: expected, got: Self.describe(found))
        }
        return i
    }

    /// A whole number the JSON reader could only hold as a double: outside Int64's range.
    private static func isWholeButTooLarge(_ value: JSONValue) -> Bool {
        if case .double(let d) = value, d.isFinite, d.rounded() == d { return true }
        return false
    }

    public func positiveInteger(_ key: String) throws(FieldError) -> Int? {
        guard let found = raw(key) else { return nil }
        guard let i = found.integerValue, i > 0, i <= Int64(Int32.max) else {
            let tooLarge = (found.integerValue ?? 0) > Int64(Int32.max) || Self.isWholeButTooLarge(found)
            throw FieldError(path: childPath(key), expected: tooLarge ? "a positive whole number up to \(Int32.max)" : "a positive whole number",
                             got: Self.describe(found))
        }
        return Int(i)
    }

    public func stringArray(_ key: String) throws(FieldError) -> [String]? {
        guard let found = raw(key) else { return nil }
        guard case .array(let elements) = found else { throw FieldError(path: childPath(key), expected: "an array of strings", got: Self.describe(found)) }
        var result: [String] = []
        result.reserveCapacity(elements.count)
        for (n, element) in elements.enumerated() {
            guard case .string(let s) = element else {
                throw FieldError(path: "\(childPath(key))[\(n)]", expected: "a string", got: Self.describe(element))
            }
            result.append(s)
        }
        return result
    }

    public func array(_ key: String) throws(FieldError) -> [JSONValue]? {
        guard let found = raw(key) else { return nil }
        guard case .array(let elements) = found else { throw FieldError(path: childPath(key), expected: "an array", got: Self.describe(found)) }
        return elements
    }

    public func object(_ key: String) throws(FieldError) -> FieldReader? {
        guard let found = raw(key) else { return nil }
        guard case .object = found else { throw FieldError(path: childPath(key), expected: "an object", got: Self.describe(found)) }
        return FieldReader(found, path: childPath(key))
    }

    public func stringDictionary(_ key: String) throws(FieldError) -> [String: String]? {
        guard let reader = try object(key) else { return nil }
        var result: [String: String] = [:]
        for (k, v) in reader.value.objectValue ?? [] {
            guard case .string(let s) = v else { throw FieldError(path: reader.childPath(k), expected: "a string", got: Self.describe(v)) }
            result[k] = s
        }
        return result
    }
}
