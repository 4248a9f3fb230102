import ReindexSystem
import ReindexProtocol

/// What `reindex check` finds beyond SQLite's own integrity check.
public struct IndexInvariants: Sendable, Equatable {
    /// Broken promises of the index's own design (damage, or a bug): each makes it unhealthy.
    public var problems: [String] = []
    /// Invisible rows that writers which are gone left behind (a killed host's uncommitted
    /// batch, a retired generation not yet deleted); the next run of the bundle or `reindex
    /// serve` sweeps them. They do not make the index unhealthy.
    public var leftovers: [String] = []
}
