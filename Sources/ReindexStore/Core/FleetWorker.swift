import ReindexProtocol

/// One `reindex serve` process working on this index.
public struct FleetWorker: Sendable, Equatable {
    public var id: String
    public var host: String
    public var pid: Int
    public var startedAt: Double
    public var lastSeen: Double
    /// The bundles it runs requests of now.
    public var running: [String]

    public var json: JSONValue {
        .object([("id", .string(id)), ("host", .string(host)), ("pid", .integer(Int64(pid))),
                 ("startedAt", .string(RFC3339.format(startedAt))), ("lastSeen", .string(RFC3339.format(lastSeen))),
                 ("running", .array(running.map(JSONValue.string)))])
    }
}
