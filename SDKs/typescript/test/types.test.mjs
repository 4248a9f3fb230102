// The generated declarations (dist/*.d.ts) compile against a typical extension
// (test-support/types), and reject mistakes at compile time: each file in
// test-support/types/mistakes must fail `tsc --noEmit` with the one error it describes.
// Needs the TypeScript compiler on PATH (Debian: node-typescript); skipped without it, unless
// REINDEX_REQUIRE_TSC is set (CI sets it), which makes a missing tsc a failure.

import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { SUPPORT_DIR } from '../test-support/harness.mjs';

const tsc = spawnSync('tsc', ['--version'], { encoding: 'utf8' });
const missing = tsc.status === 0 ? null : 'tsc is not installed (apt-get install node-typescript)';
const skip = missing !== null && !process.env.REINDEX_REQUIRE_TSC ? missing : false;
const TYPES_DIR = path.join(SUPPORT_DIR, 'types');
const MISTAKES_DIR = path.join(TYPES_DIR, 'mistakes');

/** Compiles one file with the settings of test-support/types/tsconfig.json; returns tsc's result. */
function compileAlone(file) {
  assert.equal(missing, null, missing ?? '');
  const config = path.join(MISTAKES_DIR, `tsconfig.${path.basename(file, '.ts')}.json`);
  fs.writeFileSync(config, JSON.stringify({ extends: '../tsconfig.json', files: [path.basename(file)] }));
  try {
    return spawnSync('tsc', ['-p', config, '--pretty', 'false'], { encoding: 'utf8' });
  } finally {
    fs.rmSync(config, { force: true });
  }
}

test('the declarations type an extension, typed custom attributes and the testing helpers', { skip }, () => {
  assert.equal(missing, null, missing ?? '');
  const result = spawnSync('tsc', ['-p', TYPES_DIR, '--pretty', 'false'], { encoding: 'utf8' });
  assert.equal(result.status, 0, `tsc ${tsc.stdout.trim()} failed:\n${result.stdout}${result.stderr}`);
});

const expected = {
  'attribute-typo.ts': /Object literal may only specify known properties, but 'keyword' does not exist in type 'ItemAttributes<CustomAttributes>'\. Did you mean to write 'keywords'\?/,
  'attribute-type.ts': /error TS2322: Type 'string' is not assignable to type 'number'\./,
  'custom-typo.ts': /'pgaes' does not exist in type 'BookAttributes'\. Did you mean to write 'pages'\?/,
  'custom-value.ts': /'name' does not exist in type 'readonly string\[\] \| Date'/,
};

test('every compile-fail fixture is checked', () => {
  assert.deepEqual(fs.readdirSync(MISTAKES_DIR).filter((f) => f.endsWith('.ts')).sort(), Object.keys(expected).sort());
});

for (const [file, error] of Object.entries(expected)) {
  test(`a mistake does not compile: ${file}`, { skip }, () => {
    const result = compileAlone(path.join(MISTAKES_DIR, file));
    const output = `${result.stdout}${result.stderr}`;
    assert.notEqual(result.status, 0, `${file} compiled, but must not:\n${output}`);
    assert.equal(output.match(/error TS\d+/g)?.length, 1, `${file}: expected exactly one error:\n${output}`);
    assert.match(output, error);
  });
}
