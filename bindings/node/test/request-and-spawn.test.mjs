// What a handler knows of its request (ctx.requestId, ctx.meta, ctx.headers) over real HTTP on
// 127.0.0.1 and real stdio; the stdio spawn options core applies (env, envClear, cwd, stderr
// 'capture' and capturedStderr()) through a real child process; a server process staying alive
// exactly while it serves, with no timer; the image()/audio() content blocks.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, realpathSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Client, McpcoreError, Server, audio, image } from '../lib/index.js';

const spawnServer = fileURLToPath(new URL('../testing/spawn-server.mjs', import.meta.url));
const keepalive = fileURLToPath(new URL('../testing/keepalive.mjs', import.meta.url));
const OBJ = { type: 'object' };

/** Wait (bounded) until `pred()` holds, checking once per turn of the event loop. */
async function until(pred, what) {
  for (let i = 0; i < 2000; i++) {
    if (pred()) return;
    await new Promise((r) => setImmediate(r));
  }
  assert.fail(`timed out waiting for ${what}`);
}

test('connectStdio: env, envClear, cwd and stderr "capture" reach the spawned process', async (t) => {
  const dir = realpathSync(mkdtempSync(join(tmpdir(), 'mcpcore-spawn-')));
  const c = await Client.connectStdio(process.execPath, [spawnServer], {
    mode: 'legacy',
    env: { FOO: 'bar' },
    envClear: true,
    cwd: dir,
    stderr: 'capture',
  });
  t.after(() => c.close());
  const seen = (await c.callTool('env', {})).structuredContent;
  assert.deepEqual(seen, { foo: 'bar', path: null, cwd: dir });
  // Core's stderr reader runs beside the connection: the start-up line arrives on its own.
  await until(() => (c.capturedStderr() ?? '').includes('spawn-server: started'), 'the captured stderr');
  assert.equal(c.capturedStderr(), 'spawn-server: started\n');
});

test('connectStdio without stderr "capture": capturedStderr() is null; the environment is inherited', async (t) => {
  const c = await Client.connectStdio(process.execPath, [spawnServer], { mode: 'modern', stderr: 'null', env: { FOO: 'x' } });
  t.after(() => c.close());
  const seen = (await c.callTool('env', {})).structuredContent;
  assert.equal(seen.foo, 'x');
  assert.equal(seen.path, process.env.PATH ?? null);
  assert.equal(c.capturedStderr(), null);
});

test('connectStdio: a spawn option core refuses is invalid_argument, before anything runs', async () => {
  await assert.rejects(
    Client.connectStdio(process.execPath, [spawnServer], { stderr: 'loud' }),
    (e) => e instanceof McpcoreError && e.code === 'invalid_argument' && /spawn options: unknown variant .loud./.test(e.message),
  );
});

/** A legacy Streamable HTTP exchange by hand, so the request id and `_meta` are exactly ours. */
async function post(url, msg, sid) {
  const headers = { Accept: 'application/json, text/event-stream', 'Content-Type': 'application/json', 'X-Tenant': 'acme' };
  if (sid) Object.assign(headers, { 'Mcp-Session-Id': sid, 'MCP-Protocol-Version': '2025-11-25' });
  const r = await fetch(url, { method: 'POST', headers, body: JSON.stringify(msg) });
  let text = await r.text();
  if ((r.headers.get('content-type') ?? '').startsWith('text/event-stream')) {
    text = text.split('\n').filter((l) => l.startsWith('data:')).map((l) => l.slice(5).trim()).pop() ?? '';
  }
  return { sid: r.headers.get('mcp-session-id'), body: text ? JSON.parse(text) : null };
}

function whoamiServer() {
  const s = new Server({ name: 'ctx', version: '1' });
  s.tool({ name: 'whoami', inputSchema: OBJ }, (_args, ctx) => ({ requestId: ctx.requestId, meta: ctx.meta, headers: ctx.headers }));
  return s;
}

test('ctx.requestId, ctx.meta and ctx.headers over HTTP: a string id and _meta as sent (legacy, by hand)', async (t) => {
  const h = await whoamiServer().listenHttp({ port: 0 });
  t.after(() => h.close());
  const init = await post(h.url, {
    jsonrpc: '2.0',
    id: 1,
    method: 'initialize',
    params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
  });
  assert.ok(init.sid, 'a session id');
  await post(h.url, { jsonrpc: '2.0', method: 'notifications/initialized' }, init.sid);
  const r = await post(h.url, {
    jsonrpc: '2.0',
    id: 'req-7',
    method: 'tools/call',
    params: { name: 'whoami', arguments: {}, _meta: { trace: 'abc', progressToken: 5 } },
  }, init.sid);
  const seen = r.body.result.structuredContent;
  assert.equal(seen.requestId, 'req-7');
  assert.deepEqual(seen.meta, { trace: 'abc', progressToken: 5 });
  assert.equal(seen.headers['x-tenant'], 'acme');
  assert.equal(seen.headers['mcp-session-id'], init.sid);
  assert.ok(Object.keys(seen.headers).every((k) => k === k.toLowerCase()), 'lower-case names');
});

