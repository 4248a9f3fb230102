import Foundation
import ReindexProtocol

/// How a handler's end becomes the request's answer — one rule for the host connection and for
/// a test that runs a handler without the host (`ReindexExtensionTesting`).
extension SearchableIndex {
    /// Runs `handler` on this index and returns the answer the SDK gives: the acknowledgement's
    /// result when it returned (`{"allowEmpty": true}` after `allowEmpty()` in a `reindexAll`),
    /// else the refusal — its error, `-32800` on cancellation, or a refusal when work it started
    /// was still using the index after it returned. Afterwards the index refuses every write.
    package func answer(isReindexAll: Bool, handler: (SearchableIndex) async throws -> Void) async -> Result<JSONValue, RPCError> {
        do {
            try await handler(self)
            // Work the handler started and did not await (an unstructured Task) would be
            // acknowledged half-done: give it a moment to show itself, and refuse if it does.
            handlerReturned()
            for _ in 0..<3 { await Task.yield() }
            try? await Task.sleep(nanoseconds: 2_000_000)
            let leftRunning = leftRunning
            end()
            if !leftRunning.isEmpty {
                let name = isReindexAll ? "reindexAll" : "reindexItems"
                let message = "\(name) returned while work it started was still using the index (\(leftRunning.prefix(3).joined(separator: ", ")) after it returned): await it before returning (an unstructured Task, a detached one); the request is refused so that nothing half-done is published"
                FileHandle.standardError.write(Data("reindex-extension: \(message)\n".utf8))
                return .failure(RPCError(code: -32000, message: message))
            }
            if Task.isCancelled { return .failure(RPCError(code: RPCError.requestCancelled, message: "Request cancelled")) }
            return .success(isReindexAll ? acknowledgementResult : .object([]))
        } catch is CancellationError {
            end()
            return .failure(RPCError(code: RPCError.requestCancelled, message: "Request cancelled"))
        } catch let error as IndexRequestError {
            end()
            return .failure(RPCError(code: error.code, message: error.message))
        } catch {
            end()
            return .failure(RPCError(code: -32000, message: String(describing: error)))
        }
    }
}
