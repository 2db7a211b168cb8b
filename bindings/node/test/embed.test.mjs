// Embedding over the real wire (127.0.0.1): the endpoint mounted in `node:http`, Express (with
// and without `express.json()`), Fastify and Hono beside each app's own route; mcpcore's client
// in both eras through each; refusals through a mount identical to the built-in listener's
// (HTTP-03 Origin, 400/-32700, 406, 413, 415); a client disconnect through a mount cancels a
// modern handler (HTTP-08); SSE streams through the mount as produced.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import { Client, Server } from '../lib/index.js';
import { APPS, modernCall, probe } from '../testing/embed-apps.mjs';

function makeServer(options) {
  const s = new Server({ name: 'embed', version: '1.0.0', options });
  s.tool(
    { name: 'echo', inputSchema: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] } },
    ({ text }) => text,
  );
  return s;
}

for (const [name, make] of Object.entries(APPS)) {
  test(`${name}: its own route and mcpcore's client in legacy, modern and auto`, { timeout: 60_000 }, async (t) => {
    const app = await make(makeServer());
    t.after(() => app.close());
    const health = await fetch(`${app.base}/health`);
    assert.equal(health.status, 200);
    assert.deepEqual(await health.json(), { ok: true });
    for (const [mode, era] of [['legacy', 'legacy'], ['modern', 'modern'], ['auto', 'modern']]) {
      const c = await Client.connectHttp(app.url, { mode });
      try {
        assert.equal(c.era, era, mode);
        assert.deepEqual((await c.listTools()).map((x) => x.name), ['echo']);
        const r = await c.callTool('echo', { text: `hi ${mode}` });
        assert.equal(r.content[0].text, `hi ${mode}`);
      } finally {
        await c.close();
      }
    }
    // With express.json() the mount got the parsed body (re-serialized), not the stream.
    if (name === 'express+json') assert.ok(app.stats.parsed > 0);
  });
}

/** The refusals to compare (REQUIREMENTS HTTP-03, §0.6 body cap, Accept, Content-Type). */
function badInputs() {
  const ok = modernCall('tools/list');
  return {
    'malformed JSON': { headers: ok.headers, body: '{"jsonrpc": "2.0", "id": 1, "method": ' },
    'wrong Content-Type': { headers: { ...ok.headers, 'content-type': 'text/plain' }, body: ok.body },
    'Accept refusing JSON': { headers: { ...ok.headers, accept: 'text/html' }, body: ok.body },
    'foreign Origin': { headers: { ...ok.headers, origin: 'http://evil.example' }, body: ok.body },
    'body too large': { headers: ok.headers, body: JSON.stringify({ pad: 'x'.repeat(4096) }) },
  };
}

/** Status and body of every bad input against `url`. */
async function refusals(url, only) {
  const out = {};
  for (const [what, req] of Object.entries(badInputs())) {
    if (only && !only.includes(what)) continue;
    const r = await probe(url, req);
    out[what] = { status: r.status, contentType: r.contentType, body: r.body };
  }
  return out;
}

test('bad input through every mount gets the built-in listener\'s status and body', { timeout: 60_000 }, async (t) => {
  const s = makeServer({ limits: { maxMessageBytes: 1024 } });
  const h = await s.listenHttp({ port: 0 });
  t.after(() => h.close());
  const builtIn = await refusals(h.url);
  assert.deepEqual(
    Object.values(builtIn).map((r) => r.status),
    [400, 415, 406, 403, 413],
  );
  assert.equal(JSON.parse(builtIn['malformed JSON'].body).error.code, -32700);
  for (const [name, make] of Object.entries(APPS)) {
    const app = await make(s);
    try {
      // express.json() answers what it cannot parse itself (malformed JSON, its own 100 kB
      // cap) before the route runs: only the refusals that reach the mount are core's there.
      // Fastify's JSON parser likewise answers malformed JSON itself.
      const only =
        name === 'express+json'
          ? ['wrong Content-Type', 'Accept refusing JSON', 'foreign Origin']
          : name === 'fastify+parsed'
            ? ['wrong Content-Type', 'Accept refusing JSON', 'foreign Origin', 'body too large']
            : undefined;
      const expected = Object.fromEntries(Object.entries(builtIn).filter(([k]) => !only || only.includes(k)));
      assert.deepEqual(await refusals(app.url, only), expected, name);
    } finally {
      await app.close();
    }
  }
});

/** A server whose `wait` tool resolves `started` when it runs and `aborted` when its ctx.signal
 * fires. */
function waitingServer() {
  const s = makeServer();
  let started;
  let aborted;
  const seen = { started: new Promise((r) => (started = r)), aborted: new Promise((r) => (aborted = r)) };
  s.tool({ name: 'wait', inputSchema: { type: 'object' } }, async (_a, ctx) => {
    started();
    await new Promise((r) => ctx.signal.addEventListener('abort', r, { once: true }));
    aborted();
    return 'aborted';
  });
  return { s, seen };
}

for (const name of ['node', 'express', 'fastify', 'hono']) {
  test(`${name}: the client disconnecting cancels a modern handler (HTTP-08)`, { timeout: 30_000 }, async (t) => {
    const { s, seen } = waitingServer();
    const app = await APPS[name](s);
    t.after(() => app.close());
    const { headers, body } = modernCall('tools/call', { name: 'wait', arguments: {} }, 'wait');
    const req = http.request(app.url, { method: 'POST', headers });
    req.on('error', () => {});
    req.end(body);
    await seen.started;
    req.destroy();
    await seen.aborted;
  });
}

