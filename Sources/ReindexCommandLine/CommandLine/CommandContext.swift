import ReindexHost
import ReindexStore
import ReindexProtocol
import ReindexSystem

/// The state every command starts from: the global options, resolved paths and the environment.
package struct CommandContext: Sendable {
    package var paths: HostPaths
    package var environment: [String: String]
    /// `--json`: print JSON instead of text.
    package var json: Bool
    /// Whether opening a SQLite index that does not exist creates it (commands that write);
    /// commands that only read say there is none (`ReindexCommand.onlyReadsIndex`).
    package var createsIndex = true

    package init(paths: HostPaths, environment: [String: String], json: Bool) {
        self.paths = paths
        self.environment = environment
        self.json = json
    }

    /// From the global options (`--index`, `--extensions-path`, `--json`) and the environment.
    package init<Command: ReindexCommand>(_ arguments: Arguments<Command>, environment: [String: String]) throws(ReindexError) {
        self.init(paths: HostPaths(extensionsPath: try arguments.value(Global.extensionsPath), index: try arguments.value(Global.index), environment: environment),
                  environment: environment, json: arguments[Global.json])
        createsIndex = !Command.onlyReadsIndex
    }

    /// Discovers bundles and finds one by identifier, or fails with exit 66 naming what exists.
    package func findBundle(_ identifier: String) throws(ReindexError) -> DiscoveredBundle {
        let result = Discovery.discover(paths)
        if let bundle = result.bundle(identifier) { return bundle }
        if let problem = result.problems.first(where: { $0.bundleIdentifier?.lowercased() == identifier.lowercased() }) {
            throw ReindexError(.invalidData, "\(identifier): bundle is not usable: \(problem.reason)")
        }
        let known = result.bundles.map(\.identifier)
        var hint = known.isEmpty ? "no bundles were found on the search path (see 'reindex paths')" : "known bundles: \(known.joined(separator: ", "))"
        // A refused manifest is not read, so its bundle may be the one asked for: say so.
        let unnamed = result.problems.filter { $0.bundleIdentifier == nil }
        if !unnamed.isEmpty {
            hint += "; refused without reading their identifier (see 'reindex list'): "
                + unnamed.prefix(3).map(\.reason).joined(separator: "; ") + (unnamed.count > 3 ? "; and \(unnamed.count - 3) more" : "")
        }
        throw ReindexError(.bundleNotFound, "\(identifier): no such bundle on the search path\(Suggestion.clause(for: identifier, among: known)); \(hint)")
    }
}

extension CommandContext {
    /// Says on stderr when the index was lost and queues `reindexAll` (`indexLost`) for every
    /// discovered bundle when the store says it must (a new PostgreSQL schema quietly).
    private func rebuildIfLost(_ store: any IndexBackend) {
        guard let loss = store.lossAtOpen else { return }
        if let warning = loss.warning { Console.err("warning: \(warning)") }
        let queued = queueIndexLost(store)
        if loss.warning != nil, queued > 0 { Console.err("warning: queued reindexAll (indexLost) for \(queued) bundle(s); 'reindex serve' or 'reindex run' will rebuild them") }
    }

    /// Opens the index whichever database holds it: a SQLite file or a PostgreSQL database. An
    /// index lost and made anew, or created, gets its rebuilds queued.
    package func openIndex() throws(ReindexError) -> any IndexBackend {
        let store = try Index.open(paths.index, environment: environment, create: createsIndex)
        rebuildIfLost(store)
        return store
    }

    /// Opens the index for the query language, whichever database holds it.
    package func openQueries() throws(ReindexError) -> any IndexQueries {
        let index = try openIndex()
        guard let queries = index as? any IndexQueries else {
            throw ReindexError(.internal, "\(index.displayLocation): this index does not answer queries")
        }
        return queries
    }

    /// Queues `reindexAll` with reason `indexLost` for every discovered bundle; returns how many.
    @discardableResult
    package func queueIndexLost(_ store: any IndexBackend) -> Int {
        var queued = 0
        for bundle in Discovery.discover(paths).bundles {
            if (try? store.enqueue(bundleIdentifier: bundle.identifier, kind: .reindexAll, reason: .indexLost, maxAttempts: bundle.manifest.retry.maxAttempts)) != nil {
                queued += 1
            }
        }
        return queued
    }
}
