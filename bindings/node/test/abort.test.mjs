// Per-call `signal` and `timeout` on every client call: an abort cancels the call through core
// (the server's handler sees ctx.signal fire) and rejects with an error named AbortError; a
// timeout rejects with one named TimeoutError (code "timeout").
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { fileURLToPath } from 'node:url';
import { Client, McpcoreError } from '../lib/index.js';

const script = fileURLToPath(new URL('../testing/server.mjs', import.meta.url));

// Polls until `want` handlers saw their abort (or gives up and returns the count): the abort
// reaches a handler asynchronously, so a later synchronous call may be answered first.
async function abortedCount(c, want = 1) {
  let n = 0;
  for (let i = 0; i < 100 && n < want; i++) {
    n = (await c.callTool('aborted_count', {})).structuredContent.aborted;
    if (n < want) await new Promise((r) => setTimeout(r, 20));
  }
  return n;
}

const isAbort = (e) => {
  assert.equal(e.name, 'AbortError');
  assert.ok(e instanceof McpcoreError);
  assert.equal(e.code, 'cancelled');
  return true;
};

for (const mode of ['legacy', 'modern']) {
  test(`aborting a callTool cancels it on the server (ctx.signal fires) and rejects with AbortError (${mode})`, { timeout: 20_000 }, async (t) => {
    const c = await Client.connectStdio(process.execPath, [script], { mode });
    t.after(() => c.close());
    const ac = new AbortController();
    const started = Date.now();
    setTimeout(() => ac.abort(), 150);
    await assert.rejects(c.callTool('wait_abort', {}, { signal: ac.signal }), isAbort);
    assert.ok(Date.now() - started < 5000);
    assert.equal(await abortedCount(c), 1);
    // The connection still serves, and a call with a signal that is never aborted succeeds.
    const r = await c.callTool('add', { a: 1, b: 2 }, { signal: new AbortController().signal });
    assert.equal(r.structuredContent.sum, 3);
  });
}

test('a timeout rejects with TimeoutError (code "timeout") on every kind of call', { timeout: 20_000 }, async (t) => {
  const c = await Client.connectStdio(process.execPath, [script], { mode: 'modern' });
  t.after(() => c.close());
  const isTimeout = (e) => e.name === 'TimeoutError' && e.code === 'timeout' && e instanceof McpcoreError;
  await assert.rejects(c.callTool('wait_abort', {}, { timeout: 100 }), isTimeout);
  await assert.rejects(c.request('tools/call', { name: 'wait_abort', arguments: {} }, { timeout: 100 }), isTimeout);
  assert.equal(await abortedCount(c, 2), 2);
});

test('an already-aborted signal rejects every call at once; signal is accepted everywhere', { timeout: 20_000 }, async (t) => {
  const c = await Client.connectStdio(process.execPath, [script], { mode: 'modern' });
  t.after(() => c.close());
  const gone = AbortSignal.abort(new Error('why'));
  for (const call of [
    () => c.callTool('echo', { text: 'x' }, { signal: gone }),
    () => c.getPrompt('greet', { name: 'A' }, { signal: gone }),
    () => c.readResource('demo://readme', { signal: gone }),
    () => c.listTools({ signal: gone }),
    () => c.request('tools/list', {}, { signal: gone }),
  ]) {
    await assert.rejects(call(), (e) => isAbort(e) && e.cause?.message === 'why');
  }
  const live = new AbortController().signal;
  assert.equal((await c.getPrompt('greet', { name: 'A' }, { signal: live, timeout: 5000 })).messages.length, 1);
  assert.match((await c.readResource('demo://readme', { signal: live })).contents[0].text, /Hi/);
  assert.ok((await c.listTools({ signal: live, timeout: 5000 })).some((t) => t.name === 'echo'));
  assert.ok((await c.request('tools/list', {}, { signal: live })).tools.length > 0);
});
