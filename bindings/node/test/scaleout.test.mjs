// Scale-out from Node: the one `redis` server option (core's JSON shape) makes two Node servers
// workers of one deployment on a real redis-server (127.0.0.1, no persistence; a missing binary
// fails the test, scripts/test.sh installs it). A list change raised on worker A reaches a
// `subscriptions/listen` stream a client holds on worker B (2026-07-28, SUB-01..SUB-03 across
// workers), and a legacy session initialized on A is served by B and ended everywhere by DELETE
// (LHTTP-02, LHTTP-03).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, execFileSync } from 'node:child_process';
import { createServer, connect } from 'node:net';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client, Server } from '../lib/index.js';

const VERSION = '2025-11-25';

function redisBinary() {
  if (process.env.MCPCORE_REDIS_SERVER) return process.env.MCPCORE_REDIS_SERVER;
  try {
    return execFileSync('sh', ['-c', 'command -v redis-server'], { encoding: 'utf8' }).trim();
  } catch {
    assert.fail('redis-server is required (apt-get install redis-server; scripts/test.sh does)');
  }
}

async function freePort() {
  const s = createServer();
  await new Promise((r) => s.listen(0, '127.0.0.1', r));
  const { port } = s.address();
  await new Promise((r) => s.close(r));
  return port;
}

async function ping(port) {
  return new Promise((resolve) => {
    const c = connect(port, '127.0.0.1', () => c.write('PING\r\n'));
    c.on('data', (d) => { c.destroy(); resolve(d.toString().startsWith('+PONG')); });
    c.on('error', () => resolve(false));
  });
}

async function startRedis(t) {
  const port = await freePort();
  const dir = mkdtempSync(join(tmpdir(), 'mcpcore-node-redis-'));
  const child = spawn(redisBinary(), ['--bind', '127.0.0.1', '--port', String(port), '--save', '',
    '--appendonly', 'no', '--dir', dir], { stdio: 'ignore' });
  t.after(() => child.kill('SIGKILL'));
  for (let i = 0; i < 500 && !(await ping(port)); i++) await new Promise((r) => setTimeout(r, 20));
  assert.ok(await ping(port), 'redis-server answers PING');
  return `redis://127.0.0.1:${port}/0`;
}

// The request-state key every worker shares: a Redis-backed server refuses to start without one.
const KEY = { id: 'k1', key: 'KioqKioqKioqKioqKioqKioqKioqKioqKioqKioqKio=' };

function worker(name, redis) {
  const s = new Server({
    name: 'node-worker',
    version: '1.0.0',
    options: { redis, redisPrefix: 'node-test:', requestState: { keys: [KEY] } },
  });
  s.tool({ name: 'whoami', inputSchema: { type: 'object' } }, () => name);
  return s;
}

async function post(url, msg, sid, method = 'POST') {
  const headers = { Accept: 'application/json, text/event-stream' };
  if (method === 'POST') headers['Content-Type'] = 'application/json';
  if (sid) Object.assign(headers, { 'Mcp-Session-Id': sid, 'MCP-Protocol-Version': VERSION });
  const r = await fetch(url, { method, headers, body: method === 'POST' ? JSON.stringify(msg) : undefined });
  let text = await r.text();
  if ((r.headers.get('content-type') ?? '').startsWith('text/event-stream')) {
    text = text.split('\n').filter((l) => l.startsWith('data:')).map((l) => l.slice(5).trim()).pop() ?? '';
  }
  return { status: r.status, sid: r.headers.get('mcp-session-id'), body: text ? JSON.parse(text) : null };
}

test('a list change raised on worker A reaches a listen stream on worker B', async (t) => {
  const redis = await startRedis(t);
  const a = worker('a', redis);
  const b = worker('b', redis);
  const ha = await a.listenHttp({ port: 0 });
  const hb = await b.listenHttp({ port: 0 });
  t.after(() => Promise.all([ha.close(), hb.close()]));
  const c = await Client.connectHttp(hb.url, { mode: 'modern' });
  t.after(() => c.close());
  const sub = c.listen({ toolsChanged: true });
  await sub.opened;
  a.notifyToolsListChanged();
  const timer = setTimeout(() => sub.return(), 10000);
  const first = await sub.next();
  clearTimeout(timer);
  assert.equal(first.done, false, 'no notification reached B within 10 s');
  assert.equal(first.value.method, 'notifications/tools/list_changed');
  await sub.return();
});

test('a legacy session initialized on worker A is served by B; DELETE on A ends it on B', async (t) => {
  const redis = await startRedis(t);
  const ha = await worker('a', redis).listenHttp({ port: 0 });
  const hb = await worker('b', redis).listenHttp({ port: 0 });
  t.after(() => Promise.all([ha.close(), hb.close()]));
  const init = await post(ha.url, { jsonrpc: '2.0', id: 1, method: 'initialize', params: {
    protocolVersion: VERSION, capabilities: {}, clientInfo: { name: 'node-test', version: '1' } } });
  assert.equal(init.status, 200);
  assert.ok(init.sid, 'a session id');
  const done = await post(hb.url, { jsonrpc: '2.0', method: 'notifications/initialized' }, init.sid);
  assert.equal(done.status, 202);
  const call = { jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'whoami', arguments: {} } };
  const r = await post(hb.url, call, init.sid);
  assert.equal(r.status, 200);
  assert.equal(r.body.result.content[0].text, 'b');
  const del = await post(ha.url, null, init.sid, 'DELETE');
  assert.ok(del.status === 200 || del.status === 204, `DELETE gave ${del.status}`);
  assert.equal((await post(hb.url, { ...call, id: 3 }, init.sid)).status, 404);
});

test('a redis option that is not a redis:// URL is refused', async () => {
  await assert.rejects(async () => {
    const s = new Server({ name: 'x', version: '1', options: { redis: 'http://not-redis' } });
    await (await s.listenHttp({ port: 0 })).close();
  });
});
