// (Outside test/: `node --test test/` runs every file there.) Checks shared by the stdio and HTTP tests against testing/server.mjs.
import assert from 'node:assert/strict';
import { McpError } from '../lib/index.js';

export async function checkServer(c, mode) {
  assert.equal(c.era, mode);
  assert.ok(c.protocolVersion);
  if (mode === 'modern') assert.equal(c.protocolVersion, '2026-07-28');

  const tools = await c.listTools();
  assert.deepEqual(
    tools.map((t) => t.name).sort(),
    ['aborted_count', 'add', 'ask_name', 'crash', 'echo', 'era', 'mcp_error', 'wait_abort'],
  );

  // An async handler: a string is one text block.
  const echo = await c.callTool('echo', { text: 'hi' });
  assert.deepEqual(echo.content, [{ type: 'text', text: 'hi' }]);

  // A sync handler: an object is structuredContent.
  const add = await c.callTool('add', { a: 2, b: 3 });
  assert.deepEqual(add.structuredContent, { sum: 5 });

  const era = await c.callTool('era', {});
  assert.equal(era.structuredContent.modern, mode === 'modern');

  // Bad arguments never reach the handler (core's validation).
  const bad = await c.callTool('add', { a: 'x' });
  assert.equal(bad.isError, true);

  // McpError → exactly that JSON-RPC error.
  await assert.rejects(c.callTool('mcp_error', {}), (e) => {
    assert.ok(e instanceof McpError);
    assert.equal(e.code, -32042);
    assert.equal(e.message, 'custom failure');
    assert.deepEqual(e.data, { why: 'test' });
    return true;
  });

  // Any other throw → a generic -32603; the detail is never sent.
  await assert.rejects(c.callTool('crash', {}), (e) => {
    assert.ok(e instanceof McpError);
    assert.equal(e.code, -32603);
    assert.ok(!JSON.stringify([e.message, e.data ?? null]).includes('secret'));
    return true;
  });

  const prompt = await c.getPrompt('greet', { name: 'Ada' });
  assert.deepEqual(prompt.messages, [{ role: 'user', content: { type: 'text', text: 'Say hello to Ada.' } }]);

  const note = await c.readResource('demo://notes/7');
  assert.equal(note.contents[0].text, 'note 7');
  assert.equal(note.contents[0].uri, 'demo://notes/7');

  const readme = await c.readResource('demo://readme');
  assert.equal(readme.contents[0].mimeType, 'text/markdown');

  // Unknown tool: core's error, not the binding's.
  await assert.rejects(c.callTool('nope', {}), (e) => e instanceof McpError);
}
