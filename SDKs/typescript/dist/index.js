// reindex-extension: write reindexing extensions for the `reindex` host in JavaScript or
// TypeScript. Protocol version 1 (JSON-RPC 2.0, one message per line on stdin/stdout).
//
// The debug gate honours REINDEX_WAIT_FOR_DEBUGGER (see debugger-gate.ts).
import fs from 'node:fs';
import { createRequire } from 'node:module';
import { clearTimeout, setTimeout } from 'node:timers';
import { HostConnection, PROTOCOL_VERSIONS, handlerOf } from './connection.js';
import { debuggerAttachedInGate, waitForDebuggerIfRequested } from './debugger-gate.js';
import { extensionIdentity, readManifest } from './manifest.js';
import { protectStdout, protectStdoutIfExtension } from './stdout-protection.js';
// Started by the host (REINDEX_BUNDLE_IDENTIFIER is set): protect stdout now, while this module
// is evaluated. ES modules are evaluated before the body of the module that imports them, so a
// `console.log` at the top level of the extension's script, or anywhere before `run()`, already
// goes to stderr instead of corrupting the protocol.
protectStdoutIfExtension();
export { CancellationError, ErrorCode, IndexRequestError, SearchableIndexError } from './errors.js';
export { MAX_CLIENT_STATE_BYTES, MAX_LINE_BYTES, SearchableIndex } from './searchable-index.js';
export { debuggerWaitSeconds, waitForDebuggerIfRequested } from './debugger-gate.js';
export { isStdoutProtected, protectStdout } from './stdout-protection.js';
export { readManifest } from './manifest.js';
export { PROTOCOL_VERSIONS };
/** The reasons protocol version 1 names. Extensions must accept others too. */
export const Reason = Object.freeze({
    forced: 'forced',
    indexLost: 'indexLost',
    bundleChanged: 'bundleChanged',
    expiring: 'expiring',
    retry: 'retry',
});
const require = createRequire(import.meta.url);
/** How long the SDK waits for the protocol stream to flush before it exits. */
const FLUSH_MILLISECONDS = 2000;
/** Disconnects an attached debugger, which would otherwise hold the exit ("Waiting for the
 * debugger to disconnect…") after the host has closed stdin. */
function closeInspector() {
    try {
        const inspector = require('node:inspector');
        if (!inspector.url())
            return;
        if (debuggerAttachedInGate()) {
            // Chrome DevTools and VS Code disconnect when the inspector closes; `node inspect` stays
            // until it is told to go, and Node waits for it.
            defaultLog('the host closed stdin: the extension exits as soon as the debugger disconnects (in node inspect: .exit)');
        }
        inspector.close();
    }
    catch {
        // no inspector
    }
}
function defaultLog(text) {
    process.stderr.write(`reindex-extension: ${text}\n`);
}
/** Waits until `stream` has written everything, at most `ms` milliseconds. */
function flush(stream, ms) {
    return new Promise((resolve) => {
        const timer = setTimeout(resolve, ms);
        timer.unref();
        const done = () => { clearTimeout(timer); resolve(); };
        if (typeof stream.end !== 'function' || stream.writableFinished || stream.destroyed) {
            done();
            return;
        }
        stream.once('error', done);
        stream.end(done);
    });
}
/**
 * Runs the protocol until the host closes stdin, then exits with status 0.
 *
 * In order: protects stdout (`protectStdout()`), waits for a debugger when
 * `REINDEX_WAIT_FOR_DEBUGGER` is set (`waitForDebuggerIfRequested()`), reads the name and
 * version from `manifest.json`, then answers the host: `initialize` (with version negotiation),
 * `reindexAll` and `reindexItems` (by calling the extension; resolving acknowledges, throwing
 * refuses), `$/cancel`, and -32601 for any other request. SIGTERM ends the process with status 0.
 *
 * `options` are for tests and embedding: with `input` the SDK reads that stream instead of
 * stdin, and by default neither protects stdout, opens the debugger gate nor exits at the end:
 * the returned promise resolves when the input ends.
 */
export function run(extension, options = {}) {
    const handler = handlerOf(extension);
    const embedded = options.input !== undefined;
    const exit = options.exit ?? !embedded;
    const log = options.log ?? defaultLog;
    let output = options.output;
    if (output === undefined) {
        output = (options.protectStdout ?? true)
            ? protectStdout()
            : fs.createWriteStream('', { fd: 1, autoClose: false, highWaterMark: 64 * 1024 });
    }
    else if (options.protectStdout) {
        protectStdout();
    }
    if (options.debuggerGate ?? !embedded)
        waitForDebuggerIfRequested({ log });
    const identity = extensionIdentity(handler, options.manifest !== undefined ? options.manifest : readManifest(options.manifestDirectory));
    const protocolOutput = output;
    const connection = new HostConnection({ output: protocolOutput, handler, identity, log });
    const input = options.input ?? process.stdin;
    let exiting = false;
    const finish = async () => {
        connection.close();
        if (!exit)
            return;
        if (exiting)
            return;
        exiting = true;
        connection.stopWriting();
        await flush(protocolOutput, FLUSH_MILLISECONDS);
        closeInspector();
        process.exit(0);
    };
    if (exit) {
        process.on('SIGTERM', () => { finish(); });
    }
    return (async () => {
        try {
            for await (const chunk of input) {
                connection.feed(chunk);
            }
        }
        catch (error) {
            log(`reading from the host failed: ${error.message}`);
        }
        await finish();
    })();
}
