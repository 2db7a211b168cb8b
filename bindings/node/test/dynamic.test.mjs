// Changing a server while it serves, over real Streamable HTTP on 127.0.0.1 in both eras: the
// handles server.tool/prompt/resource/resourceTemplate return add, update (in place), disable,
// enable and remove items of the running server (core's dynamic API), a legacy session gets
// notifications/*/list_changed and a 2026-07-28 subscriptions/listen stream gets them too, and a
// call in flight when its item is removed finishes. Before serving the same handles edit the
// registry the server is built from; a kind the server does not advertise is refused naming
// the `dynamic: true` option.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Client, McpError, McpcoreError, Registered, Server } from '../lib/index.js';

const OBJ = { type: 'object' };

/** The list_changed notifications a client receives, in order, awaitable one by one: the
 * legacy session's notifications, or a 2026-07-28 listen stream's. */
class Changes {
  #seen = [];
  #waiters = [];

  static async open(c, mode) {
    const ch = new Changes();
    if (mode === 'legacy') {
      c.onNotification((method) => ch.#push(method));
      return ch;
    }
    const sub = c.listen({ toolsChanged: true, promptsChanged: true, resourcesChanged: true });
    await sub.opened;
    ch.sub = sub;
    (async () => {
      for await (const n of sub) ch.#push(n.method);
    })();
    return ch;
  }

  #push(method) {
    this.#seen.push(method);
    for (const w of this.#waiters.splice(0)) w();
  }

  /** How many notifications `method` arrived so far. */
  count(method) {
    return this.#seen.filter((m) => m === method).length;
  }

  /** Resolves once more than `n` notifications `method` arrived. */
  async after(method, n) {
    while (this.count(method) <= n) await new Promise((r) => this.#waiters.push(r));
  }

  /** Run `change()` and wait for the `method` notification it causes. */
  async change(method, change) {
    const n = this.count(method);
    const out = change();
    await this.after(method, n);
    return out;
  }
}

/** A handler that blocks until released, to hold a call in flight. */
function blocker() {
  let entered;
  let release;
  const started = new Promise((r) => (entered = r));
  const gate = new Promise((r) => (release = r));
  return { started, release, fn: async () => (entered(), await gate, 'finished') };
}

/** Each kind: how to register it, list it, use it, and what an unknown one answers. */
const KINDS = {
  tool: {
    note: 'notifications/tools/list_changed',
    add: (s, key, fn, extra = {}) => s.tool({ name: key, inputSchema: OBJ, ...extra }, fn),
    keys: ['base', 'dyn', 'tail'],
    list: async (c) => (await c.listTools()).map((x) => [x.name, x.description]),
    use: async (c, key) => (await c.callTool(key, {})).content[0].text,
    unknown: (key) => new RegExp(`Unknown tool: ${key}`),
  },
  prompt: {
    note: 'notifications/prompts/list_changed',
    add: (s, key, fn, extra = {}) => s.prompt({ name: key, ...extra }, fn),
    keys: ['base', 'dyn', 'tail'],
    list: async (c) => (await c.listPrompts()).map((x) => [x.name, x.description]),
    use: async (c, key) => (await c.getPrompt(key, {})).messages[0].content.text,
    unknown: (key) => new RegExp(`Unknown prompt: ${key}`),
  },
  resource: {
    note: 'notifications/resources/list_changed',
    add: (s, key, fn, extra = {}) => s.resource({ uri: key, name: key, ...extra }, fn),
    keys: ['dyn://base', 'dyn://dyn', 'dyn://tail'],
    list: async (c) => (await c.listResources()).map((x) => [x.uri, x.description]),
    use: async (c, key) => (await c.readResource(key)).contents[0].text,
    unknown: () => /Resource not found/,
  },
  resourceTemplate: {
    note: 'notifications/resources/list_changed',
    add: (s, key, fn, extra = {}) => s.resourceTemplate({ uriTemplate: key, name: key, ...extra }, fn),
    keys: ['tpl://base/{id}', 'tpl://dyn/{id}', 'tpl://tail/{id}'],
    list: async (c) => (await c.listResourceTemplates()).map((x) => [x.uriTemplate, x.description]),
    use: async (c, key) => (await c.readResource(key.replace('{id}', '7'))).contents[0].text,
    unknown: () => /Resource not found/,
  },
};

for (const [kind, k] of Object.entries(KINDS)) {
  for (const mode of ['legacy', 'modern']) {
    test(`${kind} (${mode}): add, update in place, disable, enable, remove while serving; list_changed each time`, async (t) => {
      const [base, dyn, tail] = k.keys;
      const s = new Server({ name: 'dyn', version: '1' });
      k.add(s, base, () => 'base');
      const h = await s.listenHttp({ port: 0 });
      const c = await Client.connectHttp(h.url, { mode });
      t.after(async () => {
        await c.close();
        await h.close();
      });
      const changes = await Changes.open(c, mode);
      const names = async () => (await k.list(c)).map(([key]) => key);

      // Added after serving started: listed and usable.
      const item = await changes.change(k.note, () => k.add(s, dyn, () => 'v1'));
      assert.ok(item instanceof Registered);
      assert.equal(item.kind, kind);
      assert.equal(item.key, dyn);
      assert.equal(item.enabled, true);
      await changes.change(k.note, () => k.add(s, tail, () => 'tail'));
      assert.deepEqual(await names(), [base, dyn, tail]);
      assert.equal(await k.use(c, dyn), 'v1');

      // update: the new definition and handler, in the same place.
      await changes.change(k.note, () => item.update({ description: 'second' }, () => 'v2'));
      assert.deepEqual(await k.list(c), [[base, undefined], [dyn, 'second'], [tail, undefined]]);
      assert.equal(await k.use(c, dyn), 'v2');

      // disable: gone from the list, and using it is the unknown-item error.
      await changes.change(k.note, () => item.disable());
      assert.equal(item.enabled, false);
      assert.deepEqual(await names(), [base, tail]);
      await assert.rejects(k.use(c, dyn), (e) => e instanceof McpError && e.code === -32602 && k.unknown(dyn).test(e.message));

      // enable: back in its place.
      await changes.change(k.note, () => item.enable());
      assert.deepEqual(await names(), [base, dyn, tail]);
      assert.equal(await k.use(c, dyn), 'v2');

      // remove while a use is in flight: the use finishes, later ones are unknown.
      const b = blocker();
      const slow = await changes.change(k.note, () => item.update(null, b.fn));
      assert.equal(slow, undefined);
      const inFlight = k.use(c, dyn);
      await b.started;
      await changes.change(k.note, () => item.remove());
      assert.equal(item.enabled, false);
      assert.deepEqual(await names(), [base, tail]);
      b.release();
      assert.equal(await inFlight, 'finished');
      await assert.rejects(k.use(c, dyn), (e) => e instanceof McpError && k.unknown(dyn).test(e.message));
      assert.throws(() => item.enable(), (e) => e instanceof McpcoreError && /was removed/.test(e.message));
      item.remove(); // a second remove does nothing
    });
  }
}

for (const mode of ['legacy', 'modern']) {
  test(`over stdio a handler adds and removes a tool of its running server (${mode})`, async (t) => {
    const script = fileURLToPath(new URL('../testing/dynamic-stdio.mjs', import.meta.url));
    let told = 0;
    let wake = () => {};
    const c = await Client.connectStdio(process.execPath, [script], {
      mode,
      onNotification: (m) => m === 'notifications/tools/list_changed' && (told++, wake()),
    });
    t.after(() => c.close());
    const announced = async (n) => {
      while (told < n) await new Promise((r) => (wake = r));
    };
    await c.callTool('grow', {});
    assert.deepEqual((await c.listTools()).map((x) => x.name), ['grow', 'shrink', 'grown']);
    assert.equal((await c.callTool('grown', {})).content[0].text, 'grown');
    // Legacy sessions are told; a 2026-07-28 client is told only on a listen stream (SUB-01).
    if (mode === 'legacy') await announced(1);
    await c.callTool('shrink', {});
    assert.deepEqual((await c.listTools()).map((x) => x.name), ['grow', 'shrink']);
    await assert.rejects(c.callTool('grown', {}), /Unknown tool: grown/);
    if (mode === 'legacy') await announced(2);
  });
}

test('a tool renamed by update() moves to the end of the list; the old name is unknown', async (t) => {
  const s = new Server({ name: 'dyn', version: '1' });
  const a = s.tool({ name: 'a', inputSchema: OBJ }, () => 'a');
  s.tool({ name: 'b', inputSchema: OBJ }, () => 'b');
  const h = await s.listenHttp({ port: 0 });
  const c = await Client.connectHttp(h.url, { mode: 'modern' });
  t.after(async () => {
    await c.close();
    await h.close();
  });
  a.update({ name: 'c' });
  assert.equal(a.key, 'c');
  assert.deepEqual((await c.listTools()).map((x) => x.name), ['b', 'c']);
  assert.equal((await c.callTool('c', {})).content[0].text, 'a');
  await assert.rejects(c.callTool('a', {}), /Unknown tool: a/);
});

test('before serving the handles edit what the server is built from; the methods still chain', async (t) => {
  const s = new Server({ name: 'pre', version: '1' });
  // Chaining: a handle forwards the server's registration and serving methods.
  const kept = s.tool({ name: 'kept', inputSchema: OBJ }, () => 'old');
  const hidden = kept.tool({ name: 'hidden', inputSchema: OBJ }, () => 'hidden');
  const last = hidden.tool({ name: 'gone', inputSchema: OBJ }, () => 'gone');
  assert.ok(last instanceof Registered);
  assert.equal(last.key, 'gone');
  assert.equal(last.server, s);
  kept.update({ description: 'new' }, () => 'updated'); // in place
  hidden.disable();
  last.remove();
  const h = await last.listenHttp({ port: 0 });
  const c = await Client.connectHttp(h.url, { mode: 'legacy' });
  t.after(async () => {
    await c.close();
    await h.close();
  });
  assert.deepEqual((await c.listTools()).map((x) => [x.name, x.description]), [['kept', 'new']]);
  assert.equal((await c.callTool('kept', {})).content[0].text, 'updated');
  await assert.rejects(c.callTool('hidden', {}), /Unknown tool: hidden/);
  // Enabled after serving started: core's dynamic API on the built server.
  hidden.enable();
  assert.deepEqual((await c.listTools()).map((x) => x.name), ['kept', 'hidden']);
  assert.equal((await c.callTool('hidden', {})).content[0].text, 'hidden');
});

test('a kind not advertised at build is refused while serving, naming dynamic: true; with it, any kind can be added', async (t) => {
  const s = new Server({ name: 'fixed', version: '1' });
  s.tool({ name: 't', inputSchema: OBJ }, () => 't');
  const h = await s.listenHttp({ port: 0 });
  t.after(() => h.close());
  assert.throws(
    () => s.prompt({ name: 'p' }, () => 'p'),
    (e) => e instanceof McpcoreError && e.code === 'invalid_argument' && /does not advertise prompts/.test(e.message) && /dynamic: true/.test(e.message),
  );
  assert.throws(() => s.resource({ uri: 'x://y', name: 'y' }, () => 'y'), /does not advertise resources.*dynamic: true/);
  // Tools are advertised (one was registered): adding one works.
  s.tool({ name: 'u', inputSchema: OBJ }, () => 'u');
  // A gate cannot be added while serving (core changes tools without gates).
  assert.throws(() => s.tool({ name: 'g', inputSchema: OBJ, gate: () => {} }, () => 'g'), /gate/);

  const d = new Server({ name: 'open', version: '1', dynamic: true });
  const hd = await d.listenHttp({ port: 0 });
  const c = await Client.connectHttp(hd.url, { mode: 'modern' });
  t.after(async () => {
    await c.close();
    await hd.close();
  });
  assert.deepEqual(Object.keys(c.serverCapabilities).filter((k) => ['tools', 'prompts', 'resources'].includes(k)).sort(), ['prompts', 'resources', 'tools']);
  d.prompt({ name: 'p' }, () => 'hello');
  assert.equal((await c.getPrompt('p', {})).messages[0].content.text, 'hello');
  assert.throws(() => new Server({ name: 'x', version: '1', dynamic: 'yes' }), TypeError);
});

test('the package README example "Changing a server while it serves" runs and prints echo: hi', () => {
  const readme = readFileSync(new URL('../README.md', import.meta.url), 'utf8');
  const section = readme.split('## Changing a server while it serves')[1];
  assert.ok(section, 'the README section exists');
  const code = section.split('```js\n')[1].split('```')[0];
  const lib = fileURLToPath(new URL('../lib/index.js', import.meta.url));
  const file = join(mkdtempSync(join(tmpdir(), 'mcpcore-readme-')), 'example.mjs');
  writeFileSync(file, code.replace('from "mcpcore"', `from ${JSON.stringify(lib)}`));
  const r = spawnSync(process.execPath, [file], { encoding: 'utf8', timeout: 60_000 });
  assert.equal(r.status, 0, r.stderr);
  assert.equal(r.stdout, 'echo: hi\n');
});
