// The binding's fuller surface against testing/features.mjs, in both eras, over real stdio (a
// child process) and real Streamable HTTP on 127.0.0.1: completion, list pages, Standard Schema
// (zod) tools, the context's client requests, explicit input_required answers, list/resource
// notifications (legacy notifications and subscribe, 2026-07-28 subscriptions/listen), callback
// methods and async disposal.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { fileURLToPath } from 'node:url';
import { Client, McpError, McpcoreError } from '../lib/index.js';
import { makeFeatureServer } from '../testing/features.mjs';

const script = fileURLToPath(new URL('../testing/features.mjs', import.meta.url));
const ERAS = ['legacy', 'modern'];

/** Connect over `transport` in `mode`; `t.after` closes the client (and the server). */
async function connect(t, transport, mode, opts = {}) {
  if (transport === 'stdio') {
    const c = await Client.connectStdio(process.execPath, [script], { mode, ...opts });
    t.after(() => c.close());
    return c;
  }
  const h = await makeFeatureServer().listenHttp({ port: 0 });
  const c = await Client.connectHttp(h.url, { mode, ...opts });
  t.after(async () => {
    await c.close();
    await h.close();
  });
  return c;
}

/** Wait (bounded) until `pred()` holds. */
async function until(pred, what) {
  for (let i = 0; i < 200; i++) {
    if (pred()) return;
    await new Promise((r) => setTimeout(r, 10));
  }
  assert.fail(`timed out waiting for ${what}`);
}

// Core answers the server for the binding: -32601 while a declared callback is unset, -32603
// "Internal error" with nothing of the exception for a throw that is not an McpError (what a
// panicking Rust handler and a raising Python callback answer too), an McpError as thrown. The
// feature server's tool passes the error it got on as its own.
for (const transport of ['stdio', 'http']) {
  test(`a declared but unset callback answers -32601, a throwing one core's -32603 (${transport}, legacy)`, async (t) => {
    const c = await connect(t, transport, 'legacy', { declare: ['sampling'] });
    const rpc = (code, message, data) => (e) => {
      assert.ok(e instanceof McpError, String(e));
      assert.deepEqual([e.code, e.message, e.data], [code, message, data]);
      return true;
    };
    await assert.rejects(c.callTool('sample'), rpc(-32601, 'no callback is registered for sampling/createMessage', undefined));
    c.onSampling(() => {
      throw new Error('secret detail');
    });
    await assert.rejects(c.callTool('sample'), rpc(-32603, 'Internal error', undefined));
    c.onSampling(() => {
      throw new McpError(-1, 'user rejected', { why: 'no' });
    });
    await assert.rejects(c.callTool('sample'), rpc(-1, 'user rejected', { why: 'no' }));
  });
}

