// The examples in examples/node: client.mjs drives server.mjs over stdio end to end (both eras),
// server.mjs --http serves Streamable HTTP, and conformance-server.mjs (the conformance fixture
// scripts/conformance-node.sh runs the official suite against) answers over HTTP in both eras.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { once } from 'node:events';
import { fileURLToPath } from 'node:url';
import { Client } from '../lib/index.js';

const dir = fileURLToPath(new URL('../../../examples/node/', import.meta.url));

for (const mode of ['legacy', 'modern']) {
  test(`examples/node/client.mjs drives server.mjs over stdio (${mode})`, () => {
    const r = spawnSync(process.execPath, [`${dir}client.mjs`, mode], { encoding: 'utf8', timeout: 60_000 });
    assert.equal(r.status, 0, r.stderr);
    const lines = r.stdout.trim().split('\n');
    const version = mode === 'legacy' ? '2025-11-25' : '2026-07-28';
    assert.equal(lines[0], `connected: node-example 1.0.0, era ${mode} (${version})`);
    assert.equal(lines[1], 'tools: add, count, greet');
    assert.equal(lines[2], 'add: 42');
    assert.match(lines[3], /^count: counted to 3 \(progress/);
    assert.equal(lines[4], 'greet: Hello, Ada (asked: What is your name?)!');
    assert.equal(lines[5], 'prompt: Please review this Rust code for bugs.');
    assert.equal(lines[6], 'resource: This is note 7.');
  });
}

/** Start `script args…`, wait for its "http://…/mcp" line on stderr; killed after the test. */
async function startHttp(t, script, args) {
  const child = spawn(process.execPath, [`${dir}${script}`, ...args], { stdio: ['ignore', 'ignore', 'pipe'] });
  t.after(() => child.kill('SIGKILL'));
  let err = '';
  for (;;) {
    const [chunk] = await once(child.stderr, 'data');
    err += chunk;
    const m = err.match(/http:\/\/127\.0\.0\.1:\d+\/mcp/);
    if (m) return { child, url: m[0] };
  }
}

test('examples/node/server.mjs --http 0 serves both eras; SIGTERM ends it', async (t) => {
  const { child, url } = await startHttp(t, 'server.mjs', ['--http', '0']);
  for (const mode of ['legacy', 'modern']) {
    const c = await Client.connectHttp(url, { mode, onElicitation: () => ({ action: 'decline' }) });
    assert.equal(c.era, mode);
    assert.equal((await c.callTool('add', { a: 1, b: 2 })).structuredContent.sum, 3);
    assert.equal((await c.callTool('greet')).content[0].text, 'No name, no greeting.');
    await c.close();
  }
  child.kill('SIGTERM');
  const [code] = await once(child, 'exit');
  assert.equal(code, 0);
});

test('examples/node/conformance-server.mjs answers the fixture contract over HTTP (both eras)', async (t) => {
  const { url } = await startHttp(t, 'conformance-server.mjs', ['--port', '0']);
  for (const mode of ['legacy', 'modern']) {
    const c = await Client.connectHttp(url, {
      mode,
      onElicitation: () => ({ action: 'accept', content: { name: 'Ada', ok: true } }),
    });
    t.after(() => c.close());
    const names = (await c.listTools()).map((x) => x.name);
    for (const n of ['test_simple_text', 'test_missing_capability', 'test_input_required_result_request_state', 'test_header_params']) {
      assert.ok(names.includes(n), n);
    }
    assert.equal((await c.callTool('test_simple_text')).content[0].text, 'This is a simple text response for testing.');
    const err = await c.callTool('test_error_handling');
    assert.equal(err.isError, true);
    assert.equal(err.content[0].text, 'This tool intentionally returns an error for testing');
    assert.equal((await c.callTool('test_input_required_result_request_state')).content[0].text, 'Confirmed with state-ok');
    assert.equal((await c.callTool('test_input_required_result_elicitation')).content[0].text, 'Hello, Ada!');
    const read = await c.readResource('test://template/123/data');
    assert.deepEqual(JSON.parse(read.contents[0].text), { id: '123', templateTest: true, data: 'Data for ID: 123' });
    const done = await c.complete({ type: 'ref/prompt', name: 'test_prompt_with_arguments' }, { name: 'arg1', value: 'park' });
    assert.deepEqual(done.completion.values, ['park']);
  }
});
