import ReindexProtocol
import ReindexSystem

// `reindex check` and `reindex reset` for either backend: what each finds and does is the
// backend's (SQLite/IndexStore+Maintenance.swift, PostgreSQL/PostgresStore+Maintenance.swift),
// what the command says of it is one.

/// What a check of an index found.
public struct IndexHealth: Sendable, Equatable {
    /// Damage or broken invariants: each makes the index unhealthy.
    public var problems: [String] = []
    /// Invisible rows that writers which are gone left behind, swept by the next run or serve.
    public var leftovers: [String] = []
    /// Checks that could not run, and why (a read-only SQLite index cannot run FTS5's own
    /// check); they do not make the index unhealthy.
    public var unchecked: [String] = []
    /// Why the index was found lost when opened and replaced by a fresh one (SQLite), if it was.
    public var lostReason: String? = nil
    /// Where the lost index was kept aside, if it was.
    public var keptAs: String? = nil

    public var isHealthy: Bool { problems.isEmpty && lostReason == nil }
}

/// What erasing an index did.
public struct IndexErasure {
    /// The fresh, empty index, open.
    public var store: any IndexBackend
    /// Where the old database was kept aside (SQLite), if there was one.
    public var keptAs: String?
    /// How many items the erasure removed (PostgreSQL, which keeps nothing aside).
    public var erasedItems: Int?
}