for (const transport of ['stdio', 'http']) {
  for (const mode of ERAS) {
    const at = `${transport}, ${mode}`;

    test(`completion/complete with ref, argument and context (${at})`, async (t) => {
      const c = await connect(t, transport, mode);
      const r = await c.complete({ type: 'ref/prompt', name: 'city' }, { name: 'name', value: 'pa' });
      assert.deepEqual(r.completion, { values: ['Paris', 'Parma'], total: 2, hasMore: false });
      const ctx = await c.complete({ type: 'ref/prompt', name: 'city' }, { name: 'name', value: '' }, { arguments: { country: 'it' } });
      assert.deepEqual(ctx.completion.values, ['Parma']);
      const whole = await c.complete({ type: 'ref/resource', uri: 'mem://watched' }, { name: 'x', value: '' });
      assert.deepEqual(whole.completion.values, ['whole']);
      const many = await c.complete({ type: 'ref/prompt', name: 'city' }, { name: 'name', value: 'many' });
      assert.deepEqual(many.completion.values, Array.from({ length: 100 }, (_, i) => `many${i}`));
      assert.equal(many.completion.total, 150);
      assert.equal(many.completion.hasMore, true);
      await assert.rejects(c.complete({ type: 'ref/prompt', name: 'city' }, { name: 'other', value: '' }), (e) => e instanceof McpError && e.code === -32602);
    });

    test(`a list of content blocks is the tool's content (${at})`, async (t) => {
      const c = await connect(t, transport, mode);
      const r = await c.callTool('blocks');
      assert.deepEqual(r.content, [
        { type: 'text', text: 'look:' },
        { type: 'image', data: 'AAEC', mimeType: 'image/png' },
      ]);
      assert.equal(r.structuredContent, undefined);
      assert.notEqual(r.isError, true);
    });

    test(`list pages follow nextCursor (${at})`, async (t) => {
      const c = await connect(t, transport, mode);
      const names = [];
      let cursor;
      let pages = 0;
      do {
        const page = await c.listToolsPage(cursor);
        assert.ok(page.tools.length <= 2, 'the server pages by 2');
        names.push(...page.tools.map((x) => x.name));
        cursor = page.nextCursor;
        pages += 1;
      } while (cursor && pages < 20);
      assert.ok(pages >= 2);
      assert.deepEqual(names, (await c.listTools()).map((x) => x.name));
      assert.deepEqual((await c.listPromptsPage()).prompts.map((p) => p.name), ['city']);
      assert.deepEqual((await c.listResourcesPage(null)).resources.map((r) => r.uri), ['mem://watched']);
      assert.deepEqual((await c.listResourceTemplatesPage()).resourceTemplates, []);
      await assert.rejects(c.listToolsPage('not-a-cursor'), (e) => e instanceof McpError && e.code === -32602);
    });

    test(`a zod tool: JSON Schema exported, arguments validated by ~standard.validate (${at})`, async (t) => {
      const c = await connect(t, transport, mode);
      const tool = (await c.listTools()).find((x) => x.name === 'zod_add');
      assert.equal(tool.inputSchema.type, 'object');
      assert.equal(tool.inputSchema.properties.a.type, 'number');
      assert.deepEqual(tool.outputSchema.required, ['sum']);
      // zod's parsed value reaches the handler: `b` defaults to 1.
      assert.deepEqual((await c.callTool('zod_add', { a: 2 })).structuredContent, { sum: 3 });
      // A refinement only zod knows: core's invalid-arguments tool result (TOOL-07).
      const bad = await c.callTool('zod_add', { a: 13 });
      assert.equal(bad.isError, true);
      assert.equal(bad.content[0].text, 'Invalid arguments for tool zod_add: a: a must not be 13');
      // A type error is caught by core's JSON Schema check first, with the same result shape.
      const typed = await c.callTool('zod_add', { a: 'x' });
      assert.equal(typed.isError, true);
      assert.match(typed.content[0].text, /^Invalid arguments for tool zod_add: /);
    });

    test(`ctx.clientInfo and ctx.requireClientCapability (${at})`, async (t) => {
      const c = await connect(t, transport, mode);
      assert.equal((await c.callTool('who')).structuredContent.client, 'mcpcore-client');
      await assert.rejects(c.callTool('need_sampling'), (e) => {
        assert.ok(e instanceof McpError);
        assert.equal(e.code, -32021);
        assert.deepEqual(e.data.requiredCapabilities, { sampling: {} });
        return true;
      });
      const s = await connect(t, transport, mode, { declare: ['sampling'] });
      assert.equal((await s.callTool('need_sampling')).content[0].text, 'has sampling');
    });

    test(`ctx.sample and ctx.listRoots reach callbacks set after connect (${at})`, async (t) => {
      const c = await connect(t, transport, mode, { declare: ['sampling', 'roots'] });
      const seen = [];
      c.onSampling((p) => {
        seen.push(p.maxTokens);
        return { role: 'assistant', content: { type: 'text', text: 'Paris' }, model: 'test' };
      });
      c.onRoots(() => ({ roots: [{ uri: 'file:///a' }, { uri: 'file:///b' }] }));
      assert.equal((await c.callTool('sample')).content[0].text, 'sampled: Paris');
      assert.ok(seen.includes(10));
      assert.equal((await c.callTool('roots')).content[0].text, 'roots: file:///a,file:///b');
      // Replacing the callback takes effect for the next request.
      c.onSampling(() => ({ role: 'assistant', content: { type: 'text', text: 'Lyon' }, model: 'test' }));
      assert.equal((await c.callTool('sample')).content[0].text, 'sampled: Lyon');
    });

    test(`ctx.closeSseStream closes only a legacy HTTP response stream; the result still arrives (${at})`, async (t) => {
      const c = await connect(t, transport, mode);
      const r = await c.callTool('close_stream', {}, { onProgress: () => {} });
      assert.equal(r.structuredContent.closed, transport === 'http' && mode === 'legacy');
    });

    test(`an explicit input_required answer with own key and request state (${at})`, async (t) => {
      const asked = [];
      const c = await connect(t, transport, mode, {
        onElicitation: (p) => {
          asked.push(p.message);
          return { action: 'accept', content: { ok: true } };
        },
      });
      // 2026-07-28: core's client fulfils the round and retries with the sealed state; legacy:
      // core's shim sends the request and re-runs the handler with the answers.
      assert.equal((await c.callTool('confirm')).content[0].text, 'confirmed: true');
      assert.deepEqual(asked, ['OK?']);
      await assert.rejects(c.callTool('bad_input_required'), (e) => e instanceof McpError && e.code === -32603);
    });
  }
}

