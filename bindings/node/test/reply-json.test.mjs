// Handler arguments and replies cross into the addon as JSON text: JSON's own rules apply to
// what a handler returns (`toJSON`, `undefined` members left out), a value JSON cannot carry
// fails the call with core's generic -32603 (nothing of the handler's error is sent), and
// arguments arrive exactly as the client sent them. Checked over HTTP (the threadsafe path)
// and over real stdio (the server answers synchronous handlers on its own thread), sync and
// async handlers, both eras.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { fileURLToPath } from 'node:url';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Server, Client, McpError } from '../lib/index.js';

const lib = fileURLToPath(new URL('../lib/index.js', import.meta.url));

/** Registers the tools of this test on `s`; also the body of the stdio server script. */
const register = `(s) => {
  const both = (name, fn) => {
    s.tool({ name, inputSchema: { type: 'object' } }, fn);
    s.tool({ name: name + '_async', inputSchema: { type: 'object' } }, async (a, c) => fn(a, c));
  };
  both('args', (a) => ({ got: a }));
  both('dated', () => ({ when: new Date(0), gone: undefined, list: [1, undefined, 2], n: 1.5 }));
  both('bigint', () => ({ n: 10n }));
  both('cycle', () => { const o = { a: 1 }; o.self = o; return o; });
  both('bad_error_data', () => { throw new McpError(-32000, 'custom', { n: 10n }); });
}`;
const registerFn = new Function(`return ${register}`)();

const ARGS = { text: 'héllo 👋 "quoted" \\ back', nested: { list: [1, 2.5, null, true, 'x'], empty: {} }, big: 9007199254740991 };

async function check(c) {
  for (const suffix of ['', '_async']) {
    const echoed = await c.callTool(`args${suffix}`, ARGS);
    assert.deepEqual(echoed.structuredContent, { got: ARGS }, `args${suffix}`);

    const dated = await c.callTool(`dated${suffix}`, {});
    assert.deepEqual(dated.structuredContent, { when: '1970-01-01T00:00:00.000Z', list: [1, null, 2], n: 1.5 }, `dated${suffix}`);

    for (const name of ['bigint', 'cycle']) {
      await assert.rejects(c.callTool(`${name}${suffix}`, {}), (e) => {
        assert.ok(e instanceof McpError, `${name}${suffix}: ${e}`);
        assert.equal(e.code, -32603);
        assert.doesNotMatch(e.message, /BigInt|circular|serialize/i, 'no handler internals in the message');
        return true;
      });
    }
    // An McpError whose data JSON cannot carry: the call still fails, as core's -32603.
    await assert.rejects(c.callTool(`bad_error_data${suffix}`, {}), (e) => e instanceof McpError && e.code === -32603);
  }
}

for (const mode of ['legacy', 'modern']) {
  test(`handler replies and arguments as JSON text, HTTP (${mode})`, async (t) => {
    const s = new Server({ name: 'reply-json', version: '1' });
    registerFn(s);
    const errors = [];
    const original = console.error;
    console.error = (...a) => errors.push(a.join(' '));
    t.after(() => { console.error = original; });
    const h = await s.listenHttp({ port: 0 });
    t.after(() => h.close());
    const c = await Client.connectHttp(h.url, { mode });
    t.after(() => c.close());
    await check(c);
    // The failures were reported to the server's developer (not to the peer).
    assert.ok(errors.some((m) => /BigInt/.test(m)), errors.join('\n'));
    assert.ok(errors.some((m) => /circular/i.test(m)), errors.join('\n'));
  });

  test(`handler replies and arguments as JSON text, stdio (${mode})`, async (t) => {
    const file = join(mkdtempSync(join(tmpdir(), 'mcpcore-reply-json-')), 'server.mjs');
    writeFileSync(
      file,
      `import { Server, McpError } from ${JSON.stringify(lib)};\n` +
        `const s = new Server({ name: 'reply-json', version: '1' });\n(${register})(s);\nawait s.serveStdio();\n`,
    );
    const c = await Client.connectStdio(process.execPath, [file], { mode, stderr: 'capture' });
    t.after(() => c.close());
    await check(c);
    assert.match(c.capturedStderr(), /BigInt/);
  });
}

// The native context is made when a handler first asks for something only core knows; its
// method, name and request id stay readable after the call ended, and an ended call's context
// reports nothing (whether it was made during the call or only afterwards).
for (const mode of ['legacy', 'modern']) {
  test(`ctx during and after the call (${mode})`, async (t) => {
    const s = new Server({ name: 'ctx-life', version: '1' });
    const kept = [];
    s.tool({ name: 'keep', inputSchema: { type: 'object' } }, (_a, ctx) => {
      kept.push(ctx);
      return 'kept';
    });
    s.tool({ name: 'look', inputSchema: { type: 'object' } }, (_a, ctx) => {
      kept.push(ctx);
      return { modern: ctx.isModern, aborted: ctx.signal.aborted, meta: ctx.meta, method: ctx.method, name: ctx.name };
    });
    const h = await s.listenHttp({ port: 0 });
    t.after(() => h.close());
    const c = await Client.connectHttp(h.url, { mode });
    t.after(() => c.close());
    assert.equal((await c.callTool('keep', {})).content[0].text, 'kept');
    const seen = (await c.callTool('look', {})).structuredContent;
    assert.equal(seen.modern, mode === 'modern');
    assert.equal(seen.aborted, false);
    assert.equal(seen.method, 'tools/call');
    assert.equal(seen.name, 'look');
    const [untouched, touched] = kept;
    for (const [ctx, name] of [[untouched, 'keep'], [touched, 'look']]) {
      assert.equal(ctx.method, 'tools/call');
      assert.equal(ctx.name, name);
      assert.ok(typeof ctx.requestId === 'number' || typeof ctx.requestId === 'string');
      assert.equal(ctx.isModern, false, 'an ended call reports nothing');
      assert.equal(ctx.progress(1), false);
      // A signal first asked for after the end is aborted at once; one made during a call
      // that completed (not cancelled) stays as it was.
      assert.equal(ctx.signal.aborted, ctx === untouched);
      await assert.rejects(ctx.requestClient('roots/list', {}), (e) => e.code === 'closed');
    }
    assert.notEqual(untouched.requestId, touched.requestId);
  });
}
