// reindex-extension/testing: handlers called in process on a recording index, without the host.

import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { RecordingIndex, reindexAll, reindexItems } from '../dist/testing.js';

class Batches {
  static records = ['a', 'b', 'c', 'd', 'e'];

  async reindexAll(index) {
    const start = index.clientState ? Number(index.clientState.toString('utf8')) : 0;
    for (let first = start; first < Batches.records.length; first += 2) {
      const batch = Batches.records.slice(first, first + 2);
      await index.put(batch.map((id) => ({ uniqueIdentifier: id, domainIdentifier: `d.${id}`, attributes: { title: id.toUpperCase() } })));
      index.progress(first + batch.length, Batches.records.length);
      if (first + batch.length < Batches.records.length) await index.commitBatch(String(first + batch.length));
    }
  }

  async reindexItems(identifiers, index) {
    await index.delete(identifiers.filter((id) => !Batches.records.includes(id)));
    await index.deleteDomains(['d.gone']);
    await index.deleteAll();
  }
}

describe('reindexAll', () => {
  test('records puts, progress and commits in order, as the host receives them', async () => {
    const recording = await reindexAll(Batches);
    assert.equal(recording.outcome, 'acknowledged');
    assert.deepEqual(recording.operations.map((op) => op.kind), ['put', 'progress', 'commit', 'put', 'progress', 'commit', 'put', 'progress']);
    assert.deepEqual(recording.puts.map((item) => item.uniqueIdentifier), ['a', 'b', 'c', 'd', 'e']);
    assert.deepEqual(recording.puts[0], { uniqueIdentifier: 'a', domainIdentifier: 'd.a', attributes: { title: 'A' } });
    assert.deepEqual(recording.commits.map((c) => [c.clientState, c.operations]), [['2', 1], ['4', 1]]);
    assert.deepEqual(recording.progress, [{ completed: 2, total: 5 }, { completed: 4, total: 5 }, { completed: 5, total: 5 }]);
    assert.equal(recording.allowEmpty, false);
  });

  test('resumes from a client state', async () => {
    const recording = await reindexAll(new Batches(), { reason: 'retry', clientState: '4' });
    assert.deepEqual(recording.puts.map((item) => item.uniqueIdentifier), ['e']);
    assert.deepEqual(recording.commits, []);
  });

  test('allowEmpty is recorded', async () => {
    const recording = await reindexAll({ reindexAll(index) { index.allowEmpty(); } });
    assert.equal(recording.allowEmpty, true);
    assert.deepEqual(recording.operations, []);
  });

  test('a refusal rejects with the handler\'s own error; the recording keeps what was sent first', async () => {
    const failure = new RangeError('the source went away');
    const recording = new RecordingIndex();
    await assert.rejects(reindexAll({
      async reindexAll(index) { await index.put({ uniqueIdentifier: 'x' }); throw failure; },
    }, { recording }), (error) => error === failure);
    assert.equal(recording.outcome, 'refused');
    assert.deepEqual(recording.puts, [{ uniqueIdentifier: 'x' }]);
    assert.equal(recording.refusal.message, 'the source went away');
    assert.match(recording.refusal.data.stack, /^RangeError: the source went away\n\s+at /);
    assert.match(recording.log.join('\n'), /refusing reindexAll \(request 1\): RangeError: the source went away/);
  });

  test('a forgotten await is caught as under the host', async () => {
    await assert.rejects(reindexAll({
      reindexAll(index) { setImmediate(() => index.put({ uniqueIdentifier: 'late' }).catch(() => {})); },
    }), /reindexAll returned while work it started was still using the index \(index\.put\(\) after it returned\): an await is missing/);
  });

  test('an extension without reindexAll is refused', async () => {
    await assert.rejects(reindexAll({}), /testing\.reindexAll\(extension\): the extension must be an object \(or a class\) with a reindexAll\(index\) method/);
  });
});

describe('reindexItems', () => {
  test('records deletes, deleted domains and deleteAll', async () => {
    const recording = await reindexItems(Batches, ['a', 'gone.1']);
    assert.deepEqual(recording.deletes, ['gone.1']);
    assert.deepEqual(recording.deletedDomains, ['d.gone']);
    assert.equal(recording.deletedAll, true);
  });

  test('needs the extension to have reindexItems', async () => {
    await assert.rejects(reindexItems({ reindexAll() {} }, ['a']), /has no reindexItems/);
  });
});

describe('items()', () => {
  test('applies puts, updates, deletes and domain deletes in order', async () => {
    const recording = await reindexAll({
      async reindexAll(index) {
        await index.put([
          { uniqueIdentifier: '1', domainIdentifier: 'a.b', attributes: { title: 'one', rating: 1 } },
          { uniqueIdentifier: '2', domainIdentifier: 'a.bc', attributes: { title: 'two' } },
          { uniqueIdentifier: '3', domainIdentifier: 'a.b.c', attributes: { title: 'three' } },
          { uniqueIdentifier: '4', attributes: { title: 'four' } },
        ]);
        await index.put({ uniqueIdentifier: '2', isUpdate: true, attributes: { title: 'TWO', rating: 2 } });
        await index.put({ uniqueIdentifier: '9', isUpdate: true, attributes: { title: 'no such item' } });
        await index.deleteDomains(['a.b']);
        await index.delete(['4']);
      },
    });
    assert.deepEqual([...recording.items().entries()], [
      ['2', { uniqueIdentifier: '2', domainIdentifier: 'a.bc', attributes: { title: 'TWO', rating: 2 } }],
    ]);
  });
});

describe('warnings', () => {
  test('say what the host would warn about: misspelt attributes and members an item does not have, once per name', async () => {
    const extension = {
      async reindexAll(index) {
        await index.put([
          { uniqueIdentifier: 'good', attributes: { title: 'Fine', keyword: ['k'], directer: 'Lang', shelf: 'B' } },
          { uniqueIdentifier: 'a', title: 'Ada Park' },
          { uniqueIdentifier: 'b', attributeSet: { title: 'Grace' } },
          { uniqueIdentifier: 'c', attribtes: { title: 'x' } },
          { uniqueIdentifier: 'd', title: 'no second warning', attributes: { keyword: ['again'] } },
        ]);
      },
    };
    const recording = await reindexAll(extension, { manifest: { attributes: { director: { type: 'string' } } } });
    assert.deepEqual(recording.warnings, [
      "attribute 'keyword' (first in item 'good') is neither built in nor declared, so it is kept as a custom attribute and not searched; did you mean 'keywords' (a built-in attribute)?",
      "attribute 'directer' (first in item 'good') is neither built in nor declared, so it is kept as a custom attribute and not searched; did you mean 'director' (an attribute the manifest declares)?",
      "item member 'title' (first in item 'a') is not part of an item and is ignored; attributes go inside \"attributes\": {\"uniqueIdentifier\": \u2026, \"attributes\": {\"title\": \u2026}}",
      "item member 'attributeSet' (first in item 'b') is not part of an item and is ignored; Core Spotlight's attributeSet is \"attributes\" here",
      "item member 'attribtes' (first in item 'c') is not part of an item and is ignored; did you mean 'attributes'?",
    ]);
  });
});
