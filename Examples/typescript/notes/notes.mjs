#!/usr/bin/env node
// Notes: an example reindex extension written with the JavaScript/TypeScript SDK
// (SDKs/typescript). It indexes the notes in notes.json beside this file; a note's item
// identifier is "note.<id>" and its domain "com.example.notes.folder.<folder>".
//
// Where the SDK comes from, first match wins:
//   1. $REINDEX_TS_SDK — the SDK directory (or its dist/index.js); a relative path is taken from
//      this bundle's directory. Set it in the manifest's "environment" when the bundle lives
//      outside this repository: the host passes nothing else of your environment through.
//   2. ../../../SDKs/typescript/dist/index.js — the SDK in this repository, for the bundle as it
//      is checked out here.
//   3. the package "reindex-extension" — a copy of SDKs/typescript vendored into
//      node_modules/reindex-extension beside this file (no npm needed: cp -R).
//
// Debugging: `reindex debug com.example.notes.indexer --wait-for-debugger` makes the SDK open
// Node's inspector on 127.0.0.1:9229 and wait; `node inspect 127.0.0.1:9229`, then
// `sb('notes.mjs', LINE); cont` at its prompt (see SDKs/typescript/README.md, "Debugging").

import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));

/**
 * Throws a message that names the way out when the host's sandbox hides `entry`: it lets the
 * extension see that a file outside its bundle exists, not read it.
 */
function checkReadable(entry) {
  try {
    fs.closeSync(fs.openSync(entry, 'r'));
  } catch (error) {
    if (error?.code !== 'EACCES') throw error;
    const sdk = path.dirname(path.dirname(entry));
    throw new Error(`the SDK is in ${sdk}, but the sandbox does not let the extension read it: declare that ` +
      'directory in the manifest\'s "sandbox": {"read": [...]} (an absolute path), or copy it to ' +
      'node_modules/reindex-extension beside notes.mjs');
  }
}

/** Loads the SDK from $REINDEX_TS_SDK, the repository, or node_modules. */
async function loadSDK() {
  const configured = process.env.REINDEX_TS_SDK;
  if (configured) {
    let entry = path.resolve(here, configured);
    if (fs.existsSync(entry) && fs.statSync(entry).isDirectory()) entry = path.join(entry, 'dist', 'index.js');
    if (!fs.existsSync(entry)) throw new Error(`REINDEX_TS_SDK is ${configured}, but ${entry} does not exist`);
    checkReadable(entry);
    return import(pathToFileURL(entry).href);
  }
  const inRepository = path.join(here, '../../../SDKs/typescript/dist/index.js');
  if (fs.existsSync(inRepository)) {
    checkReadable(inRepository);
    return import(pathToFileURL(inRepository).href);
  }
  try {
    return await import('reindex-extension');
  } catch (error) {
    if (error?.code !== 'ERR_MODULE_NOT_FOUND') throw error;
    throw new Error('cannot find the reindex TypeScript SDK: set REINDEX_TS_SDK in the manifest\'s "environment" ' +
      'to the SDK directory, or copy SDKs/typescript to node_modules/reindex-extension beside notes.mjs');
  }
}

let sdk;
try {
  sdk = await loadSDK();
} catch (error) {
  process.stderr.write(`notes: ${error.message}\n`);
  process.exit(1);
}
const { run, IndexRequestError } = sdk;

const BATCH = 3; // notes per index/put, and per batch/commit during reindexAll
const DOMAIN = 'com.example.notes.folder.';

/** @returns {Array<{ id: string, folder: string, title: string, body: string, tags: string[], created: string, modified: string }>} */
function loadNotes() {
  const file = path.join(here, 'notes.json');
  try {
    return JSON.parse(fs.readFileSync(file, 'utf8'));
  } catch (error) {
    // A refusal: the host keeps the previous items, records the message and retries later.
    throw new IndexRequestError(`cannot read ${file}: ${error.message}`, { code: -32603 });
  }
}

/** One note as a protocol item. */
function toItem(note) {
  return {
    uniqueIdentifier: `note.${note.id}`,
    domainIdentifier: DOMAIN + note.folder,
    attributes: {
      title: note.title,
      textContent: note.body,
      keywords: note.tags,
      contentType: 'text/markdown',
      contentCreationDate: note.created,
      contentModificationDate: note.modified,
    },
  };
}

class NotesExtension {
  /** Puts every note; resumes after the last committed batch of an unfinished attempt. */
  async reindexAll(index) {
    const notes = loadNotes();
    let start = 0;
    if (index.clientState) {
      try {
        start = JSON.parse(index.clientState.toString('utf8')).next;
        console.log(`notes: resuming at note ${start} of ${notes.length}`); // goes to stderr
      } catch {
        console.log('notes: unreadable client state; starting from the beginning');
      }
    }
    console.log(`notes: reindexAll (reason ${index.reason})`);
    for (let first = start; first < notes.length; first += BATCH) {
      index.throwIfCancelled(); // a $/cancel from the host stops the work here
      const batch = notes.slice(first, first + BATCH);
      await index.put(batch.map(toItem));
      const done = first + batch.length;
      index.progress(done, notes.length, `${done} of ${notes.length} notes`);
      if (done < notes.length) await index.commitBatch(JSON.stringify({ next: done })); // the acknowledgement commits the last batch
    }
  }

  /** Re-indexes exactly these items: puts the notes that exist, deletes the others. */
  async reindexItems(identifiers, index) {
    const notes = new Map(loadNotes().map((note) => [`note.${note.id}`, note]));
    const found = identifiers.filter((id) => notes.has(id));
    await index.put(found.map((id) => toItem(notes.get(id))));
    await index.delete(identifiers.filter((id) => !notes.has(id)));
  }
}

run(NotesExtension);
