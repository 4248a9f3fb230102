/// The protocol's method names.
public enum Method {
    public static let initialize = "initialize"
    public static let reindexAll = "reindexAll"
    public static let reindexItems = "reindexItems"
    public static let put = "index/put"
    public static let delete = "index/delete"
    public static let deleteDomains = "index/deleteDomains"
    public static let deleteAll = "index/deleteAll"
    public static let progress = "$/progress"
    public static let cancel = "$/cancel"
    public static let batchCommit = "batch/commit"
}

/// Why a line is not a valid JSON-RPC 2.0 message.
public struct MessageDecodingError: Error, Sendable, Equatable, CustomStringConvertible {
    public var code: Int
    public var reason: String
    /// The id of the message, when one could be read (so an error reply can name it).
    public var id: RequestID?

    public init(code: Int, reason: String, id: RequestID? = nil) {
        self.code = code
        self.reason = reason
        self.id = id
    }

    public var description: String { reason }
}

/// One JSON-RPC 2.0 message.
public enum Message: Sendable, Equatable {
    case request(id: RequestID, method: String, params: JSONValue?)
    case notification(method: String, params: JSONValue?)
    case response(id: RequestID, result: Result<JSONValue, RPCError>)
    /// An error reply whose id is null (the peer could not read the request's id).
    case orphanError(RPCError)

    /// Reads a message from one protocol line. `allowsNonFiniteNumbers`: read `NaN`, `Infinity`,
    /// `-Infinity` and numbers too large for a double as non-finite numbers instead of refusing
    /// the line (see `JSONParser.parse`), so whoever validates the message can name them.
    public static func decode(line: UnsafeRawBufferPointer, allowsNonFiniteNumbers: Bool = false) throws(MessageDecodingError) -> Message {
        let value: JSONValue
        do {
            value = try JSONParser.parse(line, allowsNonFiniteNumbers: allowsNonFiniteNumbers)
        } catch {
            throw MessageDecodingError(code: RPCError.parseError, reason: "not valid JSON: \(error)")
        }
        return try decode(value)
    }

    /// Reads a message from a parsed JSON value.
    public static func decode(_ value: JSONValue) throws(MessageDecodingError) -> Message {
        guard case .object = value else {
            throw MessageDecodingError(code: RPCError.invalidRequest, reason: "a message must be a JSON object, got \(FieldReader.describe(value))")
        }
        guard value["jsonrpc"] == .string("2.0") else {
            throw MessageDecodingError(code: RPCError.invalidRequest, reason: "\"jsonrpc\" must be \"2.0\"")
        }
        let rawID = value["id"]
        var id: RequestID? = nil
        if let rawID, !rawID.isNull {
            guard let parsed = RequestID(json: rawID) else {
                throw MessageDecodingError(code: RPCError.invalidRequest, reason: "\"id\" must be a number or a string, got \(FieldReader.describe(rawID))")
            }
            id = parsed
        }
        if let method = value["method"] {
            guard case .string(let name) = method else {
                throw MessageDecodingError(code: RPCError.invalidRequest, reason: "\"method\" must be a string", id: id)
            }
            let params = value["params"]
            if let params, !(params.objectValue != nil || params.arrayValue != nil || params.isNull) {
                throw MessageDecodingError(code: RPCError.invalidRequest, reason: "\"params\" must be an object or an array", id: id)
            }
            if let id { return .request(id: id, method: name, params: params) }
            if rawID != nil && rawID?.isNull == true {
                throw MessageDecodingError(code: RPCError.invalidRequest, reason: "a request's \"id\" must not be null")
            }
            return .notification(method: name, params: params)
        }
        let result = value["result"]
        let error = value["error"]
        if result != nil && error != nil {
            throw MessageDecodingError(code: RPCError.invalidRequest, reason: "a reply has both \"result\" and \"error\"", id: id)
        }
        if let error {
            let reader: FieldReader
            let code: Int64
            let message: String
            do throws(FieldError) {
                reader = try FieldReader.object(error, path: "error")
                guard let c = try reader.integer("code") else { throw FieldError(path: "error.code", expected: "is required (a number)", got: nil) }
                code = c
                message = try reader.string("message") ?? ""
            } catch {
                throw MessageDecodingError(code: RPCError.invalidRequest, reason: "invalid error reply: \(error)", id: id)
            }
            let rpc = RPCError(code: Int(clamping: code), message: message, data: reader.value["data"])
            guard let id else { return .orphanError(rpc) }
            return .response(id: id, result: .failure(rpc))
        }
        if let result {
            guard let id else {
                throw MessageDecodingError(code: RPCError.invalidRequest, reason: "a reply has no \"id\"")
            }
            return .response(id: id, result: .success(result))
        }
        throw MessageDecodingError(code: RPCError.invalidRequest, reason: "neither a request, a notification nor a reply (no \"method\", \"result\" or \"error\")", id: id)
    }

    /// The message as a JSON value.
    public var json: JSONValue {
        switch self {
        case let .request(id, method, params):
            var members: [(String, JSONValue)] = [("jsonrpc", "2.0"), ("id", id.json), ("method", .string(method))]
            if let params { members.append(("params", params)) }
            return .object(members)
        case let .notification(method, params):
            var members: [(String, JSONValue)] = [("jsonrpc", "2.0"), ("method", .string(method))]
            if let params { members.append(("params", params)) }
            return .object(members)
        case let .response(id, .success(result)):
            return .object([("jsonrpc", "2.0"), ("id", id.json), ("result", result)])
        case let .response(id, .failure(error)):
            return .object([("jsonrpc", "2.0"), ("id", id.json), ("error", error.json)])
        case let .orphanError(error):
            return .object([("jsonrpc", "2.0"), ("id", .null), ("error", error.json)])
        }
    }

    /// The message framed as one line, ending in `\n`.
    public var line: [UInt8] { LineWriter.line(json) }

    /// The method, for requests and notifications.
    public var method: String? {
        switch self {
        case .request(_, let m, _), .notification(let m, _): return m
        default: return nil
        }
    }
}
