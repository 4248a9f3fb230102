/// What both backends' writers keep count of for one request: its counts, the operations
/// waiting for the next commit, the batch number a replacement's rows carry, and the counts as
/// of the last commit, which a rollback returns to.
struct WriteLedger {
    var counts = WriteCounts()
    /// The batch a replacement's next rows belong to (1 after no commit); a resumed replacement
    /// starts after its last committed batch.
    var batch: Int64 = 1
    private(set) var pendingOperations = 0
    private var countsAtCommit = WriteCounts()

    mutating func noteOperations(_ count: Int = 1) { pendingOperations += count }

    /// A batch was committed (`batch/commit`): returns how many operations it held.
    mutating func batchCommitted(_ scope: WriteScope) -> Int {
        if case .replacement = scope { batch += 1 }
        let committed = pendingOperations
        committedAll()
        return committed
    }

    /// Everything so far is committed (a batch, or the acknowledgement).
    mutating func committedAll() {
        pendingOperations = 0
        countsAtCommit = counts
    }

    /// What was not committed is discarded: the counts are those of the last commit (rejections,
    /// which wrote nothing, stay counted).
    mutating func rolledBack() {
        counts.put = countsAtCommit.put
        counts.deleted = countsAtCommit.deleted
        counts.ignoredUpdates = countsAtCommit.ignoredUpdates
        pendingOperations = 0
    }
}
