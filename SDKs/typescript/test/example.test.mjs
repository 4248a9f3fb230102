// Examples/typescript/notes: valid, runs as checked out, and keeps working when copied elsewhere.
// The host runs it sandboxed: it may read its own bundle, not this checkout, so a copy that
// imports this SDK from outside the bundle declares the SDK's directory in `sandbox.read`.

import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { describe, test } from 'node:test';
import { HostWorld, REPO_ROOT, SDK_DIR, declareSandbox, hostSkipReason } from '../test-support/harness.mjs';

const skip = hostSkipReason() ?? false;
const EXAMPLE = path.join(REPO_ROOT, 'Examples', 'typescript', 'notes');
const ID = 'com.example.notes.indexer';

/**
 * Copies the example bundle into `world`'s extensions directory (or into `dir`), optionally
 * changing the manifest.
 */
function copyExample(world, changeManifest = (m) => m, dir = path.join(world.extensions, 'notes')) {
  fs.mkdirSync(dir, { recursive: true });
  for (const name of ['manifest.json', 'notes.mjs', 'notes.json']) fs.copyFileSync(path.join(EXAMPLE, name), path.join(dir, name));
  fs.chmodSync(path.join(dir, 'notes.mjs'), 0o755);
  const manifest = changeManifest(JSON.parse(fs.readFileSync(path.join(dir, 'manifest.json'), 'utf8')));
  fs.writeFileSync(path.join(dir, 'manifest.json'), JSON.stringify(manifest, null, 2));
  return dir;
}

/**
 * A copy of the example laid out as in this repository — CHECKOUT/Examples/typescript/notes
 * beside CHECKOUT/SDKs/typescript, a link to this SDK — so that it imports the SDK by its path
 * in the repository, as it does checked out. Its manifest declares the SDK's directory in
 * `sandbox.read`, which a bundle importing the SDK from the checkout needs (the committed
 * manifest holds no absolute path).
 */
function checkedOutCopy(world) {
  const checkout = path.join(world.root, 'checkout');
  fs.mkdirSync(path.join(checkout, 'SDKs'), { recursive: true });
  fs.symlinkSync(SDK_DIR, path.join(checkout, 'SDKs', 'typescript'));
  return copyExample(world, (m) => declareSandbox(m, { read: [SDK_DIR] }), path.join(checkout, 'Examples', 'typescript', 'notes'));
}

describe('Examples/typescript/notes', { skip }, () => {
  test('is a valid bundle, and `validate --run` passes', async () => {
    const world = new HostWorld();
    const lint = await world.reindex(['validate', EXAMPLE, '--json'], { global: false });
    assert.equal(lint.status, 0, JSON.stringify(lint));
    assert.equal(lint.json.valid, true);
    assert.deepEqual(lint.json.warnings, []);
    const validate = await world.reindex(['validate', checkedOutCopy(world), '--run', '--json'], { global: false });
    assert.equal(validate.status, 0, JSON.stringify(validate));
    assert.equal(validate.json.valid, true);
    assert.deepEqual(validate.json.checks.filter((c) => c.result === 'fail'), []);
    assert.deepEqual(validate.json.warnings, []);
    assert.equal(validate.json.put, 8);
  });

  test('runs as checked out (its SDK declared in sandbox.read): reindexAll, search, reindexItems', async () => {
    const world = new HostWorld();
    const global = ['--index', world.index, '--extensions-path', path.dirname(checkedOutCopy(world))];
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
    const dir = copyExample(world, (m) => declareSandbox({ ...m, environment: { ...m.environment, REINDEX_TS_SDK: SDK_DIR } }, { read: [SDK_DIR] }));
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
    fs.cpSync(path.join(SDK_DIR, 'dist'), path.join(vendored, 'dist'), { recursive: true });
    fs.copyFileSync(path.join(SDK_DIR, 'package.json'), path.join(vendored, 'package.json'));
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
