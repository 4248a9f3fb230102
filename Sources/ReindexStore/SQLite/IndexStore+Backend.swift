import ReindexProtocol
import ReindexSystem

// MARK: The SQLite index

extension IndexStore: IndexBackend {
    public var displayLocation: String { path }
    public var fleet: (any FleetQueue)? { nil }
    public var lossAtOpen: IndexLoss? {
        openReport.lostReason.map { reason in
            let aside = openReport.movedAsideTo.map { " (the damaged file was kept as \($0))" } ?? ""
            return IndexLoss(warning: "the index at \(path) was lost: \(reason)\(aside); a fresh one was created")
        }
    }

    public func snapshot<T>(_ body: () throws -> T) throws -> T {
        try within("BEGIN", body, { $0 })
    }

    public func makeWriter(bundleIdentifier: String, scope: WriteScope, requestID: Int64?,
                           declarations: [String: AttributeDeclaration]) throws -> any IndexWriting {
        try StagedWrites(store: self, bundleIdentifier: bundleIdentifier, scope: scope, requestID: requestID, declarations: declarations)
    }

    public func prepareForSession(cancelFD: Int32?) {
        // Wait as long as it takes for another writer, unless this request is cancelled.
        connection.setBusyWait(seconds: 3600, cancelFD: cancelFD)
    }
}
