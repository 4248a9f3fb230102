import ReindexStore
import ReindexSystem
import ReindexHost
import ReindexProtocol

/// `reindex check`: the index's integrity: SQLite's, the full-text index's and the index's own
/// invariants.
package struct CheckCommand: ReindexCommand {
    package static let name = "check"
    package static let summary = "check the index's integrity (the database, the full-text index and the index's own invariants)"
    package static let discussion = """
            Besides SQLite's integrity check, every item must have its full-text row (and the reverse), every item a
            known bundle, every live generation a reindexAll that made it, and every invisible row a running or
            resumable writer. Rows left by a writer that is gone are listed as leftovers (the next run of the bundle or
            'reindex serve' sweeps them); they do not make the index unhealthy.
            With a PostgreSQL index, which has no file of its own to check, the check is of the schema the host made
            (its tables at this version, the text-search configuration, a valid full-text index), of every item's
            document against its title (not with --quick), and of the same invariants.
            Exit status: 0 healthy; 65 damaged (run 'reindex reset' to rebuild it from the extensions), also when the
            damaged file was moved aside and replaced by a fresh one; 66 no index at that path (check never creates
            one); 74 the path is not an index of reindex (a text file, a directory, another program's database:
            nothing is changed); 75 the index stayed busy (try again later).
            """

    package static let quick = Flag<Self>("quick", help: "SQLite's quick check and the invariants, without the slow full-text integrity check (PostgreSQL: without reading every item's document)")
    package static let options: [any DeclaredOption<Self>] = [quick]

    package let quick: Bool

    package init(_ arguments: Arguments<Self>) {
        quick = arguments[Self.quick]
    }

    package func run(_ context: CommandContext) throws -> Int32 {
        if context.paths.isPostgreSQL { return try checkPostgreSQL(context) }
        let store = try context.openStore()
        var problems = try store.integrityCheck(quick: quick, fullText: !quick)
        var leftovers: [String] = []
        if problems.isEmpty {
            // The file is sound; now the index's own invariants.
            do {
                let invariants = try store.checkInvariants()
                problems = invariants.problems
                leftovers = invariants.leftovers
            } catch {
                guard error.isCorruption else { throw error }
                problems.append(error.message)
            }
        }
        let lost = store.openReport.lostReason
        if context.json {
            Console.json(.object([("index", .string(store.path)), ("healthy", .bool(problems.isEmpty && lost == nil)),
                                  ("problems", .array(problems.map(JSONValue.string))),
                                  ("leftovers", .array(leftovers.map(JSONValue.string))),
                                  ("lostReason", lost.map(JSONValue.string) ?? .null)]))
        } else {
            if problems.isEmpty && lost == nil { Console.out("\(store.path): healthy") }
            if let lost { Console.out("\(store.path): was lost (\(lost)) and has been recreated; rebuilds are queued") }
            for problem in problems { Console.out("\(store.path): \(problem)") }
            for leftover in leftovers { Console.out("\(store.path): leftover, swept by the next run or serve: \(leftover)") }
        }
        if !problems.isEmpty {
            Console.err("error: the index at \(store.path) is damaged; run 'reindex reset' to rebuild it from the extensions")
            return ReindexError.Code.invalidData.exitCode
        }
        if let lost {
            // Repaired is not healthy: what was in it is gone until the rebuilds run.
            let aside = store.openReport.movedAsideTo.map { " (kept as \($0))" } ?? ""
            Console.err("error: the index at \(store.path) was damaged (\(lost))\(aside); a fresh one replaced it and reindexAll is queued for every bundle: run 'reindex serve' or 'reindex run' to rebuild it")
            return ReindexError.Code.invalidData.exitCode
        }
        return 0
    }
}

extension CheckCommand {
    /// `reindex check` of a PostgreSQL index: the schema and the index's invariants (PostgreSQL
    /// keeps its own pages sound), reported as for a SQLite index.
    func checkPostgreSQL(_ context: CommandContext) throws -> Int32 {
        guard let store = try context.openIndex() as? PostgresStore else { return 70 }
        let invariants: IndexInvariants
        do { invariants = try store.checkInvariants(quick: quick) } catch {
            throw PostgresStore.explain(error, index: store.displayLocation, doing: "check failed")
        }
        let location = store.displayLocation
        if context.json {
            Console.json(.object([("index", .string(location)), ("healthy", .bool(invariants.problems.isEmpty)),
                                  ("problems", .array(invariants.problems.map(JSONValue.string))),
                                  ("leftovers", .array(invariants.leftovers.map(JSONValue.string))),
                                  ("lostReason", .null)]))
        } else {
            if invariants.problems.isEmpty { Console.out("\(location): healthy") }
            for problem in invariants.problems { Console.out("\(location): \(problem)") }
            for leftover in invariants.leftovers { Console.out("\(location): leftover, swept by the next run or serve: \(leftover)") }
        }
        if !invariants.problems.isEmpty {
            Console.err("error: the index at \(location) is damaged; run 'reindex reset' to rebuild it from the extensions")
            return ReindexError.Code.invalidData.exitCode
        }
        return 0
    }
}
