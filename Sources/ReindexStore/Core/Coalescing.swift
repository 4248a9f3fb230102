import ReindexSystem
import ReindexProtocol

/// What queueing a request does with the bundle's pending ones — the same rule for every store:
/// a pending `reindexAll` carries any new request (and a new `reindexAll` drops the pending
/// `reindexItems` it covers); a new `reindexItems` merges its identifiers into a pending one,
/// in order and without duplicates; otherwise the request is new.
struct Coalescing {
    enum Outcome {
        /// An existing pending request already carries the work.
        case carriedBy(QueuedRequest)
        /// This pending `reindexItems` now carries the merged identifiers (to be written).
        case merged(QueuedRequest)
        /// A new row.
        case new
    }

    var outcome: Outcome
    /// Whether the bundle's pending `reindexItems` are to be deleted.
    var dropsPendingItems: Bool

    init(pending: [QueuedRequest], kind: RequestKind, identifiers: [String], coalesce: Bool) {
        dropsPendingItems = coalesce && kind == .reindexAll
        if let all = pending.first(where: { $0.kind == .reindexAll }) {
            outcome = .carriedBy(all)
        } else if kind == .reindexItems, var items = pending.first(where: { $0.kind == .reindexItems }) {
            var seen = Set(items.identifiers)
            for id in identifiers where seen.insert(id).inserted { items.identifiers.append(id) }
            outcome = .merged(items)
        } else {
            outcome = .new
        }
    }
}
