// Compiled (not run) by test/types.test.mjs when `tsc` is installed: the declarations must type
// an ordinary extension, and must reject obvious mistakes (see the @ts-expect-error lines).
import {
  CancellationError, ErrorCode, IndexRequestError, MAX_CLIENT_STATE_BYTES, PROTOCOL_VERSIONS, Reason,
  SearchableIndex, SearchableIndexError, debuggerWaitSeconds, isStdoutProtected, protectStdout,
  readManifest, run, waitForDebuggerIfRequested,
  type IndexExtension, type ItemAttributes, type RunOptions, type SearchableItem,
} from '../../dist/index.js';
import * as direct from '../../dist/index.js';

class Notes implements IndexExtension {
  readonly extensionName = 'Notes';
  readonly extensionVersion = '1.0.0';

  async reindexAll(index: SearchableIndex): Promise<void> {
    const state = index.clientState;
    const start: number = state ? Number(state.toString('utf8')) : 0;
    const attributes: ItemAttributes = { title: 'Hello', keywords: ['a'], contentCreationDate: new Date(), rating: 4, custom: { any: 'thing' } };
    const items: SearchableItem[] = [{ uniqueIdentifier: `n.${start}`, domainIdentifier: 'a.b', expirationDate: '2030-01-01T00:00:00Z', attributes }];
    await index.put(items);
    await index.put(items[0]);
    await index.put(new Set(items));
    await index.put({ uniqueIdentifier: 'u', isUpdate: true, attributes: { title: null } });
    index.progress(1, 2, 'half');
    index.progress(1);
    if (start === 0) index.allowEmpty();
    // @ts-expect-error allowEmpty takes no argument
    index.allowEmpty(true);
    const committed: number = await index.commitBatch(new TextEncoder().encode('next=1'));
    await index.commitBatch('next=2');
    if (index.reason === Reason.retry || index.reason === 'aFutureReason') {
      throw new IndexRequestError('no', { code: ErrorCode.internalError, data: { committed } });
    }
    await fetch('http://127.0.0.1:1/', { signal: index.signal }).catch(() => undefined);
    if (index.cancelled) index.throwIfCancelled();
    const id: number | string = index.requestId;
    const method: 'reindexAll' | 'reindexItems' = index.method;
    void id; void method;
    // @ts-expect-error an item needs a uniqueIdentifier
    await index.put([{ attributes: { title: 'no id' } }]);
    // @ts-expect-error the client state is bytes or a string
    await index.commitBatch(42);
    // @ts-expect-error a known attribute has its type
    await index.put({ uniqueIdentifier: 'x', attributes: { keywords: 'not a list' } });
  }

  async reindexItems(identifiers: string[], index: SearchableIndex): Promise<void> {
    await index.delete(identifiers);
    await index.deleteDomains(['com.example.notes']);
    await index.deleteAll();
  }
}

const options: RunOptions = { exit: false, manifest: null, log: (text: string) => { void text; } };
const finished: Promise<void> = run(Notes, options);
run(new Notes());
run({ async reindexAll(index) { await index.deleteAll(); } });
direct.run({ reindexAll() {} });
// @ts-expect-error an extension needs reindexAll
run({ async reindexItems() {} });

const kind: 'clientStateTooLarge' | 'commitRefused' | 'disconnected' | 'requestFinished' | 'itemTooLarge' = new SearchableIndexError('disconnected', 'x').kind;
const cancelled: -32800 = new CancellationError().code;
const versions: readonly number[] = PROTOCOL_VERSIONS;
const max: 250 = MAX_CLIENT_STATE_BYTES;
const seconds: number | null = debuggerWaitSeconds(process_env('REINDEX_WAIT_FOR_DEBUGGER'));
const attached: boolean = waitForDebuggerIfRequested({ env: {} });
const written: boolean = protectStdout().write('x');
const manifest: Record<string, unknown> | null = readManifest();
void [finished, kind, cancelled, versions, max, seconds, attached, written, manifest, isStdoutProtected()];

declare function process_env(name: string): string | undefined;
