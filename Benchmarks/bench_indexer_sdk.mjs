#!/usr/bin/env node
// The benchmark's TypeScript SDK extension: reindexAll reads the items (one JSON item per line)
// from BENCH_ITEMS_FILE and puts them in arrays of BENCH_BATCH items, awaiting each put (which
// waits for the pipe to drain), as the SDK's README says to stream a large source. The SDK is
// loaded from REINDEX_TS_SDK (its directory).
import fs from 'node:fs';
import path from 'node:path';
import readline from 'node:readline';
import { pathToFileURL } from 'node:url';

const { run } = await import(pathToFileURL(path.join(process.env.REINDEX_TS_SDK, 'dist', 'index.js')).href);
const batchSize = Number(process.env.BENCH_BATCH ?? '2000');

class BenchIndexer {
  async reindexAll(index) {
    const lines = readline.createInterface({ input: fs.createReadStream(process.env.BENCH_ITEMS_FILE), crlfDelay: Infinity });
    let batch = [];
    for await (const line of lines) {
      batch.push(JSON.parse(line));
      if (batch.length === batchSize) {
        await index.put(batch);
        batch = [];
      }
    }
    if (batch.length > 0) await index.put(batch);
  }

  async reindexItems(identifiers, index) {
    await index.delete(identifiers);
  }
}

run(BenchIndexer);
