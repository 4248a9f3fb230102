import ReindexProtocol
import ReindexSystem

/// The operations of one request (or direct writer) on its way into an index: nothing is visible
/// before `commitBatch` (for a `reindexItems`) or `acknowledge`; a replacement (`reindexAll`)
/// only at `acknowledge`; `rollback` discards what was not committed.
public protocol IndexWriting: AnyObject {
    var counts: WriteCounts { get }
    var declarations: [String: AttributeDeclaration] { get }
    /// Operations are waiting to be sent (the session sends them before it waits).
    var hasOpenGroup: Bool { get }
    func put(_ item: ValidatedItem) throws
    func reject(count: Int)
    func delete(identifiers: [String]) throws
    func delete(domains: [String]) throws
    func deleteAll() throws
    func flush() throws
    /// Commits the batch with `extra` (the client state) in its transaction; returns how many
    /// operations it held.
    func commitBatch(with extra: (any IndexBackend) throws -> Void) throws -> Int
    /// Ends the request successfully with `extra` (marking it done, the run) in its transaction.
    func acknowledge(with extra: (any IndexBackend) throws -> Void) throws -> WriteCounts
    func rollback()
}
