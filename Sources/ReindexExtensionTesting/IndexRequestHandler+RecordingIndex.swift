import ReindexExtension

extension IndexRequestHandler {
    /// Runs `reindexAll` on a recording, as the SDK runs it under the host: returns when the
    /// SDK would acknowledge it; throws what would refuse it — the error the handler threw, or
    /// `RecordingIndex.Refusal` when work it started still used the index after it returned.
    /// The handler's index has the recording's `reason` and `clientState`.
    public func reindexAll(on index: RecordingIndex) async throws {
        try await index.perform(isReindexAll: true) { try await reindexAll($0) }
    }

    /// Runs `reindexItems(identifiers:index:)` on a recording; see `reindexAll(on:)`.
    public func reindexItems(identifiers: [String], on index: RecordingIndex) async throws {
        try await index.perform(isReindexAll: false) { try await reindexItems(identifiers: identifiers, index: $0) }
    }
}
