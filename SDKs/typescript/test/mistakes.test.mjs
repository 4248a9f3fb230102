// Mistakes are loud: a value JSON cannot carry is refused with its reason instead of being sent
// as null, and a refusal's stack reaches the host (stderr, the bundle's log, and data.stack).

import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { IndexRequestError } from '../dist/index.js';
import { RecordingIndex, reindexAll } from '../dist/testing.js';
import { ExtensionUnderTest, HostWorld, fixture, hostSkipReason } from '../test-support/harness.mjs';

/** Puts `attributes` (and `extra` item members) as item 'item.7' after a good item; returns how
 * the request ended: the rejection and the recording. */
async function putAfterAGoodItem(attributes, extra = {}) {
  const recording = new RecordingIndex();
  const error = await reindexAll({
    async reindexAll(index) {
      await index.put({ uniqueIdentifier: 'good.1', attributes: { title: 'fine' } });
      await index.put([{ uniqueIdentifier: 'item.6', attributes: { title: 'also fine' } }, { uniqueIdentifier: 'item.7', attributes, ...extra }]);
    },
  }, { recording }).then(() => null, (e) => e);
  return { error, recording };
}

describe('a value that JSON would turn into null', () => {
  for (const [name, value] of [['NaN', Number('n/a')], ['Infinity', 1 / 0], ['-Infinity', -1 / 0]]) {
    test(`rating: ${name} is refused, naming the item, the attribute and why; nothing of that put is sent`, async () => {
      const { error, recording } = await putAfterAGoodItem({ title: 'bad', rating: value });
      assert.ok(error instanceof TypeError, String(error));
      assert.equal(error.message,
        `put: item 1 ("item.7"): attributes.rating is ${name}; a number must be finite (NaN and ±Infinity are not JSON: they would be sent as null); nothing of this put was sent`);
      assert.equal(recording.outcome, 'refused');
      assert.deepEqual(recording.puts.map((item) => item.uniqueIdentifier), ['good.1']);
    });
  }

  test('in every numeric attribute, in custom ones and in lists', async () => {
    for (const [attributes, path] of [
      [{ latitude: 1, longitude: NaN }, 'attributes.longitude'],
      [{ rankingHint: Infinity }, 'attributes.rankingHint'],
      [{ custom: { pages: NaN } }, 'attributes.custom.pages'],
      [{ custom: { sizes: [1, 2, NaN] } }, 'attributes.custom.sizes[2]'],
    ]) {
      const { error } = await putAfterAGoodItem(attributes);
      assert.match(error?.message ?? '', new RegExp(`^put: item 1 \\("item\\.7"\\): ${path.replace(/[.[\]]/g, '\\$&')} is -?(NaN|Infinity); `), JSON.stringify(attributes));
    }
  });

  test('an invalid Date is refused too (JSON would send null; in an update null deletes)', async () => {
    const { error } = await putAfterAGoodItem({ startDate: new Date('not a date') }, { isUpdate: true });
    assert.match(error.message, /^put: item 1 \("item\.7"\): attributes\.startDate is an invalid Date/);
    const expiring = await putAfterAGoodItem({ title: 'x' }, { expirationDate: new Date(NaN) });
    assert.match(expiring.error.message, /^put: item 1 \("item\.7"\): expirationDate is an invalid Date/);
  });

  test('finite numbers, valid dates and null (removal in an update) are sent as they are', async () => {
    const recording = await reindexAll({
      async reindexAll(index) {
        await index.put({ uniqueIdentifier: 'ok', attributes: { rating: -0.5, latitude: 0, startDate: new Date(0), custom: { pages: 12 } } });
        await index.put({ uniqueIdentifier: 'ok', isUpdate: true, attributes: { rating: null, custom: { pages: null } } });
      },
    });
    assert.deepEqual(recording.puts, [
      { uniqueIdentifier: 'ok', attributes: { rating: -0.5, latitude: 0, startDate: '1970-01-01T00:00:00.000Z', pages: 12 } },
      { uniqueIdentifier: 'ok', isUpdate: true, attributes: { rating: null, pages: null } },
    ]);
  });
});

