import ReindexSystem
import ReindexProtocol

/// Counts of what a request (or a direct write) did.
public struct WriteCounts: Sendable, Equatable {
    public var put = 0
    /// Items removed: by delete operations, and by a reindexAll that did not put them
    /// (`removed`, counted here too).
    public var deleted = 0
    public var rejected = 0
    /// Of `deleted`, the items a reindexAll removed at its acknowledgement because it did not put
    /// them.
    public var removed = 0
    /// Partial updates (`isUpdate`) whose item did not exist, so nothing was written.
    public var ignoredUpdates = 0
    public init(put: Int = 0, deleted: Int = 0, rejected: Int = 0, removed: Int = 0, ignoredUpdates: Int = 0) {
        self.put = put
        self.deleted = deleted
        self.rejected = rejected
        self.removed = removed
        self.ignoredUpdates = ignoredUpdates
    }
}
