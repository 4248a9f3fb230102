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

function defaultLog(text: string): void {
  process.stderr.write(`reindex-extension: ${text}\n`);
}

/**
 * The seconds that `REINDEX_WAIT_FOR_DEBUGGER` asks for, read the way the Swift SDK reads it:
 * a number of seconds, 0 (or less) meaning forever; anything that is not a number means no gate.
 * Returns the seconds (0 = forever), or null when there is no gate.
 */
export function debuggerWaitSeconds(value: string | undefined): number | null {
  if (value === undefined) return null;
  const text = value.trim();
  if (text === '') return null;
  const seconds = Number(text);
  if (Number.isNaN(seconds)) return null;
  return seconds > 0 && Number.isFinite(seconds) ? seconds : 0;
}

/** The inspector's port when `REINDEX_INSPECTOR_PORT` does not name one (Node's own default,
 * the one Chrome's chrome://inspect and VS Code look at). */
export const DEFAULT_INSPECTOR_PORT = 9229;

/** Set when a debugger attached through the gate: the SDK pauses once, before the next handler. */
let breakPending = false;
/** Whether a debugger attached through the gate (it may still be attached at the exit). */
let attached = false;

/** Whether a debugger attached through the gate in this process. */
export function debuggerAttachedInGate(): boolean {
  return attached;
}

/**
 * Whether a debugger attached through the gate and the SDK has not paused for it yet; reading it
 * clears it. The connection calls it just before it calls the first request's handler.
 */
export function takeDebuggerBreak(): boolean {
  const pending = breakPending;
  breakPending = false;
  return pending;
}

/**
 * The port asked for: `REINDEX_INSPECTOR_PORT` (`REINDEX_INSPECT_PORT`, its older name, too),
 * else the one `node --inspect-port` set, else 9229. `0` means any free port.
 */
function requestedPort(env: Record<string, string | undefined>): number {
  for (const name of ['REINDEX_INSPECTOR_PORT', 'REINDEX_INSPECT_PORT']) {
    const value = env[name];
    if (value === undefined || value.trim() === '') continue;
    const port = Number(value.trim());
    if (Number.isInteger(port) && port >= 0 && port < 65536) return port;
    process.stderr.write(`reindex-extension: ${name}=${value} is not a port number; using ${DEFAULT_INSPECTOR_PORT}\n`);
    return DEFAULT_INSPECTOR_PORT;
  }
  return process.debugPort && process.debugPort !== DEFAULT_INSPECTOR_PORT ? process.debugPort : DEFAULT_INSPECTOR_PORT;
}

/**
 * The gate of debug mode, for Node's inspector. When `REINDEX_WAIT_FOR_DEBUGGER` is set (by
 * `reindex debug --wait-for-debugger[=SECONDS]`), opens the inspector on 127.0.0.1 (unless
 * `node --inspect` already did), prints the PID and the ways to attach to stderr, and blocks
 * until a debugger attaches — any inspector client: `node inspect 127.0.0.1:PORT`, Chrome
 * DevTools (chrome://inspect), VS Code — or the given seconds pass (`0` waits forever). Does
 * nothing otherwise. It ends the moment the client sends `Runtime.runIfWaitingForDebugger`,
 * which every one of them does when it attaches; nothing is read from stdin or written to the
 * protocol before it ends, so the host's `initialize` waits in the pipe.
 *
 * The port is `REINDEX_INSPECTOR_PORT` (default 9229; `0` for any free one). When it is taken,
 * the inspector opens on a free port and says which. `REINDEX_INSPECT_HOST` chooses another
 * address than 127.0.0.1.
 *
 * After a debugger attached, the SDK pauses once just before it calls the first request's
 * handler, as `node --inspect-brk` pauses before the first line: set breakpoints, then continue,
 * or step into the handler.
 *
 * Returns whether a debugger attached.
 */
export function waitForDebuggerIfRequested(options: {
  env?: Record<string, string | undefined>;
  log?: (text: string) => void;
} = {}): boolean {
  const env = options.env ?? process.env;
  const log = options.log ?? defaultLog;
  const seconds = debuggerWaitSeconds(env.REINDEX_WAIT_FOR_DEBUGGER);
  if (seconds === null) return false;
  let inspector: typeof import('node:inspector');
  try {
    inspector = require('node:inspector');
  } catch {
    log('REINDEX_WAIT_FOR_DEBUGGER is set, but this Node has no inspector; continuing without a debugger');
    return false;
  }
  let url = inspector.url();
  let note = '';
  if (!url) {
    const host = env.REINDEX_INSPECT_HOST || '127.0.0.1';
    const port = requestedPort(env);
    inspector.open(port, host, false);
    url = inspector.url();
    if (!url && port !== 0) {
      inspector.open(0, host, false); // the port is taken (another extension, another debug session)
      url = inspector.url();
      if (url) note = ` (port ${port} is taken: this is another port; set REINDEX_INSPECTOR_PORT to choose one)`;
    }
    if (!url) {
      log('could not open the inspector (is TCP denied by the sandbox?); continuing without a debugger');
      return false;
    }
  }
  const { hostname, port: portText } = new URL(url);
  const port = Number(portText);
  const address = `${hostname}:${port}`;
  const pid = process.pid;
  const limit = seconds > 0 ? ` (at most ${Math.round(seconds)} s)` : '';
  log(`pid ${pid} is waiting for a debugger to attach${limit}: the inspector is at ${address}${note} (${url})`);
  log(`  node inspect ${address}`);
  log(`  Chrome: open chrome://inspect${port === DEFAULT_INSPECTOR_PORT && hostname === '127.0.0.1' ? '' : ` (first add ${address} with "Configure…")`} and click "inspect" under Remote Target`);
  log(`  VS Code launch.json: {"type":"node","request":"attach","address":"${hostname}","port":${port}}`);
  log('  once attached it pauses before the first handler: set breakpoints, then continue (or step in)');

  const flags = new Int32Array(new SharedArrayBuffer(8));
  let watchdog: import('node:worker_threads').Worker | null = null;
  if (seconds > 0) {
    try {
      const { Worker } = require('node:worker_threads') as typeof import('node:worker_threads');
      watchdog = new Worker(WATCHDOG, { eval: true, workerData: { flags, ms: Math.round(seconds * 1000) } });
      watchdog.unref();
    } catch (error) {
      log(`cannot time the wait (${(error as Error).message}); waiting without a limit`);
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
  breakPending = true;
  attached = true;
  return true;
}
