// `serveStreams` over a real TCP socket (a Node stream pair) and over a web stream pair,
// newline-delimited as stdio (STDIO-01…04), resolving when the input ends; and
// `Client.connectInMemory` (core's in-process duplex) in both eras (DISC-02, LC-01).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import net from 'node:net';
import { once } from 'node:events';
import { Client, Server } from '../lib/index.js';

function makeServer() {
  const s = new Server({ name: 'streams', version: '1.0.0' });
  s.tool(
    { name: 'echo', inputSchema: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] } },
    ({ text }) => text,
  );
  s.tool({ name: 'later', inputSchema: { type: 'object' } }, async () => {
    await new Promise((r) => setImmediate(r));
    return 'later';
  });
  return s;
}

const INIT = {
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'streams-test', version: '1' } },
};
const LINES = [
  INIT,
  { jsonrpc: '2.0', method: 'notifications/initialized' },
  { jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'echo', arguments: { text: 'over streams' } } },
  { jsonrpc: '2.0', id: 3, method: 'tools/call', params: { name: 'later', arguments: {} } },
].map((m) => `${JSON.stringify(m)}\n`);

/** The answers (by id) in newline-delimited `text`. */
function answers(text) {
  const out = new Map();
  for (const line of text.split('\n').filter(Boolean)) {
    const m = JSON.parse(line);
    if (m.id !== undefined) out.set(m.id, m);
  }
  return out;
}

function checkAnswers(text) {
  const a = answers(text);
  assert.equal(a.get(1).result.serverInfo.name, 'streams');
  assert.equal(a.get(2).result.content[0].text, 'over streams');
  // An async handler's answer is written before serving resolves.
  assert.equal(a.get(3).result.content[0].text, 'later');
}

test('serveStreams serves a TCP socket (a Node stream pair) until its input ends', { timeout: 30_000 }, async (t) => {
  const s = makeServer();
  let served;
  // Once serving resolved (the input ended, every answer written), the host ends the socket.
  // allowHalfOpen: the answers still go out after the client half-closed.
  const tcp = net.createServer({ allowHalfOpen: true }, (sock) => (served = s.serveStreams(sock, sock).then(() => sock.end())));
  tcp.listen(0, '127.0.0.1');
  await once(tcp, 'listening');
  t.after(() => tcp.close());
  const sock = net.connect(tcp.address().port, '127.0.0.1');
  await once(sock, 'connect');
  let got = '';
  sock.on('data', (c) => (got += c));
  const ended = once(sock, 'end');
  for (const l of LINES) sock.write(l);
  // Half-close: the server's input ends.
  sock.end();
  await ended;
  await served;
  checkAnswers(got);
});

test('serveStreams serves a web stream pair and resolves when the input ends', { timeout: 30_000 }, async () => {
  const s = makeServer();
  const enc = new TextEncoder();
  const input = new ReadableStream({
    start(ctrl) {
      for (const l of LINES) ctrl.enqueue(enc.encode(l));
      ctrl.close();
    },
  });
  let got = '';
  const dec = new TextDecoder();
  const output = new WritableStream({
    write(chunk) {
      got += dec.decode(chunk, { stream: true });
    },
  });
  await s.serveStreams(input, output);
  checkAnswers(got);
});

test('serveStreams refuses what is not a stream', () => {
  const s = makeServer();
  assert.throws(() => s.serveStreams({}, process.stdout), TypeError);
  assert.throws(() => s.serveStreams(new ReadableStream(), 42), TypeError);
});

for (const [mode, era] of [['legacy', 'legacy'], ['modern', 'modern'], ['auto', 'modern']]) {
  test(`Client.connectInMemory: the full protocol in process (${mode} → ${era})`, { timeout: 30_000 }, async () => {
    const s = makeServer();
    const c = await Client.connectInMemory(s, { mode });
    try {
      assert.equal(c.era, era);
      assert.equal(c.serverInfo.name, 'streams');
      assert.deepEqual((await c.listTools()).map((x) => x.name).sort(), ['echo', 'later']);
      assert.equal((await c.callTool('echo', { text: 'in memory' })).content[0].text, 'in memory');
      assert.equal((await c.callTool('later', {})).content[0].text, 'later');
    } finally {
      await c.close();
    }
  });
}

test('Client.connectInMemory refuses what is not a Server, and a bad mode', async () => {
  await assert.rejects(Client.connectInMemory({}), TypeError);
  await assert.rejects(Client.connectInMemory(makeServer(), { mode: 'sideways' }), (e) => e.code === 'invalid_argument');
});
