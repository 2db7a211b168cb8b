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

for (const mode of ['legacy', 'modern']) test(`a call timeout rejects with code "timeout"; the handler's ctx.signal aborts (${mode})`, async (t) => {
  const c = await Client.connectStdio(process.execPath, [script], { mode });
  t.after(() => c.close());
  await assert.rejects(c.callTool('wait_abort', {}, { timeout: 200 }), (e) => {
    assert.equal(e.code, 'timeout');
    assert.ok(!(e instanceof McpError));
    return true;
  });
  // The server saw the cancellation: the handler's AbortSignal fired.
  let n = 0;
  for (let i = 0; i < 50 && n === 0; i++) {
    n = (await c.callTool('aborted_count', {})).structuredContent.aborted;
    if (n === 0) await new Promise((r) => setTimeout(r, 20));
  }
  assert.equal(n, 1);
});

for (const mode of ['legacy', 'modern']) {
  test(`ctx.elicit reaches the client's onElicitation (${mode}: ${mode === 'legacy' ? 'server request' : 'input_required round'})`, async (t) => {
    const seen = [];
    const c = await Client.connectStdio(process.execPath, [script], {
      mode,
      onElicitation: async (params) => {
        seen.push(params.message);
        return { action: 'accept', content: { name: 'Ada' } };
      },
    });
    t.after(() => c.close());
    const r = await c.callTool('ask_name', {});
    assert.equal(r.content[0].text, 'Hello, Ada!');
    assert.ok(seen.includes('Your name?'));
  });
}

for (const mode of ['legacy', 'modern']) {
  test(`ctx.progress reaches onProgress, ctx.log reaches onNotification (${mode})`, async (t) => {
    const notes = [];
    const c = await Client.connectStdio(process.execPath, [script], {
      mode,
      onNotification: (method, params) => notes.push([method, params]),
    });
    t.after(() => c.close());
    await c.request('logging/setLevel', { level: 'debug' });
    const progress = [];
    const r = await c.callTool('echo', { text: 'p' }, { onProgress: (p, total) => progress.push([p, total]) });
    assert.equal(r.content[0].text, 'p');
    for (let i = 0; i < 50 && (progress.length === 0 || notes.length === 0); i++) {
      await new Promise((res) => setTimeout(res, 10));
    }
    assert.deepEqual(progress, [[1, 1]]);
    const log = notes.find(([m]) => m === 'notifications/message');
    assert.ok(log, JSON.stringify(notes));
    assert.deepEqual(log[1].data, { echoed: 'p' });
    assert.equal(log[1].level, 'info');
  });
}
