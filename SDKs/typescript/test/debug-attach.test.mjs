// `reindex debug BUNDLE --wait-for-debugger` with the real host and a real inspector client: the
// SDK's gate holds the extension until the client attaches, a breakpoint on a line of the
// handler is hit, and after resuming the run ends with status 0. Once with a Chrome DevTools
// Protocol client (what Chrome and VS Code speak), once by driving `node inspect` as a person
// does at its `debug>` prompt, with the commands SDKs/typescript/README.md documents.

import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, test } from 'node:test';
import { HostWorld, SDK_DIR, SDK_ENTRY, connectWebSocket, eventually, hostSkipReason, sleep } from '../test-support/harness.mjs';

const skip = hostSkipReason() ?? false;
const ID = 'com.example.debugged';

/** The handler's source; BREAK_LINE (1-based) is the line the tests break on. */
const HANDLER = `#!/usr/bin/env node
// A bundle for the debugger tests. It uses reindex-extension (the SDK), imported by its path.
import { run } from ${JSON.stringify(pathToFileURL(SDK_ENTRY).href)};

run({
  async reindexAll(index) {
    const items = [{ uniqueIdentifier: 'debugged.1', attributes: { title: 'Debugged Dipper' } }];
    await index.put(items);
  },
});
`;
const BREAK_LINE = 8; // await index.put(items);

/** A bundle whose executable is handler.mjs itself (so the breakpoint is on the author's file). */
function debuggedBundle(world) {
  const dir = path.join(world.extensions, 'debugged');
  fs.mkdirSync(dir);
  fs.writeFileSync(path.join(dir, 'handler.mjs'), HANDLER);
  fs.chmodSync(path.join(dir, 'handler.mjs'), 0o755);
  fs.writeFileSync(path.join(dir, 'manifest.json'), JSON.stringify({
    manifestVersion: 1, bundleIdentifier: ID, executable: 'handler.mjs', sandbox: { read: [SDK_DIR] },
  }));
  assert.equal(HANDLER.split('\n')[BREAK_LINE - 1].trim(), 'await index.put(items);');
  return dir;
}

