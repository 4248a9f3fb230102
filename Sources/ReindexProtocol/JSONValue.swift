/// A JSON value, as read from or written to the wire.
///
/// Objects keep their members in source order and may hold duplicate keys as read; lookups
/// return the last member with a key, as most JSON readers do. Integers that fit `Int64` are
/// kept exactly; other numbers are `Double`.
public enum JSONValue: Sendable, Equatable, Hashable {
    case null
    case bool(Bool)
    case integer(Int64)
    case double(Double)
    case string(String)
    case array([JSONValue])
    case object([(String, JSONValue)])

    public static func == (lhs: JSONValue, rhs: JSONValue) -> Bool {
        switch (lhs, rhs) {
        case (.null, .null): return true
        case let (.bool(a), .bool(b)): return a == b
        case let (.integer(a), .integer(b)): return a == b
        case let (.double(a), .double(b)): return a == b
        case let (.integer(a), .double(b)), let (.double(b), .integer(a)): return Double(a) == b
        case let (.string(a), .string(b)): return a == b
        case let (.array(a), .array(b)): return a == b
        case let (.object(a), .object(b)):
            guard a.count == b.count else { return false }
            for (x, y) in zip(a, b) where x.0 != y.0 || x.1 != y.1 { return false }
            return true
        default: return false
        }
    }

    public func hash(into hasher: inout Hasher) {
        switch self {
        case .null: hasher.combine(0)
        case .bool(let b): hasher.combine(b)
        case .integer(let i): hasher.combine(Double(i))
        case .double(let d): hasher.combine(d)
        case .string(let s): hasher.combine(s)
        case .array(let a): hasher.combine(a)
        case .object(let o):
            hasher.combine(o.count)
            for (k, v) in o { hasher.combine(k); hasher.combine(v) }
        }
    }

    /// The member named `key` of an object (the last one when repeated), or nil.
    public subscript(key: String) -> JSONValue? {
        guard case .object(let members) = self else { return nil }
        for (k, v) in members.reversed() where k == key { return v }
        return nil
    }

    /// A short name of the value's kind, for error messages: "a string", "a number", ….
    public var kindDescription: String {
        switch self {
        case .null: return "null"
        case .bool: return "a boolean"
        case .integer, .double: return "a number"
        case .string: return "a string"
        case .array: return "an array"
        case .object: return "an object"
        }
    }

    /// The value as compact JSON text, shortened to `limit` characters for messages. A number
    /// JSON cannot spell shows as `NaN`, `Infinity` or `-Infinity` (not as the `null` it is written as).
    public func preview(limit: Int = 40) -> String {
        if case .double(let d) = self, !d.isFinite { return JSONValue.spelling(ofNonFinite: d) }
        let text = JSONWriter.string(self)
        if text.count <= limit { return text }
        return String(text.prefix(limit)) + "…"
    }

    /// Whether a number JSON cannot spell (NaN, an infinity) is anywhere in this value.
    public var containsNonFiniteNumber: Bool {
        switch self {
        case .double(let d): return !d.isFinite
        case .array(let elements): return elements.contains { $0.containsNonFiniteNumber }
        case .object(let members): return members.contains { $0.1.containsNonFiniteNumber }
        default: return false
        }
    }

    /// `NaN`, `Infinity` or `-Infinity`: how a number JSON has no spelling for is named in messages.
    public static func spelling(ofNonFinite value: Double) -> String {
        value.isNaN ? "NaN" : value > 0 ? "Infinity" : "-Infinity"
    }

    /// Where in this value the first number JSON cannot spell is (NaN, an infinity: JSONWriter
    /// would write it as `null`), as a path below `path` (`path[2].score`), with the number; nil
    /// when every number is finite.
    public func firstNonFiniteNumber(path: String) -> (path: String, value: Double)? {
        guard containsNonFiniteNumber else { return nil }
        switch self {
        case .double(let d) where !d.isFinite: return (path, d)
        case .array(let elements):
            for (n, element) in elements.enumerated() {
                if let found = element.firstNonFiniteNumber(path: "\(path)[\(n)]") { return found }
            }
            return nil
        case .object(let members):
            for (key, member) in members {
                if let found = member.firstNonFiniteNumber(path: "\(path).\(key)") { return found }
            }
            return nil
        default: return nil
        }
    }

    public var stringValue: String? { if case .string(let s) = self { return s }; return nil }
    public var boolValue: Bool? { if case .bool(let b) = self { return b }; return nil }
    public var arrayValue: [JSONValue]? { if case .array(let a) = self { return a }; return nil }
    public var objectValue: [(String, JSONValue)]? { if case .object(let o) = self { return o }; return nil }
    public var isNull: Bool { if case .null = self { return true }; return false }

    /// The value as a number, if it is one.
    public var doubleValue: Double? {
        switch self {
        case .integer(let i): return Double(i)
        case .double(let d): return d
        default: return nil
        }
    }

    /// The value as an exact integer, if it is a number with no fractional part that fits.
    public var integerValue: Int64? {
        switch self {
        case .integer(let i): return i
        case .double(let d) where d.rounded() == d && abs(d) < 9.2e18: return Int64(d)
        default: return nil
        }
    }
}

extension JSONValue: ExpressibleByStringLiteral, ExpressibleByIntegerLiteral, ExpressibleByBooleanLiteral,
    ExpressibleByArrayLiteral, ExpressibleByDictionaryLiteral, ExpressibleByFloatLiteral
{
    public init(stringLiteral value: String) { self = .string(value) }
    public init(integerLiteral value: Int64) { self = .integer(value) }
    public init(booleanLiteral value: Bool) { self = .bool(value) }
    public init(arrayLiteral elements: JSONValue...) { self = .array(elements) }
    public init(dictionaryLiteral elements: (String, JSONValue)...) { self = .object(elements) }
    public init(floatLiteral value: Double) { self = .double(value) }
}

extension JSONValue: Codable {
    public init(from decoder: Decoder) throws {
        let container = try decoder.singleValueContainer()
        if container.decodeNil() {
            self = .null
        } else if let b = try? container.decode(Bool.self) {
            self = .bool(b)
        } else if let i = try? container.decode(Int64.self) {
            self = .integer(i)
        } else if let d = try? container.decode(Double.self) {
            self = .double(d)
        } else if let s = try? container.decode(String.self) {
            self = .string(s)
        } else if let a = try? container.decode([JSONValue].self) {
            self = .array(a)
        } else {
            let o = try container.decode([String: JSONValue].self)
            self = .object(o.sorted { $0.key < $1.key }.map { ($0.key, $0.value) })
        }
    }

    public func encode(to encoder: Encoder) throws {
        var container = encoder.singleValueContainer()
        switch self {
        case .null: try container.encodeNil()
        case .bool(let b): try container.encode(b)
        case .integer(let i): try container.encode(i)
        case .double(let d): try container.encode(d)
        case .string(let s): try container.encode(s)
        case .array(let a): try container.encode(a)
        case .object(let o):
            var dict: [String: JSONValue] = [:]
            for (k, v) in o { dict[k] = v }
            try container.encode(dict)
        }
    }
}
