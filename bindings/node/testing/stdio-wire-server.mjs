// (Outside test/: run by test/stdio-wire.test.mjs.) A stdio server whose core options come from
// the MCPCORE_TEST_OPTIONS environment variable (JSON), with one synchronous and one async tool.
import { Server } from '../lib/index.js';

const options = process.env.MCPCORE_TEST_OPTIONS ? JSON.parse(process.env.MCPCORE_TEST_OPTIONS) : undefined;
const server = new Server({ name: 'wire', version: '1.0.0', options });
server.tool({ name: 'add', inputSchema: { type: 'object' } }, ({ a, b }, ctx) => {
  ctx.progress(1, 1);
  return { sum: a + b };
});
server.tool({ name: 'later', inputSchema: { type: 'object' } }, async ({ ms }, ctx) => {
  await new Promise((r) => setTimeout(r, ms));
  ctx.progress(1, 1);
  return 'done';
});
await server.serveStdio();
