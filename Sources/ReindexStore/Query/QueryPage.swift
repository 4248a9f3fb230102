import ReindexProtocol

// What a query takes besides its text and what it gives back: options, sort keys, pages,
// snippets, one item whole.

/// Where a result's words were found: the attribute and its text with the words marked.
public struct Snippet: Sendable, Equatable {
    public var attribute: String
    public var text: String
    public var json: JSONValue { .object([("attribute", .string(attribute)), ("text", .string(text))]) }
}

/// One sort key of a query: an attribute, ascending unless `descending`.
public struct QuerySort: Sendable, Equatable {
    public var attribute: String
    public var descending: Bool
    /// `attribute` may be a `kMDItem…` name (docs/QUERIES.md); it is kept as the index's own.
    public init(attribute: String, descending: Bool = false) {
        self.attribute = QueryParser.attributeName(attribute)
        self.descending = descending
    }

    /// `ATTR`, `ATTR:asc` or `ATTR:desc`.
    public init(parsing text: String) throws(ReindexError) {
        let parts = text.split(separator: ":", omittingEmptySubsequences: false).map(String.init)
        guard (1...2).contains(parts.count), QueryParser.isAttributeName(parts[0]) else {
            throw ReindexError(.usage, "--sort \(text): expected ATTR, ATTR:asc or ATTR:desc")
        }
        attribute = QueryParser.attributeName(parts[0])
        switch parts.count == 2 ? parts[1] : "asc" {
        case "asc": descending = false
        case "desc": descending = true
        default: throw ReindexError(.usage, "--sort \(text): expected :asc or :desc after the attribute, got ':\(parts[1])'")
        }
    }
}

/// What a query asks for besides its text.
public struct QueryOptions: Sendable {
    public var bundle: String? = nil
    public var domain: String? = nil
    public var limit = 20
    /// The `nextCursor` of the previous page.
    public var after: String? = nil
    /// Empty: by relevance.
    public var sort: [QuerySort] = []
    /// Mark matched words in `snippet` with these.
    public var snippetMarkers = (open: "[", close: "]")
    public var now: Double? = nil
    /// What `$time` values are relative to (default: the local time zone's offset from UTC now,
    /// in seconds east, and the locale's first day of the week, 1 Sunday … 7 Saturday).
    public var timeZoneOffset: Int? = nil
    public var firstWeekday: Int? = nil
    public init(bundle: String? = nil, domain: String? = nil, limit: Int = 20, after: String? = nil, sort: [QuerySort] = []) {
        self.bundle = bundle
        self.domain = domain
        self.limit = limit
        self.after = after
        self.sort = sort
    }
}

/// One page of results; `nextCursor` continues it (nil on the last page).
public struct QueryPage: Sendable, Equatable {
    public var results: [SearchResult]
    public var nextCursor: String?
}

/// One item as `reindex show` prints it.
public struct ItemRecord: Sendable, Equatable {
    public var result: SearchResult
    public var generation: Int64
    /// When the generation the item belongs to was made live (its reindexAll's end), if known.
    public var generationCommitted: Double?
    public var expired: Bool

    public var json: JSONValue {
        var members = result.json.objectValue ?? []
        members.append(("generation", .integer(generation)))
        members.append(("generationCommitted", generationCommitted.map { .string(RFC3339.format($0)) } ?? .null))
        members.append(("expired", .bool(expired)))
        return .object(members)
    }
}
