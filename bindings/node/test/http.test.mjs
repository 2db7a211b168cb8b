// A Node server over real Streamable HTTP on 127.0.0.1 (port 0), driven by the Node client in
// both eras: in-process, and as a child process (its listener alone keeps it alive).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { fileURLToPath } from 'node:url';
import { Client } from '../lib/index.js';
import { makeServer } from '../testing/server.mjs';
import { checkServer } from '../testing/checks.mjs';

test('HTTP on port 0, both eras, in process', async (t) => {
  const h = await makeServer().listenHttp({ host: '127.0.0.1', port: 0 });
  t.after(() => h.close());
  assert.ok(h.port > 0);
  assert.equal(h.url, `http://127.0.0.1:${h.port}/mcp`);
  for (const mode of ['legacy', 'modern']) {
    const c = await Client.connectHttp(h.url, { mode, headers: { 'X-Test': '1' } });
    try {
      await checkServer(c, mode);
    } finally {
      await c.close();
    }
  }
});

test('a listening server keeps its process alive until closed; a generic throw is logged with its stack', async (t) => {
  const script = fileURLToPath(new URL('../testing/server.mjs', import.meta.url));
  const child = spawn(process.execPath, [script, '--http'], { stdio: ['ignore', 'pipe', 'pipe'] });
  let stderr = '';
  child.stderr.on('data', (d) => (stderr += d));
  t.after(() => child.kill('SIGKILL'));
  const [line] = await once(child.stdout, 'data');
  const url = line.toString().trim();
  assert.match(url, /^http:\/\/127\.0\.0\.1:\d+\/mcp$/);
  // Long after start-up the process still serves.
  await new Promise((r) => setTimeout(r, 300));
  const c = await Client.connectHttp(url, { mode: 'modern' });
  assert.equal((await c.callTool('echo', { text: 'alive' })).content[0].text, 'alive');
  await assert.rejects(c.callTool('crash', {}), (e) => e.code === -32603 && !e.message.includes('secret'));
  await c.close();
  // close() (on SIGTERM) releases the process: it exits by itself.
  child.kill('SIGTERM');
  const [code] = await once(child, 'exit');
  assert.equal(code, 0);
  assert.match(stderr, /tools\/call crash failed: Error: secret internal detail\n\s+at /);
});

test('listenHttp on a port in use rejects with code "transport"; server.close() closes its listeners', async (t) => {
  const server = makeServer();
  const h = await server.listenHttp({ port: 0 });
  t.after(() => server.close());
  await assert.rejects(makeServer().listenHttp({ port: h.port }), (e) => e.code === 'transport');
  await server.close();
  await assert.rejects(Client.connectHttp(h.url, { mode: 'modern' }), (e) => e.code === 'transport');
});

test('a refused registration rejects with code "invalid_argument"', async () => {
  const { Server, McpcoreError } = await import('../lib/index.js');
  const s = new Server({ name: 'dup', version: '1' });
  s.tool({ name: 'same', inputSchema: { type: 'object' } }, () => 'a');
  s.tool({ name: 'same', inputSchema: { type: 'object' } }, () => 'b');
  await assert.rejects(s.listenHttp({ port: 0 }), (e) => e instanceof McpcoreError && e.code === 'invalid_argument');
  assert.throws(() => s.tool({ name: 'x', inputSchema: {} }, 'not a function'), TypeError);
});
