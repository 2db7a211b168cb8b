// The Node client against the Rust demo-server binary (examples/, built by cargo) in both eras.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Client, McpError } from '../lib/index.js';
import { demoServer } from '../testing/demo-server.mjs';

for (const mode of ['legacy', 'modern']) {
  test(`Rust demo-server over stdio, ${mode} era`, async (t) => {
    const c = await Client.connectStdio(demoServer(), [], { mode });
    t.after(() => c.close());
    assert.equal(c.era, mode);
    assert.equal(c.serverInfo.name, 'mcpcore-demo');
    const names = (await c.listTools()).map((x) => x.name);
    for (const n of ['echo', 'add', 'slow', 'log', 'fail']) assert.ok(names.includes(n), n);
    assert.equal((await c.callTool('echo', { text: 'from node' })).content[0].text, 'from node');
    assert.equal((await c.callTool('add', { a: 1.5, b: 2 })).structuredContent.sum, 3.5);
    const prompt = await c.getPrompt('greet', { name: 'Ada' });
    assert.ok(prompt.messages.length > 0);
    await assert.rejects(c.callTool('fail', {}), (e) => {
      assert.ok(e instanceof McpError);
      assert.equal(e.code, -32603);
      assert.ok(!JSON.stringify(e).includes('hunter2'));
      return true;
    });
  });
}
