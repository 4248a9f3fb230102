/// The type an attribute's value must have.
public enum AttributeKind: Sendable {
    case string, stringList, number, boolean, date, base64
}

/// One attribute protocol version 1 defines: its key and type, the name Core Spotlight's
/// queries give it, and where the index keeps it.
public struct BuiltInAttribute: Sendable {
    /// How a full-text attribute counts: its BM25F weight, and the weight class of PostgreSQL's
    /// document it goes in (`A` highest … `D`).
    public struct FullText: Sendable {
        public let weight: Double
        public let postgresClass: Character
    }

    public let key: String
    public let kind: AttributeKind
    /// Core Spotlight's `kMDItem…` name, which a query may use instead of `key`.
    public let spotlightName: String?
    /// Searched as full text (one column of the full-text index each), or nil.
    public let fullText: FullText?
    /// The indexed column of its own the store keeps it in for filters and sorting, or nil.
    public let filterColumn: String?

    init(_ key: String, _ kind: AttributeKind, spotlight: String? = nil, fullText: FullText? = nil, column: String? = nil) {
        self.key = key
        self.kind = kind
        self.spotlightName = spotlight
        self.fullText = fullText
        self.filterColumn = column
    }
}

/// The attribute table: every attribute protocol version 1 defines, once. The validator's types,
/// the full-text columns and their weights, the filter columns and the query language's Spotlight
/// names are all read from it (see `table`). Unknown keys are kept and returned, but not searched.
public enum AttributeSchema {
    /// In the order of the full-text index's columns, then of the filter columns (both orders
    /// are the databases' own and never change), then the rest.
    public static let table: [BuiltInAttribute] = [
        // Full text: the index's columns, with their weights (docs/QUERIES.md, "Relevance").
        .init("title", .string, spotlight: "kMDItemTitle", fullText: .init(weight: 10, postgresClass: "A")),
        .init("displayName", .string, spotlight: "kMDItemDisplayName", fullText: .init(weight: 8, postgresClass: "A")),
        .init("alternateNames", .stringList, spotlight: "kMDItemAlternateNames", fullText: .init(weight: 5, postgresClass: "B")),
        .init("contentDescription", .string, spotlight: "kMDItemDescription", fullText: .init(weight: 2, postgresClass: "C")),
        .init("textContent", .string, spotlight: "kMDItemTextContent", fullText: .init(weight: 1, postgresClass: "D")),
        .init("keywords", .stringList, spotlight: "kMDItemKeywords", fullText: .init(weight: 5, postgresClass: "B")),
        .init("authors", .stringList, spotlight: "kMDItemAuthors", fullText: .init(weight: 3, postgresClass: "C")),
        // Filter columns: `contentType` as text, then numbers (dates as seconds since 1970), in
        // `FilterValues` order.
        .init("contentType", .string, spotlight: "kMDItemContentType", column: "content_type"),
        .init("rating", .number, spotlight: "kMDItemStarRating", column: "rating"),
        .init("rankingHint", .number, column: "ranking_hint"),
        .init("startDate", .date, column: "start_date"),
        .init("endDate", .date, column: "end_date"),
        .init("contentCreationDate", .date, spotlight: "kMDItemContentCreationDate", column: "created_date"),
        .init("contentModificationDate", .date, spotlight: "kMDItemContentModificationDate", column: "modified_date"),
        // Kept and returned.
        .init("contentURL", .string),
        .init("thumbnailURL", .string),
        .init("relatedUniqueIdentifier", .string),
        .init("emailAddresses", .stringList, spotlight: "kMDItemEmailAddresses"),
        .init("phoneNumbers", .stringList, spotlight: "kMDItemPhoneNumbers"),
        .init("latitude", .number, spotlight: "kMDItemLatitude"),
        .init("longitude", .number, spotlight: "kMDItemLongitude"),
        .init("supportsPhoneCall", .boolean),
        .init("supportsNavigation", .boolean),
        .init("thumbnailData", .base64),
    ]

    /// Every known attribute and its type.
    public static let kinds: [String: AttributeKind] = Dictionary(uniqueKeysWithValues: table.map { ($0.key, $0.kind) })

    /// The attributes that are full-text searched, in the order of the index's columns.
    public static let searched: [String] = table.filter { $0.fullText != nil }.map(\.key)

    /// Each searched attribute's BM25F weight, in `searched` order.
    public static let searchWeights: [Double] = table.compactMap { $0.fullText?.weight }

    /// The attributes the store keeps in indexed columns of their own, for filters and sorting.
    public static let filtered: [String] = table.filter { $0.filterColumn != nil }.map(\.key)

    /// The items' column of each of `filtered`, in that order.
    public static let filterColumns: [String] = table.compactMap(\.filterColumn)

    /// Core Spotlight's `kMDItem…` names of the attributes that have one, to their keys.
    public static let spotlightNames: [String: String] = Dictionary(uniqueKeysWithValues: table.compactMap { a in a.spotlightName.map { ($0, a.key) } })

    /// Each known attribute's type and, for searched ones, its full-text column; for those the
    /// store keeps in columns of their own (`filtered`), their position there.
    public static let slots: [String: (kind: AttributeKind, searchColumn: Int?, filterColumn: Int?)] = {
        var result: [String: (kind: AttributeKind, searchColumn: Int?, filterColumn: Int?)] = [:]
        for attribute in table {
            result[attribute.key] = (attribute.kind, searched.firstIndex(of: attribute.key), filtered.firstIndex(of: attribute.key))
        }
        return result
    }()
}
