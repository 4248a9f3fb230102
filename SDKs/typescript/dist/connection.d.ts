import { type RpcError } from './errors.js';
import { type SearchableIndex } from './searchable-index.js';
import type { ProtocolOutput } from './types.js';
/** The protocol versions this SDK speaks. */
export declare const PROTOCOL_VERSIONS: readonly number[];
/** What the connection calls: the extension's handlers. */
export interface Handler {
    reindexAll(index: SearchableIndex): unknown;
    reindexItems?(identifiers: string[], index: SearchableIndex): unknown;
}
/** The extension as the connection calls it: a class is instantiated with no arguments. */
export declare function handlerOf(extension: unknown, caller?: string): Handler;
/**
 * The error reply of a refused request. An `IndexRequestError` is sent as its author made it. Any
 * other error refuses with -32000 and its message, and its stack goes with it in `data.stack`
 * (the host records it with the reply; `reindex debug --trace` shows it), so that where the
 * handler failed reaches the host and not only what.
 */
export declare function refusal(error: unknown): RpcError;
export declare class HostConnection {
    #private;
    constructor(options: {
        output: ProtocolOutput;
        handler: Handler;
        identity: {
            name: string;
            version: string;
        };
        log: (text: string) => void;
    });
    /** Whether stdin has ended (or stdout broke). */
    get closed(): boolean;
    /** Resolves when the output has room again; never rejects (a broken output is reported by the
     * next operation). */
    drained(): Promise<void>;
    /**
     * Feeds bytes read from the host; every complete line is handled at once.
     */
    feed(chunk: Uint8Array | string): void;
    /** The end of the input: a last line without "\n" is still read. */
    finish(): void;
    /**
     * Handles one message from the host.
     */
    handleMessage(message: Record<string, any>): void;
    /** The host closed stdin: fail what waits for the host and cancel what runs. */
    close(): void;
    /** Nothing more may be written (the process is about to flush stdout and exit): later
     * operations reject with `disconnected` and replies are dropped, instead of failing the stream
     * and losing what is still buffered in it. */
    stopWriting(): void;
}
