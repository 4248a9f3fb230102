// The SDK driven over pipes, the way the host drives an extension.

import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { after, describe, test } from 'node:test';
import { ExtensionUnderTest, eventually, fixture, scratchDirectory, sleep, withCheckedStack } from '../test-support/harness.mjs';

const scripted = fixture('scripted.mjs');
const running = [];

/** @param {ConstructorParameters<typeof ExtensionUnderTest>[1]} [options] */
function start(options) {
  const ext = new ExtensionUnderTest(scripted, options);
  running.push(ext);
  return ext;
}

after(() => { for (const ext of running) ext.kill(); });

const request = (id, method, params) => ({ jsonrpc: '2.0', id, method, params });
const reindexAll = (id, reason, clientState = null) => request(id, 'reindexAll', { reason, clientState });

describe('initialize', () => {
  test('reports the name and version of manifest.json in the working directory', async () => {
    const dir = scratchDirectory();
    fs.writeFileSync(path.join(dir, 'manifest.json'), JSON.stringify({ manifestVersion: 1, bundleIdentifier: 'com.example.scripted', displayName: 'Scripted Birds', version: '4.5.6', executable: 'x' }));
    const ext = start({ cwd: dir });
    const reply = await ext.initialize();
    assert.deepEqual(reply, { jsonrpc: '2.0', id: 0, result: { protocolVersion: 1, extension: { name: 'Scripted Birds', version: '4.5.6' }, capabilities: {} } });
    assert.equal(ext.lines[0], '{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":1,"extension":{"name":"Scripted Birds","version":"4.5.6"},"capabilities":{}}}');
  });

  test('falls back to the bundle identifier, then the script name, and version "0"', async () => {
    const dir = scratchDirectory();
    fs.writeFileSync(path.join(dir, 'manifest.json'), JSON.stringify({ manifestVersion: 1, bundleIdentifier: 'com.example.nameless', executable: 'x' }));
    const named = start({ cwd: dir });
    assert.deepEqual((await named.initialize()).result.extension, { name: 'com.example.nameless', version: '0' });
    const bare = start({ cwd: scratchDirectory() });
    assert.deepEqual((await bare.initialize()).result.extension, { name: 'scripted.mjs', version: '0' });
  });

  test('picks the highest common version', async () => {
    const ext = start();
    assert.equal((await ext.initialize([3, 1, 2])).result.protocolVersion, 1);
  });

  test('answers -32602 with both lists when there is no common version', async () => {
    const ext = start();
    const reply = await ext.initialize([2, 3]);
    assert.deepEqual(reply, { jsonrpc: '2.0', id: 0, error: { code: -32602, message: 'no common protocol version', data: { supported: [1], requested: [2, 3] } } });
  });

  test('answers -32602 when protocolVersions is missing or not numbers', async () => {
    const ext = start();
    ext.send(request(0, 'initialize', { host: { name: 'reindex', version: '1' } }));
    assert.equal((await ext.next()).error.code, -32602);
    ext.send(request(1, 'initialize', { protocolVersions: ['1'] }));
    assert.equal((await ext.next()).error.code, -32602);
  });

  test('writes nothing before the initialize reply', async () => {
    const ext = start();
    await sleep(300);
    assert.equal(ext.stdoutRaw, '');
    await ext.initialize();
    assert.equal(ext.lines.length, 1);
  });
});

