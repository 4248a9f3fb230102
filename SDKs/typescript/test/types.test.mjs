// The hand-written declarations compile against a typical extension (test-support/types).
// Needs the TypeScript compiler on PATH (Debian: node-typescript); skipped without it.

import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { test } from 'node:test';
import { SUPPORT_DIR } from '../test-support/harness.mjs';

const tsc = spawnSync('tsc', ['--version'], { encoding: 'utf8' });
const skip = tsc.status === 0 ? false : 'tsc is not installed (apt-get install node-typescript)';

test('index.d.ts types an extension and rejects obvious mistakes', { skip }, () => {
  const result = spawnSync('tsc', ['-p', path.join(SUPPORT_DIR, 'types')], { encoding: 'utf8' });
  assert.equal(result.status, 0, `tsc ${tsc.stdout.trim()} failed:\n${result.stdout}${result.stderr}`);
});
