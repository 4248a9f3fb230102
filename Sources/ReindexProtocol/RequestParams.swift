/// Why a request is being made. Extensions must accept reasons they do not know.
public struct ReindexReason: RawRepresentable, Sendable, Hashable, CustomStringConvertible {
    public var rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }
    public init(_ rawValue: String) { self.rawValue = rawValue }
    public var description: String { rawValue }

    public static let forced = ReindexReason("forced")
    public static let indexLost = ReindexReason("indexLost")
    public static let bundleChanged = ReindexReason("bundleChanged")
    public static let expiring = ReindexReason("expiring")
    public static let retry = ReindexReason("retry")
    /// The reasons protocol version 1 names.
    public static let known: [ReindexReason] = [.forced, .indexLost, .bundleChanged, .expiring, .retry]
}

/// `initialize` parameters (host → extension).
public struct InitializeParams: Sendable, Equatable {
    public var protocolVersions: [Int]
    public var hostName: String
    public var hostVersion: String
    public var bundleIdentifier: String
    public var debug: Bool

    public init(protocolVersions: [Int] = [1], hostName: String = "reindex", hostVersion: String, bundleIdentifier: String, debug: Bool) {
        self.protocolVersions = protocolVersions
        self.hostName = hostName
        self.hostVersion = hostVersion
        self.bundleIdentifier = bundleIdentifier
        self.debug = debug
    }

    public var json: JSONValue {
        .object([
            ("protocolVersions", .array(protocolVersions.map { .integer(Int64($0)) })),
            ("host", .object([("name", .string(hostName)), ("version", .string(hostVersion))])),
            ("bundleIdentifier", .string(bundleIdentifier)),
            ("debug", .bool(debug)),
        ])
    }

    public init(json: JSONValue?) throws(FieldError) {
        let reader = try FieldReader.object(json ?? .null, path: "params")
        guard let versions = try reader.array("protocolVersions") else {
            throw FieldError(path: "params.protocolVersions", expected: "is required (an array of numbers)", got: nil)
        }
        protocolVersions = try versions.enumerated().map { (n, v) throws(FieldError) -> Int in
            guard let i = v.integerValue else { throw FieldError(path: "params.protocolVersions[\(n)]", expected: "a whole number", got: FieldReader.describe(v)) }
            return Int(clamping: i)
        }
        let host = try reader.object("host")
        hostName = try host?.string("name") ?? "reindex"
        hostVersion = try host?.string("version") ?? ""
        bundleIdentifier = try reader.string("bundleIdentifier") ?? ""
        debug = try reader.bool("debug") ?? false
    }
}

/// The extension's reply to `initialize`.
public struct InitializeResult: Sendable, Equatable {
    public var protocolVersion: Int
    public var extensionName: String
    public var extensionVersion: String
    public var capabilities: JSONValue

    public init(protocolVersion: Int = 1, extensionName: String, extensionVersion: String, capabilities: JSONValue = .object([])) {
        self.protocolVersion = protocolVersion
        self.extensionName = extensionName
        self.extensionVersion = extensionVersion
        self.capabilities = capabilities
    }

    public var json: JSONValue {
        .object([
            ("protocolVersion", .integer(Int64(protocolVersion))),
            ("extension", .object([("name", .string(extensionName)), ("version", .string(extensionVersion))])),
            ("capabilities", capabilities),
        ])
    }

    public init(json: JSONValue) throws(FieldError) {
        let reader = try FieldReader.object(json, path: "result")
        guard let version = try reader.integer("protocolVersion") else {
            throw FieldError(path: "result.protocolVersion", expected: "is required (a number)", got: nil)
        }
        protocolVersion = Int(clamping: version)
        let ext = try reader.object("extension")
        extensionName = try ext?.string("name") ?? ""
        extensionVersion = try ext?.string("version") ?? ""
        capabilities = reader.value["capabilities"] ?? .object([])
    }
}

/// `reindexAll` parameters.
public struct ReindexAllParams: Sendable, Equatable {
    public var reason: ReindexReason
    /// The base64 client state of the last committed batch of an earlier, unfinished attempt.
    public var clientState: String?

    public init(reason: ReindexReason, clientState: String?) {
        self.reason = reason
        self.clientState = clientState
    }

    public var json: JSONValue {
        .object([("reason", .string(reason.rawValue)), ("clientState", clientState.map(JSONValue.string) ?? .null)])
    }

    public init(json: JSONValue?) throws(FieldError) {
        let reader = try FieldReader.object(json ?? .null, path: "params")
        reason = ReindexReason(try reader.string("reason") ?? "forced")
        clientState = try reader.string("clientState")
    }
}

/// `reindexItems` parameters.
public struct ReindexItemsParams: Sendable, Equatable {
    public var identifiers: [String]
    public var reason: ReindexReason

    public init(identifiers: [String], reason: ReindexReason) {
        self.identifiers = identifiers
        self.reason = reason
    }

    public var json: JSONValue {
        .object([("identifiers", .array(identifiers.map(JSONValue.string))), ("reason", .string(reason.rawValue))])
    }