describe('requests', () => {
  test('reindexAll: put, progress, batch/commit (awaited), put, acknowledgement', async () => {
    const ext = start();
    await ext.initialize();
    ext.send(reindexAll(1, 'put-commit'));
    assert.deepEqual(await ext.next(), { jsonrpc: '2.0', method: 'index/put', params: { items: [
      { uniqueIdentifier: 's.1', attributes: { title: 'Scripted Heron' } },
      { uniqueIdentifier: 's.2', attributes: { title: 'Scripted Egret' } }] } });
    assert.deepEqual(await ext.next(), { jsonrpc: '2.0', method: '$/progress', params: { requestId: 1, completed: 2, total: 3, message: '2 of 3' } });
    const commit = await ext.next();
    assert.equal(commit.method, 'batch/commit');
    assert.deepEqual(commit.params, { requestId: 1, clientState: Buffer.from('next=2').toString('base64') });
    assert.deepEqual(await ext.quiet(), [], 'the SDK must wait for the commit reply');
    ext.send({ jsonrpc: '2.0', id: commit.id, result: { committed: 2 } });
    assert.deepEqual((await ext.next()).params.items.map((i) => i.uniqueIdentifier), ['s.3']);
    assert.deepEqual(await ext.next(), { jsonrpc: '2.0', id: 1, result: {} });
    await eventually(() => ext.stderr.includes('scripted: committed 2'), 'the committed count');
  });

  test('the SDK numbers its own requests independently and matches replies by id', async () => {
    const ext = start();
    await ext.initialize();
    ext.send(reindexAll(1, 'put-commit'));
    await ext.next(); await ext.next();
    const first = await ext.next();
    ext.send({ jsonrpc: '2.0', id: 'not-ours', result: { committed: 99 } }); // ignored
    ext.send({ jsonrpc: '2.0', id: first.id, result: { committed: 2 } });
    await ext.next();
    await ext.next();
    ext.send(reindexAll(2, 'put-commit'));
    await ext.next(); await ext.next();
    const second = await ext.next();
    assert.notEqual(second.id, first.id);
    ext.send({ jsonrpc: '2.0', id: second.id, result: { committed: 2 } });
    await ext.next();
    assert.deepEqual(await ext.next(), { jsonrpc: '2.0', id: 2, result: {} });
  });

  test('a resumed reindexAll gets its client state as a Buffer; none is null; non-base64 is null', async () => {
    const ext = start();
    await ext.initialize();
    ext.send(reindexAll(1, 'echo-state', Buffer.from('next=3').toString('base64')));
    assert.deepEqual((await ext.next()).params.items[0].attributes, { title: 'next=3', isBuffer: true });
    await ext.next();
    ext.send(reindexAll(2, 'echo-state'));
    assert.equal((await ext.next()).params.items[0].attributes.title, 'none');
    await ext.next();
    ext.send(reindexAll(3, 'echo-state', '%%% not base64 %%%'));
    assert.equal((await ext.next()).params.items[0].attributes.title, 'none');
    assert.deepEqual(await ext.next(), { jsonrpc: '2.0', id: 3, result: {} });
    assert.match(ext.stderr, /not base64/);
  });

  test('reindexItems gets the identifiers and the reason', async () => {
    const ext = start();
    await ext.initialize();
    ext.send(request(1, 'reindexItems', { identifiers: ['a.1', 'gone.2', 'b.3'], reason: 'expiring' }));
    assert.deepEqual(await ext.next(), { jsonrpc: '2.0', method: 'index/put', params: { items: [
      { uniqueIdentifier: 'a.1', attributes: { title: 'item a.1 (expiring)' } },
      { uniqueIdentifier: 'b.3', attributes: { title: 'item b.3 (expiring)' } }] } });
    assert.deepEqual(await ext.next(), { jsonrpc: '2.0', method: 'index/delete', params: { identifiers: ['gone.2'] } });
    assert.deepEqual(await ext.next(), { jsonrpc: '2.0', id: 1, result: {} });
  });

  test('reindexItems without identifiers is answered -32602', async () => {
    const ext = start();
    await ext.initialize();
    ext.send(request(1, 'reindexItems', { reason: 'forced' }));
    assert.equal((await ext.next()).error.code, -32602);
    ext.send(request(2, 'reindexItems', { identifiers: [1, 2] }));
    assert.equal((await ext.next()).error.code, -32602);
  });

  test('unknown reasons are accepted; a missing reason is "forced"', async () => {
    const ext = start();
    await ext.initialize();
    ext.send(reindexAll(1, 'aFutureReason'));
    assert.equal((await ext.next()).params.items[0].attributes.title, 'reason aFutureReason');
    assert.deepEqual(await ext.next(), { jsonrpc: '2.0', id: 1, result: {} });
    ext.send(request(2, 'reindexAll', {}));
    assert.equal((await ext.next()).params.items[0].attributes.title, 'reason forced');
  });

  test('delete, deleteDomains and deleteAll', async () => {
    const ext = start();
    await ext.initialize();
    ext.send(reindexAll(1, 'delete-ops'));
    assert.deepEqual(await ext.next(), { jsonrpc: '2.0', method: 'index/delete', params: { identifiers: ['d.1', 'd.2'] } });
    assert.deepEqual(await ext.next(), { jsonrpc: '2.0', method: 'index/deleteDomains', params: { domainIdentifiers: ['com.example.a'] } });
    assert.deepEqual(await ext.next(), { jsonrpc: '2.0', method: 'index/deleteAll', params: {} });
    assert.deepEqual(await ext.next(), { jsonrpc: '2.0', id: 1, result: {} });
  });

  test('progress: whole numbers; total and message optional', async () => {
    const ext = start();
    await ext.initialize();
    ext.send(reindexAll(7, 'progress-values'));
    assert.deepEqual((await ext.next()).params, { requestId: 7, completed: 1 });
    assert.deepEqual((await ext.next()).params, { requestId: 7, completed: 3, total: 10 });
    assert.deepEqual((await ext.next()).params, { requestId: 7, completed: 4, message: 'only a message' });
    assert.deepEqual(await ext.next(), { jsonrpc: '2.0', id: 7, result: {} });
  });

  test('Dates become RFC 3339 strings and thumbnail bytes base64', async () => {
    const ext = start();
    await ext.initialize();
    ext.send(reindexAll(1, 'dates-and-bytes'));
    const [item] = (await ext.next()).params.items;
    assert.equal(item.expirationDate, '2030-01-02T03:04:05.000Z');
    assert.equal(item.attributes.startDate, '2020-06-01T00:00:00.000Z');
    assert.equal(item.attributes.thumbnailData, Buffer.from([1, 2, 3, 250]).toString('base64'));
  });

  test('a large put is split into messages of at most 500 items', async () => {
    const ext = start();
    await ext.initialize();
    ext.send(reindexAll(1, 'many'));
    const sizes = [];
    for (;;) {
      const message = await ext.next();
      if (message.id === 1) { assert.deepEqual(message.result, {}); break; }
      sizes.push(message.params.items.length);
    }
    assert.deepEqual(sizes, [500, 500, 201]);
  });

  test('a client state over 250 bytes is refused before anything is sent; 250 bytes go out', async () => {
    const ext = start();
    await ext.initialize();
    ext.send(reindexAll(1, 'big-state'));
    assert.equal((await ext.next()).params.items[0].attributes.title, 'SearchableIndexError:clientStateTooLarge');
    const commit = await ext.next();
    assert.equal(commit.method, 'batch/commit');
    assert.equal(Buffer.from(commit.params.clientState, 'base64').length, 250);
    ext.send({ jsonrpc: '2.0', id: commit.id, result: { committed: 1 } });
    assert.deepEqual(await ext.next(), { jsonrpc: '2.0', id: 1, result: {} });
  });

  test('operations after the acknowledgement are refused by the SDK, not sent, and said on stderr', async () => {
    const ext = start();
    await ext.initialize();
    ext.send(reindexAll(1, 'late-op'));
    await ext.next();
    assert.deepEqual(await ext.next(), { jsonrpc: '2.0', id: 1, result: {} });
    await eventually(() => ext.stderr.includes('scripted: late delete:'), 'the late operations to fail');
    for (const operation of ['put', 'progress', 'commit', 'allowEmpty']) {
      assert.match(ext.stderr, new RegExp(`scripted: late ${operation}: requestFinished`));
    }
    assert.match(ext.stderr, /scripted: late delete: requestFinished: index\.delete: request 1 was already acknowledged; await your work before returning/);
    // The SDK says it on stderr too, once per call, naming the request and the operation.
    for (const operation of ['put', 'progress', 'commitBatch', 'allowEmpty', 'delete']) {
      assert.match(ext.stderr, new RegExp(`reindex-extension: index\\.${operation}: request 1 was already acknowledged; await your work before returning`));
    }
    assert.deepEqual(await ext.quiet(200), [], 'nothing may be sent for an acknowledged request');
    assert.equal(ext.child.exitCode, null, 'the extension keeps running');
  });

  test('a handler that forgot to await its work: the late put is refused with the request named', async () => {
    const ext = start();
    await ext.initialize();
    ext.send(reindexAll(7, 'forgot-await'));
    assert.deepEqual(await ext.next(), { jsonrpc: '2.0', id: 7, result: {} });
    await eventually(() => ext.stderr.includes('scripted: forgotten put:'), 'the forgotten put to fail');
    assert.match(ext.stderr, /scripted: forgotten put: SearchableIndexError: index\.put: request 7 was already acknowledged; await your work before returning/);
    assert.match(ext.stderr, /reindex-extension: index\.put: request 7 was already acknowledged/);
    assert.deepEqual(await ext.quiet(200), []);
  });

  test('a handler that returns while its forgotten work is still putting is refused, not acknowledged half-done', async () => {
    const ext = start();
    await ext.initialize();
    ext.send(reindexAll(8, 'forgot-await-loop'));
    let reply = await ext.next();
    while (reply.method !== undefined) {
      if (reply.method === 'batch/commit') ext.send({ jsonrpc: '2.0', id: reply.id, result: { committed: 1 } });
      reply = await ext.next();
    }
    assert.equal(reply.id, 8);
    assert.equal(reply.result, undefined, 'not acknowledged');
    assert.match(reply.error.message, /^reindexAll returned while work it started was still using the index \(index\.(commitBatch|put)\(\).*\): an await is missing/);
    assert.deepEqual(await ext.quiet(200), [], 'nothing is sent after the refusal');
  });

  test('operations after a refusal are refused too, naming the refusal', async () => {
    const ext = start();
    await ext.initialize();
    ext.send(reindexAll(2, 'refuse-then-late'));
    assert.equal((await ext.next()).error.message, 'refused before the work was done');
    await eventually(() => ext.stderr.includes('scripted: put after refusal:'), 'the late put to fail');
    assert.match(ext.stderr, /scripted: put after refusal: index\.put: request 2 was already refused; await your work before returning/);
    assert.deepEqual(await ext.quiet(200), []);
  });
});