/** A TCP port that was free a moment ago (so parallel runs do not fight over 9229). */
async function freePort() {
  const server = net.createServer();
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address();
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/** Starts `reindex debug ID --wait-for-debugger` on its own inspector port. */
async function startDebug(world) {
  debuggedBundle(world);
  const port = await freePort();
  world.env.REINDEX_INSPECTOR_PORT = String(port);
  const started = Date.now();
  const { child, result } = world.start(['debug', ID, '--wait-for-debugger']);
  let stderr = '';
  child.stderr.on('data', (text) => { stderr += text; });
  const timer = setTimeout(() => child.kill('SIGKILL'), 60000);
  result.then(() => clearTimeout(timer));
  // The gate writes its lines one by one: wait for the last one this test reads, then the first.
  await eventually(() => /ext\| reindex-extension:   VS Code launch\.json: /.test(stderr), 'the gate to print how to attach', 20000);
  const gate = await eventually(
    () => /ext\| reindex-extension: pid (\d+) is waiting for a debugger to attach: the inspector is at 127\.0\.0\.1:(\d+) \((ws:\/\/\S+)\)/.exec(stderr),
    'the gate to print the inspector address', 20000);
  assert.equal(Number(gate[2]), port, 'REINDEX_INSPECTOR_PORT chooses the port');
  assert.match(stderr, new RegExp(`ext\\| reindex-extension:   node inspect 127\\.0\\.0\\.1:${port}\\n`));
  assert.match(stderr, /ext\| reindex-extension:   Chrome: open chrome:\/\/inspect/);
  assert.match(stderr, new RegExp(`ext\\| reindex-extension:   VS Code launch\\.json: \\{"type":"node","request":"attach","address":"127\\.0\\.0\\.1","port":${port}\\}`));
  return { child, result, started, port, url: gate[3], stderr: () => stderr };
}

describe('reindex debug --wait-for-debugger with Node\'s inspector', { skip }, () => {
  test('a DevTools-protocol client attaches, a breakpoint in the handler is hit, the run ends 0', async () => {
    const world = new HostWorld();
    const debug = await startDebug(world);
    await sleep(300);
    assert.doesNotMatch(debug.stderr(), /acknowledged|debugger attached/, 'the gate must hold the extension');

    const devtools = await connectWebSocket(debug.url);
    let nextId = 1;
    const call = (method, params = {}) => { const id = nextId++; devtools.send(JSON.stringify({ id, method, params })); return id; };
    const events = () => devtools.messages.map((m) => JSON.parse(m));
    const paused = (n) => eventually(() => events().filter((m) => m.method === 'Debugger.paused')[n], `pause ${n + 1}`, 20000);
    // What VS Code and Chrome send when they attach: enable, set the breakpoints, then run.
    call('Runtime.enable');
    call('Debugger.enable');
    const setBreakpoint = call('Debugger.setBreakpointByUrl', { urlRegex: 'debugged/handler\\.mjs$', lineNumber: BREAK_LINE - 1 });
    call('Runtime.runIfWaitingForDebugger');
    const breakpoint = (await eventually(() => events().find((m) => m.id === setBreakpoint), 'the breakpoint to be set')).result.breakpointId;

    // The SDK pauses once, before the first handler (as --inspect-brk does before the first line).
    const scriptURL = (frame) => events().find((m) => m.method === 'Debugger.scriptParsed' && m.params.scriptId === frame.location.scriptId)?.params.url;
    const first = await paused(0);
    assert.match(scriptURL(first.params.callFrames[0]), /dist\/connection\.js$/);
    call('Debugger.resume');

    const hit = await paused(1);
    const seconds = (Date.now() - debug.started) / 1000;
    process.stderr.write(`# reindex debug start to the breakpoint hit (DevTools protocol): ${seconds.toFixed(2)} s\n`);
    assert.deepEqual(hit.params.hitBreakpoints, [breakpoint]);
    assert.match(scriptURL(hit.params.callFrames[0]), /debugged\/handler\.mjs$/);
    assert.equal(hit.params.callFrames[0].location.lineNumber, BREAK_LINE - 1);
    assert.equal(hit.params.callFrames[0].functionName, 'reindexAll');
    await sleep(300);
    assert.doesNotMatch(debug.stderr(), /acknowledged/, 'the request must wait at the breakpoint');

    call('Debugger.resume');
    const run = await debug.result;
    devtools.close();
    assert.equal(run.status, 0, JSON.stringify(run) + debug.stderr());
    assert.match(run.stdout, /reindexAll acknowledged: put 1/);
    assert.match(debug.stderr(), /ext\| reindex-extension: debugger attached to pid \d+; continuing/);
  });

  test('`node inspect 127.0.0.1:PORT`, then `sb(\'handler.mjs\', LINE); cont`: the breakpoint is hit', async () => {
    const world = new HostWorld();
    const debug = await startDebug(world);
    const inspect = spawn(process.execPath, ['inspect', `127.0.0.1:${debug.port}`], { stdio: ['pipe', 'pipe', 'pipe'] });
    let screen = '';
    inspect.stdout.setEncoding('utf8').on('data', (text) => { screen += text; });
    inspect.stderr.setEncoding('utf8').on('data', (text) => { screen += text; });
    const exited = new Promise((resolve) => inspect.on('exit', resolve));
    try {
      /** Waits until `pattern` appears on the debugger's screen after `from`; returns where it ended. */
      const expect = async (pattern, from, what) => {
        const found = await eventually(() => { const m = pattern.exec(screen.slice(from)); return m && from + m.index + m[0].length; }, `${what}; node inspect showed:\n${screen}`, 20000);
        return found;
      };
      let at = await expect(/break in \S*connection\.js:\d+[\s\S]*debug> $/, 0, 'the pause before the handler');
      // The documented third command, in one line.
      inspect.stdin.write(`sb('handler.mjs', ${BREAK_LINE}); cont\n`);
      at = await expect(new RegExp(`break in \\S*handler\\.mjs:${BREAK_LINE}\\b`), at, 'the breakpoint in the handler');
      const seconds = (Date.now() - debug.started) / 1000;
      process.stderr.write(`# reindex debug start to the breakpoint hit (node inspect): ${seconds.toFixed(2)} s\n`);
      await expect(/debug> $/, at, 'the prompt at the breakpoint');
      assert.doesNotMatch(debug.stderr(), /acknowledged/);
      inspect.stdin.write('cont\n');
      // The request is acknowledged and the host closes stdin; `node inspect` stays attached
      // until it is told to go, and the SDK says so.
      await eventually(() => debug.stderr().includes('ext| reindex-extension: the host closed stdin: the extension exits as soon as the debugger disconnects (in node inspect: .exit)'),
        'the SDK to say how to let it exit', 20000);
      inspect.stdin.write('.exit\n');
      const run = await debug.result;
      assert.equal(run.status, 0, JSON.stringify(run) + debug.stderr());
      assert.match(run.stdout, /reindexAll acknowledged: put 1/);
    } finally {
      inspect.stdin.end();
      inspect.kill();
      await exited;
    }
  });
});
