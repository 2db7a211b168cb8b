// The official TypeScript SDK clients (`@modelcontextprotocol/client` 2.x in `auto` and `legacy`
// mode, `@modelcontextprotocol/sdk` 1.x) through `mcpcore gateway` in front of the official
// server-everything and the Rust demo-server, over stdio and Streamable HTTP: list, calls of both
// servers, progress, an elicitation.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { PINS, sdkLine } from '../testing/ts-sdk.mjs';
import { demoServer, mcpcoreBin } from '../testing/demo-server.mjs';
import { everythingEntry } from '../testing/everything.mjs';

function gatewayArgs() {
  const dir = mkdtempSync(join(tmpdir(), 'mcpcore-gw-'));
  const config = join(dir, 'gateway.json');
  const allow = ['echo', 'get-sum'];
  writeFileSync(config, JSON.stringify({ upstreams: {
    ev: { command: [process.execPath, everythingEntry(), 'stdio'], allow },
    demo: { command: [demoServer()] },
  } }));
  return ['gateway', config, '--quiet'];
}

/** `mcpcore gateway … --http 127.0.0.1:0`: its URL (the process ends with the test). */
async function httpGateway(t, args) {
  const p = spawn(mcpcoreBin(), [...args, '--http', '127.0.0.1:0'], { stdio: ['ignore', 'ignore', 'pipe'] });
  t.after(() => p.kill());
  for await (const line of createInterface({ input: p.stderr })) {
    if (line.startsWith('mcpcore: serving ')) return line.split(' ').at(-1);
  }
  throw new Error('the gateway did not start');
}


const cases = [
  { line: 'v2', mode: 'auto', era: 'modern' },
  { line: 'v2', mode: 'legacy', era: 'legacy' },
  { line: 'v1', mode: 'legacy', era: 'legacy' },
];
for (const transport of ['stdio', 'http']) {
  for (const c of cases) {
    const pkg = c.line === 'v2' ? '@modelcontextprotocol/client' : '@modelcontextprotocol/sdk';
    test(`${pkg} ${PINS[pkg]} (${c.mode}) through mcpcore gateway over ${transport}`, { timeout: 360_000 }, async (t) => {
      const sdk = await sdkLine(c.line);
      const options = { capabilities: { elicitation: {} } };
      if (c.line === 'v2') options.versionNegotiation = { mode: c.mode };
      const client = new sdk.Client({ name: `ts-${c.line}-gateway`, version: '1.0.0' }, options);
      const asked = [];
      const onElicit = async (req) => {
        asked.push(req.params.message);
        return { action: 'accept', content: { ok: true } };
      };
      if (c.line === 'v2') client.setRequestHandler('elicitation/create', onElicit);
      else client.setRequestHandler(sdk.ElicitRequestSchema, onElicit);
      const args = gatewayArgs();
      const tr = transport === 'stdio'
        ? new sdk.Stdio({ command: mcpcoreBin(), args, stderr: 'ignore' })
        : new sdk.Http(new URL(await httpGateway(t, args)));
      await client.connect(tr);
      t.after(() => client.close());
      if (c.line === 'v2') assert.equal(client.getProtocolEra(), c.era);
      assert.equal(client.getServerVersion()?.name, 'mcpcore-gateway');

      const names = (await client.listTools()).tools.map((x) => x.name);
      for (const n of ['ev__echo', 'ev__get-sum', 'demo__echo', 'demo__slow', 'demo__confirm']) {
        assert.ok(names.includes(n), `${n} in ${names}`);
      }
      assert.ok(!names.includes('ev__get-env'), 'filtered by the allow list');
      const sum = await client.callTool({ name: 'ev__get-sum', arguments: { a: 2, b: 3 } });
      assert.match(sum.content[0].text, /5/);
      const echo = await client.callTool({ name: 'demo__echo', arguments: { text: 'through' } });
      assert.deepEqual(echo.content, [{ type: 'text', text: 'through' }]);

      const progress = [];
      const onprogress = (p) => progress.push([p.progress, p.total]);
      const slow = { name: 'demo__slow', arguments: { ms: 40 } };
      await (c.line === 'v2' ? client.callTool(slow, { onprogress }) : client.callTool(slow, undefined, { onprogress }));
      // In order, against the total. (Over stdio the SDK handles a notification after a
      // response read in the same chunk, so the last one may come after its call resolved.)
      assert.ok(progress.length >= 3, JSON.stringify(progress));
      progress.forEach(([p, total], i) => assert.deepEqual([p, total], [i + 1, 4]));

      const r = await client.callTool({ name: 'demo__confirm', arguments: { question: 'Ship?' } });
      assert.equal(r.content[0].text, 'confirmed: Ship?');
      assert.deepEqual(asked, ['Ship?']);
    });
  }
}
