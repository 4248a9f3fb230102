// SearchableIndex: where one request's items go (Core Spotlight's CSSearchableIndex).
import { Buffer } from 'node:buffer';
import { SearchableIndexError } from './errors.js';
/** The most client state a batch may carry, in bytes (before base64). */
export const MAX_CLIENT_STATE_BYTES = 250;
/** The longest line the host accepts. */
export const MAX_LINE_BYTES = 16 * 1024 * 1024;
/** Items per `index/put` message (as in the Swift SDK). */
const ITEMS_PER_MESSAGE = 500;
/** Characters (UTF-16 code units) of items or identifiers per message: at most 12 MiB of UTF-8. */
const CHARACTERS_PER_MESSAGE = 4 * 1024 * 1024;
/** Guards the constructor: only the SDK makes indexes. */
export const INTERNAL = Symbol('reindex-extension.internal');
/** The built-in attributes of protocol version 1. */
export const BUILT_IN_ATTRIBUTES = new Set([
    'title', 'displayName', 'contentDescription', 'textContent', 'contentType', 'contentURL', 'thumbnailURL',
    'relatedUniqueIdentifier', 'keywords', 'alternateNames', 'authors', 'emailAddresses', 'phoneNumbers',
    'rating', 'rankingHint', 'latitude', 'longitude', 'supportsPhoneCall', 'supportsNavigation', 'startDate', 'endDate',
    'contentCreationDate', 'contentModificationDate', 'thumbnailData',
]);
/**
 * The first value under `value` that JSON cannot carry and that `JSON.stringify` would turn into
 * `null` without a word — a number that is not finite, an invalid `Date` — with its path and why;
 * `null` when there is none. (In a partial update `null` removes an attribute: such a value would
 * even delete data.)
 */
function unsendable(value, path, depth = 0) {
    if (typeof value === 'number') {
        if (Number.isFinite(value))
            return null;
        return `${path} is ${value}; a number must be finite (NaN and ±Infinity are not JSON: they would be sent as null)`;
    }
    if (value === null || typeof value !== 'object' || depth > 64)
        return null;
    if (value instanceof Date) {
        return Number.isNaN(value.getTime()) ? `${path} is an invalid Date (it would be sent as null)` : null;
    }
    if (ArrayBuffer.isView(value))
        return null;
    if (Array.isArray(value)) {
        for (let i = 0; i < value.length; i += 1) {
            const problem = unsendable(value[i], `${path}[${i}]`, depth + 1);
            if (problem)
                return problem;
        }
        return null;
    }
    if (typeof value.toJSON === 'function')
        return null;
    for (const key of Object.keys(value)) {
        const problem = unsendable(value[key], `${path}.${key}`, depth + 1);
        if (problem)
            return problem;
    }
    return null;
}
/** The attributes as the protocol carries them: the `custom` ones as members beside the built-in
 * ones, and bytes of `thumbnailData` as base64. Returns `attributes` itself when nothing changes. */