describe('custom attributes', () => {
  test('are sent as members of the attributes object, as the protocol carries them', async () => {
    const recording = await reindexAll({
      async reindexAll(index) {
        await index.put({ uniqueIdentifier: 'book.1', attributes: { title: 'Dune', custom: { pages: 412, genres: ['sf'], inPrint: true } } });
      },
    });
    assert.deepEqual(recording.puts, [{ uniqueIdentifier: 'book.1', attributes: { title: 'Dune', pages: 412, genres: ['sf'], inPrint: true } }]);
  });

  test('a built-in name in custom, or one set twice, is refused', async () => {
    const builtIn = await putAfterAGoodItem({ custom: { title: 'shadowed' } });
    assert.match(builtIn.error.message, /attributes\.custom\.title: 'title' is a built-in attribute; set attributes\.title instead/);
    const twice = await putAfterAGoodItem({ pages: 1, custom: { pages: 2 } });
    assert.match(twice.error.message, /attributes\.custom\.pages: 'pages' is set outside custom too/);
  });
});

describe('a refusal carries its stack', () => {
  test('to stderr and in data.stack, from a real process', async () => {
    const ext = new ExtensionUnderTest(fixture('refuse.mjs'));
    await ext.initialize();
    ext.send({ jsonrpc: '2.0', id: 1, method: 'reindexAll', params: { reason: 'forced', clientState: null } });
    let reply = await ext.next();
    while (reply.method) reply = await ext.next(); // the put before the throw
    assert.equal(reply.error.message, 'the data source is unreachable');
    assert.match(reply.error.data.stack, /^Error: the data source is unreachable\n\s+at .*fixtures\/refuse\.mjs:\d+:\d+/);
    const exited = new Promise((resolve) => ext.child.once('exit', resolve));
    ext.closeStdin();
    await exited;
    assert.match(ext.stderr, /reindex-extension: refusing reindexAll \(request 1\): Error: the data source is unreachable\n\s+at .*fixtures\/refuse\.mjs:\d+:\d+/);
  });

  test('an IndexRequestError is sent as its author made it', async () => {
    const recording = new RecordingIndex();
    await assert.rejects(reindexAll({ reindexAll() { throw new IndexRequestError('no', { code: -32001, data: { why: 'x' } }); } }, { recording }), /^IndexRequestError: no$/);
    assert.deepEqual(recording.refusal, { code: -32001, message: 'no', data: { why: 'x' } });
    assert.deepEqual(recording.log, []);
  });
});

describe('through the reindex host', { skip: hostSkipReason() ?? false }, () => {
  test('a refusal\'s stack is in the bundle\'s log, in reindex run\'s and in reindex debug\'s output', async () => {
    const world = new HostWorld();
    world.bundle('com.example.refuse', fixture('refuse.mjs'));
    const run = await world.reindex(['run', 'com.example.refuse']);
    assert.equal(run.status, 75, JSON.stringify(run));
    const frame = /Error: the data source is unreachable\n.*at .*refuse\.mjs:\d+:\d+/;
    assert.match(world.log('com.example.refuse'), frame);
    assert.match(run.stderr, /at .*refuse\.mjs:\d+:\d+/);
    const debug = await world.reindex(['debug', 'com.example.refuse']);
    assert.notEqual(debug.status, 0);
    assert.match(debug.stdout + debug.stderr, /at .*refuse\.mjs:\d+:\d+/);
  });

  test('a NaN rating fails the run with the item and the attribute; the good item is not published', async () => {
    const world = new HostWorld();
    world.bundle('com.example.nan', fixture('not-a-number.mjs'));
    const run = await world.reindex(['run', 'com.example.nan', '--json']);
    assert.equal(run.status, 75, JSON.stringify(run));
    assert.equal(run.json.failure, 'refused');
    assert.match(run.json.error, /put: item 0 \("nan\.2"\): attributes\.rating is NaN; a number must be finite/);
    assert.deepEqual(await world.search('nightingale'), []);
    assert.deepEqual(await world.search('nightjar'), []);
  });
});