for (const transport of ['stdio', 'http']) {
  test(`legacy: list_changed notifications and resources/subscribe reach onNotification (${transport})`, async (t) => {
    const c = await connect(t, transport, 'legacy');
    const notes = [];
    const off = c.onNotification((method, params) => notes.push([method, params]));
    await c.callTool('announce', { what: 'prompts' });
    await until(() => notes.some(([m]) => m === 'notifications/prompts/list_changed'), 'prompts list_changed');
    await c.callTool('announce', { what: 'resources' });
    await until(() => notes.some(([m]) => m === 'notifications/resources/list_changed'), 'resources list_changed');
    await c.subscribeResource('mem://watched');
    const told = (await c.callTool('announce', { what: 'mem://watched' })).structuredContent.told;
    assert.equal(told, 1);
    await until(() => notes.some(([m, p]) => m === 'notifications/resources/updated' && p.uri === 'mem://watched'), 'resources/updated');
    await c.unsubscribeResource('mem://watched');
    assert.equal((await c.callTool('announce', { what: 'mem://watched' })).structuredContent.told, 0);
    off();
    const before = notes.length;
    await c.callTool('announce', { what: 'tools' });
    await new Promise((r) => setTimeout(r, 100));
    assert.equal(notes.length, before, 'a removed listener gets nothing');
  });

  for (const mode of ['legacy', 'modern']) {
    test(`${mode}: listen() yields list changes and resource updates; return() ends it (${transport})`, async (t) => {
      const c = await connect(t, transport, mode);
      if (mode === 'modern') {
        // resources/subscribe does not exist on 2026-07-28: core refuses it before sending.
        await assert.rejects(c.subscribeResource('mem://watched'), (e) => e instanceof McpcoreError && e.code === 'invalid_argument' && /use listen/.test(e.message));
      }
      // Legacy (SUB-07): core subscribes the resources and takes the session's matching
      // notifications; 2026-07-28: a listen stream, on stdio interleaved with the connection's
      // other messages (SUB-03) and ended by notifications/cancelled (SUB-05).
      const sub = c.listen({ promptsChanged: true, resourcesSubscribe: ['mem://watched'] });
      await sub.opened;
      assert.deepEqual(await sub.honored(), { promptsListChanged: true, resourceSubscriptions: ['mem://watched'] });
      await c.callTool('announce', { what: 'tools' }); // not asked for: never delivered
      await c.callTool('announce', { what: 'prompts' });
      await c.callTool('announce', { what: 'mem://watched' });
      const got = [];
      for await (const n of sub) {
        got.push(n);
        if (got.length === 2) break; // return(): ends the subscription
      }
      assert.deepEqual(got.map((n) => n.method), ['notifications/prompts/list_changed', 'notifications/resources/updated']);
      assert.equal(got[1].params.uri, 'mem://watched');
      assert.deepEqual(await sub.next(), { done: true, value: undefined });
      // The server forgets the ended stream (legacy: the resource is unsubscribed).
      const what = mode === 'legacy' ? 'mem://watched' : 'prompts';
      for (let i = 0; i < 100; i++) {
        if ((await c.callTool('announce', { what })).structuredContent.told === 0) break;
        await new Promise((r) => setTimeout(r, 20));
      }
      assert.equal((await c.callTool('announce', { what })).structuredContent.told, 0);
    });
  }
}

test('Symbol.asyncDispose closes clients, listeners and subscriptions', async () => {
  const h = await makeFeatureServer().listenHttp({ port: 0 });
  const c = await Client.connectHttp(h.url, { mode: 'modern' });
  const sub = c.listen({ toolsChanged: true });
  await sub.opened;
  await sub[Symbol.asyncDispose]();
  assert.deepEqual(await sub.next(), { done: true, value: undefined });
  await c[Symbol.asyncDispose]();
  await assert.rejects(c.listTools(), (e) => e instanceof McpcoreError);
  await h[Symbol.asyncDispose]();
  await assert.rejects(Client.connectHttp(h.url, { mode: 'modern' }), (e) => e.code === 'transport');
  // A server's disposal closes every listener it started.
  const server = makeFeatureServer();
  const h2 = await server.listenHttp({ port: 0 });
  await server[Symbol.asyncDispose]();
  await assert.rejects(Client.connectHttp(h2.url, { mode: 'modern' }), (e) => e.code === 'transport');
});

