import type { ClientState, CustomAttributes, CustomAttributesOf, ReindexReason, RequestId, SearchableItem } from './types.js';
/** The most client state a batch may carry, in bytes (before base64). */
export declare const MAX_CLIENT_STATE_BYTES = 250;
/** The longest line the host accepts. */
export declare const MAX_LINE_BYTES: number;
/** Guards the constructor: only the SDK makes indexes. */
export declare const INTERNAL: unique symbol;
/** What a `SearchableIndex` needs from the connection for its request. */
export interface RequestLink {
    /** Throws unless the request may still send operations. */
    check(operation: string): void;
    /** Whether the handler has answered the request. */
    settled(): boolean;
    /** Makes the acknowledgement carry `{"allowEmpty": true}`. */
    allowEmpty(): void;
    /** Writes one protocol line (already ended by "\n"). */
    write(line: string): void;
    /** Resolves when the protocol stream has room again. */
    drained(): Promise<void>;
    /** Sends `batch/commit`, resolves with its result. */
    commit(params: Record<string, unknown>): Promise<unknown>;
    /** Whether operations may still be sent. */
    isOpen(): boolean;
    /** Aborted by `$/cancel` (and when the host goes away). */
    readonly signal: AbortSignal;
}
/** What a request tells its index. */
export interface IndexDetails {
    reason: ReindexReason;
    clientState: ClientState | null;
    requestId: RequestId;
    method: 'reindexAll' | 'reindexItems';
}
/** The built-in attributes of protocol version 1. */
export declare const BUILT_IN_ATTRIBUTES: ReadonlySet<string>;
/**
 * Where a request's items go, bound to that request. Writes are streamed to the host as they
 * are made (each call writes its messages at once, in call order) and become visible when the
 * request is acknowledged — or, for `reindexItems`, when a batch is committed. Large arrays are
 * split into messages of bounded size. Every operation returns a promise that resolves once the
 * protocol stream has room again (backpressure): `await` them.
 */
export declare class SearchableIndex {
    #private;
    /** Only the SDK makes indexes (`makeSearchableIndex`); one is passed to each handler. */
    private constructor();
    /** Why the host asked: `forced`, `indexLost`, `bundleChanged`, `expiring`, `retry`, or a reason
     * this SDK does not know yet (treat those like any other). */
    get reason(): ReindexReason;
    /** For `reindexAll`: the client state of the last committed batch of an earlier, unfinished
     * attempt, to resume from; `null` for a fresh start (and always for `reindexItems`). */
    get clientState(): ClientState | null;
    /** The id of the host's request this index belongs to. */
    get requestId(): RequestId;
    /** `reindexAll` or `reindexItems`. */
    get method(): 'reindexAll' | 'reindexItems';
    /** Aborted when the host cancels the request (`$/cancel`) or goes away. Pass it to `fetch`,
     * streams, timers …; its `reason` is a `CancellationError`. */
    get signal(): AbortSignal;
    /** Whether the host cancelled the request (or went away). */
    get cancelled(): boolean;
    /** Throws the `CancellationError` once the request is cancelled. */
    throwIfCancelled(): void;
    /**
     * Adds or replaces items (`index/put`), split into messages of bounded size. Accepts one item
     * or an iterable of items. `Date` values are sent as RFC 3339 strings, a `Uint8Array`
     * `thumbnailData` as base64, and `custom` attributes as members of the attributes object.
     * Throws a `TypeError` that names the item and the attribute, and sends nothing of the call,
     * when a value would not arrive as written: a number that is not finite (`NaN`, ±`Infinity`)
     * or an invalid `Date` (JSON would carry either as `null`).
     */
    put<Custom extends CustomAttributesOf<Custom> = CustomAttributes>(items: SearchableItem<Custom> | Iterable<SearchableItem<Custom>>): Promise<void>;
    /**
     * Removes items by identifier (`index/delete`).
     */
    delete(identifiers: readonly string[]): Promise<void>;
    /**
     * Removes every item in these domains and their subdomains (`index/deleteDomains`; `a.b` also
     * removes `a.b.c`, never `a.bc`).
     */
    deleteDomains(domainIdentifiers: readonly string[]): Promise<void>;
    /**
     * Removes every item of this extension (`index/deleteAll`), and only this extension's.
     */
    deleteAll(): Promise<void>;
    /**
     * Makes everything written so far durable together with `clientState` (at most 250 bytes; a
     * string is taken as UTF-8) and waits for the host's confirmation (`batch/commit`). If the
     * request is interrupted later, the next `reindexAll` receives this state as
     * `index.clientState`. Resolves with the number of operations the host committed.
     *
     * Rejects with `SearchableIndexError` (`clientStateTooLarge` before sending anything,
     * `commitRefused`, `disconnected`) or `CancellationError`.
     */
    commitBatch(clientState: Uint8Array | ArrayBuffer | string): Promise<number>;
    /**
     * Reports progress (`$/progress`; `reindex run` shows it as a progress bar). Any message resets
     * the host's idle timer, so call it well within every `idleSeconds` during long work. Does
     * nothing once the request is cancelled or the host is gone; throws `SearchableIndexError`
     * (`requestFinished`) once the handler has answered the request, as the other operations do.
     */
    progress(completed: number, total?: number, message?: string): void;
    /**
     * For `reindexAll`: says that an empty result is intended. The acknowledgement then carries
     * `{"allowEmpty": true}`. Without it, the host refuses to publish a `reindexAll` that put no
     * accepted item while the bundle had items: it keeps the old items and fails the request, so
     * that a data source that came back empty by mistake (an unmounted disk, an expired token)
     * does not wipe the index. Call it before the handler returns, typically when the source
     * really is empty. It does not put or delete anything by itself. Throws a `TypeError` in
     * `reindexItems`.
     */
    allowEmpty(): void;
}
/** Makes the index of one request (the connection and the testing helpers do). */
export declare function makeSearchableIndex(link: RequestLink, details: IndexDetails): SearchableIndex;
