// reindex-extension/testing: call an extension's handlers in process, without the host, and see
// what they sent: a recording index for unit tests (`node --test`).
//
// The handlers run on the SDK's real connection (the same code as under the host), driven by a
// small in-memory host that answers `initialize` and `batch/commit` and records every operation.
// So what a test sees is what the host would receive: the SDK's checks apply (a NaN attribute
// refuses the request, an operation after the handler returned is caught), and items are recorded
// as JSON, as they go over the wire.

import { Buffer } from 'node:buffer';
import { IndexRequestError, type RpcError } from './errors.js';
import { handlerOf } from './connection.js';
import { run } from './index.js';
import { BUILT_IN_ATTRIBUTES } from './searchable-index.js';
import type { ExtensionLike, IndexExtension, ProtocolOutput, ReindexReason } from './types.js';

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
export type RecordedOperation =
  | { kind: 'put'; items: RecordedItem[] }
  | { kind: 'delete'; identifiers: string[] }
  | { kind: 'deleteDomains'; domainIdentifiers: string[] }
  | { kind: 'deleteAll' }
  | { kind: 'commit'; commit: RecordedCommit }
  | { kind: 'progress'; progress: RecordedProgress };

/**
 * What a handler sent for one request, in order: puts, deletes, commits, progress, and how the
 * request ended. `reindexAll()` and `reindexItems()` below fill one; pass your own in their
 * options to look at what a refused request sent before it failed.
 */
export class RecordingIndex {
  /** Every operation, in the order the handler made it. */
  readonly operations: RecordedOperation[] = [];
  /** The SDK's own diagnostics (what it would print to stderr, the bundle's log). */
  readonly log: string[] = [];
  /** How the SDK answered the request; `undefined` while it runs. */
  outcome: 'acknowledged' | 'refused' | undefined = undefined;
  /** The acknowledgement allowed an empty result (`index.allowEmpty()`). */
  allowEmpty = false;
  /** The refusal the host would receive (code, message, and `data.stack` for an error). */
  refusal: RpcError | undefined = undefined;

  /** The attribute names the manifest declares (`attributes`), which `warnings` knows too. */
  declaredAttributes: string[] = [];

  /**
   * What the host would warn about in what was put, once per name as it does: an attribute name
   * that is neither built in nor declared but near one (`keyword` for `keywords`: kept as a
   * custom attribute and not searched), and a member an item does not have (`title` beside
   * `uniqueIdentifier` instead of inside `attributes`, Core Spotlight's `attributeSet`: ignored).
   */
  get warnings(): string[] {
    const warnings: string[] = [];
    const seen = new Set<string>();
    const known = [...[...BUILT_IN_ATTRIBUTES].sort(), ...[...this.declaredAttributes].sort()];
    for (const item of this.puts as unknown as Record<string, unknown>[]) {
      const uid = String(item.uniqueIdentifier ?? '').slice(0, 80);
      for (const member of Object.keys(item)) {
        if (ITEM_MEMBERS.includes(member) || seen.has(`\0${member}`)) continue;
        seen.add(`\0${member}`);
        let advice: string;
        if (BUILT_IN_ATTRIBUTES.has(member) || this.declaredAttributes.includes(member)) {
          advice = `attributes go inside "attributes": {"uniqueIdentifier": \u2026, "attributes": {"${member}": \u2026}}`;
        } else if (member === 'attributeSet') {
          advice = `Core Spotlight's attributeSet is "attributes" here`;
        } else {
          const meant = suggest(member, ITEM_MEMBERS);
          advice = meant !== undefined ? `did you mean '${meant}'?` : `an item has ${ITEM_MEMBERS.map((m) => `'${m}'`).join(', ')}`;
        }
        warnings.push(`item member '${member}' (first in item '${uid}') is not part of an item and is ignored; ${advice}`);
      }
      const attributes = item.attributes;
      if (attributes === null || typeof attributes !== 'object') continue;
      for (const name of Object.keys(attributes)) {
        if (BUILT_IN_ATTRIBUTES.has(name) || this.declaredAttributes.includes(name) || seen.has(name)) continue;
        seen.add(name);
        const meant = suggest(name, known);
        if (meant === undefined) continue;
        const kind = BUILT_IN_ATTRIBUTES.has(meant) ? 'a built-in attribute' : 'an attribute the manifest declares';
        warnings.push(`attribute '${name}' (first in item '${uid}') is neither built in nor declared, so it is kept as a custom attribute and not searched; did you mean '${meant}' (${kind})?`);
      }
    }
    return warnings;
  }

  /** Every item put, in order (one entry per put, also when an identifier comes again). */
  get puts(): RecordedItem[] {
    return this.operations.flatMap((op) => (op.kind === 'put' ? op.items : []));
  }

  /** Every identifier deleted with `index.delete`, in order. */
  get deletes(): string[] {
    return this.operations.flatMap((op) => (op.kind === 'delete' ? op.identifiers : []));
  }

  /** Every domain deleted with `index.deleteDomains`, in order. */
  get deletedDomains(): string[] {
    return this.operations.flatMap((op) => (op.kind === 'deleteDomains' ? op.domainIdentifiers : []));
  }

