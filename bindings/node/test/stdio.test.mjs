// A Node server over real stdio (a child process), driven by the Node client in both eras.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { fileURLToPath } from 'node:url';
import { Client, McpError } from '../lib/index.js';
import { checkServer } from '../testing/checks.mjs';

const script = fileURLToPath(new URL('../testing/server.mjs', import.meta.url));

for (const mode of ['legacy', 'modern']) {
  test(`stdio, ${mode} era`, async (t) => {
    const c = await Client.connectStdio(process.execPath, [script], { mode });
    t.after(() => c.close());
    await checkServer(c, mode);
  });
}

test('auto mode picks the modern era', async (t) => {
  const c = await Client.connectStdio(process.execPath, [script]);
  t.after(() => c.close());
  assert.equal(c.era, 'modern');
});

test('a call timeout rejects with code "timeout" and the handler sees the abort', async (t) => {
  const c = await Client.connectStdio(process.execPath, [script], { mode: 'legacy' });
  t.after(() => c.close());
  await assert.rejects(c.callTool('wait_abort', {}, { timeout: 200 }), (e) => {
    assert.equal(e.code, 'timeout');
    assert.ok(!(e instanceof McpError));
    return true;
  });
  // The server is still healthy afterwards.
  assert.equal((await c.callTool('echo', { text: 'after' })).content[0].text, 'after');
});
