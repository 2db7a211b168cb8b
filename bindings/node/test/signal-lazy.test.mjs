// ctx.signal is made when a handler first reads it (lib/server.cjs): one read only after the
// request was cancelled is already aborted; one read while the request runs fires on the cancel
// (CAN-01). Over stdio, where cancellations arrive in order (testing/lazy-signal-server.mjs).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { fileURLToPath } from 'node:url';
import { Client } from '../lib/index.js';

const script = fileURLToPath(new URL('../testing/lazy-signal-server.mjs', import.meta.url));

async function until(what, f) {
  for (let i = 0; i < 250; i++) {
    if (await f()) return;
    await new Promise((r) => setTimeout(r, 20));
  }
  assert.fail(`${what} within 5 s`);
}

for (const mode of ['legacy', 'modern']) {
  test(`ctx.signal read after the cancel is already aborted; read before, it fires (${mode})`, { timeout: 30_000 }, async (t) => {
    const c = await Client.connectStdio(process.execPath, [script], { mode });
    t.after(() => c.close());
    const seen = async () => (await c.callTool('seen', {})).structuredContent;
    const lateAc = new AbortController();
    const earlyAc = new AbortController();
    const late = c.callTool('late', {}, { signal: lateAc.signal });
    const early = c.callTool('early', {}, { signal: earlyAc.signal });
    await until('the early handler started', async () => (await seen()).early.length === 1);
    // Cancel `late` first: once `early` has seen its own (later) cancellation, the server has
    // processed both.
    lateAc.abort();
    earlyAc.abort();
    // Both handlers attached in one tick: neither rejection is ever unhandled (Node 22 fails a
    // test on a rejection handled a tick late).
    await Promise.all([
      assert.rejects(late, (e) => e.name === 'AbortError'),
      assert.rejects(early, (e) => e.name === 'AbortError'),
    ]);
    await until('the early handler saw its abort', async () => (await seen()).early.length === 2);
    await c.callTool('open', {});
    await until('the late handler read its signal', async () => (await seen()).late.length === 1);
    assert.deepEqual(await seen(), { early: [false, true], late: [true] });
  });
}
