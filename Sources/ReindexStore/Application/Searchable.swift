import Foundation
import ReindexProtocol

/// A model type of an application that indexes itself: it names its identifier and its
/// attributes (and, if it has them, its domain and expiration), and gains `index(in:)` and
/// `remove(from:)` on a `LocalIndex`, and `LocalIndex.index(_:)` / `remove(_:)` for many.
///
/// ```swift
/// struct Note: Identifiable, Searchable {
///     var id: Int
///     var folder: String
///     var title: String
///     var body: String
///     var searchableDomain: String? { "notes.\(folder)" }
///     var searchableAttributes: SearchableItemAttributes {
///         SearchableItemAttributes(title: title, textContent: body, contentType: "public.text")
///     }
/// }
/// try note.index(in: index)
/// ```
public protocol Searchable {
    /// The item's `uniqueIdentifier`: unique within the bundle, 1 to 1024 UTF-8 bytes. An
    /// `Identifiable` type whose `id` is `CustomStringConvertible` has it already: `id`'s text.
    var searchableIdentifier: String { get }
    /// The item's `domainIdentifier`, for `delete(domainIdentifiers:)` (`a.b` is inside `a`);
    /// nil by default.
    var searchableDomain: String? { get }
    /// What is searched and shown.
    var searchableAttributes: SearchableItemAttributes { get }
    /// When searches stop returning the item (and it is purged); nil by default: never.
    var searchableExpiration: Date? { get }
}

extension Searchable {
    public var searchableDomain: String? { nil }
    public var searchableExpiration: Date? { nil }

    /// The item this value is indexed as.
    public var searchableItem: SearchableItem {
        SearchableItem(uniqueIdentifier: searchableIdentifier, domainIdentifier: searchableDomain,
                       expirationDate: searchableExpiration, attributes: searchableAttributes)
    }

    /// Adds this value's item to `index`, replacing the one of its identifier (in a transaction
    /// of its own, or in the open batch).
    @discardableResult
    public func index(in index: LocalIndex) throws(ReindexError) -> WriteCounts {
        try index.put([searchableItem])
    }

    /// Removes this value's item from `index`; returns whether it was there (inside a batch,
    /// false: the batch's deletions are counted when it ends).
    @discardableResult
    public func remove(from index: LocalIndex) throws(ReindexError) -> Bool {
        try index.delete(identifiers: [searchableIdentifier]) > 0
    }
}

extension Searchable where Self: Identifiable, ID: CustomStringConvertible {
    public var searchableIdentifier: String { id.description }
}

extension LocalIndex {
    /// Adds or replaces the items of `values`, in one call (one transaction, or part of the open
    /// batch); if any is invalid, nothing is written.
    @discardableResult
    public func index<Values: Sequence>(_ values: Values) throws(ReindexError) -> WriteCounts where Values.Element: Searchable {
        try put(values.map(\.searchableItem))
    }

    /// Removes the items of `values`; returns how many existed (inside a batch, 0).
    @discardableResult
    public func remove<Values: Sequence>(_ values: Values) throws(ReindexError) -> Int where Values.Element: Searchable {
        try delete(identifiers: values.map(\.searchableIdentifier))
    }
}
