// Interop: the official TypeScript SDK's clients against a Node server made with this addon
// (testing/interop-server.mjs). `@modelcontextprotocol/client` 2.x in both eras (auto negotiation picks
// 2026-07-28 through `server/discover`; explicit legacy runs `initialize`) and
// `@modelcontextprotocol/sdk` 1.x (legacy only), each over stdio (the SDK spawns
// `node server.mjs`) and Streamable HTTP (an in-process `listenHttp` on 127.0.0.1, and the same
// server mounted in an Express app with `nodeHandler()` and a Hono app with `fetchHandler()`,
// testing/embed-apps.mjs). The SDKs are
// installed from npm on first use (testing/ts-sdk.mjs); an install failure fails the tests.
//
// Each combination: negotiation (DISC-02 / LC-01), tools/list, a text and a structuredContent
// tools/call (TOOL-06), prompts/get, resources/read of a template, progress (PROG-01) and an
// elicitation round trip (legacy: server→client request; modern: an `input_required` round the
// SDK fulfils, MRTR-01…05).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { fileURLToPath } from 'node:url';
import { PINS, sdkLine } from '../testing/ts-sdk.mjs';
import { makeInteropServer } from '../testing/interop-server.mjs';
import { expressApp, fastifyApp, honoApp } from '../testing/embed-apps.mjs';

const script = fileURLToPath(new URL('../testing/interop-server.mjs', import.meta.url));
const MODERN = '2026-07-28';
const ELICIT_SCHEMA_NAME = 'Ada';


/** A connected SDK client; `elicited` collects the elicitation messages it was asked. */
async function connect(t, { line, transport, mode }) {
  const sdk = await sdkLine(line);
  const options = { capabilities: { elicitation: {} } };
  if (line === 'v2') options.versionNegotiation = { mode };
  const client = new sdk.Client({ name: `ts-${line}-interop`, version: '1.0.0' }, options);
  const elicited = [];
  const onElicit = async (req) => {
    elicited.push(req.params.message);
    return { action: 'accept', content: { name: ELICIT_SCHEMA_NAME } };
  };
  if (line === 'v2') client.setRequestHandler('elicitation/create', onElicit);
  else client.setRequestHandler(sdk.ElicitRequestSchema, onElicit);
  let tr;
  if (transport === 'stdio') {
    tr = new sdk.Stdio({ command: process.execPath, args: [script], stderr: 'pipe' });
  } else if (transport === 'http') {
    const h = await makeInteropServer().listenHttp({ host: '127.0.0.1', port: 0 });
    t.after(() => h.close());
    tr = new sdk.Http(new URL(h.url));
  } else {
    // The endpoint mounted in a host app (`/mcp` beside the app's own `/health`).
    const mount = { express: expressApp, fastify: fastifyApp, hono: honoApp }[transport];
    const app = await mount(makeInteropServer());
    t.after(() => app.close());
    tr = new sdk.Http(new URL(app.url));
  }
  await client.connect(tr);
  t.after(() => client.close());
  return { client, elicited };
}

async function exercise(client, elicited, { line, era }) {
  // Negotiation: the era the SDK settled on, and the server's identity.
  const version = client.getServerVersion();
  assert.equal(version?.name, 'node-demo');
  if (line === 'v2') {
    assert.equal(client.getProtocolEra(), era);
    if (era === 'modern') assert.equal(client.getNegotiatedProtocolVersion(), MODERN);
    else assert.notEqual(client.getNegotiatedProtocolVersion(), MODERN);
  }
  assert.ok(client.getServerCapabilities()?.tools, 'tools capability');

  const { tools } = await client.listTools();
  const names = tools.map((x) => x.name);
  for (const n of ['echo', 'add', 'ask_name']) assert.ok(names.includes(n), `${n} in ${names}`);
  assert.deepEqual(tools.find((x) => x.name === 'add').outputSchema.required, ['sum']);

  // A text result.
  const r = await client.callTool({ name: 'echo', arguments: { text: 'hi there' } });
  assert.deepEqual(r.content, [{ type: 'text', text: 'hi there' }]);

  // Progress: the handler's ctx.progress reaches the SDK's onprogress, in order.
  const progress = [];
  const onprogress = (p) => progress.push([p.progress, p.total, p.message]);
  const steps = { name: 'steps', arguments: { n: 3 } };
  // 1.x takes the result schema second (undefined: the default), 2.x the options.
  const s = await (line === 'v2' ? client.callTool(steps, { onprogress }) : client.callTool(steps, undefined, { onprogress }));
  assert.equal(s.content[0].text, 'did 3');
  assert.deepEqual(progress, [1, 2, 3].map((i) => [i, 3, `step ${i}`]));

  // structuredContent, validated by the SDK against the listed outputSchema.
  const sum = await client.callTool({ name: 'add', arguments: { a: 2, b: 40 } });
  assert.deepEqual(sum.structuredContent, { sum: 42 });
  assert.equal(sum.content[0].text, JSON.stringify({ sum: 42 }));

  // Input validation is the server's (core's): a schema violation is an error, not a result.
  // Input validation is the server's (core's): a schema violation comes back as a tool error
  // naming the offending fields, never as a call of the handler.
  const bad = await client.callTool({ name: 'add', arguments: { a: 'x' } });
  assert.equal(bad.isError, true);
  assert.match(bad.content[0].text, /"b" is a required property/);
  assert.match(bad.content[0].text, /\/a/);

  const p = await client.getPrompt({ name: 'greet', arguments: { name: 'Grace' } });
  assert.deepEqual(p.messages, [{ role: 'user', content: { type: 'text', text: 'Say hello to Grace.' } }]);

  const rr = await client.readResource({ uri: 'demo://notes/17' });
  assert.deepEqual(rr.contents, [{ uri: 'demo://notes/17', mimeType: 'text/plain', text: 'note 17' }]);

  // Elicitation: the handler's ctx.elicit reaches the SDK's elicitation handler and back.
  const e = await client.callTool({ name: 'ask_name', arguments: {} });
  assert.equal(e.content[0].text, `Hello, ${ELICIT_SCHEMA_NAME}!`);
  assert.deepEqual(elicited, ['Your name?']);
}

const cases = [
  { line: 'v2', mode: 'auto', era: 'modern' },
  { line: 'v2', mode: 'legacy', era: 'legacy' },
  { line: 'v1', mode: 'legacy', era: 'legacy' },
];
for (const transport of ['stdio', 'http', 'express', 'fastify', 'hono']) {
  for (const c of cases) {
    const pkg = c.line === 'v2' ? '@modelcontextprotocol/client' : '@modelcontextprotocol/sdk';
    test(`${pkg} ${PINS[pkg]} (${c.mode} → ${c.era}) over ${transport}`, { timeout: 360_000 }, async (t) => {
      const { client, elicited } = await connect(t, { ...c, transport });
      await exercise(client, elicited, c);
    });
  }
}
