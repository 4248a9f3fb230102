/** JSON-RPC error codes used by protocol version 1. */
export declare const ErrorCode: Readonly<{
    readonly parseError: -32700;
    readonly invalidRequest: -32600;
    readonly methodNotFound: -32601;
    readonly invalidParams: -32602;
    readonly internalError: -32603;
    /** The code of a refusal that carries no code of its own (the Swift SDK uses the same). */
    readonly refused: -32000;
    readonly requestCancelled: -32800;
}>;
/** A JSON-RPC error object: what a refusal sends, and what the host answers a refused commit with. */
export interface RpcError {
    code: number;
    message: string;
    data?: unknown;
}
/**
 * Thrown (or rejected) by `reindexAll` / `reindexItems` to refuse the request with a specific
 * JSON-RPC code, message and optional data. Any other error refuses with code -32000 and the
 * error's message.
 */
export declare class IndexRequestError extends Error {
    /** The JSON-RPC error code of the refusal. */
    readonly code: number;
    /** The refusal's `data`, sent as given. */
    readonly data: unknown;
    /**
     * @param message what the user sees in `reindex status` and the log
     */
    constructor(message: string, options?: {
        code?: number;
        data?: unknown;
        cause?: unknown;
    });
}
/**
 * The reason of `index.signal` once the host cancelled the request with `$/cancel`; thrown by
 * every `SearchableIndex` operation from then on. The SDK answers the request with -32800
 * ("Request cancelled") by itself.
 */
export declare class CancellationError extends Error {
    readonly code: -32800;
    constructor(message?: string);
}
/** What went wrong in a `SearchableIndex` operation; see `SearchableIndexError`. */
export declare type SearchableIndexErrorKind = 'clientStateTooLarge' | 'commitRefused' | 'disconnected' | 'requestFinished' | 'itemTooLarge';
/**
 * Errors the SDK itself raises from `SearchableIndex` operations. `kind` says which:
 * - `clientStateTooLarge`: the client state of `commitBatch` is over 250 bytes; nothing was sent.
 * - `commitRefused`: the host answered `batch/commit` with an error (`rpcError` holds it).
 * - `disconnected`: the connection to the host is gone (stdin closed or stdout broken).
 * - `requestFinished`: the request was already answered; operations after that are not allowed
 *   (a forgotten `await`); nothing was sent.
 * - `itemTooLarge`: a single item does not fit in one protocol line (16 MiB); nothing was sent.
 */
export declare class SearchableIndexError extends Error {
    readonly kind: SearchableIndexErrorKind;
    /** For `commitRefused`: the host's error. */
    readonly rpcError?: RpcError;
    constructor(kind: SearchableIndexErrorKind, message: string, rpcError?: RpcError);
}
