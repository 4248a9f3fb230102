import { type RpcError } from './errors.js';
import type { ExtensionLike, ReindexReason } from './types.js';
/** An item as the host receives it: JSON, with dates as RFC 3339 strings, `thumbnailData` as
 * base64 and custom attributes as members of `attributes`. */
export interface RecordedItem {
    uniqueIdentifier: string;
    domainIdentifier?: string;
    expirationDate?: string;
    attributes?: Record<string, unknown> | null;
    isUpdate?: boolean;
}
/** A batch the handler committed: its client state, and how many operations it committed. */
export interface RecordedCommit {
    /** The client state as bytes. */
    bytes: Uint8Array;
    /** The client state as UTF-8 text (what a string given to `commitBatch` was). */
    clientState: string;
    /** Operations (`put`s, `delete`s …, one per message) since the previous commit. */
    operations: number;
}
/** A `$/progress` report. */
export interface RecordedProgress {
    completed: number;
    total?: number;
    message?: string;
}
/** One thing the handler did, in order. */
export declare type RecordedOperation = {
    kind: 'put';
    items: RecordedItem[];
} | {
    kind: 'delete';
    identifiers: string[];
} | {
    kind: 'deleteDomains';
    domainIdentifiers: string[];
} | {
    kind: 'deleteAll';
} | {
    kind: 'commit';
    commit: RecordedCommit;
} | {
    kind: 'progress';
    progress: RecordedProgress;
};
/**
 * What a handler sent for one request, in order: puts, deletes, commits, progress, and how the
 * request ended. `reindexAll()` and `reindexItems()` below fill one; pass your own in their
 * options to look at what a refused request sent before it failed.
 */
export declare class RecordingIndex {
    /** Every operation, in the order the handler made it. */
    readonly operations: RecordedOperation[];
    /** The SDK's own diagnostics (what it would print to stderr, the bundle's log). */
    readonly log: string[];
    /** How the SDK answered the request; `undefined` while it runs. */
    outcome: 'acknowledged' | 'refused' | undefined;
    /** The acknowledgement allowed an empty result (`index.allowEmpty()`). */
    allowEmpty: boolean;
    /** The refusal the host would receive (code, message, and `data.stack` for an error). */
    refusal: RpcError | undefined;
    /** The attribute names the manifest declares (`attributes`), which `warnings` knows too. */
    declaredAttributes: string[];
    /**
     * What the host would warn about in what was put, once per name as it does: an attribute name
     * that is neither built in nor declared but near one (`keyword` for `keywords`: kept as a
     * custom attribute and not searched), and a member an item does not have (`title` beside
     * `uniqueIdentifier` instead of inside `attributes`, Core Spotlight's `attributeSet`: ignored).
     */
    get warnings(): string[];
    /** Every item put, in order (one entry per put, also when an identifier comes again). */
    get puts(): RecordedItem[];
    /** Every identifier deleted with `index.delete`, in order. */
    get deletes(): string[];
    /** Every domain deleted with `index.deleteDomains`, in order. */
    get deletedDomains(): string[];
    /** Whether the handler called `index.deleteAll()`. */
    get deletedAll(): boolean;
    /** Every committed batch, in order. */
    get commits(): RecordedCommit[];
    /** Every progress report, in order. */
    get progress(): RecordedProgress[];
    /**
     * The items an index that was empty before the request would hold after it, by identifier:
     * the puts, deletes and partial updates applied in order (an update of an item that is not
     * there is ignored, as the host ignores it).
     */
    items(): Map<string, RecordedItem>;
}
/** Options of `reindexAll()` and `reindexItems()`. */
export interface TestRequestOptions {
    /** The request's reason (default `forced`). */
    reason?: ReindexReason;
    /** `reindexAll` only: the client state to resume from (a string is taken as UTF-8). */
    clientState?: Uint8Array | string | null;
    /** Record into this index (default: a new one). */
    recording?: RecordingIndex;
    /** The manifest the extension sees (default: none). */
    manifest?: Record<string, unknown> | null;
}
/**
 * The candidate nearest to `name` by edit distance (insertions, deletions, substitutions and
 * swaps of neighbours; case ignored) when it is near enough to be a typo — at most one edit for
 * names of up to four characters, two up to eight, three beyond — else undefined. The host's rule.
 */
export declare function suggest(name: string, candidates: readonly string[]): string | undefined;
/**
 * Calls the extension's `reindexAll` in process, as the host would ask for it, and resolves with
 * what it sent. Rejects with the handler's error when it refuses (or with an
 * `IndexRequestError` when the SDK refuses for it: an operation after it returned), after
 * recording what it sent before into `options.recording`. Accepts an object or a class, as
 * `run()` does.
 */
export declare function reindexAll(extension: ExtensionLike, options?: TestRequestOptions): Promise<RecordingIndex>;
/** Calls the extension's `reindexItems(identifiers, index)` in process; as `reindexAll()`. */
export declare function reindexItems(extension: ExtensionLike, identifiers: readonly string[], options?: TestRequestOptions): Promise<RecordingIndex>;
