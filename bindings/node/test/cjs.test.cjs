// The CommonJS entry exports the same classes as the ESM one.
const { test } = require('node:test');
const assert = require('node:assert/strict');

test('require("mcpcore") and import("mcpcore") give the same API', async () => {
  const cjs = require('../lib/index.cjs');
  const esm = await import('../lib/index.js');
  for (const k of ['Server', 'Client', 'McpError', 'McpcoreError', 'Context', 'HttpHandle']) {
    assert.equal(typeof cjs[k], 'function', k);
    assert.equal(cjs[k], esm[k], k);
  }
  const e = new cjs.McpError(-32001, 'm', { d: 1 });
  assert.ok(e instanceof Error);
  assert.deepEqual([e.code, e.message, e.data], [-32001, 'm', { d: 1 }]);
});