describe('stdout protection at import', () => {
  const asExtension = { REINDEX_BUNDLE_IDENTIFIER: 'com.example.test', REINDEX_PROTOCOL_VERSIONS: '1' };

  test('started as an extension, output at the top level of the script goes to stderr', async () => {
    const ext = new ExtensionUnderTest(fixture('early-output.mjs'), { env: asExtension });
    running.push(ext);
    const reply = await ext.initialize();
    assert.equal(reply.id, 0);
    assert.equal(ext.lines[0], JSON.stringify(reply), 'the first stdout line must be the initialize reply');
    assert.match(ext.stderr, /early: console\.log at the top level/);
    assert.match(ext.stderr, /early: process\.stdout\.write at the top level/);
    assert.match(ext.stderr, /early: console\.log after a top-level await/);
  });

  test('a Node program the extension starts keeps its own stdout, even when it imports the SDK', async () => {
    const ext = new ExtensionUnderTest(fixture('spawns-node.mjs'), { env: asExtension });
    running.push(ext);
    assert.equal((await ext.initialize()).id, 0);
    assert.match(ext.stderr, /spawns-node: the child said "from the child\\nand its stdout"/);
    ext.send(reindexAll(1, 'forced'));
    assert.equal((await ext.next()).params.items[0].attributes.title, 'from the child\nand its stdout');
  });
});

