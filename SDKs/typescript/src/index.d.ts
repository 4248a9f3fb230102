// Type declarations for reindex-extension (hand-written; the JavaScript beside them is the
// implementation). They need no other package; `AbortSignal` comes from @types/node or the DOM lib.

/** The protocol versions this SDK speaks (`[1]`). */
export declare const PROTOCOL_VERSIONS: readonly number[];
/** The most client state a batch may carry, in bytes before base64 (250). */
export declare const MAX_CLIENT_STATE_BYTES: 250;
/** The longest protocol line the host accepts (16 MiB). */
export declare const MAX_LINE_BYTES: number;

/** JSON-RPC error codes of protocol version 1. */
export declare const ErrorCode: {
  readonly parseError: -32700;
  readonly invalidRequest: -32600;
  readonly methodNotFound: -32601;
  readonly invalidParams: -32602;
  readonly internalError: -32603;
  /** The code of a refusal by an error that is not an `IndexRequestError`. */
  readonly refused: -32000;
  readonly requestCancelled: -32800;
};

/** The reasons protocol version 1 names. */
export declare const Reason: {
  readonly forced: 'forced';
  readonly indexLost: 'indexLost';
  readonly bundleChanged: 'bundleChanged';
  readonly expiring: 'expiring';
  readonly retry: 'retry';
};

/** Why the host asked. Later hosts may send reasons not listed here: accept them. */
export type ReindexReason = 'forced' | 'indexLost' | 'bundleChanged' | 'expiring' | 'retry' | (string & {});

/** A JSON-RPC request id. The host uses numbers. */
export type RequestId = number | string;

/** An RFC 3339 timestamp, or a `Date` (sent as `toISOString()`). */
export type Timestamp = string | Date;

/** An item's attributes. Every key is optional; unknown keys are stored and returned but not
 * searched (unless the manifest declares them as custom attributes). In a partial update
 * (`isUpdate: true`) an attribute set to `null` is removed. */
export interface ItemAttributes {
  /** Full-text searched. */
  title?: string | null;
  /** Full-text searched. */
  displayName?: string | null;
  /** Full-text searched. */
  contentDescription?: string | null;
  /** Full-text searched. */
  textContent?: string | null;
  contentType?: string | null;
  contentURL?: string | null;
  thumbnailURL?: string | null;
  relatedUniqueIdentifier?: string | null;
  /** Full-text searched. */
  keywords?: string[] | null;
  /** Full-text searched. */
  alternateNames?: string[] | null;
  /** Full-text searched. */
  authors?: string[] | null;
  emailAddresses?: string[] | null;
  phoneNumbers?: string[] | null;
  rating?: number | null;
  rankingHint?: number | null;
  latitude?: number | null;
  longitude?: number | null;
  supportsPhoneCall?: boolean | null;
  supportsNavigation?: boolean | null;
  startDate?: Timestamp | null;
  endDate?: Timestamp | null;
  contentCreationDate?: Timestamp | null;
  contentModificationDate?: Timestamp | null;
  /** Base64, or bytes (the SDK encodes them). */
  thumbnailData?: string | Uint8Array | null;
  /** Custom (manifest-declared) and unknown attributes. */
  [name: string]: unknown;
}

/** One searchable thing (Core Spotlight's `CSSearchableItem`). */
export interface SearchableItem {
  /** 1 to 1024 bytes of UTF-8, unique within the bundle. Putting it again replaces the item. */
  uniqueIdentifier: string;
  /** Groups items for `deleteDomains` (`a.b` also covers `a.b.c`). */
  domainIdentifier?: string;
  /** After this moment searches no longer return the item. */
  expirationDate?: Timestamp;
  attributes?: ItemAttributes | null;
  /** Merge `attributes` into the existing item of this identifier instead of replacing it. */
  isUpdate?: boolean;
}

