// Telemetry through the Node door: server.metrics() and the listener's metricsPath after a
// scripted workload (real HTTP on 127.0.0.1), ctx.traceContext continuing the caller's W3C
// trace, and — in a child process, since core's telemetry installs once per process —
// configureTelemetry/flushTelemetry delivering spans to an OTLP/HTTP receiver; core's log events
// through onLog at the level asked.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { createServer } from 'node:http';
import { fileURLToPath } from 'node:url';
import { Client, Server, onLog } from '../lib/index.js';

const OBJ = { type: 'object' };
const TP = '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01';

function server(metrics) {
  const s = new Server({ name: 'telemetry', version: '1', options: { metrics } });
  s.tool({ name: 'echo', inputSchema: OBJ }, (args) => String(args.text ?? ''));
  s.tool({ name: 'trace', inputSchema: OBJ }, (_args, ctx) => ctx.traceContext.traceparent);
  return s;
}

function sample(text, line) {
  const hit = text.split('\n').find((l) => l.startsWith(`${line} `));
  return hit === undefined ? undefined : Number(hit.slice(line.length + 1));
}

const ECHO = 'mcpcore_server_requests_total{mcp_method_name="tools/call",gen_ai_tool_name="echo"}';

test('metrics: the workload in server.metrics() and at metricsPath; off records nothing', async (t) => {
  const s = server(true);
  const h = await s.listenHttp({ port: 0, options: { metricsPath: '/metrics' } });
  t.after(() => h.close());
  const c = await Client.connectHttp(h.url, { mode: 'modern' });
  for (let i = 0; i < 3; i++) await c.callTool('echo', { text: 'x' });
  await assert.rejects(c.callTool('missing', {}));
  await c.close();
  const r = await fetch(h.url.replace('/mcp', '/metrics'));
  assert.equal(r.status, 200);
  assert.match(r.headers.get('content-type'), /^text\/plain; version=0\.0\.4/);
  const text = await r.text();
  assert.equal(sample(text, ECHO), 3, text);
  assert.equal(sample(s.metrics(), ECHO), 3);
  const missing = 'mcpcore_server_requests_total{mcp_method_name="tools/call",gen_ai_tool_name="missing",error_type="-32602"}';
  assert.equal(sample(text, missing), 1, text);

  const quiet = server(false);
  const q = await quiet.listenHttp({ port: 0 });
  t.after(() => q.close());
  const qc = await Client.connectHttp(q.url, { mode: 'modern' });
  await qc.callTool('echo', { text: 'x' });
  await qc.close();
  assert.equal(sample(quiet.metrics(), ECHO), undefined);
  assert.equal(sample(quiet.metrics(), 'mcpcore_server_requests_in_flight'), 0);
});

test('ctx.traceContext continues the caller\'s trace in both eras', async (t) => {
  const h = await server(false).listenHttp({ port: 0 });
  t.after(() => h.close());
  for (const mode of ['modern', 'legacy']) {
    const c = await Client.connectHttp(h.url, { mode });
    const r = await c.request('tools/call', { name: 'trace', arguments: {}, _meta: { traceparent: TP } });
    const seen = r.content[0].text;
    assert.ok(seen.startsWith('00-4bf92f3577b34da6a3ce929d0e0e4736-'), `${mode}: ${seen}`);
    assert.ok(!seen.includes('00f067aa0ba902b7'), 'the server span is a new child');
    const fresh = (await c.callTool('trace', {})).content[0].text;
    assert.ok(!fresh.includes('4bf92f3577b34da6a3ce929d0e0e4736'), fresh);
    await c.close();
  }
});

test('configureTelemetry exports spans over OTLP/HTTP (child process)', async () => {
  const script = fileURLToPath(new URL('../testing/otlp-scenario.mjs', import.meta.url));
  const child = spawn(process.execPath, [script], { stdio: ['ignore', 'pipe', 'inherit'] });
  let out = '';
  child.stdout.on('data', (d) => { out += d; });
  const [code] = await once(child, 'exit');
  assert.equal(code, 0, out);
  assert.match(out, /^ok/m);
});

/** An OTLP/HTTP receiver on 127.0.0.1: `spans()` counts the `tools/call echo` spans received. */
async function traceReceiver() {
  const bodies = [];
  const rx = createServer((req, res) => {
    const parts = [];
    req.on('data', (d) => parts.push(d));
    req.on('end', () => {
      if (req.url === '/v1/traces') bodies.push(Buffer.concat(parts));
      res.writeHead(200, { 'content-length': '0' }).end();
    });
  });
  rx.listen(0, '127.0.0.1');
  await once(rx, 'listening');
  const spans = () => Buffer.concat(bodies).toString('latin1').split('tools/call echo').length - 1;
  return { rx, spans, endpoint: `http://127.0.0.1:${rx.address().port}` };
}

