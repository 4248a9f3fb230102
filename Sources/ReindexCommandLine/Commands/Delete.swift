import ReindexStore
import ReindexSystem
import ReindexHost
import ReindexProtocol

/// `reindex delete BUNDLE_ID (--ids … | --domains … | --all)`: removes items of a bundle.
package struct DeleteCommand: ReindexCommand {
    package static let name = "delete"
    package static let summary = "remove items of a bundle"

    package static let bundle = Argument<Self, String>("BUNDLE_ID", help: "the bundle")
    package static let ids = Option<Self, [String]>("ids", value: "ID[,ID…]", help: "these items", exclusiveGroup: "what", as: .commaList)
    package static let domains = Option<Self, [String]>(
        "domains", value: "D[,D…]", help: "every item in these domains and their subdomains", exclusiveGroup: "what", as: .commaList)
    package static let all = Flag<Self>("all", help: "every item of the bundle", exclusiveGroup: "what")
    package static let arguments: [any DeclaredArgument<Self>] = [bundle]
    package static let options: [any DeclaredOption<Self>] = [ids, domains, all]

    /// What to remove.
    package enum What: Sendable, Equatable {
        case ids([String]), domains([String]), all
    }

    package let bundle: String
    /// nil when none of `--ids`, `--domains`, `--all` was given (a usage error when run).
    package let what: What?

    package init(_ arguments: Arguments<Self>) throws(ReindexError) {
        bundle = arguments[Self.bundle]
        if let ids = try arguments.value(Self.ids) {
            what = .ids(ids)
        } else if let domains = try arguments.value(Self.domains) {
            what = .domains(domains)
        } else {
            what = arguments[Self.all] ? .all : nil
        }
    }

    package func run(_ context: CommandContext) throws -> Int32 {
        let bundle = self.bundle
        guard let what else { throw ReindexError(.usage, "delete needs --ids, --domains or --all") }
        // One transaction against the bundle's live items, as `LocalIndex` writes, on either backend.
        let writes = try context.openIndex().makeWriter(bundleIdentifier: bundle, scope: .direct, requestID: nil, declarations: [:])
        let deleted: Int
        do {
            switch what {
            case .ids(let ids): try writes.delete(identifiers: ids)
            case .domains(let domains): try writes.delete(domains: domains)
            case .all: try writes.deleteAll()
            }
            deleted = try writes.acknowledge { _ in }.deleted
        } catch {
            writes.rollback()
            throw error
        }
        if context.json {
            Console.json(.object([("bundleIdentifier", .string(bundle)), ("deleted", .integer(Int64(deleted)))]))
        } else {
            Console.out("\(bundle): deleted \(deleted) item(s)")
        }
        return 0
    }
}