function wireAttributes(attributes, item) {
    const data = attributes.thumbnailData;
    const custom = attributes.custom;
    if (!(data instanceof Uint8Array) && custom === undefined)
        return attributes;
    const result = {};
    for (const key of Object.keys(attributes)) {
        if (key !== 'custom')
            result[key] = attributes[key];
    }
    if (data instanceof Uint8Array) {
        result.thumbnailData = Buffer.from(data.buffer, data.byteOffset, data.byteLength).toString('base64');
    }
    if (custom === null || custom === undefined)
        return result;
    if (typeof custom !== 'object' || Array.isArray(custom)) {
        throw new TypeError(`put: ${item()}: attributes.custom must be an object of attributes by name, not ${Array.isArray(custom) ? 'an array' : typeof custom}`);
    }
    for (const key of Object.keys(custom)) {
        const value = custom[key];
        if (value === undefined)
            continue;
        if ((BUILT_IN_ATTRIBUTES.has(key) || key === 'custom') && value !== null) {
            throw new TypeError(`put: ${item()}: attributes.custom.${key}: '${key}' is a built-in attribute; set attributes.${key} instead`);
        }
        if (Object.hasOwn(result, key)) {
            throw new TypeError(`put: ${item()}: attributes.custom.${key}: '${key}' is set outside custom too; set it once`);
        }
        result[key] = value;
    }
    return result;
}
/** One item's JSON, checked: what would not arrive as it was written is refused. */
function serializeItem(item, position) {
    if (item === null || typeof item !== 'object' || Array.isArray(item)) {
        throw new TypeError(`put: item ${position} is not an object`);
    }
    let value = item;
    const describe = () => `item ${position} (${JSON.stringify(String(value.uniqueIdentifier)).slice(0, 80)})`;
    const problem = unsendable(value.attributes, 'attributes') ?? unsendable(value.expirationDate, 'expirationDate');
    if (problem)
        throw new TypeError(`put: ${describe()}: ${problem}; nothing of this put was sent`);
    const attributes = value.attributes;
    if (attributes !== null && typeof attributes === 'object' && !Array.isArray(attributes)) {
        const wire = wireAttributes(attributes, describe);
        if (wire !== attributes)
            value = { ...value, attributes: wire };
    }
    const json = JSON.stringify(value);
    if (json.length * 3 > MAX_LINE_BYTES - 256 && Buffer.byteLength(json) > MAX_LINE_BYTES - 256) {
        throw new SearchableIndexError('itemTooLarge', `put: item ${position} (${JSON.stringify(String(value.uniqueIdentifier)).slice(0, 80)}) is ${Buffer.byteLength(json)} bytes of JSON; a protocol line holds at most ${MAX_LINE_BYTES}`);
    }
    return json;
}
/** Splits JSON fragments into lines of bounded size. */
function frameLines(fragments, maxCount, frame) {
    const lines = [];
    let start = 0;
    while (start < fragments.length) {
        let end = start;
        let size = 0;
        while (end < fragments.length && end - start < maxCount && (end === start || size + fragments[end].length < CHARACTERS_PER_MESSAGE)) {
            size += fragments[end].length + 1;
            end += 1;
        }
        lines.push(frame(fragments.slice(start, end).join(',')));
        start = end;
    }
    return lines;
}
function stringList(what, list) {
    if (typeof list === 'string')
        return [list];
    if (!Array.isArray(list))
        throw new TypeError(`${what}: expected an array of strings`);
    for (let i = 0; i < list.length; i += 1) {
        if (typeof list[i] !== 'string')
            throw new TypeError(`${what}: element ${i} is not a string`);
    }
    return list;
}
/**
 * Where a request's items go, bound to that request. Writes are streamed to the host as they
 * are made (each call writes its messages at once, in call order) and become visible when the
 * request is acknowledged — or, for `reindexItems`, when a batch is committed. Large arrays are
 * split into messages of bounded size. Every operation returns a promise that resolves once the
 * protocol stream has room again (backpressure): `await` them.
 */
