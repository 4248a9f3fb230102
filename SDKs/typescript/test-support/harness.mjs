// Test helpers: drive an extension over pipes, build bundles, run the `reindex` host.
// (Kept outside test/ so that `node --test SDKs/typescript/test/` does not run them as tests.)

import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

export const SUPPORT_DIR = path.dirname(fileURLToPath(import.meta.url));
export const SDK_DIR = path.resolve(SUPPORT_DIR, '..');
export const SDK_ENTRY = path.join(SDK_DIR, 'dist', 'index.js');
export const FIXTURES_DIR = path.join(SUPPORT_DIR, 'fixtures');
export const REPO_ROOT = path.resolve(SDK_DIR, '..', '..');

/** @param {string} name */
export const fixture = (name) => path.join(FIXTURES_DIR, name);

/** What to clean up when the test process exits: scratch directories and host processes. */
const scratchDirectories = new Set();
const hostProcesses = new Set();
process.on('exit', () => {
  for (const child of hostProcesses) child.kill('SIGKILL');
  for (const dir of scratchDirectories) {
    try { fs.rmSync(dir, { recursive: true, force: true }); } catch { /* ignore */ }
  }
});

/** A scratch directory removed when the process exits. */
export function scratchDirectory(prefix = 'reindex-ts-') {
  const dir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), prefix)));
  scratchDirectories.add(dir);
  return dir;
}

/** Waits `ms` milliseconds. */
export const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Polls `predicate` until it is truthy (returns its value) or `ms` pass (throws `what`).
 * @template T
 * @param {() => T} predicate
 * @param {string} what
 * @param {number} [ms]
 * @returns {Promise<T>}
 */
export async function eventually(predicate, what, ms = 10000) {
  const deadline = Date.now() + ms;
  for (;;) {
    const value = predicate();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(25);
  }
}

/**
 * An extension process driven over pipes, as the host drives it.
 */
export class ExtensionUnderTest {
  /**
   * @param {string} script
   * @param {{ env?: Record<string, string>, cwd?: string, args?: string[] }} [options]
   */
  constructor(script, options = {}) {
    this.child = spawn(process.execPath, [script, ...(options.args ?? [])], {
      cwd: options.cwd ?? os.tmpdir(),
      env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: process.env.HOME ?? '/', ...options.env },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    /** Every stdout line, as text. */
    this.lines = [];
    /** Parsed stdout messages not yet taken by `next()`. */
    this.queue = [];
    /** @type {((message: any) => void) | null} */
    this.waiter = null;
    this.stdoutRaw = '';
    this.stderr = '';
    this.child.stdout.setEncoding('utf8');
    this.child.stderr.setEncoding('utf8');
    let partial = '';
    this.child.stdout.on('data', (text) => {
      this.stdoutRaw += text;
      partial += text;
      let newline;
      while ((newline = partial.indexOf('\n')) !== -1) {
        const line = partial.slice(0, newline);
        partial = partial.slice(newline + 1);
        this.lines.push(line);
        let message;
        try { message = JSON.parse(line); } catch { message = { unparsable: line }; }
        if (this.waiter) { const w = this.waiter; this.waiter = null; w(message); } else this.queue.push(message);
      }
    });
    this.child.stderr.on('data', (text) => { this.stderr += text; });
    this.child.stdin.on('error', () => {}); // EPIPE after the extension exits
    /** @type {Promise<{ code: number | null, signal: NodeJS.Signals | null }>} */
    this.exited = new Promise((resolve) => this.child.on('exit', (code, signal) => resolve({ code, signal })));
  }

  /** @param {unknown} message */
  send(message) { this.child.stdin.write(`${JSON.stringify(message)}\n`); }

  /** @param {string} text */
  sendRaw(text) { this.child.stdin.write(text); }

  /**
   * The next message the extension writes.
   * @param {number} [ms]
   * @returns {Promise<any>}
   */
  next(ms = 10000) {
    if (this.queue.length > 0) return Promise.resolve(this.queue.shift());
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.waiter = null;
        reject(new Error(`no message from the extension within ${ms} ms; stderr:\n${this.stderr}`));
      }, ms);
      this.waiter = (message) => { clearTimeout(timer); resolve(message); };
    });
  }

  /** Asserts that nothing arrives within `ms`; returns what did arrive (should be nothing). */
  async quiet(ms = 300) {
    await sleep(ms);
    return this.queue.splice(0);
  }

  /** Sends `initialize` and returns the reply. */
  async initialize(versions = [1]) {
    this.send({ jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersions: versions, host: { name: 'reindex', version: 'test' }, bundleIdentifier: 'com.example.test', debug: false } });
    return this.next();
  }

  closeStdin() { this.child.stdin.end(); }

  kill(signal = 'SIGKILL') { try { this.child.kill(signal); } catch { /* gone */ } }
}

