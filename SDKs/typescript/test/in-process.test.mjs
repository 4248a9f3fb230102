// run() with in-memory streams: the connection logic without a child process.

import assert from 'node:assert/strict';
import { PassThrough, Writable } from 'node:stream';
import { describe, test } from 'node:test';
import {
  CancellationError, ErrorCode, IndexRequestError, MAX_CLIENT_STATE_BYTES, PROTOCOL_VERSIONS, Reason,
  SearchableIndex, SearchableIndexError, debuggerWaitSeconds, isStdoutProtected, run,
} from '../dist/index.js';
import { withCheckedStack } from '../test-support/harness.mjs';

/**
 * Runs `extension` on in-memory streams; returns helpers to talk to it.
 * @param {any} extension
 * @param {{ output?: any, manifest?: any }} [options]
 */
function session(extension, options = {}) {
  const input = new PassThrough();
  const output = options.output ?? new PassThrough();
  const logs = [];
  const messages = [];
  const waiters = [];
  if (!options.output) {
    let partial = '';
    output.setEncoding('utf8');
    output.on('data', (text) => {
      partial += text;
      let newline;
      while ((newline = partial.indexOf('\n')) !== -1) {
        const message = JSON.parse(partial.slice(0, newline));
        partial = partial.slice(newline + 1);
        if (waiters.length) waiters.shift()(message); else messages.push(message);
      }
    });
  }
  const done = run(extension, { input, output, manifest: options.manifest ?? null, log: (t) => logs.push(t) });
  return {
    input, output, logs, done,
    send: (m) => input.write(`${JSON.stringify(m)}\n`),
    next: () => (messages.length ? Promise.resolve(messages.shift()) : new Promise((resolve) => waiters.push(resolve))),
    end: () => { input.end(); return done; },
  };
}

const reindexAll = (id, reason = 'forced', clientState = null) => ({ jsonrpc: '2.0', id, method: 'reindexAll', params: { reason, clientState } });