  /** Whether the handler called `index.deleteAll()`. */
  get deletedAll(): boolean {
    return this.operations.some((op) => op.kind === 'deleteAll');
  }

  /** Every committed batch, in order. */
  get commits(): RecordedCommit[] {
    return this.operations.flatMap((op) => (op.kind === 'commit' ? [op.commit] : []));
  }

  /** Every progress report, in order. */
  get progress(): RecordedProgress[] {
    return this.operations.flatMap((op) => (op.kind === 'progress' ? [op.progress] : []));
  }

  /**
   * The items an index that was empty before the request would hold after it, by identifier:
   * the puts, deletes and partial updates applied in order (an update of an item that is not
   * there is ignored, as the host ignores it).
   */
  items(): Map<string, RecordedItem> {
    const items = new Map<string, RecordedItem>();
    for (const op of this.operations) {
      if (op.kind === 'put') {
        for (const item of op.items) {
          if (!item.isUpdate) {
            items.set(item.uniqueIdentifier, item);
            continue;
          }
          const existing = items.get(item.uniqueIdentifier);
          if (!existing) continue;
          const attributes: Record<string, unknown> = { ...existing.attributes };
          for (const [key, value] of Object.entries(item.attributes ?? {})) {
            if (value === null) delete attributes[key];
            else attributes[key] = value;
          }
          const merged: RecordedItem = { ...existing, attributes };
          if (item.domainIdentifier != null) merged.domainIdentifier = item.domainIdentifier;
          if (item.expirationDate != null) merged.expirationDate = item.expirationDate;
          items.set(item.uniqueIdentifier, merged);
        }
      } else if (op.kind === 'delete') {
        for (const id of op.identifiers) items.delete(id);
      } else if (op.kind === 'deleteDomains') {
        for (const [id, item] of items) {
          const domain = item.domainIdentifier;
          if (domain !== undefined && op.domainIdentifiers.some((d) => domain === d || domain.startsWith(`${d}.`))) items.delete(id);
        }
      } else if (op.kind === 'deleteAll') {
        items.clear();
      }
    }
    return items;
  }
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

/** The members of an item (protocol-v1.md, "Item"); the host ignores any other. */
const ITEM_MEMBERS = ['uniqueIdentifier', 'domainIdentifier', 'expirationDate', 'attributes', 'isUpdate'];

/**
 * The candidate nearest to `name` by edit distance (insertions, deletions, substitutions and
 * swaps of neighbours; case ignored) when it is near enough to be a typo — at most one edit for
 * names of up to four characters, two up to eight, three beyond — else undefined. The host's rule.
 */
export function suggest(name: string, candidates: readonly string[]): string | undefined {
  const word = name.toLowerCase();
  const allowed = word.length <= 4 ? 1 : word.length <= 8 ? 2 : 3;
  let best: { distance: number; name: string } | undefined;
  for (const candidate of candidates) {
    const other = candidate.toLowerCase();
    if (other === word || Math.abs(other.length - word.length) > allowed) continue;
    const d = distance(word, other);
    if (d <= allowed && (best === undefined || d < best.distance)) best = { distance: d, name: candidate };
  }
  return best?.name;
}

/** The optimal-string-alignment distance of `a` and `b`. */
function distance(a: string, b: string): number {
  const rows: number[][] = Array.from({ length: a.length + 1 }, (_, i) => Array.from({ length: b.length + 1 }, (_, j) => (i === 0 ? j : j === 0 ? i : 0)));
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let d = Math.min(rows[i - 1]![j]! + 1, rows[i]![j - 1]! + 1, rows[i - 1]![j - 1]! + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) d = Math.min(d, rows[i - 2]![j - 2]! + 1);
      rows[i]![j] = d;
    }
  }
  return rows[a.length]![b.length]!;
}

/** The host's messages to the extension, as the async iterable `run()` reads. */
class Inbox implements AsyncIterable<string> {
  #lines: string[] = [];
  #ended = false;
  #waiting: ((result: IteratorResult<string>) => void) | null = null;

  send(message: Record<string, unknown>): void {
    const line = `${JSON.stringify(message)}\n`;
    const waiting = this.#waiting;
    this.#waiting = null;
    if (waiting) waiting({ value: line, done: false });
    else this.#lines.push(line);
  }

  end(): void {
    this.#ended = true;
    const waiting = this.#waiting;
    this.#waiting = null;
    if (waiting) waiting({ value: undefined, done: true });
  }