for (const mode of ['legacy', 'modern']) {
  test(`ctx.headers over HTTP carries the client's x-tenant header; a numeric id is a number (${mode})`, async (t) => {
    const h = await whoamiServer().listenHttp({ port: 0 });
    const c = await Client.connectHttp(h.url, { mode, headers: { 'X-Tenant': 'acme' } });
    t.after(async () => {
      await c.close();
      await h.close();
    });
    const seen = (await c.callTool('whoami', {})).structuredContent;
    assert.equal(typeof seen.requestId, 'number');
    assert.equal(seen.headers['x-tenant'], 'acme');
    if (mode === 'legacy') assert.deepEqual(seen.meta, {});
    else assert.equal(typeof seen.meta, 'object');
  });
}

test('over stdio ctx.headers is null and ctx.meta is {} without _meta', async (t) => {
  const c = await Client.connectStdio(process.execPath, [spawnServer], { mode: 'legacy' });
  t.after(() => c.close());
  const seen = (await c.callTool('whoami', {})).structuredContent;
  assert.equal(seen.headers, null);
  assert.deepEqual(seen.meta, {});
  assert.equal(typeof seen.requestId, 'number');
});

test('a stdio server stays alive until stdin closes, then exits by itself', { timeout: 60_000 }, async (t) => {
  const child = spawn(process.execPath, [keepalive, 'stdio'], { stdio: ['pipe', 'pipe', 'pipe'] });
  t.after(() => child.kill('SIGKILL'));
  let err = '';
  child.stderr.on('data', (d) => (err += d));
  const init = { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 't', version: '1' } };
  child.stdin.write(`${JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: init })}\n`);
  const [line] = await once(child.stdout, 'data');
  assert.equal(JSON.parse(line.toString()).id, 1);
  assert.equal(child.exitCode, null, 'still serving');
  const exited = once(child, 'exit');
  child.stdin.end();
  const [code] = await exited;
  assert.equal(code, 0);
  assert.match(err, /keepalive: stdin ended/);
});

test('an HTTP server process is kept alive by its listener (no timer) and exits by itself after close()', { timeout: 60_000 }, async (t) => {
  const child = spawn(process.execPath, [keepalive, 'http'], { stdio: ['ignore', 'pipe', 'pipe'] });
  t.after(() => child.kill('SIGKILL'));
  let err = '';
  child.stderr.on('data', (d) => (err += d));
  const [line] = await once(child.stdout, 'data');
  const { url, resources } = JSON.parse(line.toString());
  assert.ok(!resources.includes('Timeout'), `no timer keeps it alive: ${resources}`);
  const c = await Client.connectHttp(url, { mode: 'modern' });
  const exited = once(child, 'exit');
  assert.equal((await c.callTool('stop', {})).content[0].text, 'stopping');
  await c.close();
  const [code] = await exited;
  assert.equal(code, 0);
  assert.match(err, /keepalive: closed/);
});

test('image() and audio() build content blocks with core\'s rule; a tool returns them', async (t) => {
  const png = Buffer.from([0x89, 0x50, 0x4e, 0x47]);
  assert.deepEqual(image(png, 'image/png'), { type: 'image', data: png.toString('base64'), mimeType: 'image/png' });
  assert.deepEqual(audio(new Uint8Array([1, 2, 3])), { type: 'audio', data: 'AQID', mimeType: 'audio/wav' });
  assert.deepEqual(image(png.subarray(1, 3), 'image/webp').data, Buffer.from([0x50, 0x4e]).toString('base64'));
  // The block's type follows the MIME type (core's rule); other MIME types are refused.
  assert.equal(image(png, 'audio/wav').type, 'audio');
  assert.throws(() => image(png, 'text/plain'), (e) => e instanceof TypeError && /image\/\* or audio\/\*/.test(e.message));
  assert.throws(() => audio(png, 'wav'), TypeError);
  assert.throws(() => image('not bytes', 'image/png'), TypeError);
  const s = new Server({ name: 'media', version: '1' });
  s.tool({ name: 'pic', inputSchema: OBJ }, () => [image(png, 'image/png'), audio(Buffer.from('ab'), 'audio/mpeg')]);
  const h = await s.listenHttp({ port: 0 });
  const c = await Client.connectHttp(h.url, { mode: 'modern' });
  t.after(async () => {
    await c.close();
    await h.close();
  });
  const r = await c.callTool('pic', {});
  assert.deepEqual(r.content, [
    { type: 'image', data: png.toString('base64'), mimeType: 'image/png' },
    { type: 'audio', data: Buffer.from('ab').toString('base64'), mimeType: 'audio/mpeg' },
  ]);
});