    public init(json: JSONValue?) throws(FieldError) {
        let reader = try FieldReader.object(json ?? .null, path: "params")
        guard let ids = try reader.stringArray("identifiers") else {
            throw FieldError(path: "params.identifiers", expected: "is required (an array of strings)", got: nil)
        }
        identifiers = ids
        reason = ReindexReason(try reader.string("reason") ?? "forced")
    }
}

/// `index/delete` parameters.
public struct DeleteParams: Sendable, Equatable {
    public var identifiers: [String]
    public init(identifiers: [String]) { self.identifiers = identifiers }
    public var json: JSONValue { .object([("identifiers", .array(identifiers.map(JSONValue.string)))]) }
    public init(json: JSONValue?) throws(FieldError) {
        let reader = try FieldReader.object(json ?? .null, path: "params")
        guard let ids = try reader.stringArray("identifiers") else {
            throw FieldError(path: "params.identifiers", expected: "is required (an array of strings)", got: nil)
        }
        identifiers = ids
    }
}

/// `index/deleteDomains` parameters.
public struct DeleteDomainsParams: Sendable, Equatable {
    public var domainIdentifiers: [String]
    public init(domainIdentifiers: [String]) { self.domainIdentifiers = domainIdentifiers }
    public var json: JSONValue { .object([("domainIdentifiers", .array(domainIdentifiers.map(JSONValue.string)))]) }
    public init(json: JSONValue?) throws(FieldError) {
        let reader = try FieldReader.object(json ?? .null, path: "params")
        guard let ids = try reader.stringArray("domainIdentifiers") else {
            throw FieldError(path: "params.domainIdentifiers", expected: "is required (an array of strings)", got: nil)
        }
        domainIdentifiers = ids
    }
}

/// `$/progress` parameters.
public struct ProgressParams: Sendable, Equatable {
    public var requestID: RequestID
    public var completed: Int64
    public var total: Int64?
    public var message: String?

    public init(requestID: RequestID, completed: Int64, total: Int64? = nil, message: String? = nil) {
        self.requestID = requestID
        self.completed = completed
        self.total = total
        self.message = message
    }

    public var json: JSONValue {
        var members: [(String, JSONValue)] = [("requestId", requestID.json), ("completed", .integer(completed))]
        if let total { members.append(("total", .integer(total))) }
        if let message { members.append(("message", .string(message))) }
        return .object(members)
    }

    public init(json: JSONValue?) throws(FieldError) {
        let reader = try FieldReader.object(json ?? .null, path: "params")
        guard let raw = reader.value["requestId"], let id = RequestID(json: raw) else {
            throw FieldError(path: "params.requestId", expected: "a request id (number or string)", got: reader.value["requestId"].map(FieldReader.describe))
        }
        requestID = id
        completed = try reader.integer("completed") ?? 0
        total = try reader.integer("total")
        message = try reader.string("message")
        // Counts of work done cannot be negative; saying so here keeps every consumer total.
        if completed < 0 { throw FieldError(path: "params.completed", expected: "a whole number, 0 or more", got: String(completed)) }
        if let total, total < 0 { throw FieldError(path: "params.total", expected: "a whole number, 0 or more", got: String(total)) }
    }
}

/// `batch/commit` parameters (extension → host).
public struct BatchCommitParams: Sendable, Equatable {
    /// The most client state a batch may carry, decoded.
    public static let maximumClientStateBytes = 250

    public var requestID: RequestID
    public var clientState: String?

    public init(requestID: RequestID, clientState: String?) {
        self.requestID = requestID
        self.clientState = clientState
    }

    public var json: JSONValue {
        .object([("requestId", requestID.json), ("clientState", clientState.map(JSONValue.string) ?? .null)])
    }

    public init(json: JSONValue?) throws(FieldError) {
        let reader = try FieldReader.object(json ?? .null, path: "params")
        guard let raw = reader.value["requestId"], let id = RequestID(json: raw) else {
            throw FieldError(path: "params.requestId", expected: "a request id (number or string)", got: reader.value["requestId"].map(FieldReader.describe))
        }
        requestID = id
        clientState = try reader.string("clientState")
    }
}

/// The host's reply to `batch/commit`.
public struct BatchCommitResult: Sendable, Equatable {
    public var committed: Int64
    public init(committed: Int64) { self.committed = committed }
    public var json: JSONValue { .object([("committed", .integer(committed))]) }
    public init(json: JSONValue) throws(FieldError) {
        let reader = try FieldReader.object(json, path: "result")
        committed = try reader.integer("committed") ?? 0
    }
}

/// `$/cancel` parameters (host → extension).
public struct CancelParams: Sendable, Equatable {
    public var id: RequestID
    public init(id: RequestID) { self.id = id }
    public var json: JSONValue { .object([("id", id.json)]) }
    public init(json: JSONValue?) throws(FieldError) {
        let reader = try FieldReader.object(json ?? .null, path: "params")
        guard let raw = reader.value["id"], let id = RequestID(json: raw) else {
            throw FieldError(path: "params.id", expected: "a request id (number or string)", got: reader.value["id"].map(FieldReader.describe))
        }
        self.id = id
    }
}
