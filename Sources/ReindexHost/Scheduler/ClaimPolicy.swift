import CReindexSystem
import ReindexProtocol
import ReindexStore
import ReindexSystem

/// What `Server`, the one loop of `reindex serve`, leaves to the way its index is shared
/// (`QueueSharing`): which due requests are this host's, how the bundles it has are recorded,
/// which duties it does, how a worker opens the index and holds a bundle, and what a failed turn
/// means. `LocalClaims` is an index one host owns (SQLite), `FleetClaims` one a fleet shares
/// (PostgreSQL).
protocol ClaimPolicy: AnyObject {
    /// The loop's own connection.
    var store: any IndexBackend { get }
    /// False only while a lost index could not be replaced.
    var hasIndex: Bool { get }
    /// The first line of the log.
    var servingLine: String { get }
    /// Why every bundle gets reindexAll (indexLost) at start, or nil.
    var lostAtStart: String? { get }
    /// How long a bundle whose worker could not start waits before it is tried again.
    var failedStartCooldown: Double { get }
    func begin()
    func end()
    /// Why the index must be rebuilt, or nil; called at every turn.
    func checkIndex() throws -> String?
    /// Starts a fresh index in place of a lost one.
    func rebuild() throws
    /// What a failed turn means.
    func meaning(of error: any Error) -> TurnFailure
    /// Records the bundles this host has now and queues what their changes call for.
    func record(_ bundles: [DiscoveredBundle], previously: [DiscoveredBundle], running: Set<String>, now: Double) throws
    /// Whether this process does `duty` this turn.
    func takesDuty(_ duty: ServeDuty, now: Double) throws -> Bool
    /// The duties of a shared queue that have no counterpart on one host.
    func sharedDuties(now: Double) throws
    /// Due requests this host may start, the preferred first (at most one per bundle is started).
    func candidates(now: Double, busy: Set<String>, installed: [String: DiscoveredBundle], room: Int) throws -> [QueuedRequest]
    /// Puts back requests a dead worker left running, holding the bundle's lock; false when the
    /// lock is held by someone else.
    func recover(_ bundle: DiscoveredBundle) throws -> Bool
    /// A descriptor that is readable when new work may have been queued elsewhere, or nil.
    var wakeFD: Int32? { get }
    func drainWake()
    /// How a worker thread opens the index and holds the bundle.
    var workerStore: WorkerStore { get }
}

/// Opens a worker's own connection and holds the bundle's lock: the store and what releases it;
/// throws `WorkerCannotStart` when it cannot.
typealias WorkerStore = @Sendable (DiscoveredBundle, RequestRunner) throws -> (any IndexBackend, () -> Void)

/// A worker could not start its request, which stays in the queue; `busy` when another process
/// (or worker of the fleet) runs the bundle, which is the queue working as meant.
struct WorkerCannotStart: Error, CustomStringConvertible {
    var description: String
    var busy: Bool
}

/// The periodic duties of the loop.
enum ServeDuty {
    case refreshExpiring
    case purgeExpired
}

/// What a failed turn of the loop means.
enum TurnFailure {
    /// The index is gone or damaged: rebuild it.
    case indexLost(String)
    /// Someone else's transaction was in the way: try again next turn.
    case busy
    /// The connection was lost; it is opened again on the next turn.
    case reconnecting(String)
    case other
}
