// The extension's side of the protocol: framing, dispatch of the host's messages, replies, the
// SDK's own requests (batch/commit) and cancellation.
import { Buffer } from 'node:buffer';
import { CancellationError, ErrorCode, IndexRequestError, SearchableIndexError } from './errors.js';
import { takeDebuggerBreak } from './debugger-gate.js';
import { makeSearchableIndex } from './searchable-index.js';
/** The protocol versions this SDK speaks. */
export const PROTOCOL_VERSIONS = Object.freeze([1]);
/** Lines from the host longer than this are skipped (the host never sends such lines). */
const MAX_INPUT_LINE_BYTES = 64 * 1024 * 1024;
const BASE64 = /^(?:[A-Za-z0-9+/]*={0,2}|[A-Za-z0-9_-]*={0,2})$/;
const keyOf = (id) => JSON.stringify(id);
/** The extension as the connection calls it: a class is instantiated with no arguments. */
export function handlerOf(extension, caller = 'run(extension)') {
    let handler = extension;
    if (typeof handler === 'function' && handler.prototype && typeof handler.prototype.reindexAll === 'function') {
        handler = new handler();
    }
    if (handler === null || (typeof handler !== 'object' && typeof handler !== 'function')
        || typeof handler.reindexAll !== 'function') {
        throw new TypeError(`${caller}: the extension must be an object (or a class) with a reindexAll(index) method`);
    }
    return handler;
}
/**
 * The error reply of a refused request. An `IndexRequestError` is sent as its author made it. Any
 * other error refuses with -32000 and its message, and its stack goes with it in `data.stack`
 * (the host records it with the reply; `reindex debug --trace` shows it), so that where the
 * handler failed reaches the host and not only what.
 */
