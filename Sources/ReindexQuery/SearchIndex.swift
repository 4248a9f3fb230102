import Foundation
@_exported import ReindexProtocol
import ReindexStore

/// Read access to a reindex index for applications: queries in the language of docs/QUERIES.md,
/// delivered page by page as an `AsyncSequence`.
///
/// A `SearchIndex` is only a path (or a PostgreSQL connection string); each iteration opens its
/// own connection when it asks for its first page and closes it when the iteration ends. Every page reads one consistent snapshot of
/// the live items; the pages continue one another by cursor (keyset), so while the index does not
/// change, iterating returns every match exactly once, and a later page costs what the first does.
public struct SearchIndex: Sendable {
    /// The index file (`reindex paths` prints it; `--index` / `REINDEX_INDEX` choose it), or a
    /// PostgreSQL connection string (`postgresql://…`, `postgres://…` or libpq keywords), whose
    /// schema `REINDEX_PG_SCHEMA` or `?options=-csearch_path=NAME` chooses as for `reindex`.
    /// The same query matches the same items on both; see docs/QUERIES.md for what differs.
    public let path: String

    public init(path: String) {
        self.path = path
    }

    /// The matches of `query`, a page of `options.pageSize` at a time, best first (or in
    /// `options.sort` order). The query is checked when the first page is asked for: a malformed
    /// one throws `SearchError` with code `.invalidQuery` and the position at fault.
    /// Cancelling the task that iterates ends the iteration with `CancellationError` before the
    /// next page is read.
    public func search(_ query: String, options: SearchOptions = SearchOptions()) -> SearchPages {
        SearchPages(path: path, query: query, options: options)
    }

    /// The exact number of live, unexpired items `query` matches.
    public func count(_ query: String, options: SearchOptions = SearchOptions()) async throws -> Int {
        try Task.checkCancellation()
        let store = try SearchPages.open(path)
        do { return try store.count(query, options: options.queryOptions) } catch { throw SearchError(error) }
    }
}

/// What a search asks for besides its text.
public struct SearchOptions: Sendable {
    /// Only this bundle's items (`bundle:ID` in the query does the same).
    public var bundle: String?
    /// Only items in this domain or its subdomains.
    public var domain: String?
    /// Results per page (at least 1).
    public var pageSize: Int
    /// Sort keys, applied in order; empty: by relevance (words) or by bundle and identifier.
    public var sort: [SortKey]
    /// Keep only these attributes in each hit (nil: all of them).
    public var fields: [String]?
    /// Start after this position: a `SearchPage.nextCursor` from an earlier iteration of the
    /// same query and sort. A damaged cursor, or one of another order (by relevance against
    /// sorted, or other sort keys), throws `SearchError` with code `.invalidQuery` saying which.
    public var cursor: String?
    /// Whether the first page carries `totalCount`, the exact number of matches.
    public var count: Bool

    public init(bundle: String? = nil, domain: String? = nil, pageSize: Int = 20, sort: [SortKey] = [],
                fields: [String]? = nil, cursor: String? = nil, count: Bool = false) {
        self.bundle = bundle
        self.domain = domain
        self.pageSize = pageSize
        self.sort = sort
        self.fields = fields
        self.cursor = cursor
        self.count = count
    }

    var queryOptions: QueryOptions {
        var options = QueryOptions(bundle: bundle, domain: domain, limit: max(1, pageSize), after: cursor,
                                   sort: sort.map { QuerySort(attribute: $0.attribute, descending: $0.descending) })
        options.snippetMarkers = ("[", "]")
        return options
    }
}

/// One sort key: an attribute (built-in, declared, or `bundleIdentifier`, `domainIdentifier`,
/// `uniqueIdentifier`, `expirationDate`), ascending unless `descending`.
public struct SortKey: Sendable, Equatable {
    public var attribute: String
    public var descending: Bool
    public init(_ attribute: String, descending: Bool = false) {
        self.attribute = attribute
        self.descending = descending
    }
}

/// One matching item.
public struct SearchHit: Sendable, Equatable {
    public var bundleIdentifier: String
    public var uniqueIdentifier: String
    public var domainIdentifier: String?
    public var expirationDate: Date?
    /// The relevance score (higher is better) when the query has words; nil otherwise.
    public var score: Double?
    /// The item's attributes (only `SearchOptions.fields`, when given).
    public var attributes: JSONValue
    /// Where the words were found: the attribute and its text with the words in `[` `]`.
    public var snippet: (attribute: String, text: String)?