describe('allowEmpty', () => {
  test('index.allowEmpty() makes the reindexAll acknowledgement {"allowEmpty": true}', async () => {
    const ext = start();
    await ext.initialize();
    ext.send(reindexAll(1, 'allow-empty'));
    assert.equal(ext.lines.length, 1);
    assert.deepEqual(await ext.next(), { jsonrpc: '2.0', id: 1, result: { allowEmpty: true } });
    assert.equal(ext.lines.at(-1), '{"jsonrpc":"2.0","id":1,"result":{"allowEmpty":true}}');
    ext.send(reindexAll(2, 'put-allow-empty'));
    assert.equal((await ext.next()).method, 'index/put');
    assert.deepEqual(await ext.next(), { jsonrpc: '2.0', id: 2, result: { allowEmpty: true } });
  });

  test('without it the acknowledgement stays {}, also for the next request', async () => {
    const ext = start();
    await ext.initialize();
    ext.send(reindexAll(1, 'allow-empty'));
    assert.deepEqual((await ext.next()).result, { allowEmpty: true });
    ext.send(reindexAll(2, 'delete-ops'));
    let message;
    do { message = await ext.next(); } while (message.method);
    assert.deepEqual(message, { jsonrpc: '2.0', id: 2, result: {} });
  });

  test('reindexItems cannot allow an empty result: calling it refuses the request', async () => {
    const ext = start();
    await ext.initialize();
    ext.send(request(1, 'reindexItems', { identifiers: ['a'], reason: 'allow-empty' }));
    const reply = await ext.next();
    assert.equal(reply.error.code, -32000);
    assert.match(reply.error.message, /allowEmpty: only a reindexAll acknowledgement/);
  });
});

