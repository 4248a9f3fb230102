// D-Bus desktop search (sd-bus) exists on Linux only.
#if os(Linux)
import Foundation
import ReindexHost
import ReindexProtocol
import ReindexStore
import ReindexSystem

/// What both search providers ask of the index: `reindex search`'s engine (the same query
/// language, ranking and expiry), item look-ups by result identifier, bundle names, and opening.
/// The index is opened once and kept between calls, each of which still reads the latest
/// committed state; it is opened anew after any error of the index and whenever `identity`
/// changes (a SQLite index file reset or replaced: another file at the path), so a new index is
/// simply the next one read.
package final class DesktopCatalog {
    /// The most results one search returns (the desktops show fewer).
    package static let resultLimit = 20
    /// Bounds on what a caller may send.
    package static let maximumTerms = 64
    package static let maximumTermBytes = 1024
    package static let maximumIdentifiers = 1024
    package static let maximumIdentifierBytes = 16384

    package static let unknownItem = "org.reindexhost.SearchProvider.Error.UnknownItem"

    private let openIndex: () throws -> any IndexQueries
    private let identity: () -> String?
    private var openedIndex: (index: any IndexQueries, identity: String?)?
    private let discover: () -> DiscoveryResult
    private let log: (String) -> Void
    private var bundles: (at: Double, result: DiscoveryResult)?
    /// This executable and its global options, for `LaunchSearch`'s `reindex search`.
    private let searchCommand: [String]
    /// The terminal `LaunchSearch` runs it in (`--terminal`), else nil (see `Opening.launchSearchArguments`).
    private let terminal: [String]?

    /// `identity` names the index now at its place (for a file, its device and inode); nil when
    /// there is none.
    package init(openIndex: @escaping () throws -> any IndexQueries, identity: @escaping () -> String? = { nil },
                 discover: @escaping () -> DiscoveryResult, log: @escaping (String) -> Void,
                 searchCommand: [String] = ["reindex"], terminal: [String]? = nil) {
        self.openIndex = openIndex
        self.identity = identity
        self.discover = discover
        self.log = log
        self.searchCommand = searchCommand
        self.terminal = terminal
    }

    /// Shows every result of `terms`, as `reindex search` prints them, in a terminal.
    package func launchSearch(_ terms: [String]) throws(BusError) {
        let arguments = try Opening.launchSearchArguments(terms: terms, searchCommand: searchCommand, terminal: terminal)
        log("showing the search in \(arguments[0])")
        try Opening.spawn(arguments)
    }

    /// The best matches of `query`, best first. A query the language refuses is searched again as
    /// its plain words (what a person types into a desktop search box is rarely meant as syntax);
    /// no index yet, or an unreadable one, is no results (and a log line), never an error.
    package func search(_ query: String) -> [SearchResult] {
        let options = QueryOptions(limit: Self.resultLimit)
        return answer(query) { (store, text) throws(ReindexError) in try store.query(text, options: options).results }
    }

    /// The results of `previous` (result identifiers, in their order) that still match `query`:
    /// what is typed narrowing what is shown. Each is checked alone (`IndexQueries.refine`), so
    /// the cost follows the results shown, not how many items of the index hold the words. As
    /// with `search`, a query the language refuses is tried again as its plain words, and an
    /// unreadable index is no results.
    package func refine(_ previous: [String], query: String) -> [SearchResult] {
        let keys = previous.compactMap { ItemKey(resultIdentifier: $0) }
        guard !keys.isEmpty else { return [] }
        return answer(query) { (store, text) throws(ReindexError) in try store.refine(keys, words: text, now: Clock.now()) }
    }

    /// `body` on the index with the trimmed query, and again with its plain words when the
    /// language refuses it; no index, or an unreadable one, is no results and a log line (and
    /// the connection is made anew next time).
    private func answer(_ query: String, _ body: (any IndexQueries, String) throws(ReindexError) -> [SearchResult]) -> [SearchResult] {
        let trimmed = query.trimmingCharacters(in: .whitespacesAndNewlines)
        guard !trimmed.isEmpty else { return [] }
        let store: any IndexQueries
        do { store = try index() } catch {
            log("cannot search: \(error)")
            return []
        }
        var text = trimmed
        do {
            return try body(store, text)
        } catch let error where error.code == .invalidData || error.code == .usage {
            text = Self.plainWords(trimmed)
            guard !text.isEmpty else { return [] }
            do { return try body(store, text) } catch {
                log("search '\(text)': \(error.message)")
            }
        } catch {
            log("search '\(text)': \(error.message)")
        }
        openedIndex = nil
        return []
    }

    /// The letters and digits of `text`, every other character a space.
    static func plainWords(_ text: String) -> String {
        let scalars = text.unicodeScalars.map { Folding.isWordCharacter($0) ? Character($0) : " " }
        return String(scalars).split(separator: " ").joined(separator: " ")
    }

    /// The live item a result identifier names, or an `UnknownItem` error.
    package func item(_ id: String) throws(BusError) -> SearchResult {
        guard let identifier = ItemKey(resultIdentifier: id) else {
            throw BusError(Self.unknownItem, "not a result identifier of this service: \(String(id.prefix(200)))")
        }
        let record: ItemRecord?
        do {
            record = try index().item(bundle: identifier.bundle, uniqueIdentifier: identifier.uniqueIdentifier, now: Clock.now())
        } catch {
            openedIndex = nil
            throw BusError(Self.unknownItem, "cannot read the index: \(error)")
        }
        guard let record, !record.expired else {
            throw BusError(Self.unknownItem, "\(identifier.bundle): no live item '\(identifier.uniqueIdentifier)'")
        }
        return record.result
    }

    /// The index to read: the kept connection while the index at its place is the same one,
    /// else a new connection, kept.
    private func index() throws -> any IndexQueries {
        let current = identity()
        if let openedIndex, openedIndex.identity == current { return openedIndex.index }
        openedIndex = nil
        let store = try openIndex()
        openedIndex = (store, current)
        return store
    }

    /// The bundle's display name (from its manifest), or its identifier when it is not installed.
    package func displayName(of bundleIdentifier: String) -> String {
        bundle(bundleIdentifier)?.manifest.displayName ?? bundleIdentifier
    }

    /// Opens the item a result identifier names, as its bundle declares (`Opening`).
    package func open(_ id: String) throws(BusError) {
        let item = try item(id)
        let arguments = try Opening.arguments(for: item, declaration: bundle(item.bundleIdentifier)?.manifest.open)
        log("opening \(item.bundleIdentifier) '\(item.uniqueIdentifier)' with \(arguments[0])")
        try Opening.spawn(arguments)
    }

    /// Discovery, reread at most every five seconds: a search box asks on every keystroke.
    private func bundle(_ identifier: String) -> DiscoveredBundle? {
        let now = Clock.monotonic()
        if let bundles, now - bundles.at < 5 { return bundles.result.bundle(identifier) }
        let result = discover()
        bundles = (now, result)
        return result.bundle(identifier)
    }
}
#endif
