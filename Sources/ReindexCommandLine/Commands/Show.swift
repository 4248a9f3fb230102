import ReindexStore
import ReindexSystem
import ReindexHost
import ReindexProtocol

/// `reindex show BUNDLE_ID UNIQUE_ID`: one live item, whole.
package struct ShowCommand: ReindexCommand {
    package static let name = "show"
    package static let summary = "print one live item whole: attributes, domain, expiration, generation"
    package static let discussion = """
            A bundle exists when the index holds something of it or it is on the search path.
            Exit status: 0; 1 when the bundle exists but has no such live item (as grep finds nothing);
            66 when no such bundle exists (the message suggests the nearest known identifier).
            """

    package static let bundle = Argument<Self, String>("BUNDLE_ID", help: "the bundle", completion: .bundleIdentifier)
    package static let identifier = Argument<Self, String>("UNIQUE_ID", help: "the item's identifier")
    package static let arguments: [any DeclaredArgument<Self>] = [bundle, identifier]

    package let bundle: String
    package let identifier: String

    package init(_ arguments: Arguments<Self>) {
        bundle = arguments[Self.bundle]
        identifier = arguments[Self.identifier]
    }

    package func run(_ context: CommandContext) throws -> Int32 {
        let store = try context.openQueries()
        guard let record = try store.item(bundle: bundle, uniqueIdentifier: identifier, now: Clock.now()) else {
            let indexed = try store.knownBundles().map(\.identifier)
            let discovered = Discovery.discover(context.paths).bundles.map(\.identifier)
            if (indexed + discovered).contains(where: { $0.lowercased() == bundle.lowercased() }) {
                throw ReindexError(.notFound, "\(bundle): no live item '\(identifier)'")
            }
            let known = Set(indexed + discovered).sorted()
            throw ReindexError(.bundleNotFound, "\(bundle): no such bundle in the index or on the search path\(Suggestion.clause(for: bundle, among: known))")
        }
        if context.json {
            Console.json(record.json)
            return 0
        }
        let r = record.result
        Console.out("\(r.title ?? r.uniqueIdentifier)  [\(r.bundleIdentifier) \(r.uniqueIdentifier)]")
        Console.out("  domain: \(r.domainIdentifier ?? "-")")
        Console.out("  expires: \(r.expiration.map { RFC3339.format($0) + (record.expired ? " (expired)" : "") } ?? "never")")
        Console.out("  generation: \(record.generation)\(record.generationCommitted.map { ", made live " + RFC3339.format($0) } ?? "")")
        for (key, value) in r.attributes.objectValue ?? [] {
            Console.out("  \(key): \(value.stringValue ?? String(decoding: JSONWriter.bytes(value), as: UTF8.self))")
        }
        return 0
    }
}