describe('refusals', () => {
  test('an IndexRequestError refuses with its code, message and data', async () => {
    const ext = start();
    await ext.initialize();
    ext.send(reindexAll(1, 'refuse'));
    assert.deepEqual(await ext.next(), { jsonrpc: '2.0', id: 1, error: { code: -32603, message: 'refused on purpose', data: { why: 'test' } } });
  });

  test('any other error refuses with -32000 and its message; so does a thrown string', async () => {
    const ext = start();
    await ext.initialize();
    ext.send(reindexAll(1, 'throw-plain'));
    assert.deepEqual(withCheckedStack(await ext.next()), { jsonrpc: '2.0', id: 1, error: { code: -32000, message: 'plain failure' } });
    ext.send(reindexAll(2, 'throw-string'));
    assert.deepEqual(await ext.next(), { jsonrpc: '2.0', id: 2, error: { code: -32000, message: 'a thrown string' } });
  });

  test('a batch/commit the host refuses rejects commitBatch; unhandled, it refuses the request', async () => {
    const ext = start();
    await ext.initialize();
    ext.send(reindexAll(1, 'refused-commit'));
    await ext.next();
    const commit = await ext.next();
    ext.send({ jsonrpc: '2.0', id: commit.id, error: { code: -32602, message: 'clientState is too large' } });
    assert.deepEqual(withCheckedStack(await ext.next()), { jsonrpc: '2.0', id: 1, error: { code: -32000, message: 'the host refused the batch commit: clientState is too large' } });
  });
});

