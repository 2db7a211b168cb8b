// `npm install ./bindings/node` in a fresh project (the README's set-up): the package resolves
// from the project by name, through both `require("mcpcore")` and `import { Server } from "mcpcore"`,
// and a server and client run from it. (The addon itself was built from source with cargo by the
// `npm install` inside bindings/node that precedes `npm test`.)
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));

function run(cmd, args, opts) {
  const r = spawnSync(cmd, args, { encoding: 'utf8', timeout: 120_000, ...opts });
  assert.equal(r.status, 0, `${cmd} ${args.join(' ')} failed (${r.status ?? r.signal}):\n${r.stdout}\n${r.stderr}`);
  return r.stdout;
}

test('npm install <bindings/node> in a fresh project: require and import both work', { timeout: 180_000 }, () => {
  const app = mkdtempSync(join(tmpdir(), 'mcpcore-dir-'));
  try {
    writeFileSync(join(app, 'package.json'), JSON.stringify({ name: 'app', version: '1.0.0', private: true }));
    run('npm', ['install', '--offline', '--no-audit', '--no-fund', '--ignore-scripts', root], { cwd: app });
    writeFileSync(
      join(app, 'main.mjs'),
      `import { Server, Client } from 'mcpcore';
const server = new Server({ name: 'dir', version: '1.0.0' });
server.tool({ name: 'echo', inputSchema: { type: 'object' } }, ({ text }) => text);
const h = await server.listenHttp({ port: 0 });
const c = await Client.connectHttp(h.url);
const r = await c.callTool('echo', { text: 'from a fresh project' });
await c.close();
await h.close();
console.log(r.content[0].text);
`,
    );
    writeFileSync(join(app, 'main.cjs'), "const m = require('mcpcore'); console.log(typeof m.Server, typeof m.Client, typeof m.McpError);");
    assert.equal(run(process.execPath, ['main.mjs'], { cwd: app }).trim(), 'from a fresh project');
    assert.equal(run(process.execPath, ['main.cjs'], { cwd: app }).trim(), 'function function function');
  } finally {
    rmSync(app, { recursive: true, force: true });
  }
});