/** The client state handed back to a resumed `reindexAll`: a Node `Buffer` at run time. */
export interface ClientState extends Uint8Array {
  toString(encoding?: 'utf8' | 'utf-8' | 'ascii' | 'latin1' | 'binary' | 'base64' | 'base64url' | 'hex' | 'ucs2' | 'utf16le', start?: number, end?: number): string;
}

/**
 * Where one request's items go (Core Spotlight's `CSSearchableIndex`), passed to `reindexAll`
 * and `reindexItems`. Each operation writes its messages at once, in call order, and resolves
 * when the protocol stream has room again: `await` them. Operations reject with
 * `CancellationError` once the request is cancelled, and with `SearchableIndexError` when the
 * host is gone or the handler has already answered the request (`requestFinished`: "request N
 * was already acknowledged; await your work before returning" — nothing is sent, and the SDK
 * says so on stderr too).
 */
export declare class SearchableIndex {
  private constructor();
  /** Why the host asked. */
  readonly reason: ReindexReason;
  /** For a resumed `reindexAll`: the state of its last committed batch; otherwise `null`. */
  readonly clientState: ClientState | null;
  /** The id of the host's request. */
  readonly requestId: RequestId;
  /** Which request this index serves. */
  readonly method: 'reindexAll' | 'reindexItems';
  /** Aborted when the host cancels the request (or goes away); its reason is a `CancellationError`. */
  readonly signal: AbortSignal;
  /** Whether the request was cancelled. */
  readonly cancelled: boolean;
  /** Throws the `CancellationError` once the request is cancelled. */
  throwIfCancelled(): void;
  /** Adds or replaces items (`index/put`), split into messages of bounded size. */
  put(items: SearchableItem | Iterable<SearchableItem>): Promise<void>;
  /** Removes items by identifier (`index/delete`). */
  delete(identifiers: readonly string[]): Promise<void>;
  /** Removes every item in these domains and their subdomains (`index/deleteDomains`). */
  deleteDomains(domainIdentifiers: readonly string[]): Promise<void>;
  /** Removes every item of this extension (`index/deleteAll`). */
  deleteAll(): Promise<void>;
  /**
   * Commits everything written so far together with `clientState` (at most 250 bytes; a string
   * is taken as UTF-8) and waits for the host (`batch/commit`). Resolves with the number of
   * operations committed. A later retry of an unfinished `reindexAll` gets this state back.
   */
  commitBatch(clientState: Uint8Array | ArrayBuffer | string): Promise<number>;
  /** Reports progress (`$/progress`); also keeps the host's idle timer from firing. Ignored once
   * the request is cancelled; throws `SearchableIndexError` (`requestFinished`) once the handler
   * has answered it. */
  progress(completed: number, total?: number, message?: string): void;
  /**
   * For `reindexAll` only: the result is empty on purpose. The acknowledgement then carries
   * `{"allowEmpty": true}`; without it the host refuses to publish a `reindexAll` that put no
   * accepted item while the bundle had items (the old items stay and the request fails). Call it
   * before the handler returns. Throws a `TypeError` in `reindexItems`.
   */
  allowEmpty(): void;
}

/** What an extension implements (Core Spotlight's `CSIndexExtensionRequestHandler`). Resolving
 * acknowledges the request; throwing or rejecting refuses it with the error's message. */
export interface IndexExtension {
  /** Index everything the extension has. */
  reindexAll(index: SearchableIndex): Promise<void> | void;
  /** Re-index exactly these items: put the ones that exist, delete the ones that are gone.
   * Without it, `reindexItems` requests are answered with -32601. */
  reindexItems?(identifiers: string[], index: SearchableIndex): Promise<void> | void;
  /** The name reported in `initialize` (default: the manifest's `displayName`). */
  readonly extensionName?: string;
  /** The version reported in `initialize` (default: the manifest's `version`, else "0"). */
  readonly extensionVersion?: string;
}

/** A stream the SDK can write protocol lines to (a Node `Writable`). */
export interface ProtocolOutput {
  write(chunk: string): boolean;
  on(event: 'drain' | 'error' | 'close', listener: (...args: any[]) => void): unknown;
}

