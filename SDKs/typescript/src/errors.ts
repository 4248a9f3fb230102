// Errors of the reindex extension SDK.

/** JSON-RPC error codes used by protocol version 1. */
export const ErrorCode = Object.freeze({
  parseError: -32700,
  invalidRequest: -32600,
  methodNotFound: -32601,
  invalidParams: -32602,
  internalError: -32603,
  /** The code of a refusal that carries no code of its own (the Swift SDK uses the same). */
  refused: -32000,
  requestCancelled: -32800,
} as const);

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
export class IndexRequestError extends Error {
  /** The JSON-RPC error code of the refusal. */
  declare readonly code: number;
  /** The refusal's `data`, sent as given. */
  declare readonly data: unknown;

  /**
   * @param message what the user sees in `reindex status` and the log
   */
  constructor(message: string, options: { code?: number; data?: unknown; cause?: unknown } = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'IndexRequestError';
    this.code = Number.isInteger(options.code) ? options.code as number : ErrorCode.refused;
    this.data = options.data;
  }
}

/**
 * The reason of `index.signal` once the host cancelled the request with `$/cancel`; thrown by
 * every `SearchableIndex` operation from then on. The SDK answers the request with -32800
 * ("Request cancelled") by itself.
 */
export class CancellationError extends Error {
  declare readonly code: -32800;

  constructor(message = 'Request cancelled') {
    super(message);
    this.name = 'CancellationError';
    this.code = ErrorCode.requestCancelled;
  }
}

/** What went wrong in a `SearchableIndex` operation; see `SearchableIndexError`. */
export type SearchableIndexErrorKind = 'clientStateTooLarge' | 'commitRefused' | 'disconnected' | 'requestFinished' | 'itemTooLarge';

/**
 * Errors the SDK itself raises from `SearchableIndex` operations. `kind` says which:
 * - `clientStateTooLarge`: the client state of `commitBatch` is over 250 bytes; nothing was sent.
 * - `commitRefused`: the host answered `batch/commit` with an error (`rpcError` holds it).
 * - `disconnected`: the connection to the host is gone (stdin closed or stdout broken).
 * - `requestFinished`: the request was already answered; operations after that are not allowed
 *   (a forgotten `await`); nothing was sent.
 * - `itemTooLarge`: a single item does not fit in one protocol line (16 MiB); nothing was sent.
 */
export class SearchableIndexError extends Error {
  declare readonly kind: SearchableIndexErrorKind;
  /** For `commitRefused`: the host's error. */
  declare readonly rpcError?: RpcError;

  constructor(kind: SearchableIndexErrorKind, message: string, rpcError?: RpcError) {
    super(message);
    this.name = 'SearchableIndexError';
    this.kind = kind;
    this.rpcError = rpcError;
  }
}
