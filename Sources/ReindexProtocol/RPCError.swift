/// A JSON-RPC error object.
public struct RPCError: Error, Sendable, Equatable, CustomStringConvertible {
    public var code: Int
    public var message: String
    public var data: JSONValue?

    public init(code: Int, message: String, data: JSONValue? = nil) {
        self.code = code
        self.message = message
        self.data = data
    }

    public static let parseError = -32700
    public static let invalidRequest = -32600
    public static let methodNotFound = -32601
    public static let invalidParams = -32602
    public static let internalError = -32603
    public static let requestCancelled = -32800

    public var json: JSONValue {
        var members: [(String, JSONValue)] = [("code", .integer(Int64(code))), ("message", .string(message))]
        if let data { members.append(("data", data)) }
        return .object(members)
    }

    public var description: String { "\(message) (code \(code))" }
}