export class SearchableIndex {
    #link;
    #reason;
    #clientState;
    #requestId;
    #method;
    /** Only the SDK makes indexes (`makeSearchableIndex`); one is passed to each handler. */
    constructor(token, link, details) {
        if (token !== INTERNAL)
            throw new TypeError('SearchableIndex is made by the SDK; it is passed to reindexAll and reindexItems');
        this.#link = link;
        this.#reason = details.reason;
        this.#clientState = details.clientState;
        this.#requestId = details.requestId;
        this.#method = details.method;
    }
    /** Why the host asked: `forced`, `indexLost`, `bundleChanged`, `expiring`, `retry`, or a reason
     * this SDK does not know yet (treat those like any other). */
    get reason() { return this.#reason; }
    /** For `reindexAll`: the client state of the last committed batch of an earlier, unfinished
     * attempt, to resume from; `null` for a fresh start (and always for `reindexItems`). */
    get clientState() { return this.#clientState; }
    /** The id of the host's request this index belongs to. */
    get requestId() { return this.#requestId; }
    /** `reindexAll` or `reindexItems`. */
    get method() { return this.#method; }
    /** Aborted when the host cancels the request (`$/cancel`) or goes away. Pass it to `fetch`,
     * streams, timers …; its `reason` is a `CancellationError`. */
    get signal() { return this.#link.signal; }
    /** Whether the host cancelled the request (or went away). */
    get cancelled() { return this.#link.signal.aborted; }
    /** Throws the `CancellationError` once the request is cancelled. */
    throwIfCancelled() {
        if (this.#link.signal.aborted)
            throw this.#link.signal.reason;
    }
    /**
     * Adds or replaces items (`index/put`), split into messages of bounded size. Accepts one item
     * or an iterable of items. `Date` values are sent as RFC 3339 strings, a `Uint8Array`
     * `thumbnailData` as base64, and `custom` attributes as members of the attributes object.
     * Throws a `TypeError` that names the item and the attribute, and sends nothing of the call,
     * when a value would not arrive as written: a number that is not finite (`NaN`, ±`Infinity`)
     * or an invalid `Date` (JSON would carry either as `null`).
     */
    async put(items) {
        this.#link.check('index.put');
        const list = Array.isArray(items) ? items
            : (items !== null && typeof items === 'object' && Symbol.iterator in items) ? Array.from(items)
                : [items];
        if (list.length === 0)
            return;
        const fragments = list.map(serializeItem);
        for (const line of frameLines(fragments, ITEMS_PER_MESSAGE, (body) => `{"jsonrpc":"2.0","method":"index/put","params":{"items":[${body}]}}\n`)) {
            this.#link.write(line);
        }
        await this.#link.drained();
    }
    /**
     * Removes items by identifier (`index/delete`).
     */
    async delete(identifiers) {
        this.#link.check('index.delete');
        const list = stringList('delete', identifiers);
        if (list.length === 0)
            return;
        for (const line of frameLines(list.map((id) => JSON.stringify(id)), Infinity, (body) => `{"jsonrpc":"2.0","method":"index/delete","params":{"identifiers":[${body}]}}\n`)) {
            this.#link.write(line);
        }
        await this.#link.drained();
    }
    /**
     * Removes every item in these domains and their subdomains (`index/deleteDomains`; `a.b` also
     * removes `a.b.c`, never `a.bc`).
     */
    async deleteDomains(domainIdentifiers) {
        this.#link.check('index.deleteDomains');
        const list = stringList('deleteDomains', domainIdentifiers);
        if (list.length === 0)
            return;
        for (const line of frameLines(list.map((id) => JSON.stringify(id)), Infinity, (body) => `{"jsonrpc":"2.0","method":"index/deleteDomains","params":{"domainIdentifiers":[${body}]}}\n`)) {
            this.#link.write(line);
        }
        await this.#link.drained();
    }
    /**
     * Removes every item of this extension (`index/deleteAll`), and only this extension's.
     */
    async deleteAll() {
        this.#link.check('index.deleteAll');
        this.#link.write('{"jsonrpc":"2.0","method":"index/deleteAll","params":{}}\n');
        await this.#link.drained();
    }
    /**
     * Makes everything written so far durable together with `clientState` (at most 250 bytes; a
     * string is taken as UTF-8) and waits for the host's confirmation (`batch/commit`). If the
     * request is interrupted later, the next `reindexAll` receives this state as
     * `index.clientState`. Resolves with the number of operations the host committed.
     *
     * Rejects with `SearchableIndexError` (`clientStateTooLarge` before sending anything,
     * `commitRefused`, `disconnected`) or `CancellationError`.
     */
    async commitBatch(clientState) {
        let bytes;
        if (typeof clientState === 'string')
            bytes = Buffer.from(clientState, 'utf8');
        else if (clientState instanceof Uint8Array)
            bytes = Buffer.from(clientState.buffer, clientState.byteOffset, clientState.byteLength);
        else if (clientState instanceof ArrayBuffer)
            bytes = Buffer.from(clientState);
        else
            throw new TypeError('commitBatch: the client state must be a Uint8Array (or Buffer), an ArrayBuffer or a string');
        if (bytes.length > MAX_CLIENT_STATE_BYTES) {
            throw new SearchableIndexError('clientStateTooLarge', `client state is ${bytes.length} bytes; at most ${MAX_CLIENT_STATE_BYTES} are allowed`);
        }
        this.#link.check('index.commitBatch');
        const result = await this.#link.commit({ requestId: this.#requestId, clientState: bytes.toString('base64') });
        const committed = result !== null && typeof result === 'object' ? result.committed : undefined;
        return typeof committed === 'number' ? committed : 0;
    }
    /**
     * Reports progress (`$/progress`; `reindex run` shows it as a progress bar). Any message resets
     * the host's idle timer, so call it well within every `idleSeconds` during long work. Does
     * nothing once the request is cancelled or the host is gone; throws `SearchableIndexError`
     * (`requestFinished`) once the handler has answered the request, as the other operations do.
     */
    progress(completed, total, message) {
        if (!this.#link.isOpen()) {
            if (this.#link.settled())
                this.#link.check('index.progress'); // throws: the handler has answered
            return;
        }
        if (!Number.isFinite(completed))
            throw new TypeError('progress: completed must be a finite number');
        const params = { requestId: this.#requestId, completed: Math.max(0, Math.trunc(completed)) };
        if (total !== undefined && total !== null) {
            if (!Number.isFinite(total))
                throw new TypeError('progress: total must be a finite number');
            params.total = Math.max(0, Math.trunc(total));
        }
        if (message !== undefined && message !== null)
            params.message = String(message);
        this.#link.write(`${JSON.stringify({ jsonrpc: '2.0', method: '$/progress', params })}\n`);
    }
    /**
     * For `reindexAll`: says that an empty result is intended. The acknowledgement then carries
     * `{"allowEmpty": true}`. Without it, the host refuses to publish a `reindexAll` that put no
     * accepted item while the bundle had items: it keeps the old items and fails the request, so
     * that a data source that came back empty by mistake (an unmounted disk, an expired token)
     * does not wipe the index. Call it before the handler returns, typically when the source
     * really is empty. It does not put or delete anything by itself. Throws a `TypeError` in
     * `reindexItems`.
     */
    allowEmpty() {
        if (this.#method !== 'reindexAll') {
            throw new TypeError('allowEmpty: only a reindexAll acknowledgement can allow an empty result');
        }
        this.#link.check('index.allowEmpty');
        this.#link.allowEmpty();
    }
}
/** Makes the index of one request (the connection and the testing helpers do). */
export function makeSearchableIndex(link, details) {
    return new SearchableIndex(INTERNAL, link, details);
}
