import { PROTOCOL_VERSIONS } from './connection.js';
import type { ExtensionLike, RunOptions } from './types.js';
export { CancellationError, ErrorCode, IndexRequestError, SearchableIndexError } from './errors.js';
export { MAX_CLIENT_STATE_BYTES, MAX_LINE_BYTES, SearchableIndex } from './searchable-index.js';
export { debuggerWaitSeconds, waitForDebuggerIfRequested } from './debugger-gate.js';
export { isStdoutProtected, protectStdout } from './stdout-protection.js';
export { readManifest } from './manifest.js';
export { PROTOCOL_VERSIONS };
export type { RpcError, SearchableIndexErrorKind } from './errors.js';
export type { ClientState, CustomAttributeValue, CustomAttributes, CustomAttributesOf, ExtensionLike, IndexExtension, ItemAttributes, ProtocolOutput, ReindexReason, RequestId, RunOptions, SearchableItem, Timestamp, } from './types.js';
/** The reasons protocol version 1 names. Extensions must accept others too. */
export declare const Reason: Readonly<{
    readonly forced: "forced";
    readonly indexLost: "indexLost";
    readonly bundleChanged: "bundleChanged";
    readonly expiring: "expiring";
    readonly retry: "retry";
}>;
/**
 * Runs the protocol until the host closes stdin, then exits with status 0.
 *
 * In order: protects stdout (`protectStdout()`), waits for a debugger when
 * `REINDEX_WAIT_FOR_DEBUGGER` is set (`waitForDebuggerIfRequested()`), reads the name and
 * version from `manifest.json`, then answers the host: `initialize` (with version negotiation),
 * `reindexAll` and `reindexItems` (by calling the extension; resolving acknowledges, throwing
 * refuses), `$/cancel`, and -32601 for any other request. SIGTERM ends the process with status 0.
 *
 * `options` are for tests and embedding: with `input` the SDK reads that stream instead of
 * stdin, and by default neither protects stdout, opens the debugger gate nor exits at the end:
 * the returned promise resolves when the input ends.
 */
export declare function run(extension: ExtensionLike, options?: RunOptions): Promise<void>;