/**
 * `manifest` with `read` and `write` added to its `sandbox` grants, after what it declares (a
 * sandbox turned off stays off). The host runs every extension sandboxed: it may read the
 * system, its own bundle and its interpreter, and write its REINDEX_DATA_DIR and TMPDIR; what
 * else it uses, such as this SDK imported from the checkout, its manifest must declare. A write
 * grant must not be a directory holding the index: give the extension a subdirectory of its own.
 * @param {Record<string, any>} manifest
 * @param {{ read?: string[], write?: string[] }} grants absolute paths
 */
export function declareSandbox(manifest, { read = [], write = [] } = {}) {
  if (manifest.sandbox === false) return manifest;
  const sandbox = { ...(manifest.sandbox ?? {}) };
  for (const [key, paths] of /** @type {const} */ ([['read', read], ['write', write]])) {
    const declared = [...(sandbox[key] ?? [])];
    for (const p of paths) if (!declared.includes(p)) declared.push(p);
    if (declared.length > 0) sandbox[key] = declared;
  }
  return { ...manifest, sandbox };
}

/** The reindex binary: $REINDEX_BIN (relative to the repository root), else the snapshot. */
export function hostBinary() {
  const configured = process.env.REINDEX_BIN;
  if (configured) {
    const resolved = path.isAbsolute(configured) ? configured
      : [path.resolve(REPO_ROOT, configured), path.resolve(configured)].find((p) => fs.existsSync(p)) ?? path.resolve(REPO_ROOT, configured);
    return { path: resolved, required: true };
  }
  return { path: '/work/snap/reindex', required: false };
}

/** Why host tests cannot run (or null): for `test(..., { skip })`. */
export function hostSkipReason() {
  const host = hostBinary();
  if (fs.existsSync(host.path)) return null;
  if (host.required) throw new Error(`REINDEX_BIN is ${host.path}, which does not exist`);
  return `no reindex binary at ${host.path} (set REINDEX_BIN)`;
}

/**
 * A scratch world for the host: an extensions directory, an index, isolated XDG directories.
 */
export class HostWorld {
  constructor() {
    this.root = scratchDirectory('reindex-ts-host-');
    this.extensions = path.join(this.root, 'extensions');
    this.indexDir = path.join(this.root, 'index');
    this.index = path.join(this.indexDir, 'index.sqlite');
    fs.mkdirSync(this.extensions);
    fs.mkdirSync(this.indexDir);
    fs.mkdirSync(path.join(this.root, 'xdg-data'));
    this.env = {
      PATH: process.env.PATH ?? '/usr/bin:/bin',
      HOME: this.root,
      TMPDIR: os.tmpdir(),
      XDG_DATA_HOME: path.join(this.root, 'xdg-data'),
      XDG_DATA_DIRS: path.join(this.root, 'xdg-data'),
      LANG: 'C.UTF-8',
    };
  }

  /**
   * Makes a bundle whose executable is a small launcher that imports `script` (a fixture). The
   * manifest declares this SDK's directory (which holds the fixtures) in `sandbox.read`, merged
   * with a `sandbox` in `manifest`.
   * @param {string} bundleIdentifier
   * @param {string} script absolute path of the module to run
   * @param {Record<string, unknown>} [manifest] extra manifest keys
   * @returns {string} the bundle directory
   */
  bundle(bundleIdentifier, script, manifest = {}) {
    const dir = path.join(this.extensions, bundleIdentifier);
    fs.mkdirSync(dir, { recursive: true });
    const launcher = path.join(dir, 'extension.mjs');
    fs.writeFileSync(launcher, `#!/usr/bin/env node\nimport ${JSON.stringify(pathToFileURL(script).href)};\n`);
    fs.chmodSync(launcher, 0o755);
    fs.writeFileSync(path.join(dir, 'manifest.json'), `${JSON.stringify(declareSandbox({
      manifestVersion: 1,
      bundleIdentifier,
      executable: 'extension.mjs',
      ...manifest,
    }, { read: [SDK_DIR] }), null, 2)}\n`);
    fs.chmodSync(path.join(dir, 'manifest.json'), 0o644);
    return dir;
  }

  /** The host's log file for a bundle. */
  log(bundleIdentifier) {
    try { return fs.readFileSync(path.join(this.indexDir, 'logs', `${bundleIdentifier}.log`), 'utf8'); } catch { return ''; }
  }

  /** The global options every command gets. */
  globalArgs() { return ['--index', this.index, '--extensions-path', this.extensions]; }