/** Options of `run()`, for tests and embedding; an extension normally passes none. */
export interface RunOptions {
  /** Read the host's messages from this stream instead of stdin. */
  input?: AsyncIterable<Uint8Array | string>;
  /** Write protocol messages here instead of descriptor 1. */
  output?: ProtocolOutput;
  /** Exit the process (status 0) when the input ends, and on SIGTERM. Default: true without `input`. */
  exit?: boolean;
  /** Engage `protectStdout()`. Default: true when writing to descriptor 1. */
  protectStdout?: boolean;
  /** Honour `REINDEX_WAIT_FOR_DEBUGGER`. Default: true without `input`. */
  debuggerGate?: boolean;
  /** Use this manifest (or none, with `null`) instead of reading `manifest.json`. */
  manifest?: Record<string, unknown> | null;
  /** Read `manifest.json` from this directory instead of the working directory. */
  manifestDirectory?: string;
  /** Where the SDK's own diagnostics go. Default: stderr, prefixed `reindex-extension: `. */
  log?: (text: string) => void;
}

/**
 * Runs the protocol until the host closes stdin, then exits with status 0. Protects stdout,
 * honours the debugger gate, reads name and version from `manifest.json`, negotiates the
 * protocol version and dispatches the host's requests to the extension. Accepts an object or a
 * class (instantiated with no arguments).
 */
export declare function run(extension: IndexExtension | (new () => IndexExtension), options?: RunOptions): Promise<void>;

/** Refuses a request with a specific JSON-RPC code (default -32000), message and data. */
export declare class IndexRequestError extends Error {
  constructor(message: string, options?: { code?: number; data?: unknown; cause?: unknown });
  readonly code: number;
  readonly data: unknown;
}

/** The reason of `index.signal` after `$/cancel`; operations throw it from then on. The SDK
 * answers the cancelled request with -32800 by itself. */
export declare class CancellationError extends Error {
  constructor(message?: string);
  readonly code: -32800;
}

/** Errors the SDK raises from `SearchableIndex` operations. `requestFinished`: an operation came
 * after the handler had answered its request (a forgotten `await`); it was not sent. */
export declare class SearchableIndexError extends Error {
  constructor(kind: SearchableIndexError['kind'], message: string, rpcError?: { code: number; message: string; data?: unknown });
  readonly kind: 'clientStateTooLarge' | 'commitRefused' | 'disconnected' | 'requestFinished' | 'itemTooLarge';
  /** For `commitRefused`: the host's error. */
  readonly rpcError?: { code: number; message: string; data?: unknown };
}

/**
 * Moves JavaScript output off the protocol: protocol lines go to descriptor 1 through a private
 * stream (returned), `process.stdout` becomes `process.stderr`, and `console.log` / `info` /
 * `debug` / `dir` / `table` … print to stderr. `run()` calls it; calling it again is harmless.
 */
export declare function protectStdout(): ProtocolOutput;
/** Whether `protectStdout()` has run. */
export declare function isStdoutProtected(): boolean;

/** Seconds asked for by a `REINDEX_WAIT_FOR_DEBUGGER` value (0 = forever), or null for no gate. */
export declare function debuggerWaitSeconds(value: string | undefined): number | null;
/**
 * When `REINDEX_WAIT_FOR_DEBUGGER` is set: opens Node's inspector on 127.0.0.1 and
 * `REINDEX_INSPECTOR_PORT` (default 9229), prints the PID and the ways to attach (`node inspect`,
 * chrome://inspect, a VS Code entry) to stderr, and blocks until an inspector client attaches or
 * the seconds pass (0 = forever). Returns whether one attached; the SDK then pauses once before
 * the first handler. `run()` calls it.
 */
export declare function waitForDebuggerIfRequested(options?: {
  env?: Record<string, string | undefined>;
  log?: (text: string) => void;
}): boolean;

/** The bundle's `manifest.json` (working directory, else beside the main script), or null. */
export declare function readManifest(directory?: string): Record<string, unknown> | null;
