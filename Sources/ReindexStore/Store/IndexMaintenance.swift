import ReindexProtocol
import ReindexSystem

// `reindex check` and `reindex reset` for either backend: what each finds and does is the
// backend's (IndexStore+Maintenance below; Postgres/PostgresMaintenance.swift), what the
// command says of it is one.

/// What a check of an index found.
public struct IndexHealth: Sendable, Equatable {
    /// Damage or broken invariants: each makes the index unhealthy.
    public var problems: [String] = []
    /// Invisible rows that writers which are gone left behind, swept by the next run or serve.
    public var leftovers: [String] = []
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

extension Index {
    /// Erases the index `index` names: a SQLite file is moved aside with a timestamp and a new
    /// one opened (a damaged file, which cannot be opened, is erased all the same); a PostgreSQL
    /// schema's tables are emptied in one transaction, nothing kept aside.
    public static func erase(_ index: String, environment: [String: String]) throws(ReindexError) -> IndexErasure {
        if PostgresLocation.isConnectionString(index) {
            guard let store = try open(index, environment: environment) as? PostgresStore else {
                throw ReindexError(.internal, "\(PostgresLocation.masked(index)): not a PostgreSQL index")
            }
            do {
                return IndexErasure(store: store, keptAs: nil, erasedItems: try store.erase())
            } catch {
                throw store.explain(error, doing: "reset failed")
            }
        }
        let aside = try IndexStore.erase(path: index)
        return IndexErasure(store: try IndexStore.open(path: index), keptAs: aside, erasedItems: nil)
    }
}

extension IndexStore {
    /// SQLite's integrity check (`quick`: its quick check, without the full-text index's), then,
    /// if the file is sound, the index's own invariants; and whether the file was found lost.
    public func health(quick: Bool) throws(ReindexError) -> IndexHealth {
        var health = IndexHealth(lostReason: openReport.lostReason, keptAs: openReport.movedAsideTo)
        do throws(StoreError) {
            health.problems = try integrityCheck(quick: quick, fullText: !quick)
            guard health.problems.isEmpty else { return health }
            do throws(StoreError) {
                let invariants = try checkInvariants()
                health.problems = invariants.problems
                health.leftovers = invariants.leftovers
                if !quick { health.problems += try rankListProblems() }
            } catch {
                guard error.code == .damaged else { throw error }
                health.problems.append(error.message)
            }
        } catch {
            throw error.explained(index: path, doing: "check failed")
        }
        return health
    }
}

extension PostgresStore {
    /// The schema and the index's invariants (PostgreSQL keeps its own pages sound); `quick`
    /// leaves out reading every item's document.
    public func health(quick: Bool) throws(ReindexError) -> IndexHealth {
        do {
            let invariants = try checkInvariants(quick: quick)
            return IndexHealth(problems: invariants.problems, leftovers: invariants.leftovers)
        } catch {
            throw explain(error, doing: "check failed")
        }
    }
}