describe('run()', () => {
  test('accepts a class and instantiates it; extensionName/extensionVersion win over the manifest', async () => {
    class Named {
      get extensionName() { return 'Named Extension'; }
      get extensionVersion() { return '9.9'; }
      async reindexAll() {}
    }
    const s = session(Named, { manifest: { displayName: 'Manifest Name', version: '1.0' } });
    s.send({ jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersions: [1] } });
    assert.deepEqual((await s.next()).result.extension, { name: 'Named Extension', version: '9.9' });
    await s.end();
  });

  test('takes name and version from the manifest it is given', async () => {
    const s = session({ async reindexAll() {} }, { manifest: { displayName: 'From Manifest', version: '2.1' } });
    s.send({ jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersions: [1] } });
    assert.deepEqual((await s.next()).result.extension, { name: 'From Manifest', version: '2.1' });
    await s.end();
  });

  test('rejects an extension without reindexAll', () => {
    assert.throws(() => run({}, { input: new PassThrough(), output: new PassThrough() }), TypeError);
    assert.throws(() => run(null, { input: new PassThrough(), output: new PassThrough() }), TypeError);
  });

  test('with input, the promise resolves at the end of the input and nothing is protected', async () => {
    const s = session({ async reindexAll() {} });
    await s.end();
    assert.equal(isStdoutProtected(), false);
  });

  test('an extension without reindexItems answers it -32601', async () => {
    const s = session({ async reindexAll() {} });
    s.send({ jsonrpc: '2.0', id: 1, method: 'reindexItems', params: { identifiers: ['a'], reason: 'forced' } });
    assert.equal((await s.next()).error.code, ErrorCode.methodNotFound);
    await s.end();
  });

  test('a synchronous handler that throws refuses the request', async () => {
    const s = session({ reindexAll() { throw new IndexRequestError('sync refusal', { code: -32001 }); } });
    s.send(reindexAll(1));
    assert.deepEqual(await s.next(), { jsonrpc: '2.0', id: 1, error: { code: -32001, message: 'sync refusal' } });
    await s.end();
  });

  test('a put of something that is not an item rejects with a TypeError (and refuses, unhandled)', async () => {
    const s = session({ async reindexAll(index) { await index.put(['not an item']); } });
    s.send(reindexAll(1));
    assert.deepEqual(withCheckedStack(await s.next()), { jsonrpc: '2.0', id: 1, error: { code: -32000, message: 'put: item 0 is not an object' } });
    await s.end();
  });

  test('an item too large for one line is refused before anything is sent', async () => {
    let caught;
    const s = session({
      async reindexAll(index) {
        try {
          await index.put([{ uniqueIdentifier: 'ok' }, { uniqueIdentifier: 'big', attributes: { textContent: 'x'.repeat(17 * 1024 * 1024) } }]);
        } catch (error) { caught = error; }
      },
    });
    s.send(reindexAll(1));
    assert.deepEqual(await s.next(), { jsonrpc: '2.0', id: 1, result: {} });
    assert.ok(caught instanceof SearchableIndexError);
    assert.equal(caught.kind, 'itemTooLarge');
    await s.end();
  });

  test('commitBatch takes a Buffer, a Uint8Array view, an ArrayBuffer or a string; rejects other types', async () => {
    const states = [];
    let typeError;
    const s = session({
      async reindexAll(index) {
        const bytes = new Uint8Array([0, 1, 2, 3, 4, 5]);
        await index.commitBatch(Buffer.from('buf'));
        await index.commitBatch(bytes.subarray(2, 4));
        await index.commitBatch(new Uint8Array([7, 8]).buffer);
        await index.commitBatch('héllo');
        try { await index.commitBatch(42); } catch (error) { typeError = error; }
      },
    });
    s.send(reindexAll(1));
    for (let i = 0; i < 4; i += 1) {
      const commit = await s.next();
      states.push(Buffer.from(commit.params.clientState, 'base64'));
      s.send({ jsonrpc: '2.0', id: commit.id, result: { committed: 0 } });
    }
    assert.deepEqual(await s.next(), { jsonrpc: '2.0', id: 1, result: {} });
    assert.deepEqual(states, [Buffer.from('buf'), Buffer.from([2, 3]), Buffer.from([7, 8]), Buffer.from('héllo')]);
    assert.ok(typeError instanceof TypeError);
    await s.end();
  });

  test('commitBatch resolves with the committed count', async () => {
    let committed;
    const s = session({ async reindexAll(index) { committed = await index.commitBatch('x'); } });
    s.send(reindexAll(1));
    const commit = await s.next();
    s.send({ jsonrpc: '2.0', id: commit.id, result: { committed: 17 } });
    await s.next();
    assert.equal(committed, 17);
    await s.end();
  });

  test('commitBatch rejects with disconnected when the input ends while it waits', async () => {
    let caught;
    const s = session({ async reindexAll(index) { try { await index.commitBatch('x'); } catch (error) { caught = error; } } });
    s.send(reindexAll(1));
    await s.next();
    await s.end();
    await new Promise((resolve) => setImmediate(resolve));
    assert.equal(caught?.kind, 'disconnected');
  });

  test('the index describes its request and cannot be constructed by hand', async () => {
    let seen;
    const s = session({ async reindexAll(index) { seen = { reason: index.reason, id: index.requestId, method: index.method, cancelled: index.cancelled, isIndex: index instanceof SearchableIndex }; } });
    s.send(reindexAll(4, 'bundleChanged'));
    await s.next();
    assert.deepEqual(seen, { reason: 'bundleChanged', id: 4, method: 'reindexAll', cancelled: false, isIndex: true });
    assert.throws(() => new SearchableIndex(), TypeError);
    await s.end();
  });

  test('a string request id is answered with the same id', async () => {
    const s = session({ async reindexAll() {} });
    s.send(reindexAll('req-1'));
    assert.deepEqual(await s.next(), { jsonrpc: '2.0', id: 'req-1', result: {} });
    await s.end();
  });

  test('a cancelled request: the signal reason is a CancellationError with code -32800', async () => {
    let reason;
    const s = session({
      async reindexAll(index) {
        await new Promise((resolve) => index.signal.addEventListener('abort', resolve));
        reason = index.signal.reason;
      },
    });
    s.send(reindexAll(1));
    await new Promise((resolve) => setTimeout(resolve, 20));
    s.send({ jsonrpc: '2.0', method: '$/cancel', params: { id: 1 } });
    assert.deepEqual(await s.next(), { jsonrpc: '2.0', id: 1, error: { code: -32800, message: 'Request cancelled' } });
    await new Promise((resolve) => setImmediate(resolve));
    assert.ok(reason instanceof CancellationError);
    assert.equal(reason.code, -32800);
    await s.end();
  });

  test('operations wait for drain when the output is slow (backpressure)', async () => {
    let written = 0;
    let pending = null;
    const output = new Writable({
      highWaterMark: 1024,
      write(chunk, _encoding, callback) {
        written += chunk.length;
        pending = callback; // released by the test
      },
    });
    const events = [];
    const s = session({
      async reindexAll(index) {
        const put = index.put([{ uniqueIdentifier: 'a', attributes: { textContent: 'x'.repeat(4096) } }]);
        events.push('put called');
        await put;
        events.push('put resolved');
      },
    }, { output });
    s.send(reindexAll(1));
    await new Promise((resolve) => setTimeout(resolve, 50));
    assert.deepEqual(events, ['put called'], 'put must not resolve before the output drains');
    assert.ok(written > 4096);
    pending(); // the put line is written: the stream drains
    await new Promise((resolve) => setTimeout(resolve, 20));
    assert.deepEqual(events, ['put called', 'put resolved']);
    pending(); // the acknowledgement
    s.input.end();
    await s.done;
  });

  test('a broken output makes operations reject with disconnected', async () => {
    let caught;
    const output = new Writable({ write(_chunk, _encoding, callback) { callback(new Error('EPIPE: broken pipe')); } });
    const s = session({
      async reindexAll(index) {
        await index.put({ uniqueIdentifier: 'a' });
        await new Promise((resolve) => setTimeout(resolve, 20));
        try { await index.put({ uniqueIdentifier: 'b' }); } catch (error) { caught = error; }
      },
    }, { output });
    s.send(reindexAll(1));
    await new Promise((resolve) => setTimeout(resolve, 100));
    assert.equal(caught?.kind, 'disconnected');
    assert.ok(s.logs.some((line) => line.includes('EPIPE')));
    await s.end();
  });
});

describe('exports', () => {
  test('constants', () => {
    assert.deepEqual([...PROTOCOL_VERSIONS], [1]);
    assert.equal(MAX_CLIENT_STATE_BYTES, 250);
    assert.equal(ErrorCode.requestCancelled, -32800);
    assert.equal(Reason.indexLost, 'indexLost');
  });

  test('IndexRequestError defaults to -32000', () => {
    const error = new IndexRequestError('x');
    assert.equal(error.code, -32000);
    assert.equal(error.data, undefined);
    assert.ok(error instanceof Error);
  });

  test('debuggerWaitSeconds reads REINDEX_WAIT_FOR_DEBUGGER like the Swift SDK', () => {
    assert.equal(debuggerWaitSeconds(undefined), null);
    assert.equal(debuggerWaitSeconds(''), null);
    assert.equal(debuggerWaitSeconds('yes'), null);
    assert.equal(debuggerWaitSeconds('0'), 0);
    assert.equal(debuggerWaitSeconds('30'), 30);
    assert.equal(debuggerWaitSeconds('2.5'), 2.5);
    assert.equal(debuggerWaitSeconds('-1'), 0);
  });
});
