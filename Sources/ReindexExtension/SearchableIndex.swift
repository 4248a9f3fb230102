import ReindexProtocol

/// Where a request's items go: Core Spotlight's `CSSearchableIndex`, bound to one request.
///
/// Writes are streamed to the host as they are made and become visible when the request is
/// acknowledged (or, for `reindexItems`, when a batch is committed). Large arrays are split into
/// messages of bounded size automatically.
public final class SearchableIndex: @unchecked Sendable {
    /// Why the host asked (`forced`, `indexLost`, `bundleChanged`, `expiring`, `retry`, or a
    /// reason this SDK does not know yet).
    public let reason: ReindexReason
    /// The state of the last committed batch of an interrupted `reindexAll`, to resume from.
    public let clientState: [UInt8]?
    let requestID: RequestID
    let connection: HostConnection

    /// Items per `index/put` message.
    static let itemsPerMessage = 500

    init(reason: ReindexReason, clientState: [UInt8]?, requestID: RequestID, connection: HostConnection) {
        self.reason = reason
        self.clientState = clientState
        self.requestID = requestID
        self.connection = connection
    }

    /// Adds or replaces items.
    public func put(_ items: [SearchableItem]) async throws {
        try Task.checkCancellation()
        var start = 0
        while start < items.count {
            let end = min(items.count, start + Self.itemsPerMessage)
            try await connection.sendPut(items[start..<end])
            start = end
        }
    }

    /// Adds or replaces one item.
    public func put(_ item: SearchableItem) async throws { try await put([item]) }

    /// Removes items by identifier.
    public func delete(identifiers: [String]) async throws {
        try Task.checkCancellation()
        try connection.send(.notification(method: Method.delete, params: DeleteParams(identifiers: identifiers).json))
    }

    /// Removes every item in these domains and their subdomains.
    public func delete(domainIdentifiers: [String]) async throws {
        try Task.checkCancellation()
        try connection.send(.notification(method: Method.deleteDomains, params: DeleteDomainsParams(domainIdentifiers: domainIdentifiers).json))
    }

    /// Removes every item of this extension.
    public func deleteAll() async throws {
        try Task.checkCancellation()
        try connection.send(.notification(method: Method.deleteAll, params: .object([])))
    }

    /// Makes everything written so far durable, together with `clientState` (at most 250 bytes),
    /// and waits for the host's confirmation. If the request is interrupted later, the next
    /// `reindexAll` receives this state in `clientState`. Returns how many operations the host
    /// committed.
    @discardableResult
    public func commitBatch(clientState: [UInt8]) async throws -> Int {
        guard clientState.count <= BatchCommitParams.maximumClientStateBytes else {
            throw SearchableIndexError.clientStateTooLarge(clientState.count)
        }
        try Task.checkCancellation()
        let params = BatchCommitParams(requestID: requestID, clientState: Base64.encode(clientState))
        let result = try await connection.request(method: Method.batchCommit, params: params.json)
        return Int((try? BatchCommitResult(json: result))?.committed ?? 0)
    }

    /// Reports progress (shown by `reindex run` as a progress bar).
    public func progress(completed: Int, total: Int? = nil, message: String? = nil) {
        let params = ProgressParams(requestID: requestID, completed: Int64(completed), total: total.map(Int64.init), message: message)
        try? connection.send(.notification(method: Method.progress, params: params.json))
    }
}
