// The SDK through the real host: `reindex run`, `search`, `validate`, `debug`.
// The host binary is $REINDEX_BIN (CI: .build/debug/reindex), else /work/snap/reindex.

import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { HostWorld, connectWebSocket, eventually, fixture, hostSkipReason, sleep } from '../test-support/harness.mjs';

const skip = hostSkipReason() ?? false;

describe('through the reindex host', { skip }, () => {
  test('reindexAll puts items that search finds; name and version come from the manifest', async () => {
    const world = new HostWorld();
    world.bundle('com.example.basic', fixture('basic.mjs'), { displayName: 'Basic Birds', version: '1.2.3', environment: { BASIC_COUNT: '25' } });
    const run = await world.reindex(['run', 'com.example.basic', '--json']);
    assert.equal(run.status, 0, JSON.stringify(run));
    assert.equal(run.json.outcome, 'acknowledged');
    assert.equal(run.json.put, 25);
    assert.equal(run.json.rejected, 0);
    const found = await world.search('pelican');
    assert.equal(found.length, 25);
    assert.ok(found.includes('basic.0') && found.includes('basic.24'));
    assert.deepEqual(await world.search('number7'), ['basic.7']);
    const log = world.log('com.example.basic');
    assert.match(log, /initialized: Basic Birds 1\.2\.3, protocol 1/);
    assert.match(log, /the extension exited with status 0/);
  });

  test('console.log and process.stdout.write land in the log, and the protocol stays clean', async () => {
    const world = new HostWorld();
    world.bundle('com.example.basic', fixture('basic.mjs'));
    const run = await world.reindex(['run', 'com.example.basic', '--json']);
    assert.equal(run.status, 0, JSON.stringify(run));
    assert.equal(run.json.warnings, undefined, JSON.stringify(run.json));
    const log = world.log('com.example.basic');
    assert.match(log, /basic: console\.log during reindexAll \(must not reach the protocol\)/);
    assert.match(log, /basic: process\.stdout\.write during reindexAll/);
    assert.match(log, /basic: reason forced/);
  });

  test('console.log at the top level of the script, before run(), lands in the log too', async () => {
    const world = new HostWorld();
    world.bundle('com.example.early', fixture('early-output.mjs'));
    const run = await world.reindex(['run', 'com.example.early', '--json']);
    assert.equal(run.status, 0, JSON.stringify(run));
    assert.equal(run.json.outcome, 'acknowledged');
    assert.equal(run.json.put, 1);
    assert.equal(run.json.warnings, undefined, JSON.stringify(run.json));
    const log = world.log('com.example.early');
    assert.match(log, /early: console\.log at the top level \{"jsonrpc"/);
    assert.match(log, /early: process\.stdout\.write at the top level/);
    assert.match(log, /early: console\.info at the top level/);
    assert.match(log, /early: console\.log after a top-level await, still before run\(\)/);
    assert.doesNotMatch(log, /protocol violation/);
  });

  test('an empty reindexAll is published only with index.allowEmpty()', async () => {
    const world = new HostWorld();
    world.bundle('com.example.basic', fixture('basic.mjs'), { environment: { BASIC_COUNT: '3' } });
    assert.equal((await world.reindex(['run', 'com.example.basic'])).status, 0);
    world.bundle('com.example.basic', fixture('basic.mjs'), { environment: { BASIC_COUNT: '0' } });
    const refused = await world.reindex(['run', 'com.example.basic', '--json']);
    assert.notEqual(refused.status, 0, JSON.stringify(refused));
    assert.equal(refused.json.failure, 'emptyReplacement', JSON.stringify(refused.json));
    assert.deepEqual(await world.search('pelican'), ['basic.0', 'basic.1', 'basic.2'], 'the old items stay');
    world.bundle('com.example.basic', fixture('basic.mjs'), { environment: { BASIC_COUNT: '0', BASIC_ALLOW_EMPTY: '1' } });
    const allowed = await world.reindex(['run', 'com.example.basic', '--json']);
    assert.equal(allowed.status, 0, JSON.stringify(allowed));
    assert.equal(allowed.json.outcome, 'acknowledged');
    assert.equal(allowed.json.removedNotPut, 3);
    assert.deepEqual(await world.search('pelican'), []);
  });

  test('reindexItems puts the items that exist and deletes the others', async () => {
    const world = new HostWorld();
    world.bundle('com.example.basic', fixture('basic.mjs'), { environment: { BASIC_COUNT: '5' } });
    assert.equal((await world.reindex(['run', 'com.example.basic'])).status, 0);
    const run = await world.reindex(['run', 'com.example.basic', '--ids', 'basic.3,basic.99', '--json']);
    assert.equal(run.status, 0, JSON.stringify(run));
    assert.equal(run.json.request, 'reindexItems');
    assert.equal(run.json.put, 1);
    assert.deepEqual(await world.search('refreshed'), ['basic.3']);
    assert.match(world.log('com.example.basic'), /basic: reindexItems basic\.3,basic\.99/);
  });

  test('a refusal fails the run with status 75 and the message; a retry is queued', async () => {
    const world = new HostWorld();
    world.bundle('com.example.refuse', fixture('refuse.mjs'));
    const run = await world.reindex(['run', 'com.example.refuse', '--json']);
    assert.equal(run.status, 75, JSON.stringify(run));
    assert.equal(run.json.failure, 'refused');
    assert.equal(run.json.retry, 'queued');
    assert.match(run.json.error, /the data source is unreachable/);
    assert.match(run.stderr, /the data source is unreachable/);
    assert.deepEqual(await world.search('raven'), [], 'nothing of a refused request is visible');
    const status = await world.reindex(['status', '--json']);
    const bundle = status.json.bundles.find((b) => b.bundleIdentifier === 'com.example.refuse');
    assert.equal(bundle.pending, 1);
  });

  test('commitBatch, refusal, and a retry that resumes from the committed client state', async () => {
    const world = new HostWorld();
    world.bundle('com.example.resume', fixture('resume.mjs'));
    const first = await world.reindex(['run', 'com.example.resume', '--json']);
    assert.equal(first.status, 75, JSON.stringify(first));
    assert.equal(first.json.failure, 'refused');
    assert.match(first.stderr, /stopping before the end on purpose/);
    assert.match(world.log('com.example.resume'), /first batch committed: 2 operations/);
    assert.deepEqual(await world.search('resumable'), [], 'the unfinished reindexAll became visible');

    // A run asked to resume takes the pending reindexAll over, with its client state (as a
    // retry by `reindex serve` does; a plain forced run starts fresh).
    const second = await world.reindex(['run', 'com.example.resume', '--resume', '--json']);
    assert.equal(second.status, 0, JSON.stringify(second));
    assert.match(world.log('com.example.resume'), /resume: resuming from clientState next=3/);
    assert.deepEqual(await world.search('resumable'), ['resume.1', 'resume.2', 'resume.3', 'resume.4']);
    const status = await world.reindex(['status', '--json']);
    assert.equal(status.json.bundles.find((b) => b.bundleIdentifier === 'com.example.resume').pending, 0);
  });

  test('SIGTERM to `reindex run` cancels: the SDK answers -32800 and exits 0; the request is requeued', async () => {
    const world = new HostWorld();
    world.bundle('com.example.slow', fixture('slow.mjs'));
    const { child, result } = world.start(['run', 'com.example.slow', '--json']);
    await eventually(() => world.log('com.example.slow').includes('slow: working'), 'the extension to start working', 20000);
    await sleep(300);
    child.kill('SIGTERM');
    const run = await result;
    assert.equal(run.status, 75, JSON.stringify(run));
    assert.equal(run.json.failure, 'cancelled');
    assert.match(run.json.error, /Request cancelled/);
    await eventually(() => /the extension exited/.test(world.log('com.example.slow').split('cancelling request')[1] ?? ''), 'the extension to exit');
    const log = world.log('com.example.slow');
    assert.match(log, /slow: stopped by AbortError: Request cancelled/);
    assert.match(log, /the extension exited with status 0/);
    assert.deepEqual(await world.search('sloth'), []);
    const status = await world.reindex(['status', '--json']);
    assert.equal(status.json.bundles.find((b) => b.bundleIdentifier === 'com.example.slow').pending, 1);
  });

  test('`reindex validate DIR --run` passes (and `validate --run DIR`)', async () => {
    const world = new HostWorld();
    const dir = world.bundle('com.example.basic', fixture('basic.mjs'), { displayName: 'Basic', version: '1.0.0' });
    for (const args of [['validate', dir, '--run', '--json'], ['validate', '--run', dir, '--json']]) {
      const validate = await world.reindex(args, { global: false });
      assert.equal(validate.status, 0, JSON.stringify(validate));
      assert.equal(validate.json.valid, true);
      assert.deepEqual(validate.json.checks.filter((c) => c.result === 'fail'), []);
      assert.deepEqual(validate.json.warnings, []);
      assert.equal(validate.json.put, 3);
    }
  });

  test('`reindex debug` with REINDEX_WAIT_FOR_DEBUGGER in the manifest: the gate waits for an inspector client', async () => {
    const world = new HostWorld();
    world.bundle('com.example.basic', fixture('basic.mjs'), {
      environment: { REINDEX_WAIT_FOR_DEBUGGER: '0', REINDEX_INSPECTOR_PORT: '0' },
    });
    // Outside debug mode the host drops the variable: nothing waits.
    assert.equal((await world.reindex(['run', 'com.example.basic'])).status, 0);
    assert.doesNotMatch(world.log('com.example.basic'), /waiting for a debugger/);

    const { child, result } = world.start(['debug', 'com.example.basic', '--scratch-index']);
    let stderr = '';
    child.stderr.on('data', (text) => { stderr += text; });
    let url;
    try {
      url = (await eventually(() => /ext\| reindex-extension: pid \d+ is waiting for a debugger to attach: the inspector is at 127\.0\.0\.1:\d+ \((ws:\/\/\S+)\)/.exec(stderr), 'the inspector address', 20000))[1];
    } catch (error) {
      child.kill('SIGTERM'); // the gate would wait forever
      throw error;
    }
    await sleep(500);
    assert.doesNotMatch(stderr, /acknowledged/);
    const devtools = await connectWebSocket(url);
    devtools.send(JSON.stringify({ id: 1, method: 'Runtime.runIfWaitingForDebugger' }));
    const debug = await result;
    devtools.close();
    assert.equal(debug.status, 0, JSON.stringify(debug) + stderr);
    assert.match(stderr, /ext\| reindex-extension: debugger attached to pid \d+; continuing/);
    assert.match(debug.stdout, /reindexAll acknowledged: put 3/);
  });
});