  /**
   * Starts `reindex ARGS` (global options first); returns the child and a promise of its result.
   * @param {string[]} args
   * @param {{ global?: boolean }} [options]
   */
  start(args, options = {}) {
    const argv = options.global === false ? args : [...this.globalArgs(), ...args];
    const child = spawn(hostBinary().path, argv, { env: this.env, cwd: this.root, stdio: ['ignore', 'pipe', 'pipe'] });
    hostProcesses.add(child);
    child.on('exit', () => hostProcesses.delete(child));
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (t) => { stdout += t; });
    child.stderr.setEncoding('utf8').on('data', (t) => { stderr += t; });
    const result = new Promise((resolve) => {
      child.on('exit', (status, signal) => {
        let json = null;
        try { json = JSON.parse(stdout); } catch { /* not JSON */ }
        resolve({ status, signal, stdout, stderr, json });
      });
    });
    return { child, result: /** @type {Promise<{ status: number | null, signal: string | null, stdout: string, stderr: string, json: any }>} */ (result) };
  }

  /**
   * Runs `reindex ARGS` to the end (at most 60 s).
   * @param {string[]} args
   * @param {{ global?: boolean }} [options]
   */
  async reindex(args, options = {}) {
    const { child, result } = this.start(args, options);
    const timer = setTimeout(() => child.kill('SIGKILL'), 60000);
    const outcome = await result;
    clearTimeout(timer);
    return outcome;
  }

  /** Identifiers found by `reindex search WORD --json`, sorted. */
  async search(word, bundleIdentifier) {
    const args = ['search', word, '--json', '--limit', '1000'];
    if (bundleIdentifier) args.push('--bundle', bundleIdentifier);
    const outcome = await this.reindex(args);
    if (outcome.status !== 0 || !outcome.json) throw new Error(`search failed: ${JSON.stringify(outcome)}`);
    return outcome.json.results.map((r) => r.uniqueIdentifier).sort();
  }
}

/**
 * A minimal WebSocket client (RFC 6455, text frames only) for talking to Node's inspector
 * like a debugger front end does.
 * @param {string} url ws://host:port/path
 * @returns {Promise<{ send(text: string): void, messages: string[], close(): void }>}
 */
export async function connectWebSocket(url) {
  const net = await import('node:net');
  const crypto = await import('node:crypto');
  const { hostname, port, pathname } = new URL(url);
  const socket = net.connect(Number(port), hostname);
  await new Promise((resolve, reject) => { socket.once('connect', resolve); socket.once('error', reject); });
  const key = crypto.randomBytes(16).toString('base64');
  socket.write(`GET ${pathname} HTTP/1.1\r\nHost: ${hostname}:${port}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n` +
    `Sec-WebSocket-Key: ${key}\r\nSec-WebSocket-Version: 13\r\n\r\n`);
  let buffer = Buffer.alloc(0);
  await new Promise((resolve, reject) => {
    const onData = (chunk) => {
      buffer = Buffer.concat([buffer, chunk]);
      const end = buffer.indexOf('\r\n\r\n');
      if (end === -1) return;
      socket.off('data', onData);
      const head = buffer.subarray(0, end).toString();
      buffer = buffer.subarray(end + 4);
      if (!head.startsWith('HTTP/1.1 101')) reject(new Error(`WebSocket upgrade refused: ${head}`)); else resolve();
    };
    socket.on('data', onData);
    socket.once('error', reject);
  });
  const messages = [];
  const parse = () => {
    while (buffer.length >= 2) {
      let length = buffer[1] & 0x7f;
      let offset = 2;
      if (length === 126) { if (buffer.length < 4) return; length = buffer.readUInt16BE(2); offset = 4; }
      else if (length === 127) { if (buffer.length < 10) return; length = Number(buffer.readBigUInt64BE(2)); offset = 10; }
      if (buffer.length < offset + length) return;
      const opcode = buffer[0] & 0x0f;
      if (opcode === 1) messages.push(buffer.subarray(offset, offset + length).toString());
      if (opcode === 8) socket.destroy(); // the server closes the connection: so do we
      buffer = buffer.subarray(offset + length);
    }
  };
  parse();
  socket.on('data', (chunk) => { buffer = Buffer.concat([buffer, chunk]); parse(); });
  socket.on('error', () => {});
  return {
    messages,
    send(text) {
      const payload = Buffer.from(text);
      const mask = crypto.randomBytes(4);
      let header;
      if (payload.length < 126) header = Buffer.from([0x81, 0x80 | payload.length]);
      else { header = Buffer.alloc(4); header[0] = 0x81; header[1] = 0x80 | 126; header.writeUInt16BE(payload.length, 2); }
      const masked = Buffer.from(payload.map((b, i) => b ^ mask[i % 4]));
      socket.write(Buffer.concat([header, mask, masked]));
    },
    close() { socket.destroy(); },
  };
}

/**
 * A refusal as a test compares it: asserts that `error.data.stack` is the thrown error's stack
 * (its first line names the message, the next is a frame) and returns the reply without it.
 * @param {any} reply
 */
export function withCheckedStack(reply) {
  const { data, ...error } = reply.error;
  const lines = String(data?.stack ?? '').split('\n');
  if (!lines[0].endsWith(`: ${error.message}`) || !/^\s+at /.test(lines[1] ?? '')) {
    throw new Error(`the refusal's data.stack is not the error's stack: ${JSON.stringify(data)}`);
  }
  return { ...reply, error };
}