test('a stdio server exports its spans before serveStdio resolves (stdin ended, child process)', async () => {
  const { rx, spans, endpoint } = await traceReceiver();
  try {
    const script = fileURLToPath(new URL('../testing/otlp-stdio.mjs', import.meta.url));
    const env = { MCPCORE_TEST_OTLP: endpoint };
    const c = await Client.connectStdio(process.execPath, [script], { mode: 'modern', env });
    assert.equal((await c.callTool('echo', {})).content[0].text, 'ok');
    assert.equal(spans(), 0, 'nothing exported while serving (ten-minute interval)');
    // Closing the client ends the child's stdin; it exits once serveStdio resolved.
    await c.close();
    assert.ok(spans() >= 1, 'the server span was exported before the child exited');
  } finally {
    rx.close();
  }
});

test('a process that exits (process.exit) exports its client spans first', async () => {
  const { rx, spans, endpoint } = await traceReceiver();
  try {
    const script = fileURLToPath(new URL('../testing/otlp-exit.mjs', import.meta.url));
    const child = spawn(process.execPath, [script], {
      stdio: ['ignore', 'pipe', 'inherit'],
      env: { ...process.env, MCPCORE_TEST_OTLP: endpoint },
    });
    let out = '';
    child.stdout.on('data', (d) => (out += d));
    const [code] = await once(child, 'exit');
    assert.equal(code, 0, out);
    assert.match(out, /^ok/m);
    assert.ok(spans() >= 1, 'the client span was exported before the process exited');
  } finally {
    rx.close();
  }
});

const NOTE = 'notifications/mcpcore-test-note';

/** POST a 2026-07-28 notification nobody handles: core logs it at DEBUG. */
async function note(url) {
  const r = await fetch(url, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      'mcp-protocol-version': '2026-07-28',
      'mcp-method': NOTE,
    },
    body: JSON.stringify({ jsonrpc: '2.0', method: NOTE, params: { _meta: {} } }),
  });
  assert.equal(r.status, 202);
}

test('onLog: core\'s log events at the level asked, on this thread; the remover stops them', async (t) => {
  const s = server(false);
  const h = await s.listenHttp({ port: 0 });
  t.after(() => h.close());
  const seen = [];
  const notes = () => seen.filter((r) => r.message.includes(`method=${NOTE}`));
  const until = async (n) => {
    for (let i = 0; i < 200 && notes().length < n; i++) await new Promise((r) => setTimeout(r, 25));
    assert.ok(notes().length >= n, JSON.stringify(seen));
  };
  let remove = onLog((r) => seen.push(r), { level: 'info' });
  await note(h.url); // DEBUG: not at "info"
  remove = onLog((r) => seen.push(r), { level: 'debug' });
  await note(h.url);
  await until(1);
  const [rec] = notes();
  assert.equal(rec.level, 'debug');
  assert.match(rec.target, /^mcpcore::transport::http/);
  assert.match(rec.message, /^ignoring a modern notification/);
  remove();
  await note(h.url);
  onLog((r) => seen.push(r), { level: 'trace' });
  await note(h.url);
  await until(2);
  await new Promise((r) => setTimeout(r, 200));
  assert.equal(notes().length, 2, 'a record came after the remover ran, or at "info"');
  assert.throws(() => onLog((r) => r, { level: 'verbose' }), /level must be/);
  assert.throws(() => onLog(42), TypeError);
  onLog(null);
});

test('client.metrics(): the requests sent by method, target and outcome; nothing without the option', async () => {
  const s = server(false);
  const c = await Client.connectInMemory(s, { options: { metrics: true } });
  await c.callTool('echo', { text: 'x' });
  await c.callTool('echo', { text: 'y' });
  await assert.rejects(c.callTool('missing', {}));
  const text = c.metrics();
  const echo = 'mcpcore_client_requests_total{mcp_method_name="tools/call",gen_ai_tool_name="echo"}';
  assert.equal(sample(text, echo), 2, text);
  assert.equal(sample(text, 'mcpcore_client_requests_total{mcp_method_name="tools/call",gen_ai_tool_name="missing",error_type="-32602"}'), 1, text);
  await c.close();
  assert.equal(sample(c.metrics(), 'mcp_client_session_duration_seconds_count{network_transport="pipe"}'), 1);
  const quiet = await Client.connectInMemory(s);
  await quiet.callTool('echo', { text: 'x' });
  assert.equal(sample(quiet.metrics(), echo), undefined);
  await quiet.close();
});