  [Symbol.asyncIterator](): AsyncIterator<string> {
    return {
      next: () => {
        const line = this.#lines.shift();
        if (line !== undefined) return Promise.resolve({ value: line, done: false });
        if (this.#ended) return Promise.resolve({ value: undefined, done: true });
        return new Promise((resolve) => { this.#waiting = resolve; });
      },
    };
  }
}

const REQUEST_ID = 1;

/** Runs one request on the SDK's connection, with an in-memory host that records. */
async function request(extension: ExtensionLike, method: 'reindexAll' | 'reindexItems', params: Record<string, unknown>,
  options: TestRequestOptions): Promise<RecordingIndex> {
  const handler = handlerOf(extension, `testing.${method}(extension)`);
  if (method === 'reindexItems' && typeof handler.reindexItems !== 'function') {
    throw new TypeError('testing.reindexItems(extension): the extension has no reindexItems(identifiers, index) method');
  }
  // The handler's own error, to reject with it rather than with its JSON-RPC form.
  let thrown: { error: unknown } | null = null;
  const capture = (error: unknown): never => { thrown = { error }; throw error; };
  const wrapped: IndexExtension = {
    extensionName: 'test',
    extensionVersion: '0',
    reindexAll: async (index) => { try { await handler.reindexAll(index); } catch (error) { capture(error); } },
    reindexItems: async (identifiers, index) => {
      try { await handler.reindexItems?.(identifiers, index); } catch (error) { capture(error); }
    },
  };

  const recording = options.recording ?? new RecordingIndex();
  const inbox = new Inbox();
  let operationsSinceCommit = 0;
  let answered: () => void = () => {};
  const answer = new Promise<void>((resolve) => { answered = resolve; });

  const receive = (message: any): void => {
    const p = message.params ?? {};
    switch (message.method) {
      case 'index/put': recording.operations.push({ kind: 'put', items: p.items }); operationsSinceCommit += 1; return;
      case 'index/delete': recording.operations.push({ kind: 'delete', identifiers: p.identifiers }); operationsSinceCommit += 1; return;
      case 'index/deleteDomains': recording.operations.push({ kind: 'deleteDomains', domainIdentifiers: p.domainIdentifiers }); operationsSinceCommit += 1; return;
      case 'index/deleteAll': recording.operations.push({ kind: 'deleteAll' }); operationsSinceCommit += 1; return;
      case '$/progress': {
        const progress: RecordedProgress = { completed: p.completed };
        if (p.total !== undefined) progress.total = p.total;
        if (p.message !== undefined) progress.message = p.message;
        recording.operations.push({ kind: 'progress', progress });
        return;
      }
      case 'batch/commit': {
        const bytes = Buffer.from(String(p.clientState ?? ''), 'base64');
        const commit: RecordedCommit = { bytes: new Uint8Array(bytes), clientState: bytes.toString('utf8'), operations: operationsSinceCommit };
        operationsSinceCommit = 0;
        recording.operations.push({ kind: 'commit', commit });
        inbox.send({ jsonrpc: '2.0', id: message.id, result: { committed: commit.operations } });
        return;
      }
      default: break;
    }
    if (message.id === 0 && message.result) {
      inbox.send({ jsonrpc: '2.0', id: REQUEST_ID, method, params });
    } else if (message.id === 0) {
      recording.outcome = 'refused';
      recording.refusal = message.error;
      answered();
    } else if (message.id === REQUEST_ID) {
      if (message.error) {
        recording.outcome = 'refused';
        recording.refusal = message.error;
      } else {
        recording.outcome = 'acknowledged';
        recording.allowEmpty = message.result?.allowEmpty === true;
      }
      answered();
    }
  };
  const output: ProtocolOutput = {
    write(chunk: string): boolean {
      for (const line of chunk.split('\n')) if (line.trim() !== '') receive(JSON.parse(line));
      return true;
    },
    on(): unknown { return output; },
  };

  const declared = options.manifest?.attributes;
  if (declared !== null && typeof declared === 'object') recording.declaredAttributes = Object.keys(declared as object);
  inbox.send({ jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersions: [1] } });
  const running = run(wrapped, {
    input: inbox, output, exit: false, protectStdout: false, debuggerGate: false,
    manifest: options.manifest ?? null, log: (text) => { recording.log.push(text); },
  });
  await answer;
  inbox.end();
  await running;
  if (recording.outcome === 'refused') {
    if (thrown) throw (thrown as { error: unknown }).error;
    const refusal = recording.refusal as RpcError;
    throw new IndexRequestError(refusal.message, { code: refusal.code, data: refusal.data });
  }
  return recording;
}

/**
 * Calls the extension's `reindexAll` in process, as the host would ask for it, and resolves with
 * what it sent. Rejects with the handler's error when it refuses (or with an
 * `IndexRequestError` when the SDK refuses for it: an operation after it returned), after
 * recording what it sent before into `options.recording`. Accepts an object or a class, as
 * `run()` does.
 */
export function reindexAll(extension: ExtensionLike, options: TestRequestOptions = {}): Promise<RecordingIndex> {
  const state = options.clientState;
  const clientState = state === undefined || state === null ? null
    : (typeof state === 'string' ? Buffer.from(state, 'utf8') : Buffer.from(state.buffer, state.byteOffset, state.byteLength)).toString('base64');
  return request(extension, 'reindexAll', { reason: options.reason ?? 'forced', clientState }, options);
}

/** Calls the extension's `reindexItems(identifiers, index)` in process; as `reindexAll()`. */
export function reindexItems(extension: ExtensionLike, identifiers: readonly string[], options: TestRequestOptions = {}): Promise<RecordingIndex> {
  return request(extension, 'reindexItems', { reason: options.reason ?? 'forced', identifiers: [...identifiers] }, options);
}
