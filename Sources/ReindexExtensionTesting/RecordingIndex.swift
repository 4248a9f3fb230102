import Foundation
import ReindexExtension
import ReindexProtocol
import ReindexSystem

/// A stand-in for the host that records what a handler does, for unit tests of handlers without
/// the host: `try await MyIndexer().reindexAll(on: index)`.
///
/// The handler gets a real `SearchableIndex`, so every rule of the SDK holds as under the host
/// (writes after the handler returned are refused, an item with a NaN is refused by `put`). Each
/// put item is read back the way the host reads it — written as the wire's JSON, then validated
/// like the host does — so an item the host would reject lands in `rejections` with the host's
/// reason instead of `items`, and an attribute name that looks like a misspelt built-in or
/// declared one (`keyword`) lands in `warnings`. `batch/commit` is answered as the host answers
/// it. One recording may serve several requests in turn; what they do adds up.
public final class RecordingIndex: @unchecked Sendable {
    /// One `progress` report.
    public struct Progress: Sendable, Equatable {
        public var completed: Int
        public var total: Int?
        public var message: String?
        public init(completed: Int, total: Int? = nil, message: String? = nil) {
            self.completed = completed
            self.total = total
            self.message = message
        }
    }

    /// What the handler did, in order.
    public enum Operation: Sendable, Equatable {
        /// Items put (the accepted ones, as the host read them).
        case put([SearchableItem])
        case delete(identifiers: [String])
        case deleteDomains([String])
        case deleteAll
        /// A `commitBatch`, with its client state.
        case commit(clientState: [UInt8])
        case progress(Progress)
    }

    /// An item the host would reject, with the host's reason.
    public struct Rejection: Sendable, Equatable, CustomStringConvertible {
        public var uniqueIdentifier: String
        public var reason: String
        public var description: String { "item '\(uniqueIdentifier)' rejected: \(reason)" }
    }

    /// The request was refused, not acknowledged, for a reason other than an error the handler
    /// threw (that one is rethrown as it is): work it started still used the index after it
    /// returned. `message` is what the SDK answers the host.
    public struct Refusal: Error, Sendable, CustomStringConvertible {
        public var code: Int
        public var message: String
        public var description: String { message }
    }

    /// The `reason` and `clientState` the handler's `SearchableIndex` has (for `reindexItems`,
    /// `clientState` is always nil, as under the host).
    public let reason: ReindexReason
    public let clientState: [UInt8]?
    /// The manifest's custom attributes: their values are checked as the host checks them.
    public let declarations: [String: AttributeDeclaration]

    private struct State {
        var operations: [Operation] = []
        var rejections: [Rejection] = []
        var warnings: [String] = []
        var namesSeen = Set<String>()
        var items: [String: SearchableItem] = [:]
        var order: [String] = []
        var sinceCommit = 0
        var allowsEmpty = false
        var acknowledged = 0
        var nextRequest: Int64 = 1
    }
    private let lock = NSLock()
    private var state = State()

    public init(reason: ReindexReason = .forced, clientState: [UInt8]? = nil, declarations: [String: AttributeDeclaration] = [:]) {
        self.reason = reason
        self.clientState = clientState
        self.declarations = declarations
    }

    private func read<T>(_ body: (State) -> T) -> T { lock.withLock { body(state) } }

    /// Everything the handler did, in order.
    public var operations: [Operation] { read(\.operations) }
    /// Every accepted item put, in order (an identifier put twice appears twice).
    public var puts: [SearchableItem] {
        read { $0.operations.flatMap { if case .put(let items) = $0 { return items }; return [] } }
    }
    /// What the index holds after the operations, by unique identifier: puts (a partial update
    /// merged into the item it updates), minus deletes. Starts empty.
    public var items: [String: SearchableItem] { read(\.items) }
    /// `items` in the order their identifiers were first put.
    public var orderedItems: [SearchableItem] { read { state in state.order.compactMap { state.items[$0] } } }
    /// Identifiers given to `delete(identifiers:)`, in order.
    public var deletedIdentifiers: [String] {
        read { $0.operations.flatMap { if case .delete(let ids) = $0 { return ids }; return [] } }
    }
    /// Domains given to `delete(domainIdentifiers:)`, in order.
    public var deletedDomains: [String] {
        read { $0.operations.flatMap { if case .deleteDomains(let domains) = $0 { return domains }; return [] } }
    }
    /// How many times `deleteAll()` was called.
    public var deleteAllCount: Int { read { $0.operations.filter { $0 == .deleteAll }.count } }
    /// The client state of every `commitBatch`, in order.
    public var commits: [[UInt8]] {
        read { $0.operations.compactMap { if case .commit(let state) = $0 { return state }; return nil } }
    }
    /// Every `progress` report, in order.
    public var progress: [Progress] {
        read { $0.operations.compactMap { if case .progress(let p) = $0 { return p }; return nil } }
    }
    /// Items the host would reject, with its reasons.
    public var rejections: [Rejection] { read(\.rejections) }
    /// Attribute names that look like a misspelt built-in or declared one: kept as custom
    /// attributes and not searched, most likely not what was meant (once per name).
    public var warnings: [String] { read(\.warnings) }
    /// Whether an acknowledged `reindexAll` said its data is empty on purpose (`allowEmpty()`).
    public var allowsEmpty: Bool { read(\.allowsEmpty) }
    /// How many requests were acknowledged.
    public var acknowledgements: Int { read(\.acknowledged) }

