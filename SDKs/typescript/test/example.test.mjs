// Examples/typescript/notes: valid, runs where it is, and keeps working when copied elsewhere.

import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { describe, test } from 'node:test';
import { HostWorld, REPO_ROOT, SDK_DIR, hostSkipReason } from '../test-support/harness.mjs';

const skip = hostSkipReason() ?? false;
const EXAMPLE = path.join(REPO_ROOT, 'Examples', 'typescript', 'notes');
const ID = 'com.example.notes.indexer';

/** Copies the example bundle into `world`'s extensions directory, optionally changing the manifest. */
function copyExample(world, changeManifest = (m) => m) {
  const dir = path.join(world.extensions, 'notes');
  fs.mkdirSync(dir);
  for (const name of ['manifest.json', 'notes.mjs', 'notes.json']) fs.copyFileSync(path.join(EXAMPLE, name), path.join(dir, name));
  fs.chmodSync(path.join(dir, 'notes.mjs'), 0o755);
  const manifest = changeManifest(JSON.parse(fs.readFileSync(path.join(dir, 'manifest.json'), 'utf8')));
  fs.writeFileSync(path.join(dir, 'manifest.json'), JSON.stringify(manifest, null, 2));
  return dir;
}

describe('Examples/typescript/notes', { skip }, () => {
  test('is a valid bundle, and `validate --run` passes', async () => {
    const world = new HostWorld();
    const validate = await world.reindex(['validate', EXAMPLE, '--run', '--json'], { global: false });
    assert.equal(validate.status, 0, JSON.stringify(validate));
    assert.equal(validate.json.valid, true);
    assert.deepEqual(validate.json.problems, []);
    assert.equal(validate.json.put, 8);
  });

  test('runs in place: reindexAll, search, reindexItems', async () => {
    const world = new HostWorld();
    const global = ['--index', world.index, '--extensions-path', path.dirname(EXAMPLE)];
    const run = await world.reindex([...global, 'run', ID, '--json'], { global: false });
    assert.equal(run.status, 0, JSON.stringify(run));
    assert.equal(run.json.put, 8);
    const search = await world.reindex([...global, 'search', 'sourdough', '--json'], { global: false });
    assert.deepEqual(search.json.results.map((r) => r.uniqueIdentifier).sort(), ['note.groceries', 'note.sourdough']);
    const items = await world.reindex([...global, 'run', ID, '--ids', 'note.trip-lisbon,note.deleted-long-ago', '--json'], { global: false });
    assert.equal(items.status, 0, JSON.stringify(items));
    assert.equal(items.json.put, 1);
    assert.match(world.log(ID), /initialized: Notes 1\.0\.0, protocol 1/);
  });

  test('copied elsewhere, it finds the SDK through REINDEX_TS_SDK in the manifest', async () => {
    const world = new HostWorld();
    const dir = copyExample(world, (m) => ({ ...m, environment: { ...m.environment, REINDEX_TS_SDK: SDK_DIR } }));
    assert.equal((await world.reindex(['validate', dir, '--run'], { global: false })).status, 0);
    const run = await world.reindex(['run', ID, '--json']);
    assert.equal(run.status, 0, JSON.stringify(run));
    assert.deepEqual(await world.search('lisbon'), ['note.trip-lisbon']);
  });

  test('copied elsewhere, it finds the SDK vendored in node_modules/reindex-extension', async () => {
    const world = new HostWorld();
    const dir = copyExample(world);
    const vendored = path.join(dir, 'node_modules', 'reindex-extension');
    fs.mkdirSync(vendored, { recursive: true });
    fs.cpSync(path.join(SDK_DIR, 'src'), path.join(vendored, 'src'), { recursive: true });
    for (const name of ['package.json', 'index.d.ts']) fs.copyFileSync(path.join(SDK_DIR, name), path.join(vendored, name));
    const run = await world.reindex(['run', ID, '--json']);
    assert.equal(run.status, 0, JSON.stringify(run));
    assert.deepEqual(await world.search('tokenizer'), ['note.design-tokenizer']);
  });

  test('copied elsewhere without the SDK, it says how to provide it', async () => {
    const world = new HostWorld();
    copyExample(world);
    const run = await world.reindex(['run', ID, '--json']);
    assert.notEqual(run.status, 0);
    assert.match(world.log(ID) + run.stderr, /cannot find the reindex TypeScript SDK: set REINDEX_TS_SDK/);
  });

  test('copied elsewhere with a wrong REINDEX_TS_SDK, it names the path', async () => {
    const world = new HostWorld();
    copyExample(world, (m) => ({ ...m, environment: { REINDEX_TS_SDK: '/nonexistent/sdk' } }));
    const run = await world.reindex(['run', ID, '--json']);
    assert.notEqual(run.status, 0);
    assert.match(world.log(ID) + run.stderr, /REINDEX_TS_SDK is \/nonexistent\/sdk/);
  });
});
