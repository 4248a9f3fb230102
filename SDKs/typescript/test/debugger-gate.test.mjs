// The wait-for-debugger gate: REINDEX_WAIT_FOR_DEBUGGER opens Node's inspector and waits.

import assert from 'node:assert/strict';
import { after, test } from 'node:test';
import { ExtensionUnderTest, connectWebSocket, eventually, fixture } from '../test-support/harness.mjs';

const running = [];
after(() => { for (const ext of running) ext.kill(); });

const initialize = { jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersions: [1] } };

test('without REINDEX_WAIT_FOR_DEBUGGER nothing waits and no inspector opens', async () => {
  const ext = new ExtensionUnderTest(fixture('scripted.mjs'));
  running.push(ext);
  assert.equal((await ext.initialize()).id, 0);
  assert.doesNotMatch(ext.stderr, /inspector|debugger/i);
});

test('REINDEX_WAIT_FOR_DEBUGGER=1 waits about a second for a debugger, then goes on', async () => {
  const ext = new ExtensionUnderTest(fixture('scripted.mjs'), { env: { REINDEX_WAIT_FOR_DEBUGGER: '1', REINDEX_INSPECTOR_PORT: '0' } });
  running.push(ext);
  const started = Date.now();
  ext.send(initialize);
  const reply = await ext.next(15000);
  const waited = Date.now() - started;
  assert.equal(reply.id, 0);
  assert.ok(waited >= 900, `answered after ${waited} ms, before the gate's second was over`);
  assert.match(ext.stderr, /pid \d+ is waiting for a debugger to attach \(at most 1 s\): the inspector is at 127\.0\.0\.1:(\d+) \(ws:\/\/127\.0\.0\.1:\1\/\S+\)/);
  const port = /the inspector is at 127\.0\.0\.1:(\d+)/.exec(ext.stderr)[1];
  assert.match(ext.stderr, new RegExp(`reindex-extension:   node inspect 127\\.0\\.0\\.1:${port}\n`));
  assert.match(ext.stderr, new RegExp(`reindex-extension:   Chrome: open chrome://inspect \\(first add 127\\.0\\.0\\.1:${port} with "Configure…"\\)`));
  assert.match(ext.stderr, new RegExp(`reindex-extension:   VS Code launch\\.json: \\{"type":"node","request":"attach","address":"127\\.0\\.0\\.1","port":${port}\\}`));
  assert.match(ext.stderr, /no debugger attached within 1 s; continuing without one/);
});

test('REINDEX_WAIT_FOR_DEBUGGER=0 waits until a debugger front end attaches', async () => {
  const ext = new ExtensionUnderTest(fixture('scripted.mjs'), { env: { REINDEX_WAIT_FOR_DEBUGGER: '0', REINDEX_INSPECTOR_PORT: '0' } });
  running.push(ext);
  ext.send(initialize);
  const url = (await eventually(() => /the inspector is at 127\.0\.0\.1:\d+ \((ws:\/\/\S+)\)/.exec(ext.stderr), 'the inspector address'))[1];
  assert.doesNotMatch(ext.stderr, /at most/);
  assert.deepEqual(await ext.quiet(1500), [], 'the extension must wait for the debugger');
  // What Chrome DevTools and VS Code send when they attach.
  const devtools = await connectWebSocket(url);
  devtools.send(JSON.stringify({ id: 1, method: 'Runtime.enable' }));
  devtools.send(JSON.stringify({ id: 2, method: 'Runtime.runIfWaitingForDebugger' }));
  assert.equal((await ext.next(10000)).id, 0);
  assert.match(ext.stderr, /debugger attached to pid \d+; continuing/);
  // The host closes stdin while the debugger is still attached: the SDK disconnects it rather
  // than waiting for it ("Waiting for the debugger to disconnect..."), and exits 0 at once.
  const closed = Date.now();
  ext.closeStdin();
  assert.deepEqual(await ext.exited, { code: 0, signal: null });
  assert.ok(Date.now() - closed < 4000, 'the attached debugger held the exit');
  devtools.close();
});
