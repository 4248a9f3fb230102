import ReindexStore
import ReindexSystem
import ReindexProtocol

/// Why a request ended without a success acknowledgement. Every kind rolls back what was not
/// committed and leaves the request queued for a retry (or failed once its attempts are used).
public struct RequestFailure: Error, Sendable, CustomStringConvertible {
    public enum Kind: String, Sendable {
        /// The executable could not be started, exited before answering `initialize`, or refused it.
        /// (An extension that does not answer `initialize` in time fails with `.timeout`.)
        case cannotStart
        /// No protocol version in common; the message names both lists.
        case versionMismatch
        /// The extension replied to the request with an error.
        case refused
        /// The request was cancelled (`$/cancel`, Ctrl-C, `serve` stopping).
        case cancelled
        /// The extension died (signal or exit) before acknowledging.
        case crashed
        /// A timeout of the manifest passed.
        case timeout
        /// The extension broke the protocol.
        case protocolViolation
        /// The index could not be written.
        case storeFailure
        /// A `reindexAll` was acknowledged without putting an accepted item while the bundle had
        /// items, and without `allowEmpty`: it was not published (the old items stay) and is not
        /// retried, since a retry would most likely do the same.
        case emptyReplacement
        /// Every item of a `reindexAll` was rejected: nothing was published, nothing is retried.
        case allRejected
    }

    public var kind: Kind
    public var message: String
    public var stderrTail: [String]
    /// Not the extension's fault (the index was busy with another writer): retry without penalty.
    public var hostSide = false
    /// The request's id on the wire (in the bundle's log and a `--trace`), when one was sent.
    public var wireID: String?

    public init(_ kind: Kind, _ message: String, stderrTail: [String] = []) {
        self.kind = kind
        self.message = message
        self.stderrTail = stderrTail
    }

    public var description: String { message }

    /// The command-line contract's code for this failure.
    public var code: ReindexError.Code {
        switch kind {
        case .cannotStart, .versionMismatch: return .cannotStart
        case .protocolViolation, .emptyReplacement: return .protocolViolation
        case .allRejected: return .invalidData
        case .storeFailure: return .requestFailed  // a full disk, say: the request failed and is retried
        case .refused, .cancelled, .crashed, .timeout: return .requestFailed
        }
    }

    /// Whether the request goes back to the queue without counting as a failed attempt.
    public var requeuesWithoutPenalty: Bool { kind == .cancelled || hostSide }

    /// Whether the request fails for good at once: retrying it would only repeat what the
    /// extension did (so `serve` does not loop on it); a forced run asks again.
    public var isFinal: Bool { kind == .emptyReplacement || kind == .allRejected }
}
