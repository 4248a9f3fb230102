import ReindexProtocol

/// The PostgreSQL index as an `IndexBackend`.
extension PostgresStore: IndexBackend {
    public var displayLocation: String { "\(location.displayName) (schema \(location.schema))" }

    public func makeWriter(bundleIdentifier: String, scope: WriteScope, requestID: Int64?,
                           declarations: [String: AttributeDeclaration]) throws -> any IndexWriting {
        try PostgresWrites(store: self, bundleIdentifier: bundleIdentifier, scope: scope, requestID: requestID, declarations: declarations)
    }

    public func prepareForSession(cancelFD: Int32?) {}

    public var fleet: (any FleetQueue)? { self }
    public var lossAtOpen: IndexLoss? { created ? IndexLoss(warning: nil) : nil }
}

/// A PostgreSQL index is shared by a fleet.
extension PostgresStore: FleetQueue {
    public func workers() throws -> [FleetWorker] { try workers(now: Clock.now()) }
}
