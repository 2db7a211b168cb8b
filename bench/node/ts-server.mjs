// Benchmark peer (scripts/bench-node.sh): the same `echo {text}` tool on the official TypeScript
// SDK v2 (`@modelcontextprotocol/server`), run from the peers install the script prepares
// (this file is copied there so it resolves the SDK). `node ts-server.mjs stdio` uses the SDK's
// `serveStdio`; `node ts-server.mjs http` its stateless per-request handler (`createMcpHandler`,
// JSON responses) behind the SDK's Node adapter (`@modelcontextprotocol/node` `toNodeHandler`),
// on 127.0.0.1 port 0, printing `URL http://…/mcp` on stderr.
import http from 'node:http';
import { pathToFileURL } from 'node:url';
import * as z from 'zod';
import { McpServer, createMcpHandler } from '@modelcontextprotocol/server';

/** The benchmark's server (bench/node/ts-express.mjs builds the same one). */
export function factory() {
  const server = new McpServer({ name: 'bench-ts', version: '1.0.0' });
  server.registerTool(
    'echo',
    { description: 'Echo the text', inputSchema: z.object({ text: z.string() }) },
    async ({ text }) => ({ content: [{ type: 'text', text }] }),
  );
  return server;
}

// Run as the script (not when ts-express.mjs imports `factory`).
if (import.meta.url === pathToFileURL(process.argv[1]).href) {
  if (process.argv[2] === 'http') {
    const { toNodeHandler } = await import('@modelcontextprotocol/node');
    const handle = toNodeHandler(createMcpHandler(factory, { responseMode: 'json' }));
    const srv = http.createServer((req, res) => {
      if (new URL(req.url, 'http://x').pathname !== '/mcp') return res.writeHead(404).end();
      handle(req, res);
    });
    srv.keepAliveTimeout = 60_000;
    srv.listen(0, '127.0.0.1', () => process.stderr.write(`URL http://127.0.0.1:${srv.address().port}/mcp\n`));
    process.on('SIGTERM', () => process.exit(0));
  } else {
    const { serveStdio } = await import('@modelcontextprotocol/server/stdio');
    serveStdio(factory);
  }
}
