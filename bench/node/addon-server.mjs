// Benchmark server (scripts/bench-node.sh): one `echo {text}` tool, a JavaScript handler, served
// by the mcpcore Node addon. `node addon-server.mjs stdio` serves stdin/stdout;
// `node addon-server.mjs http` listens on 127.0.0.1 port 0 and prints `URL http://…/mcp` on stderr.
// MCPCORE_NODE_PKG names the package directory to load (the release build the script prepared).
import { pathToFileURL } from 'node:url';
import { join } from 'node:path';

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
} else {
  await server.serveStdio();
}