    public var title: String? { attributes["title"]?.stringValue ?? attributes["displayName"]?.stringValue }

    public static func == (a: SearchHit, b: SearchHit) -> Bool {
        a.bundleIdentifier == b.bundleIdentifier && a.uniqueIdentifier == b.uniqueIdentifier && a.domainIdentifier == b.domainIdentifier
            && a.expirationDate == b.expirationDate && a.score == b.score && a.attributes == b.attributes
            && a.snippet?.attribute == b.snippet?.attribute && a.snippet?.text == b.snippet?.text
    }
}

/// One page of hits.
public struct SearchPage: Sendable, Equatable {
    public var hits: [SearchHit]
    /// Continues after this page (`SearchOptions.cursor`); nil on the last page.
    public var nextCursor: String?
    /// The exact number of matches, on the first page when `SearchOptions.count` is set.
    public var totalCount: Int?
}

/// Why a search failed. `code` is stable; `message` says what happened in words.
public struct SearchError: Error, Sendable, CustomStringConvertible {
    public enum Code: String, Sendable {
        /// The query or an option is malformed (the message has the position).
        case invalidQuery
        /// There is no index at the path.
        case noIndex
        /// The index stayed busy past the busy timeout.
        case busy
        /// The index could not be read.
        case io
        case other
    }

    public var code: Code
    public var message: String
    public var description: String { message }

    init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    init(_ error: ReindexError) {
        switch error.code {
        case .usage, .invalidData: code = .invalidQuery
        case .requestFailed: code = .busy
        case .ioError, .cannotStart: code = .io
        default: code = .other
        }
        message = error.message
    }
}

/// The pages of one search, as an `AsyncSequence` (see `SearchIndex.search`).
public struct SearchPages: AsyncSequence, Sendable {
    public typealias Element = SearchPage
    let path: String
    let query: String
    let options: SearchOptions

    public func makeAsyncIterator() -> Iterator {
        Iterator(pages: self)
    }

    static func open(_ path: String) throws -> any IndexQueries {
        if PostgresLocation.isConnectionString(path) {
            do { return try Index.openForQueries(path, environment: ProcessInfo.processInfo.environment) } catch { throw SearchError(error) }
        }
        guard FileManager.default.fileExists(atPath: path) else {
            throw SearchError(.noIndex, "\(path): no index here (run an extension first, or check --index / REINDEX_INDEX)")
        }
        do { return try IndexStore.open(path: path) } catch { throw SearchError(error) }
    }

    public struct Iterator: AsyncIteratorProtocol {
        let pages: SearchPages
        var store: (any IndexQueries)?
        var cursor: String?
        var first = true
        var finished = false

        init(pages: SearchPages) {
            self.pages = pages
            self.cursor = pages.options.cursor
        }

        /// The next page, or nil after the last one. Throws `CancellationError` when the task was
        /// cancelled, and `SearchError` when the query is malformed or the index unreadable.
        public mutating func next() async throws -> SearchPage? {
            guard !finished else { return nil }
            do {
                try Task.checkCancellation()
                if let cursor {
                    do { try QueryCursor.check(cursor) } catch { throw SearchError(error) }
                }
                let store = try self.store ?? SearchPages.open(pages.path)
                self.store = store
                var options = pages.options.queryOptions
                options.after = cursor
                let page: QueryPage
                var total: Int? = nil
                do {
                    page = try store.query(pages.query, options: options)
                    if first && pages.options.count { total = try store.count(pages.query, options: options) }
                } catch {
                    throw SearchError(error)
                }
                first = false
                cursor = page.nextCursor
                if page.nextCursor == nil { finish() }
                return SearchPage(hits: page.results.map { hit($0) }, nextCursor: page.nextCursor, totalCount: total)
            } catch {
                finish()
                throw error
            }
        }

        private mutating func finish() {
            finished = true
            store = nil
        }

        private func hit(_ result: SearchResult) -> SearchHit {
            var attributes = result.attributes
            if let fields = pages.options.fields {
                attributes = .object((attributes.objectValue ?? []).filter { fields.contains($0.0) })
            }
            return SearchHit(bundleIdentifier: result.bundleIdentifier, uniqueIdentifier: result.uniqueIdentifier,
                             domainIdentifier: result.domainIdentifier, expirationDate: result.expiration.map { Date(timeIntervalSince1970: $0) },
                             score: result.score, attributes: attributes,
                             snippet: result.snippet.map { ($0.attribute, $0.text) })
        }
    }
}