test('fetchHandler: aborting request.signal cancels a modern handler', { timeout: 30_000 }, async () => {
  const { s, seen } = waitingServer();
  const handler = s.fetchHandler();
  const { headers, body } = modernCall('tools/call', { name: 'wait', arguments: {} }, 'wait');
  const ac = new AbortController();
  const answered = handler(new Request('http://127.0.0.1/mcp', { method: 'POST', headers, body, signal: ac.signal }));
  await seen.started;
  ac.abort();
  await seen.aborted;
  // The handler resolves (nobody reads the answer of an aborted request).
  await answered;
});

test('an SSE answer streams through the mount as produced (progress before the result)', { timeout: 30_000 }, async (t) => {
  const s = makeServer();
  let release;
  const gate = new Promise((r) => (release = r));
  s.tool({ name: 'slow', inputSchema: { type: 'object' } }, async (_a, ctx) => {
    ctx.progress(1, 2, "half");
    await gate;
    return 'done';
  });
  for (const name of ['express', 'hono']) {
    const app = await APPS[name](s);
    t.after(() => app.close());
    const c = await Client.connectHttp(app.url, { mode: 'modern' });
    t.after(() => c.close());
    let progressed;
    const progress = new Promise((r) => (progressed = r));
    const call = c.callTool('slow', {}, { onProgress: (p, total, message) => progressed({ p, total, message }) });
    // The progress event arrives while the handler still waits: the body is not buffered.
    assert.deepEqual(await progress, { p: 1, total: 2, message: 'half' });
    release();
    assert.equal((await call).content[0].text, 'done');
  }
});

test('express.json(): a parsed body is re-serialized for core (its stale Content-Length dropped)', { timeout: 30_000 }, async (t) => {
  const app = await APPS['express+json'](makeServer({ limits: { maxMessageBytes: 1024 } }));
  t.after(() => app.close());
  const { headers, body } = modernCall('tools/call', { name: 'echo', arguments: { text: 'padded' } }, 'echo');
  // 4 kB of whitespace: over the cap as sent, well under it as express.json() parsed it. Core
  // must see the re-serialized body, not the Content-Length of the one on the wire.
  const padded = body.replace('{', `{${' '.repeat(4096)}`);
  const r = await probe(app.url, { headers, body: padded });
  assert.equal(app.stats.parsed, 1);
  assert.equal(r.status, 200, r.body);
  assert.equal(JSON.parse(r.body).result.content[0].text, 'padded');
});

/** POST a `tools/list` to `url` whose body stalls after `sent` bytes (of a declared length). */
function stalled(url, sent) {
  return new Promise((resolve, reject) => {
    const { headers, body } = modernCall('tools/list');
    const req = http.request(url, { method: 'POST', headers: { ...headers, 'content-length': String(body.length) } }, (res) => {
      let text = '';
      res.on('data', (c) => (text += c));
      res.on('end', () => resolve({ status: res.statusCode, body: text }));
    });
    req.on('error', reject);
    if (sent > 0) req.write(body.slice(0, sent));
    req.flushHeaders();
  });
}

// The mounts that read the raw stream (a framework body parser that waits for the whole body
// first decides for itself what a stalled body gets).
for (const name of ['node', 'express', 'fastify', 'hono']) {
  test(`${name}: a body that stalls on the wire (after some bytes, or before any) gets core's 408, as from the built-in listener`, { timeout: 30_000 }, async (t) => {
    const options = { bodyReadTimeoutMs: 200 };
    const s = makeServer();
    const h = await s.listenHttp({ port: 0, options });
    t.after(() => h.close());
    const app = await APPS[name](s, { handler: { options } });
    t.after(() => app.close());
    for (const sent of [10, 0]) {
      const builtIn = await stalled(h.url, sent);
      assert.equal(builtIn.status, 408, `built-in, ${sent} bytes sent`);
      assert.deepEqual(await stalled(app.url, sent), builtIn, `${sent} bytes sent`);
    }
  });
}

test('server.close() shuts a mounted endpoint down: an open listen stream gets its result, later requests 503', { timeout: 30_000 }, async (t) => {
  const s = makeServer();
  const app = await APPS.node(s);
  t.after(() => app.close());
  const { headers, body } = modernCall('subscriptions/listen', { notifications: { toolsListChanged: true } });
  const r = await fetch(app.url, { method: 'POST', headers, body });
  assert.equal(r.status, 200);
  assert.match(r.headers.get('content-type'), /^text\/event-stream/);
  const reader = r.body.getReader();
  let text = '';
  const ended = (async () => {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) return text;
      text += Buffer.from(value).toString();
    }
  })();
  const open = await Promise.race([ended.then(() => 'ended'), new Promise((res) => setTimeout(() => res('open'), 200))]);
  assert.equal(open, 'open', 'the listen stream stays open while the server serves');
  await s.close();
  const events = (await ended).split('\n').filter((l) => l.startsWith('data:')).map((l) => JSON.parse(l.slice(5)));
  assert.ok(events.length > 0 && events.at(-1).id === 1 && 'result' in events.at(-1), text);
  const after = await probe(app.url, modernCall('tools/list'));
  assert.equal(after.status, 503);
});
