import ReindexStore
import ReindexSystem
import ReindexHost
import ReindexProtocol

extension Reindex {
    static func put(_ context: CommandContext) throws -> Int32 {
        let bundle = context.arguments.positional[0]
        guard Manifest.isValidBundleIdentifier(bundle) else {
            throw ReindexError(.usage, "\(bundle): not a valid bundle identifier")
        }
        let store = try context.openStore()
        let writes = try StagedWrites(store: store, bundleIdentifier: bundle, scope: .live)
        var rejected = 0
        do {
            // Staged writes are committed whenever input pauses: no write lock is held while
            // waiting for the producer.
            try StandardInputLines.forEach(beforeWaiting: { try writes.flush() }, onOverlong: { number, length in
                rejected += 1
                writes.reject()
                Console.err("error: \(bundle): stdin line \(number): longer than \(LineReader.defaultMaximumLineLength) bytes (\(length) bytes); line skipped")
            }) { line, number in
                if line.allSatisfy({ $0 == 0x20 || $0 == 0x09 || $0 == 0x0D }) { return }
                do {
                    let value = try JSONParser.parse(line)
                    try writes.put(try ItemValidator.validate(value, declarations: writes.declarations))
                } catch let error as SQLiteError {
                    throw error
                } catch {
                    rejected += 1
                    writes.reject()
                    Console.err("error: \(bundle): stdin line \(number): \(error); line skipped")
                }
            }
            let counts = try writes.acknowledge()
            if context.json {
                Console.json(.object([("bundleIdentifier", .string(bundle)), ("put", .integer(Int64(counts.put))), ("rejected", .integer(Int64(rejected))),
                                      ("ignoredUpdates", .integer(Int64(counts.ignoredUpdates)))]))
            } else {
                Console.out("\(bundle): indexed \(counts.put) item(s)" + (rejected > 0 ? ", rejected \(rejected) line(s)" : "")
                            + (counts.ignoredUpdates > 0 ? ", ignored \(counts.ignoredUpdates) update(s) of items that do not exist" : ""))
            }
        } catch {
            writes.rollback()
            throw error
        }
        return rejected > 0 ? ReindexError.Code.invalidData.exitCode : 0
    }

    static func delete(_ context: CommandContext) throws -> Int32 {
        let bundle = context.arguments.positional[0]
        let store = try context.openStore()
        let index = LocalIndex(store: store, bundleIdentifier: bundle)
        let deleted: Int
        if let ids = context.list("ids") {
            deleted = try index.delete(identifiers: ids)
        } else if let domains = context.list("domains") {
            deleted = try index.delete(domainIdentifiers: domains)
        } else if context.arguments.flag("all") {
            deleted = try index.deleteAll()
        } else {
            throw ReindexError(.usage, "delete needs --ids, --domains or --all")
        }
        if context.json {
            Console.json(.object([("bundleIdentifier", .string(bundle)), ("deleted", .integer(Int64(deleted)))]))
        } else {
            Console.out("\(bundle): deleted \(deleted) item(s)")
        }
        return 0
    }
}