    /// Runs one request through the SDK's own answering rule; throws what would refuse it.
    func perform(isReindexAll: Bool, _ handler: (SearchableIndex) async throws -> Void) async throws {
        let id: Int64 = lock.withLock {
            defer { state.nextRequest += 1 }
            return state.nextRequest
        }
        let index = SearchableIndex(reason: reason, clientState: isReindexAll ? clientState : nil, requestID: .number(id), channel: self)
        var thrown: (any Error)?
        let answer = await index.answer(isReindexAll: isReindexAll) { index in
            do { try await handler(index) } catch {
                thrown = error
                throw error
            }
        }
        switch answer {
        case .success(let result):
            lock.withLock {
                state.acknowledged += 1
                if result["allowEmpty"]?.boolValue == true { state.allowsEmpty = true }
            }
        case .failure(let error):
            if let thrown { throw thrown }
            throw Refusal(code: error.code, message: error.message)
        }
    }

    // MARK: What the host does with each operation

    private func record(_ operation: Operation, counting: Int) {
        lock.withLock {
            state.operations.append(operation)
            state.sinceCommit += counting
        }
    }

    private func accept(_ sent: ArraySlice<SearchableItem>) -> [SearchableItem] {
        var accepted: [SearchableItem] = []
        for item in sent {
            var bytes: [UInt8] = []
            item.writeJSON(into: &bytes)
            var undeclared: [String] = []
            do {
                let json = try JSONParser.parse(bytes)
                _ = try ItemValidator.validate(json, declarations: declarations) { undeclared.append($0) }
                accepted.append(try SearchableItem(json: json))
            } catch {
                lock.withLock { state.rejections.append(Rejection(uniqueIdentifier: item.uniqueIdentifier, reason: "\(error)")) }
            }
            lock.withLock {
                for name in undeclared where state.namesSeen.insert(name).inserted {
                    if let meant = Suggestion.nearest(to: name, among: AttributeSchema.kinds.keys.sorted() + declarations.keys.sorted()) {
                        state.warnings.append("attribute '\(name)' (first in item '\(item.uniqueIdentifier)') is neither built in nor declared, so it is kept as a custom attribute and not searched; did you mean '\(meant)'?")
                    }
                }
            }
        }
        lock.withLock {
            for item in accepted { apply(item, to: &state) }
        }
        return accepted
    }

    private func apply(_ item: SearchableItem, to state: inout State) {
        let id = item.uniqueIdentifier
        guard item.isUpdate else {
            if state.items.updateValue(item, forKey: id) == nil { state.order.append(id) }
            return
        }
        // A partial update: merged into the item it updates; without one the host ignores it.
        guard var existing = state.items[id] else { return }
        var members = existing.attributes.json.objectValue ?? []
        for (key, value) in item.attributes.json.objectValue ?? [] {
            members.removeAll { $0.0 == key }
            if !value.isNull { members.append((key, value)) }
        }
        if let attributes = try? SearchableItemAttributes(json: .object(members)) { existing.attributes = attributes }
        if let domain = item.domainIdentifier { existing.domainIdentifier = domain }
        if let expiration = item.expirationDate { existing.expirationDate = expiration }
        state.items[id] = existing
    }

    private func remove(where gone: (SearchableItem) -> Bool) {
        lock.withLock {
            let kept = state.items.filter { !gone($0.value) }
            state.items = kept
            state.order.removeAll { kept[$0] == nil }
        }
    }
}

extension RecordingIndex: IndexChannel {
    package func sendPut(_ items: ArraySlice<SearchableItem>) async throws {
        record(.put(accept(items)), counting: items.count)
    }

    package func send(_ message: Message) throws {
        guard case let .notification(method, params) = message else { return }
        switch method {
        case Method.delete:
            let ids = params?["identifiers"]?.arrayValue?.compactMap(\.stringValue) ?? []
            record(.delete(identifiers: ids), counting: ids.count)
            remove { ids.contains($0.uniqueIdentifier) }
        case Method.deleteDomains:
            let domains = params?["domainIdentifiers"]?.arrayValue?.compactMap(\.stringValue) ?? []
            record(.deleteDomains(domains), counting: domains.count)
            remove { item in
                guard let domain = item.domainIdentifier else { return false }
                return domains.contains { domain == $0 || domain.hasPrefix($0 + ".") }
            }
        case Method.deleteAll:
            record(.deleteAll, counting: 1)
            remove { _ in true }
        case Method.progress:
            if let p = try? ProgressParams(json: params) {
                record(.progress(Progress(completed: Int(p.completed), total: p.total.map { Int($0) }, message: p.message)), counting: 0)
            }
        default:
            break
        }
    }

    package func request(method: String, params: JSONValue) async throws -> JSONValue {
        guard method == Method.batchCommit else { throw SearchableIndexError.commitRefused("the host has no method '\(method)'") }
        let state = params["clientState"]?.stringValue.flatMap(Base64.decode) ?? []
        let committed: Int = lock.withLock {
            defer { self.state.sinceCommit = 0 }
            self.state.operations.append(.commit(clientState: state))
            return self.state.sinceCommit
        }
        return BatchCommitResult(committed: Int64(committed)).json
    }
}
