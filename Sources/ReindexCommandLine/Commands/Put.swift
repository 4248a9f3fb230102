import ReindexStore
import ReindexSystem
import ReindexHost
import ReindexProtocol

/// `reindex put BUNDLE_ID`: indexes the items read from stdin, one JSON item per line.
package struct PutCommand: ReindexCommand {
    package static let name = "put"
    package static let summary = "index items read from stdin (one JSON item per line) for a bundle"
    package static let discussion = """
            A bad line — not JSON, an invalid item, or longer than 16 MiB — is reported with its line number and
            skipped; the rest is applied together at the end of input (nothing is visible before). No more than one
            line is held in memory. An attribute name that looks misspelt (`titel`), or a member an item does not
            have (`"title"` beside `uniqueIdentifier` instead of inside `"attributes"`), is a warning the first time.
            Exit status: 0 all lines applied, 65 some lines were rejected (the others were applied).
            """

    package static let bundle = Argument<Self, String>("BUNDLE_ID", help: "the bundle the items belong to")
    package static let arguments: [any DeclaredArgument<Self>] = [bundle]

    package let bundle: String

    package init(_ arguments: Arguments<Self>) {
        bundle = arguments[Self.bundle]
    }

    package func run(_ context: CommandContext) throws -> Int32 {
        let bundle = self.bundle
        guard Manifest.isValidBundleIdentifier(bundle) else {
            throw ReindexError(.usage, "\(bundle): not a valid bundle identifier")
        }
        let store = try context.openIndex()
        let writes = try store.makeWriter(bundleIdentifier: bundle, scope: .live, requestID: nil, declarations: [:])
        var rejected = 0
        // An attribute name that looks misspelt, or a member an item does not have, is kept or
        // ignored as the protocol says, with a warning the first time (as a session gives).
        var names = MisspeltAttributes()
        do {
            // Staged writes are committed whenever input pauses: no write lock is held while
            // waiting for the producer.
            try StandardInputLines.forEach(beforeWaiting: { try writes.flush() }, onOverlong: { number, length in
                rejected += 1
                writes.reject(count: 1)
                Console.err("error: \(bundle): stdin line \(number): longer than \(LineReader.defaultMaximumLineLength) bytes (\(length) bytes); line skipped")
            }) { line, number in
                if line.allSatisfy({ $0 == 0x20 || $0 == 0x09 || $0 == 0x0D }) { return }
                do {
                    let value = try JSONParser.parse(line)
                    let declarations = writes.declarations
                    let item = value["uniqueIdentifier"]?.stringValue
                    try writes.put(try ItemValidator.validate(value, declarations: declarations,
                                                              undeclared: { names.note($0, item: item, declarations: declarations) },
                                                              unknownMember: { names.noteMember($0, item: item, declarations: declarations) }))
                    for warning in names.take() { Console.err("warning: \(bundle): stdin line \(number): \(warning)") }
                } catch let error as StoreError {
                    throw error
                } catch {
                    rejected += 1
                    writes.reject(count: 1)
                    Console.err("error: \(bundle): stdin line \(number): \(error); line skipped")
                }
            }
            let counts = try writes.acknowledge { _ in }
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
}
