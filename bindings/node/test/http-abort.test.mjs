// Aborting a client call over Streamable HTTP reaches the server handler's ctx.signal in both
// eras: legacy through `notifications/cancelled` (CAN-01), modern through the client closing
// its request (CAN-04), where core drops the handler's future instead of cancelling its token.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Client, Server } from '../lib/index.js';

async function until(what, f) {
  for (let i = 0; i < 250 && !f(); i++) await new Promise((r) => setTimeout(r, 20));
  assert.ok(f(), `${what} within 5 s`);
}

for (const mode of ['legacy', 'modern']) {
  test(`an aborted call over HTTP aborts the handler's ctx.signal (${mode})`, { timeout: 30_000 }, async (t) => {
    const s = new Server({ name: 'http-abort', version: '1.0.0' });
    const seen = [];
    s.tool({ name: 'wait', inputSchema: { type: 'object' } }, async (_a, ctx) => {
      seen.push('started');
      await new Promise((r) => ctx.signal.addEventListener('abort', r, { once: true }));
      seen.push('aborted');
      return 'aborted';
    });
    const h = await s.listenHttp({ port: 0 });
    t.after(() => h.close());
    const c = await Client.connectHttp(h.url, { mode });
    t.after(() => c.close());
    const ac = new AbortController();
    const call = c.callTool('wait', {}, { signal: ac.signal });
    await until('the handler started', () => seen.length === 1);
    ac.abort();
    await assert.rejects(call, (e) => e.name === 'AbortError');
    await until('the handler saw the abort', () => seen.length === 2);
    assert.deepEqual(seen, ['started', 'aborted']);
    // The server still answers on the same client.
    assert.equal((await c.request('tools/list', {})).tools.length, 1);
  });
}