describe('unknown and malformed input', () => {
  test('unknown requests get -32601; unknown notifications and stray replies are ignored', async () => {
    const ext = start();
    await ext.initialize();
    ext.send({ jsonrpc: '2.0', method: 'something/else', params: {} });
    ext.send({ jsonrpc: '2.0', id: 42, result: {} });
    ext.send(request(5, 'index/search', {}));
    assert.deepEqual(await ext.next(), { jsonrpc: '2.0', id: 5, error: { code: -32601, message: "unknown method 'index/search'" } });
    ext.send(request('s-1', 'shutdown'));
    assert.deepEqual(await ext.next(), { jsonrpc: '2.0', id: 's-1', error: { code: -32601, message: "unknown method 'shutdown'" } });
  });

  test('unparsable lines are logged to stderr, never answered; empty lines and CRLF are fine', async () => {
    const ext = start();
    ext.sendRaw('this is not json\n\n   \n[1,2,3]\n');
    ext.sendRaw(`${JSON.stringify(request(0, 'initialize', { protocolVersions: [1] }))}\r\n`);
    assert.equal((await ext.next()).id, 0);
    assert.deepEqual(await ext.quiet(200), []);
    assert.match(ext.stderr, /unreadable line/);
  });

  test('a message split across writes, and several in one write, are read correctly', async () => {
    const ext = start();
    const line = `${JSON.stringify(request(0, 'initialize', { protocolVersions: [1] }))}\n`;
    ext.sendRaw(line.slice(0, 10));
    await sleep(100);
    ext.sendRaw(line.slice(10) + JSON.stringify(reindexAll(1, 'x')) + '\n' + JSON.stringify(reindexAll(2, 'y')) + '\n');
    assert.equal((await ext.next()).id, 0);
    const ids = [];
    while (ids.length < 2) { const m = await ext.next(); if (m.id !== undefined) ids.push(m.id); }
    assert.deepEqual(ids.sort(), [1, 2]);
  });
});

describe('cancellation', () => {
  test('$/cancel aborts index.signal, is answered -32800 at once, and stops further operations', async () => {
    const ext = start();
    await ext.initialize();
    ext.send(reindexAll(3, 'wait-cancel'));
    await ext.next(); // put
    assert.equal((await ext.next()).method, '$/progress');
    await eventually(() => ext.stderr.includes('waiting for the cancel'), 'the handler to wait');
    ext.send({ jsonrpc: '2.0', method: '$/cancel', params: { id: 3 } });
    assert.deepEqual(await ext.next(), { jsonrpc: '2.0', id: 3, error: { code: -32800, message: 'Request cancelled' } });
    await eventually(() => ext.stderr.includes('throwIfCancelled: CancellationError'), 'the handler to finish');
    assert.match(ext.stderr, /aborted with CancellationError \(Request cancelled\); cancelled=true/);
    assert.match(ext.stderr, /put after cancel: CancellationError/);
    ext.send({ jsonrpc: '2.0', method: '$/cancel', params: { id: 3 } }); // already answered: ignored
    assert.deepEqual(await ext.quiet(), []);
  });

  test('$/cancel while a batch/commit waits rejects it; the late commit reply is ignored', async () => {
    const ext = start();
    await ext.initialize();
    ext.send(reindexAll(1, 'commit-then-wait'));
    await ext.next();
    const commit = await ext.next();
    assert.equal(commit.method, 'batch/commit');
    ext.send({ jsonrpc: '2.0', method: '$/cancel', params: { id: 1 } });
    assert.deepEqual(await ext.next(), { jsonrpc: '2.0', id: 1, error: { code: -32800, message: 'Request cancelled' } });
    await eventually(() => ext.stderr.includes('commit rejected: CancellationError'), 'the commit to be rejected');
    ext.send({ jsonrpc: '2.0', id: commit.id, result: { committed: 1 } });
    assert.deepEqual(await ext.quiet(), []);
  });

  test('$/cancel for an unknown or answered request is ignored', async () => {
    const ext = start();
    await ext.initialize();
    ext.send({ jsonrpc: '2.0', method: '$/cancel', params: { id: 99 } });
    ext.send(reindexAll(1, 'x'));
    await ext.next();
    assert.deepEqual(await ext.next(), { jsonrpc: '2.0', id: 1, result: {} });
    ext.send({ jsonrpc: '2.0', method: '$/cancel', params: { id: 1 } });
    assert.deepEqual(await ext.quiet(), []);
  });
});

