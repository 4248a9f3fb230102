/// A JSON-RPC request id: a number or a string.
public enum RequestID: Sendable, Hashable, CustomStringConvertible {
    case number(Int64)
    case string(String)

    public var json: JSONValue {
        switch self {
        case .number(let n): return .integer(n)
        case .string(let s): return .string(s)
        }
    }

    public var description: String {
        switch self {
        case .number(let n): return String(n)
        case .string(let s): return "\"\(s)\""
        }
    }

    /// The id in a JSON value, or nil when the value cannot be an id.
    public init?(json: JSONValue) {
        switch json {
        case .string(let s): self = .string(s)
        case .integer(let n): self = .number(n)
        case .double(let d):
            guard let n = JSONValue.double(d).integerValue else { return nil }
            self = .number(n)
        default: return nil
        }
    }
}
