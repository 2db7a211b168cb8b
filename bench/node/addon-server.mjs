// Benchmark server (scripts/bench-node.sh): one `echo {text}` tool, a JavaScript handler, served
// by the mcpcore Node addon. `node addon-server.mjs stdio` serves stdin/stdout;
// `node addon-server.mjs http` listens on 127.0.0.1 port 0 and prints `URL http://…/mcp` on stderr;
// `node addon-server.mjs express` does the same with the endpoint mounted at `/mcp` of an Express
// app (`nodeHandler()`; express resolved from bindings/node's devDependencies).
// MCPCORE_NODE_PKG names the package directory to load (the release build the script prepared).
import { pathToFileURL } from 'node:url';
import { join } from 'node:path';
import { createRequire } from 'node:module';

const pkg = process.env.MCPCORE_NODE_PKG;
if (!pkg) throw new Error('MCPCORE_NODE_PKG is not set');
const { Server } = await import(pathToFileURL(join(pkg, 'lib', 'index.js')).href);

// BENCH_OPTIONS: core's ServerOptions JSON (e.g. '{"limits":{"stdioIdleSpinUs":0}}'), to compare.
const options = process.env.BENCH_OPTIONS ? JSON.parse(process.env.BENCH_OPTIONS) : undefined;
const server = new Server({ name: 'bench-addon', version: '1.0.0', options });
server.tool(
  {
    name: 'echo',
    description: 'Echo the text',
    inputSchema: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] },
  },
  ({ text }) => text,
);

if (process.argv[2] === 'http') {
  const h = await server.listenHttp({ host: '127.0.0.1', port: 0 });
  process.stderr.write(`URL ${h.url}\n`);
  process.on('SIGTERM', () => h.close().then(() => process.exit(0)));
} else if (process.argv[2] === 'express') {
  const express = createRequire(new URL('../../bindings/node/package.json', import.meta.url))('express');
  const app = express();
  const handler = server.nodeHandler();
  // `express bare`: no MCP at all, a route answering the echo result as is (what Express
  // alone costs per request: the ceiling of any mount in it).
  const bare = `{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"ping"}]}}`;
  if (process.argv[3] === 'bare') app.post('/mcp', express.json(), (_req, res) => res.type('json').send(bare));
  else app.all('/mcp', (req, res) => handler(req, res));
  const srv = app.listen(0, '127.0.0.1', () => process.stderr.write(`URL http://127.0.0.1:${srv.address().port}/mcp\n`));
  srv.keepAliveTimeout = 60_000;
  process.on('SIGTERM', () => process.exit(0));
} else {
  await server.serveStdio();
}