describe('stdout protection', () => {
  test('console.log, info, debug, dir, table and process.stdout.write go to stderr', async () => {
    const ext = start();
    await ext.initialize();
    ext.send(reindexAll(1, 'noisy'));
    assert.equal((await ext.next()).method, 'index/put');
    assert.deepEqual(await ext.next(), { jsonrpc: '2.0', id: 1, result: {} });
    ext.closeStdin();
    assert.deepEqual(await ext.exited, { code: 0, signal: null });
    for (const line of ext.lines) assert.doesNotThrow(() => JSON.parse(line), `not a protocol line: ${line}`);
    assert.equal(ext.lines.length, 3);
    for (const noise of ['console.log', 'console.info', 'console.debug', "'console.dir'", 'console.table', 'process.stdout.write', '"id":99']) {
      assert.ok(ext.stderr.includes(noise), `${noise} is missing from stderr:\n${ext.stderr}`);
    }
  });
});

describe('exit', () => {
  test('exits 0 when stdin closes', async () => {
    const ext = start();
    await ext.initialize();
    ext.closeStdin();
    assert.deepEqual(await ext.exited, { code: 0, signal: null });
  });

  test('exits 0 when stdin closes while a request is still running (it is cancelled)', async () => {
    const ext = start();
    await ext.initialize();
    ext.send(reindexAll(1, 'hang-forever'));
    await ext.next();
    ext.closeStdin();
    assert.deepEqual(await ext.exited, { code: 0, signal: null });
    assert.match(ext.stderr, /hang aborted: the host closed the connection/);
  });

  test('exits 0 on SIGTERM', async () => {
    const ext = start();
    await ext.initialize();
    ext.send(reindexAll(1, 'hang-forever'));
    await ext.next();
    ext.kill('SIGTERM');
    assert.deepEqual(await ext.exited, { code: 0, signal: null });
  });

  test('what was written just before stdin closed is flushed, not lost', async () => {
    const ext = start();
    ext.sendRaw(`${JSON.stringify(request(0, 'initialize', { protocolVersions: [1] }))}\n${JSON.stringify(reindexAll(1, 'put-commit'))}\n`);
    ext.closeStdin();
    assert.deepEqual(await ext.exited, { code: 0, signal: null });
    const methods = ext.lines.map((line) => JSON.parse(line).method ?? `reply ${JSON.parse(line).id}`);
    assert.deepEqual(methods.slice(0, 2), ['reply 0', 'index/put']);
    assert.doesNotMatch(ext.stderr, /cannot write|write after end/);
  });

  test('exits 0 at once when stdin is closed before initialize', async () => {
    const ext = start();
    ext.closeStdin();
    assert.deepEqual(await ext.exited, { code: 0, signal: null });
    assert.equal(ext.stdoutRaw, '');
  });
});

describe('backpressure', () => {
  test('12 MB of puts to a slow reader arrive whole, in order, as valid lines', async () => {
    const ext = start();
    await ext.initialize();
    ext.child.stdout.pause(); // the host is busy: the pipe fills up
    ext.send(reindexAll(1, 'huge'));
    await sleep(500);
    ext.child.stdout.resume();
    let count = 0;
    let expected = 0;
    for (;;) {
      const message = await ext.next(20000);
      if (message.id === 1) { assert.deepEqual(message.result, {}); break; }
      assert.equal(message.method, 'index/put');
      for (const item of message.params.items) {
        const [batch, i] = item.uniqueIdentifier.slice(2).split('.').map(Number);
        assert.equal(batch * 300 + i, expected, 'items arrive in order');
        expected += 1;
        count += 1;
      }
    }
    assert.equal(count, 3000);
    assert.ok(ext.lines.every((line) => Buffer.byteLength(line) < 16 * 1024 * 1024));
  });
});
