/// An error that refuses a request with a specific JSON-RPC code and message.
public struct IndexRequestError: Error, Sendable, CustomStringConvertible {
    public var code: Int
    public var message: String
    public init(code: Int = -32000, _ message: String) {
        self.code = code
        self.message = message
    }
    public var description: String { message }
}