export function refusal(error) {
    if (error instanceof IndexRequestError) {
        const result = { code: error.code, message: error.message };
        if (error.data !== undefined)
            result.data = error.data;
        return result;
    }
    if (error instanceof Error) {
        const result = { code: ErrorCode.refused, message: error.message || error.name };
        if (typeof error.stack === 'string' && error.stack !== '')
            result.data = { stack: error.stack };
        return result;
    }
    return { code: ErrorCode.refused, message: String(error) };
}
export class HostConnection {
    #output;
    #handler;
    #identity;
    #log;
    #nextOwnId = 1;
    #waiting = new Map();
    #requests = new Map();
    #closed = false;
    #stopped = false;
    #broken = null;
    #drain = null;
    #releaseDrain = null;
    #partial = [];
    #partialLength = 0;
    #skippingLine = false;
    #decoder = new TextDecoder('utf-8', { fatal: true });
    constructor(options) {
        this.#output = options.output;
        this.#handler = options.handler;
        this.#identity = options.identity;
        this.#log = options.log;
        this.#output.on('drain', () => this.#released());
        this.#output.on('error', (error) => {
            if (!this.#broken)
                this.#log(`cannot write to the host: ${error.message}`);
            this.#broken = error;
            this.#released();
            this.#disconnect();
        });
        this.#output.on('close', () => this.#released());
    }
    /** Whether stdin has ended (or stdout broke). */
    get closed() { return this.#closed; }
    // MARK: Writing
    #write(line) {
        if (this.#broken || this.#stopped)
            throw new SearchableIndexError('disconnected', 'the connection to the host is closed');
        if (!this.#output.write(line) && !this.#drain) {
            this.#drain = new Promise((resolve) => { this.#releaseDrain = resolve; });
        }
    }
    #released() {
        const release = this.#releaseDrain;
        this.#drain = null;
        this.#releaseDrain = null;
        if (release)
            release();
    }
    /** Resolves when the output has room again; never rejects (a broken output is reported by the
     * next operation). */
    drained() {
        return this.#drain ?? Promise.resolve();
    }
    #send(message) {
        if (this.#stopped)
            return; // exiting: the output is being flushed and closed
        try {
            this.#write(`${JSON.stringify(message)}\n`);
        }
        catch (error) {
            this.#log(`could not send a message to the host: ${error.message}`);
        }
    }
    #reply(id, result) {
        this.#send({ jsonrpc: '2.0', id, result });
    }
    #replyError(id, error) {
        this.#send({ jsonrpc: '2.0', id, error });
    }
    // MARK: Reading
    /**
     * Feeds bytes read from the host; every complete line is handled at once.
     */
    feed(chunk) {
        let data = typeof chunk === 'string' ? Buffer.from(chunk, 'utf8') : Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength);
        let newline = data.indexOf(10);
        while (newline !== -1) {
            const piece = data.subarray(0, newline);
            data = data.subarray(newline + 1);
            if (this.#skippingLine) {
                this.#skippingLine = false;
            }
            else if (this.#partial.length > 0) {
                this.#partial.push(piece);
                const line = Buffer.concat(this.#partial);
                this.#partial = [];
                this.#partialLength = 0;
                this.#handleLine(line);
            }
            else {
                this.#handleLine(piece);
            }
            newline = data.indexOf(10);
        }
        if (data.length > 0 && !this.#skippingLine) {
            this.#partial.push(Buffer.from(data)); // copy: the reader may reuse its buffer
            this.#partialLength += data.length;
            if (this.#partialLength > MAX_INPUT_LINE_BYTES) {
                this.#log(`skipping a line from the host longer than ${MAX_INPUT_LINE_BYTES} bytes`);
                this.#partial = [];
                this.#partialLength = 0;
                this.#skippingLine = true;
            }
        }
    }
    /** The end of the input: a last line without "\n" is still read. */
    finish() {
        if (this.#partial.length > 0 && !this.#skippingLine) {
            const line = Buffer.concat(this.#partial);
            this.#partial = [];
            this.#partialLength = 0;
            this.#handleLine(line);
        }
    }
    #handleLine(bytes) {
        let text;
        try {
            text = this.#decoder.decode(bytes);
        }
        catch {
            this.#log('ignored a line from the host that is not valid UTF-8');
            return;
        }
        text = text.trim();
        if (text === '')
            return;
        let message;
        try {
            message = JSON.parse(text);
        }
        catch (error) {
            this.#log(`ignored an unreadable line from the host (${error.message}): ${text.slice(0, 120)}`);
            return;
        }
        if (message === null || typeof message !== 'object' || Array.isArray(message)) {
            this.#log(`ignored a line from the host that is not a JSON-RPC message: ${text.slice(0, 120)}`);
            return;
        }
        this.handleMessage(message);
    }
    /**
     * Handles one message from the host.
     */
    handleMessage(message) {
        const hasId = Object.hasOwn(message, 'id') && message.id !== undefined;
        if (typeof message.method === 'string') {
            const params = message.params;
            if (!hasId) {
                if (message.method === '$/cancel')
                    this.#cancel(params);
                return; // unknown notifications are ignored
            }
            const id = message.id;
            if (typeof id !== 'number' && typeof id !== 'string') {
                this.#log(`ignored a request with an id that is not a number or a string: ${JSON.stringify(id)}`);
                return;
            }
            switch (message.method) {
                case 'initialize':
                    this.#initialize(id, params);
                    break;
                case 'reindexAll':
                case 'reindexItems':
                    this.#start(id, message.method, params);
                    break;
                default: this.#replyError(id, { code: ErrorCode.methodNotFound, message: `unknown method '${message.method}'` });
            }
            return;
        }
        if (hasId && (Object.hasOwn(message, 'result') || Object.hasOwn(message, 'error'))) {
            if (message.id === null) {
                this.#log(`the host reported an error: ${message.error?.message ?? JSON.stringify(message.error)}`);
                return;
            }
            const key = keyOf(message.id);
            const pending = this.#waiting.get(key);
            if (!pending)
                return; // a late reply to a commit that was abandoned (cancelled)
            this.#waiting.delete(key);
            if (Object.hasOwn(message, 'error')) {
                const error = message.error ?? {};
                const text = typeof error.message === 'string' ? error.message : JSON.stringify(error);
                pending.reject(new SearchableIndexError('commitRefused', `the host refused the batch commit: ${text}`, { code: error.code, message: text, data: error.data }));
            }
            else {
                pending.resolve(message.result);
            }
            return;
        }
        this.#log(`ignored a message from the host that is neither a request, a notification nor a reply: ${JSON.stringify(message).slice(0, 120)}`);
    }
    #initialize(id, params) {
        const requested = params !== null && typeof params === 'object' ? params.protocolVersions : undefined;
        if (!Array.isArray(requested)) {
            this.#replyError(id, { code: ErrorCode.invalidParams, message: 'params.protocolVersions: is required (an array of numbers)' });
            return;
        }
        const bad = requested.findIndex((v) => !Number.isInteger(v));
        if (bad !== -1) {
            this.#replyError(id, { code: ErrorCode.invalidParams, message: `params.protocolVersions[${bad}]: expected a whole number, got ${JSON.stringify(requested[bad])}` });
            return;
        }
        const common = requested.filter((v) => PROTOCOL_VERSIONS.includes(v));
        if (common.length === 0) {
            this.#replyError(id, {
                code: ErrorCode.invalidParams,
                message: 'no common protocol version',
                data: { supported: [...PROTOCOL_VERSIONS], requested },
            });
            return;
        }
        this.#reply(id, {
            protocolVersion: Math.max(...common),
            extension: { name: this.#identity.name, version: this.#identity.version },
            capabilities: {},
        });
    }
    #start(id, method, rawParams) {
        const key = keyOf(id);
        if (this.#requests.has(key)) {
            this.#log(`ignored ${method} with id ${key}: a request with that id is still running`);
            return;
        }
        if (rawParams !== undefined && rawParams !== null && (typeof rawParams !== 'object' || Array.isArray(rawParams))) {
            this.#replyError(id, { code: ErrorCode.invalidParams, message: 'params: expected an object' });
            return;
        }
        const params = (rawParams ?? {});
        const reason = params.reason ?? 'forced';
        if (typeof reason !== 'string') {
            this.#replyError(id, { code: ErrorCode.invalidParams, message: `params.reason: expected a string, got ${JSON.stringify(reason)}` });
            return;
        }
        let clientState = null;
        let identifiers = [];
        if (method === 'reindexAll') {
            const state = params.clientState ?? null;
            if (state !== null && typeof state !== 'string') {
                this.#replyError(id, { code: ErrorCode.invalidParams, message: `params.clientState: expected a string or null, got ${JSON.stringify(state)}` });
                return;
            }
            if (state !== null) {
                if (state.length % 4 !== 1 && BASE64.test(state)) {
                    clientState = Buffer.from(state, 'base64');
                }
                else {
                    this.#log('the client state from the host is not base64; starting without it');
                }
            }
        }
        else {
            const ids = params.identifiers;
            if (!Array.isArray(ids) || ids.some((v) => typeof v !== 'string')) {
                this.#replyError(id, { code: ErrorCode.invalidParams, message: 'params.identifiers: is required (an array of strings)' });
                return;
            }
            identifiers = ids;
            if (typeof this.#handler.reindexItems !== 'function') {
                this.#replyError(id, { code: ErrorCode.methodNotFound, message: 'this extension does not implement reindexItems' });
                return;
            }
        }
        const state = { id, key, method, controller: new AbortController(), answered: false, settledBy: null, allowEmpty: false,
            returned: false, lateCalls: [] };
        this.#requests.set(key, state);
        const link = {
            check: (operation) => this.#check(state, operation),
            settled: () => state.settledBy !== null,
            allowEmpty: () => { state.allowEmpty = true; },
            write: (line) => this.#write(line),
            drained: () => this.drained(),
            commit: (commitParams) => this.#commit(state, commitParams),
            isOpen: () => !state.answered && !this.#closed && !this.#broken && !this.#stopped,
            signal: state.controller.signal,
        };
        const index = makeSearchableIndex(link, { reason, clientState, requestId: id, method });
        const handler = this.#handler;
        const work = (async () => {
            if (takeDebuggerBreak()) {
                // `reindex debug --wait-for-debugger`: a debugger attached in the gate, and this is the
                // first request. Paused here once, before your handler runs: set breakpoints and
                // continue, or step into the call below.
                debugger; // eslint-disable-line no-debugger
            }
            if (method === 'reindexAll')
                await handler.reindexAll(index);
            else
                await handler.reindexItems(identifiers, index);
            // A handler that resolved while work it started goes on (a missing `await`, a promise
            // left running) would be acknowledged half-done. Let pending continuations run for one
            // turn of the event loop: if one of them uses the index, refuse instead of acknowledging.
            state.returned = true;
            await new Promise((resolve) => setImmediate(resolve));
            for (const waiting of this.#waiting.values()) {
                if (waiting.request === state)
                    state.lateCalls.push('index.commitBatch() still waiting for its reply');
            }
            if (state.lateCalls.length > 0) {
                const name = method === 'reindexAll' ? 'reindexAll' : 'reindexItems';
                throw new IndexRequestError(`${name} returned while work it started was still using the index (${state.lateCalls.slice(0, 3).join(', ')} after it returned): ` +
                    'an await is missing; the request is refused so that nothing half-done is published');
            }
        })();
        work.then(() => this.#end(state, null, false), (error) => this.#end(state, error, true));
    }
    /**
     * Throws unless the request may still send operations. An operation after the handler has
     * answered the request is the author's mistake (a missing `await`, work left running in a
     * timer): the host would take it as a protocol violation, so it is never sent, and it is
     * reported on stderr as well as thrown, since nothing may be awaiting it. `operation` is what
     * was called, for the message.
     */
    #check(state, operation) {
        if (state.returned && state.settledBy === null)
            state.lateCalls.push(`${operation}()`);
        if (state.settledBy !== null) {
            const error = new SearchableIndexError('requestFinished', `${operation}: request ${state.key} was already ${state.settledBy}; await your work before returning from the handler (nothing was sent)`);
            this.#log(error.message);
            throw error;
        }
        if (this.#broken || this.#closed)
            throw new SearchableIndexError('disconnected', 'the connection to the host is closed');
        if (state.controller.signal.aborted)
            throw state.controller.signal.reason;
        if (state.answered) {
            throw new SearchableIndexError('requestFinished', `${operation}: request ${state.key} has already been answered; its operations must come before the handler returns`);
        }
    }
    /**
     * Sends `batch/commit` for a request and waits for the host's reply.
     */
    #commit(state, params) {
        const id = this.#nextOwnId;
        this.#nextOwnId += 1;
        return new Promise((resolve, reject) => {
            this.#waiting.set(keyOf(id), { resolve, reject, request: state });
            try {
                this.#write(`${JSON.stringify({ jsonrpc: '2.0', id, method: 'batch/commit', params })}\n`);
            }
            catch (error) {
                this.#waiting.delete(keyOf(id));
                reject(error);
            }
        });
    }
    /**
     * The handler of a request settled. A refusal by an error that is not an `IndexRequestError`
     * is logged with its stack: the log is the bundle's log file, `reindex debug` streams it, and
     * `reindex run` shows its last lines with the failure.
     */
    #end(state, error, failed) {
        if (this.#requests.get(state.key) === state)
            this.#requests.delete(state.key);
        if (state.answered) {
            if (failed && !(error instanceof CancellationError) && !state.controller.signal.aborted) {
                this.#log(`request ${state.key} failed after it was answered: ${refusal(error).message}`);
            }
            return;
        }
        state.answered = true;
        state.settledBy = failed ? 'refused' : 'acknowledged';
        if (failed) {
            if (error instanceof Error && !(error instanceof IndexRequestError) && error.stack) {
                this.#log(`refusing ${state.method} (request ${state.key}): ${error.stack}`);
            }
            this.#replyError(state.id, refusal(error));
        }
        else {
            this.#reply(state.id, state.allowEmpty ? { allowEmpty: true } : {});
        }
    }
    #cancel(params) {
        if (params === null || typeof params !== 'object')
            return;
        const id = params.id;
        if (typeof id !== 'number' && typeof id !== 'string')
            return;
        const state = this.#requests.get(keyOf(id));
        if (!state || state.answered)
            return; // already answered: ignore the cancel
        state.answered = true;
        this.#requests.delete(state.key);
        this.#replyError(state.id, { code: ErrorCode.requestCancelled, message: 'Request cancelled' });
        const reason = new CancellationError();
        this.#rejectCommits(state, reason);
        state.controller.abort(reason);
    }
    /** Fails the commits of `state` that wait for the host's reply (of every request with null). */
    #rejectCommits(state, error) {
        for (const [key, pending] of this.#waiting) {
            if (state === null || pending.request === state) {
                this.#waiting.delete(key);
                pending.reject(error);
            }
        }
    }
    #disconnect() {
        const wasClosed = this.#closed;
        this.#closed = true;
        if (wasClosed)
            return;
        this.#rejectCommits(null, new SearchableIndexError('disconnected', 'the connection to the host is closed'));
        for (const state of this.#requests.values()) {
            state.controller.abort(new CancellationError('the host closed the connection'));
        }
    }
    /** The host closed stdin: fail what waits for the host and cancel what runs. */
    close() {
        this.finish();
        this.#disconnect();
    }
    /** Nothing more may be written (the process is about to flush stdout and exit): later
     * operations reject with `disconnected` and replies are dropped, instead of failing the stream
     * and losing what is still buffered in it. */
    stopWriting() {
        this.#stopped = true;
    }
}
