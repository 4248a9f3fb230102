import Foundation
import ReindexProtocol
import ReindexSystem

/// The extension's side of the protocol: writes framed messages to the private protocol
/// descriptor, matches the host's replies to the SDK's own requests, and runs request handlers
/// as cancellable tasks.
final class HostConnection: @unchecked Sendable {
    private let outFD: Int32
    private let lock = Lock()
    private var nextID: Int64 = 1
    private var waiting: [RequestID: CheckedContinuation<JSONValue, Error>] = [:]
    private var tasks: [RequestID: Task<Void, Never>] = [:]
    private var closed = false
    private let writeLock = Lock()
    /// Where large writes wait for the pipe (see `sendPut`).
    private let writer = DispatchQueue(label: "reindex.sdk.writer")

    init(outFD: Int32) {
        self.outFD = outFD
    }

    // MARK: Writing

    func send(_ message: Message) throws {
        try write(message.line)
    }

    /// Writes one `index/put` for a slice of items, on the writer's own thread: a full pipe (the
    /// host is busy) blocks that thread, not one of Swift concurrency's few cooperative threads,
    /// and the caller resumes once the host has taken the message, so memory stays bounded.
    func sendPut(_ items: ArraySlice<SearchableItem>) async throws {
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, Error>) in
            writer.async {
                do {
                    try self.sendPutNow(items)
                    continuation.resume()
                } catch {
                    continuation.resume(throwing: error)
                }
            }
        }
    }

    /// Writes one `index/put` without building the whole message as a tree.
    private func sendPutNow(_ items: ArraySlice<SearchableItem>) throws {
        var line: [UInt8] = []
        line.reserveCapacity(items.count * 256 + 64)
        line.append(contentsOf: #"{"jsonrpc":"2.0","method":"index/put","params":{"items":["#.utf8)
        var first = true
        for item in items {
            if !first { line.append(UInt8(ascii: ",")) }
            first = false
            item.writeJSON(into: &line)
        }
        line.append(contentsOf: "]}}\n".utf8)
        try write(line)
    }

    private func write(_ bytes: [UInt8]) throws {
        try writeLock.withLock {
            guard writeAll(outFD, bytes) else { throw SearchableIndexError.disconnected }
        }
    }

    /// Sends a request of the SDK's own (`batch/commit`) and waits for the host's reply.
    func request(method: String, params: JSONValue) async throws -> JSONValue {
        let id: RequestID = lock.withLock {
            defer { nextID += 1 }
            return .number(nextID)
        }
        return try await withCheckedThrowingContinuation { continuation in
            let isClosed = lock.withLock { () -> Bool in
                if closed { return true }
                waiting[id] = continuation
                return false
            }
            if isClosed {
                continuation.resume(throwing: SearchableIndexError.disconnected)
                return
            }
            do {
                try send(.request(id: id, method: method, params: params))
            } catch {
                if let pending = lock.withLock({ waiting.removeValue(forKey: id) }) { pending.resume(throwing: error) }
            }
        }
    }

    // MARK: Reading

    /// Handles one message from the host (called on the reader thread).
    func handle(_ message: Message, handler: some IndexRequestHandler) {
        switch message {
        case let .request(id, method, params):
            switch method {
            case Method.initialize: initialize(id: id, params: params, handler: handler)
            case Method.reindexAll, Method.reindexItems: start(id: id, method: method, params: params, handler: handler)
            default: reply(id, .failure(RPCError(code: RPCError.methodNotFound, message: "unknown method '\(method)'")))
            }
        case let .notification(method, params):
            if method == Method.cancel, let cancel = try? CancelParams(json: params) {
                lock.withLock { tasks[cancel.id] }?.cancel()
            }
        case let .response(id, result):
            guard let continuation = lock.withLock({ waiting.removeValue(forKey: id) }) else { return }
            switch result {
            case .success(let value): continuation.resume(returning: value)
            case .failure(let error): continuation.resume(throwing: SearchableIndexError.commitRefused(error.message))
            }
        case .orphanError(let error):
            FileHandle.standardError.write(Data("reindex-extension: the host reported an error: \(error.message)\n".utf8))
        }
    }

    private func reply(_ id: RequestID, _ result: Result<JSONValue, RPCError>) {
        try? send(.response(id: id, result: result))
    }

    private func initialize(id: RequestID, params: JSONValue?, handler: some IndexRequestHandler) {
        let requested: [Int]
        do { requested = try InitializeParams(json: params).protocolVersions } catch {
            reply(id, .failure(RPCError(code: RPCError.invalidParams, message: "\(error)")))
            return
        }
        let supported = ReindexVersion.protocolVersions
        guard let version = requested.filter({ supported.contains($0) }).max() else {
            reply(id, .failure(RPCError(
                code: RPCError.invalidParams, message: "no common protocol version",
                data: .object([("supported", .array(supported.map { .integer(Int64($0)) })),
                               ("requested", .array(requested.map { .integer(Int64($0)) }))]))))
            return
        }
        let result = InitializeResult(protocolVersion: version, extensionName: handler.extensionName, extensionVersion: handler.extensionVersion)
        reply(id, .success(result.json))
    }

    private func start(id: RequestID, method: String, params: JSONValue?, handler: some IndexRequestHandler) {
        let index: SearchableIndex
        let identifiers: [String]
        do {
            if method == Method.reindexAll {
                let p = try ReindexAllParams(json: params)
                let state = p.clientState.flatMap(Base64.decode)
                index = SearchableIndex(reason: p.reason, clientState: state, requestID: id, channel: self)
                identifiers = []
            } else {
                let p = try ReindexItemsParams(json: params)
                index = SearchableIndex(reason: p.reason, clientState: nil, requestID: id, channel: self)
                identifiers = p.identifiers
            }
        } catch {
            reply(id, .failure(RPCError(code: RPCError.invalidParams, message: "\(error)")))
            return
        }
        let isAll = method == Method.reindexAll
        let task = Task { [self] in
            let answer = await index.answer(isReindexAll: isAll) { index in
                if isAll {
                    try await handler.reindexAll(index)
                } else {
                    try await handler.reindexItems(identifiers: identifiers, index: index)
                }
            }
            reply(id, answer)
            lock.withLock { _ = tasks.removeValue(forKey: id) }
        }
        lock.withLock { tasks[id] = task }
    }

    /// The host closed stdin: fail what waits and cancel what runs.
    func close() {
        let (pending, running) = lock.withLock { () -> ([CheckedContinuation<JSONValue, Error>], [Task<Void, Never>]) in
            closed = true
            defer { waiting.removeAll(); tasks.removeAll() }
            return (Array(waiting.values), Array(tasks.values))
        }
        for continuation in pending { continuation.resume(throwing: SearchableIndexError.disconnected) }
        for task in running { task.cancel() }
    }
}
