// The wait-for-debugger gate of debug mode, for Node's inspector (Chrome DevTools, VS Code).

import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);

/**
 * The body of the watchdog thread: after `ms` milliseconds, unless the main thread has moved on,
 * it releases `inspector.waitForDebugger()` by sending `Runtime.runIfWaitingForDebugger` itself,
 * through an inspector session of its own connected to the main thread.
 */
const WATCHDOG = `
const { workerData } = require('node:worker_threads');
const inspector = require('node:inspector');
const flags = workerData.flags;
Atomics.wait(flags, 0, 0, workerData.ms);
if (Atomics.compareExchange(flags, 0, 0, 2) === 0) {
  const session = new inspector.Session();
  session.connectToMainThread();
  session.post('Runtime.runIfWaitingForDebugger', () => session.disconnect());
}
`;

/**
 * @param {string} text
 */
function defaultLog(text) {
  process.stderr.write(`reindex-extension: ${text}\n`);
}

/**
 * The seconds that `REINDEX_WAIT_FOR_DEBUGGER` asks for, read the way the Swift SDK reads it:
 * a number of seconds, 0 (or less) meaning forever; anything that is not a number means no gate.
 *
 * @param {string | undefined} value
 * @returns {number | null} seconds (0 = forever), or null when there is no gate
 */
export function debuggerWaitSeconds(value) {
  if (value === undefined) return null;
  const text = value.trim();
  if (text === '') return null;
  const seconds = Number(text);
  if (Number.isNaN(seconds)) return null;
  return seconds > 0 && Number.isFinite(seconds) ? seconds : 0;
}

/**
 * When `REINDEX_WAIT_FOR_DEBUGGER` is set (by `reindex debug --wait-for-debugger[=SECONDS]`),
 * opens Node's inspector (unless `node --inspect` already did), prints its address to stderr and
 * blocks until a debugger attaches — Chrome DevTools (`chrome://inspect`) or VS Code ("Attach to
 * Node Process") — or the given seconds pass (`0` waits forever). Does nothing otherwise.
 *
 * The inspector listens on 127.0.0.1 and `process.debugPort` (9229 unless `--inspect-port` said
 * otherwise); `REINDEX_INSPECT_PORT` and `REINDEX_INSPECT_HOST` (for example from the manifest's
 * `environment`) choose another. A busy port falls back to a free one; the address is printed.
 *
 * @param {{ env?: Record<string, string | undefined>, log?: (text: string) => void }} [options]
 * @returns {boolean} whether a debugger attached
 */
export function waitForDebuggerIfRequested(options = {}) {
  const env = options.env ?? process.env;
  const log = options.log ?? defaultLog;
  const seconds = debuggerWaitSeconds(env.REINDEX_WAIT_FOR_DEBUGGER);
  if (seconds === null) return false;
  /** @type {typeof import('node:inspector')} */
  let inspector;
  try {
    inspector = require('node:inspector');
  } catch {
    log('REINDEX_WAIT_FOR_DEBUGGER is set, but this Node has no inspector; continuing without a debugger');
    return false;
  }
  let url = inspector.url();
  if (!url) {
    const host = env.REINDEX_INSPECT_HOST || '127.0.0.1';
    const requestedPort = env.REINDEX_INSPECT_PORT !== undefined && env.REINDEX_INSPECT_PORT !== ''
      ? Number(env.REINDEX_INSPECT_PORT)
      : process.debugPort;
    const port = Number.isInteger(requestedPort) && requestedPort >= 0 && requestedPort < 65536 ? requestedPort : 9229;
    inspector.open(port, host, false);
    url = inspector.url();
    if (!url && port !== 0) {
      inspector.open(0, host, false); // the port is taken (another extension?): any free one
      url = inspector.url();
    }
    if (!url) {
      log('could not open the inspector; continuing without a debugger');
      return false;
    }
  }
  const { hostname, port } = new URL(url);
  const pid = process.pid;
  const limit = seconds > 0 ? ` (at most ${Math.round(seconds)} s)` : '';
  const discovered = (hostname === '127.0.0.1' || hostname === 'localhost') && port === '9229';
  log(`pid ${pid} is waiting for a debugger to attach${limit}: the inspector is at ${url}`);
  log(`  Chrome: open chrome://inspect and choose "inspect" under Remote Target${discovered ? '' : ` (first add ${hostname}:${port} with "Configure…")`}`);
  log(`  VS Code: attach with { "type": "node", "request": "attach", "address": "${hostname}", "port": ${port} }`);

  const flags = new Int32Array(new SharedArrayBuffer(8));
  /** @type {import('node:worker_threads').Worker | null} */
  let watchdog = null;
  if (seconds > 0) {
    try {
      const { Worker } = require('node:worker_threads');
      watchdog = new Worker(WATCHDOG, { eval: true, workerData: { flags, ms: Math.round(seconds * 1000) } });
      watchdog.unref();
    } catch (error) {
      log(`cannot time the wait (${/** @type {Error} */ (error).message}); waiting without a limit`);
    }
  }
  inspector.waitForDebugger();
  // 0: still waiting when released, so a debugger did it; 2: the watchdog released the wait.
  const timedOut = Atomics.compareExchange(flags, 0, 0, 1) === 2;
  if (watchdog) Atomics.notify(flags, 0);
  if (timedOut) {
    log(`no debugger attached within ${Math.round(seconds)} s; continuing without one`);
    return false;
  }
  log(`debugger attached to pid ${pid}; continuing`);
  return true;
}
