// Stdout protection: the protocol owns descriptor 1; everything JavaScript prints goes to stderr.

import fs, { type WriteStream } from 'node:fs';
import { Console } from 'node:console';
import { createRequire } from 'node:module';
import type { ProtocolOutput } from './types.js';

const require = createRequire(import.meta.url);

/** The console methods that print (including those that only print to stderr, so that
 * `console.group` indentation stays shared between all of them). */
const CONSOLE_METHODS = [
  'log', 'info', 'debug', 'dir', 'dirxml', 'table', 'trace', 'warn', 'error', 'assert',
  'count', 'countReset', 'group', 'groupCollapsed', 'groupEnd', 'time', 'timeEnd', 'timeLog',
];

let protocolStream: WriteStream | null = null;

/**
 * Protects the protocol stream from stray output. Node cannot move descriptor 1 the way the
 * Swift SDK does (`dup2`), so this works at the JavaScript level:
 *
 * - the protocol is written to descriptor 1 through a private `fs.WriteStream` (returned);
 * - `process.stdout` becomes `process.stderr`, so `process.stdout.write(…)` lands in the log;
 * - `console.log`, `console.info`, `console.debug`, `console.dir`, `console.table` … print to
 *   stderr (and still to an attached inspector's console, as Node's own console does).
 *
 * Call it before anything prints; `run()` calls it first thing. Calling it again returns the same
 * stream. It does not cover native code or child processes that inherit descriptor 1: start
 * children with `stdio: ['ignore', 2, 2]` (or `'pipe'`), never `'inherit'`.
 *
 * Returns the private stream on descriptor 1.
 */
export function protectStdout(): ProtocolOutput {
  if (protocolStream) return protocolStream;
  // Created before anything touches `process.stdout`, so Node never opens its own handle on fd 1.
  protocolStream = fs.createWriteStream('', { fd: 1, autoClose: false, highWaterMark: 64 * 1024 });
  const stderr = process.stderr;
  Object.defineProperty(process, 'stdout', {
    configurable: true,
    enumerable: true,
    get: () => stderr,
  });
  const logConsole = new Console({ stdout: stderr, stderr });
  let inspectorConsole: Record<string, Function> | null = null;
  try {
    inspectorConsole = (require('node:inspector') as typeof import('node:inspector')).console as Record<string, Function>;
  } catch {
    // A Node built without the inspector: nothing to mirror to.
  }
  const target = globalThis.console as unknown as Record<string, Function>;
  const source = logConsole as unknown as Record<string, Function>;
  for (const name of CONSOLE_METHODS) {
    if (typeof source[name] !== 'function') continue;
    const print = source[name].bind(logConsole);
    const mirror = inspectorConsole && typeof inspectorConsole[name] === 'function'
      ? inspectorConsole[name].bind(inspectorConsole)
      : null;
    target[name] = mirror
      ? (...args: unknown[]) => { mirror(...args); return print(...args); }
      : print;
  }
  return protocolStream;
}

/** Set by the protecting process, for the processes it starts: a Node program that an extension
 * runs, and that imports the SDK too, inherits the host's variables but owns its stdout. */
const PROTECTED_PID = 'REINDEX_EXTENSION_STDOUT_PID';

/**
 * Protects stdout when this process is an extension started by the host, which always sets
 * `REINDEX_BUNDLE_IDENTIFIER`, and not a process an extension started (those inherit the
 * variable). `index.js` calls it when it is evaluated, so that the protection is in place before
 * the body of the author's module runs: a `console.log` at its top level goes to stderr too.
 * Elsewhere (in-process tests, scripts that import the SDK for its types or helpers) stdout
 * stays as it is.
 *
 * Returns whether stdout is protected now.
 */
export function protectStdoutIfExtension(env: Record<string, string | undefined> = process.env): boolean {
  if (protocolStream) return true;
  if (!env.REINDEX_BUNDLE_IDENTIFIER) return false;
  const marked = env[PROTECTED_PID];
  if (marked !== undefined && marked !== '' && marked !== String(process.pid)) return false;
  protectStdout();
  env[PROTECTED_PID] = String(process.pid);
  return true;
}

/** Whether `protectStdout()` has run in this process. */
export function isStdoutProtected(): boolean {
  return protocolStream !== null;
}
