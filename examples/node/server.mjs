// An MCP server on the Node binding of mcpcore, serving both protocol eras (2025-11-25 sessions
// and 2026-07-28 stateless requests). `node server.mjs` serves stdio; `node server.mjs --http
// PORT` serves Streamable HTTP at http://127.0.0.1:PORT/mcp (PORT 0 picks a free port; the URL
// is printed on stderr). examples/node/client.mjs drives it.
import { Server, McpError } from '../../bindings/node/lib/index.js';

const server = new Server({ name: 'node-example', version: '1.0.0', instructions: 'Tools to add numbers, count slowly and greet.' });

// A plain tool: the object it returns is `structuredContent` (checked against `outputSchema`).
server.tool(
  {
    name: 'add',
    description: 'Add two numbers',
    inputSchema: { type: 'object', properties: { a: { type: 'number' }, b: { type: 'number' } }, required: ['a', 'b'] },
    outputSchema: { type: 'object', properties: { sum: { type: 'number' } }, required: ['sum'] },
  },
  ({ a, b }) => ({ sum: a + b }),
);

// Progress: reported against the caller's progress token; `ctx.signal` aborts on cancellation.
server.tool(
  {
    name: 'count',
    description: 'Count to n slowly, reporting progress',
    inputSchema: { type: 'object', properties: { n: { type: 'integer', minimum: 1, maximum: 100 } }, required: ['n'] },
  },
  async ({ n }, ctx) => {
    for (let i = 1; i <= n; i++) {
      if (ctx.signal.aborted) throw new McpError(-32800, 'cancelled');
      await new Promise((r) => setTimeout(r, 10));
      ctx.progress(i, n, `counted ${i}`);
    }
    return `counted to ${n}`;
  },
);

// Elicitation: a server→client request on a legacy session, an input_required round on
// 2026-07-28; the handler reads the same either way.
server.tool(
  { name: 'greet', description: 'Ask the user for their name, then greet them', inputSchema: { type: 'object' } },
  async (_args, ctx) => {
    const r = await ctx.elicit({
      message: 'What is your name?',
      requestedSchema: { type: 'object', properties: { name: { type: 'string' } }, required: ['name'] },
    });
    if (r.action !== 'accept') return 'No name, no greeting.';
    return `Hello, ${r.content.name}!`;
  },
);

server.prompt(
  { name: 'review', description: 'Ask for a code review', arguments: [{ name: 'language', required: true }] },
  ({ language }) => `Please review this ${language} code for bugs.`,
);

// A resource template: the handler gets the URI's variables.
server.resource(
  { uri: 'notes://{id}', name: 'note', description: 'A note by id', mimeType: 'text/plain' },
  ({ id }) => `This is note ${id}.`,
);

const i = process.argv.indexOf('--http');
if (i >= 0) {
  const port = Number(process.argv[i + 1] ?? 0);
  if (!Number.isInteger(port) || port < 0 || port > 65535) {
    console.error('usage: node server.mjs [--http PORT]');
    process.exit(2);
  }
  const h = await server.listenHttp({ host: '127.0.0.1', port });
  console.error(`listening on ${h.url}`);
  process.once('SIGTERM', () => h.close());
  process.once('SIGINT', () => h.close());
} else {
  await server.serveStdio();
}
