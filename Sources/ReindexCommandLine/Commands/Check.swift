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
            'reindex serve' sweeps them); they do not make the index unhealthy. An index this user may only read (its
            file, or its directory) is checked but for FTS5's own integrity check, which SQLite runs as a write; the
            output says so ("not checked:", JSON "unchecked").
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
        let store = try context.openIndex()
        let health = try store.health(quick: quick)
        let location = store.displayLocation
        if context.json {
            Console.json(.object([("index", .string(location)), ("healthy", .bool(health.isHealthy)),
                                  ("problems", .array(health.problems.map(JSONValue.string))),
                                  ("leftovers", .array(health.leftovers.map(JSONValue.string))),
                                  ("unchecked", .array(health.unchecked.map(JSONValue.string))),
                                  ("lostReason", health.lostReason.map(JSONValue.string) ?? .null)]))
        } else {
            if health.isHealthy { Console.out("\(location): healthy") }
            if let lost = health.lostReason { Console.out("\(location): was lost (\(lost)) and has been recreated; rebuilds are queued") }
            for problem in health.problems { Console.out("\(location): \(problem)") }
            for leftover in health.leftovers { Console.out("\(location): leftover, swept by the next run or serve: \(leftover)") }
            for skipped in health.unchecked { Console.out("\(location): not checked: \(skipped)") }
        }
        if !health.problems.isEmpty {
            Console.err("error: the index at \(location) is damaged; run 'reindex reset' to rebuild it from the extensions")
            return ReindexError.Code.invalidData.exitCode
        }
        if let lost = health.lostReason {
            // Repaired is not healthy: what was in it is gone until the rebuilds run.
            let aside = health.keptAs.map { " (kept as \($0))" } ?? ""
            Console.err("error: the index at \(location) was damaged (\(lost))\(aside); a fresh one replaced it and reindexAll is queued for every bundle: run 'reindex serve' or 'reindex run' to rebuild it")
            return ReindexError.Code.invalidData.exitCode
        }
        return 0
    }
}
