import ReindexSystem
import ReindexProtocol

/// One item as searches and listings return it.
public struct SearchResult: Sendable, Equatable {
    public var bundleIdentifier: String
    public var uniqueIdentifier: String
    public var domainIdentifier: String?
    public var expiration: Double?
    /// Relevance, higher is better (BM25F, the same on both backends; docs/QUERIES.md,
    /// "Relevance"); nil for listings.
    public var score: Double?
    public var attributes: JSONValue
    /// Where the query's words were found, marked (queries with words only).
    public var snippet: Snippet? = nil
    /// The item's row, for cursors.
    var rowID: Int64 = 0

    public init(bundleIdentifier: String, uniqueIdentifier: String, domainIdentifier: String?, expiration: Double?, score: Double?, attributes: JSONValue) {
        self.bundleIdentifier = bundleIdentifier
        self.uniqueIdentifier = uniqueIdentifier
        self.domainIdentifier = domainIdentifier
        self.expiration = expiration
        self.score = score
        self.attributes = attributes
    }

    public var title: String? { attributes["title"]?.stringValue ?? attributes["displayName"]?.stringValue }

    public var json: JSONValue {
        var members: [(String, JSONValue)] = [
            ("bundleIdentifier", .string(bundleIdentifier)),
            ("uniqueIdentifier", .string(uniqueIdentifier)),
            ("domainIdentifier", domainIdentifier.map(JSONValue.string) ?? .null),
            ("title", title.map(JSONValue.string) ?? .null),
        ]
        if let score { members.append(("score", .double((score * 1e6).rounded() / 1e6))) }
        if let expiration { members.append(("expirationDate", .string(RFC3339.format(expiration)))) }
        members.append(("attributes", attributes))
        if let snippet { members.append(("snippet", snippet.json)) }
        return .object(members)
    }
}
