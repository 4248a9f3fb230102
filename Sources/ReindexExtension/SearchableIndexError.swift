import ReindexProtocol

/// Errors the SDK itself raises.
public enum SearchableIndexError: Error, Sendable, CustomStringConvertible {
    /// A batch's client state is larger than the protocol's 250 bytes; nothing was sent.
    case clientStateTooLarge(Int)
    /// The host refused a batch commit.
    case commitRefused(String)
    /// The connection to the host is gone.
    case disconnected
    /// The request was already answered: the handler returned (or threw) before this write.
    case requestEnded(requestID: String)
    /// An item `put` refused before sending anything: which item, which attribute, and why (a
    /// number JSON cannot spell — NaN, an infinity — which would otherwise arrive as `null`).
    case invalidItem(uniqueIdentifier: String, attribute: String, reason: String)

    public var description: String {
        switch self {
        case .clientStateTooLarge(let n): return "client state is \(n) bytes; at most \(BatchCommitParams.maximumClientStateBytes) are allowed"
        case .commitRefused(let message): return "the host refused the batch commit: \(message)"
        case .disconnected: return "the connection to the host is closed"
        case .requestEnded(let id): return "request \(id) was already acknowledged; await the work (or join its thread) before the handler returns"
        case let .invalidItem(uid, attribute, reason): return "item '\(uid)': attribute '\(attribute)': \(reason); nothing was sent"
        }
    }
}