test('wrong argument types throw TypeError with a clear message', async (t) => {
  const c = await connect(t, 'stdio', 'modern');
  await assert.rejects(c.complete('city', { name: 'n', value: '' }), TypeError);
  await assert.rejects(c.complete({ type: 'ref/prompt', name: 'city' }, { name: 'n', value: 5 }), /argument must be \{name: string, value: string\}/);
  await assert.rejects(c.listToolsPage(42), /cursor must be a string, not number/);
  await assert.rejects(c.subscribeResource(1), TypeError);
  assert.throws(() => c.listen('tools'), /filter must be an object, not string/);
  assert.throws(() => c.listen({ toolsChanged: 'yes' }), /toolsChanged must be a boolean/);
  assert.throws(() => c.listen({ tools: true }), /unknown key tools/);
  assert.throws(() => c.onSampling('fn'), /fn must be a function, not string/);
  assert.throws(() => c.onSampling(() => ({})), (e) => e instanceof McpcoreError && /the "sampling" callback was not declared at connect/.test(e.message));
  assert.throws(() => c.onNotification(null), TypeError);
  await assert.rejects(Client.connectStdio(42), /command must be a string, not number/);
  await assert.rejects(Client.connectStdio(process.execPath, [script], { declare: ["smell"] }), /unknown client callback "smell" \(there are "elicitation", "sampling", "roots"\)/);
  await assert.rejects(Client.connectStdio(process.execPath, [script], { onSampling: 'x' }), /onSampling must be a function/);
  const { Server, inputRequired } = await import('../lib/index.js');
  const s = new Server({ name: 's', version: '1' });
  assert.throws(() => s.tool(null, () => 'x'), /def must be an object, not null/);
  assert.throws(() => s.tool({ name: 5, inputSchema: {} }, () => 'x'), /def.name must be a string, not number/);
  assert.throws(() => s.tool({ name: 'x', inputSchema: 'schema' }, () => 'x'), /inputSchema must be a JSON Schema object or a Standard Schema, not string/);
  assert.throws(() => s.resource({ name: 'r' }, () => 'x'), /def.uri must be a string/);
  assert.throws(() => s.completion('fn'), /handler must be a function/);
  assert.throws(() => s.notifyResourceUpdated(5), /uri must be a string, not number/);
  // Core's InputRequired::validate (MRTR-02) words it, for Python and Node alike.
  assert.throws(() => inputRequired({ k: { params: {} } }), (e) => e instanceof TypeError && /inputRequests\["k"\]: an inputRequests entry has no method/.test(e.message));
  assert.throws(() => inputRequired([1]), (e) => e instanceof TypeError && /inputRequests must be an object/.test(e.message));
  assert.throws(() => inputRequired({}, { requestState: 7 }), /requestState must be a string, not number/);
});

test('resource subscriptions follow the server option resourcesSubscribe (core\'s capability)', async (t) => {
  const { Server } = await import('../lib/index.js');
  for (const on of [true, false]) {
    const s = new Server({ name: 'subs', version: '1', options: { resourcesSubscribe: on } });
    s.resource({ uri: 'mem://x', name: 'x' }, () => 'x');
    const h = await s.listenHttp({ port: 0 });
    t.after(() => h.close());
    const legacy = await Client.connectHttp(h.url, { mode: 'legacy' });
    t.after(() => legacy.close());
    assert.equal(legacy.serverCapabilities.resources.subscribe === true, on);
    const modern = await Client.connectHttp(h.url, { mode: 'modern' });
    t.after(() => modern.close());
    assert.equal(modern.serverCapabilities.resources.subscribe === true, on);
    // 2026-07-28: the listen stream honours resource subscriptions only when advertised.
    const sub = modern.listen({ resourcesSubscribe: ['mem://x'] });
    t.after(() => sub.close());
    const honored = await sub.honored();
    assert.equal('resourceSubscriptions' in honored, on, JSON.stringify(honored));
    if (on) {
      await legacy.subscribeResource('mem://x');
      // The legacy session and the listen stream.
      assert.equal(s.notifyResourceUpdated('mem://x'), 2);
    }
  }
});

test('listenHttp takes "localhost" and its url carries the configured path', async (t) => {
  const h = await makeFeatureServer().listenHttp({ host: 'localhost', port: 0, options: { path: '/tools/mcp' } });
  t.after(() => h.close());
  assert.equal(h.host, '127.0.0.1');
  assert.equal(h.url, `http://127.0.0.1:${h.port}/tools/mcp`);
  const c = await Client.connectHttp(h.url, { mode: 'modern' });
  t.after(() => c.close());
  assert.ok((await c.listTools()).length > 0);
  await assert.rejects(makeFeatureServer().listenHttp({ host: 'http://x', port: 0 }), (e) => e.code === 'invalid_argument');
});
