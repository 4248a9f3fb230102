import ReindexProtocol
import ReindexSystem

/// The role of an index any number of hosts share (PostgreSQL): what a command or a serve worker
/// asks of the fleet beyond `IndexBackend`.
public protocol FleetQueue: IndexBackend {
    var location: PostgresLocation { get }
    /// The id the leases this connection takes are recorded under.
    var workerID: String { get }
    var leaseSeconds: Double { get }
    /// Takes the bundle's lock across the fleet (held by this connection), or explains who holds it.
    func lockBundle(key: String, identifier: String) throws(ReindexError)
    func unlockBundle(_ key: String)
    /// The workers seen lately, with what each runs.
    func workers() throws -> [FleetWorker]
    /// The hosts that have a bundle installed.
    func hosts(bundle key: String) throws -> [String]
}
