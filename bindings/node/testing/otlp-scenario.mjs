// Run by test/telemetry.test.mjs in a process of its own: an OTLP/HTTP receiver on 127.0.0.1,
// configureTelemetry pointing at it, one call, flushTelemetry; the export must be protobuf on
// /v1/traces holding the client and server spans of `tools/call echo` (their names and the
// service name as strings in the message), and a second configureTelemetry must be refused.
import { createServer } from 'node:http';
import { once } from 'node:events';
import { Client, Server, configureTelemetry, flushTelemetry } from '../lib/index.js';

const bodies = [];
const rx = createServer((req, res) => {
  const parts = [];
  req.on('data', (d) => parts.push(d));
  req.on('end', () => {
    bodies.push({ path: req.url, type: req.headers['content-type'], body: Buffer.concat(parts) });
    res.writeHead(200, { 'content-length': '0' }).end();
  });
});
rx.listen(0, '127.0.0.1');
await once(rx, 'listening');
const endpoint = `http://127.0.0.1:${rx.address().port}`;
configureTelemetry({ otlp: { endpoint, serviceName: 'node-otlp', intervalMs: 50 } });
let refused = false;
try {
  configureTelemetry({});
} catch {
  refused = true;
}
if (!refused) throw new Error('a second configureTelemetry must throw');

const s = new Server({ name: 'otlp', version: '1' });
s.tool({ name: 'echo', inputSchema: { type: 'object' } }, () => 'ok');
const h = await s.listenHttp({ port: 0 });
const c = await Client.connectHttp(h.url, { mode: 'modern' });
await c.callTool('echo', {});
await c.close();
if (!(await flushTelemetry(10000))) throw new Error('flush did not complete');
await h.close();
rx.close();
const traces = bodies.filter((b) => b.path === '/v1/traces');
if (traces.length === 0) throw new Error(`no trace export: ${JSON.stringify(bodies.map((b) => b.path))}`);
for (const b of traces) {
  if (b.type !== 'application/x-protobuf') throw new Error(`content-type ${b.type}`);
}
const all = Buffer.concat(traces.map((b) => b.body));
const count = (needle) => all.toString('latin1').split(needle).length - 1;
if (count('tools/call echo') < 2) throw new Error('the client and server spans of tools/call echo');
if (count('node-otlp') < 1) throw new Error('the service name');
console.log('ok');
