import Foundation
import ReindexProtocol
import ReindexSystem

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
    let channel: any IndexChannel
    /// Whether the request was answered, and whether its data is empty on purpose.
    private let state = Locked((ended: false, allowsEmpty: false, returned: false, lateCalls: [String](), commitsInFlight: 0))

    /// Items per `index/put` message.
    static let itemsPerMessage = 500

    /// An index whose writes go to `channel`: the host's connection, or a test's recording
    /// (`ReindexExtensionTesting`).
    package init(reason: ReindexReason, clientState: [UInt8]?, requestID: RequestID, channel: any IndexChannel) {
        self.reason = reason
        self.clientState = clientState
        self.requestID = requestID
        self.channel = channel
    }

    /// Says that this `reindexAll`'s data really is empty: without it the host refuses to publish
    /// a `reindexAll` that put no item while the bundle has items (the mark of a handler that
    /// returned before its work was done), and keeps the old ones. The acknowledgement carries
    /// `{"allowEmpty": true}`.
    public func allowEmpty() {
        state.withLock { $0.allowsEmpty = true }
    }

    /// The acknowledgement's result.
    var acknowledgementResult: JSONValue {
        state.withLock { $0.allowsEmpty } ? .object([("allowEmpty", .bool(true))]) : .object([])
    }

    /// The request was answered: what is written to this index from now on is refused.
    func end() {
        state.withLock { $0.ended = true }
    }

    /// The handler returned; not answered yet. Calls from now on are work it left running.
    func handlerReturned() {
        state.withLock { $0.returned = true }
    }

    /// What the handler left running, seen between its return and the answer: calls made after
    /// it returned, and batch commits still waiting for the host's reply.
    var leftRunning: [String] {
        state.withLock { $0.lateCalls + ($0.commitsInFlight > 0 ? ["commitBatch still waiting for its reply"] : []) }
    }

    /// Refuses a write after the request was answered: the handler returned (or threw) while work
    /// it started goes on — a `Task` not awaited, a thread not joined. Nothing is sent: the host
    /// would take it as a protocol violation.
    private func checkOpen(_ what: String) throws {
        let ended = state.withLock { state in
            if state.returned && !state.ended { state.lateCalls.append(what) }
            return state.ended
        }
        guard ended else { return }
        let message = "reindex-extension: \(what) after request \(requestID) was acknowledged: the handler returned before this work was done; await it (or join its thread) before returning\n"
        FileHandle.standardError.write(Data(message.utf8))
        throw SearchableIndexError.requestEnded(requestID: "\(requestID)")
    }

    /// Adds or replaces items. Throws `SearchableIndexError.invalidItem` before sending
    /// anything when an item holds a number JSON cannot spell (`rating: .nan`, an infinity).
    public func put(_ items: [SearchableItem]) async throws {
        try checkOpen("put")
        try Task.checkCancellation()
        for item in items {
            if let (attribute, value) = item.attributes.firstNonFiniteNumber {
                throw SearchableIndexError.invalidItem(
                    uniqueIdentifier: item.uniqueIdentifier, attribute: attribute,
                    reason: "\(value) is not a finite number, and JSON has no NaN or infinities")
            }
        }
        var start = 0
        while start < items.count {
            let end = min(items.count, start + Self.itemsPerMessage)
            try await channel.sendPut(items[start..<end])
            start = end
        }
    }

    /// Adds or replaces one item.
    public func put(_ item: SearchableItem) async throws { try await put([item]) }

    /// Removes items by identifier.
    public func delete(identifiers: [String]) async throws {
        try checkOpen("delete")
        try Task.checkCancellation()
        try channel.send(.notification(method: Method.delete, params: DeleteParams(identifiers: identifiers).json))
    }

    /// Removes every item in these domains and their subdomains.
    public func delete(domainIdentifiers: [String]) async throws {
        try checkOpen("delete")
        try Task.checkCancellation()
        try channel.send(.notification(method: Method.deleteDomains, params: DeleteDomainsParams(domainIdentifiers: domainIdentifiers).json))
    }

    /// Removes every item of this extension.
    public func deleteAll() async throws {
        try checkOpen("deleteAll")
        try Task.checkCancellation()
        try channel.send(.notification(method: Method.deleteAll, params: .object([])))
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
        try checkOpen("commitBatch")
        try Task.checkCancellation()
        let params = BatchCommitParams(requestID: requestID, clientState: Base64.encode(clientState))
        state.withLock { $0.commitsInFlight += 1 }
        defer { state.withLock { $0.commitsInFlight -= 1 } }
        let result = try await channel.request(method: Method.batchCommit, params: params.json)
        return Int((try? BatchCommitResult(json: result))?.committed ?? 0)
    }

    /// Reports progress (shown by `reindex run` as a progress bar).
    public func progress(completed: Int, total: Int? = nil, message: String? = nil) {
        guard (try? checkOpen("progress")) != nil else { return }
        let params = ProgressParams(requestID: requestID, completed: Int64(completed), total: total.map(Int64.init), message: message)
        try? channel.send(.notification(method: Method.progress, params: params.json))
    }
}
