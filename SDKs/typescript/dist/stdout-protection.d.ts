import type { ProtocolOutput } from './types.js';
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
export declare function protectStdout(): ProtocolOutput;
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
export declare function protectStdoutIfExtension(env?: Record<string, string | undefined>): boolean;
/** Whether `protectStdout()` has run in this process. */
export declare function isStdoutProtected(): boolean;
