// (Outside test/: `node --test` runs the test files, not this one.) A Node MCP server for the tests: `node server.mjs` serves stdio; `node server.mjs --http`
// listens on 127.0.0.1 port 0 and prints its URL on stdout.
import { Server, McpError } from '../lib/index.js';

export function makeServer() {
  const server = new Server({ name: 'node-demo', version: '1.0.0', instructions: 'Test server.' });
  server.tool(
    {
      name: 'echo',
      description: 'Echo the text (async)',
      inputSchema: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] },
    },
    async ({ text }, ctx) => {
      ctx.progress(1, 1);
      ctx.log('info', { echoed: text });
      return text;
    },
  );
  server.tool(
    {
      name: 'add',
      description: 'Add two numbers (sync)',
      inputSchema: { type: 'object', properties: { a: { type: 'number' }, b: { type: 'number' } }, required: ['a', 'b'] },
      outputSchema: { type: 'object', properties: { sum: { type: 'number' } }, required: ['sum'] },
    },
    ({ a, b }) => ({ sum: a + b }),
  );
  server.tool({ name: 'mcp_error', inputSchema: { type: 'object' } }, () => {
    throw new McpError(-32042, 'custom failure', { why: 'test' });
  });
  server.tool({ name: 'crash', inputSchema: { type: 'object' } }, async () => {
    throw new Error('secret internal detail');
  });
  let aborted = 0;
  server.tool({ name: 'wait_abort', inputSchema: { type: 'object' } }, (_args, ctx) =>
    new Promise((resolve) => {
      ctx.signal.addEventListener('abort', () => {
        aborted += 1;
        resolve('aborted');
      });
    }),
  );
  server.tool({ name: 'aborted_count', inputSchema: { type: 'object' } }, () => ({ aborted }));
  server.tool({ name: 'ask_name', inputSchema: { type: 'object' } }, async (_args, ctx) => {
    const r = await ctx.elicit({
      message: 'Your name?',
      requestedSchema: { type: 'object', properties: { name: { type: 'string' } }, required: ['name'] },
    });
    return `Hello, ${r.content.name}!`;
  });
  server.tool({ name: 'era', inputSchema: { type: 'object' } }, (_args, ctx) => ({
    modern: ctx.isModern,
    version: ctx.protocolVersion,
  }));
  server.prompt({ name: 'greet', arguments: [{ name: 'name', required: true }] }, ({ name }) => `Say hello to ${name}.`);
  server.resource({ uri: 'demo://notes/{id}', name: 'note' }, ({ id }) => `note ${id}`);
  server.resource({ uri: 'demo://readme', name: 'readme', mimeType: 'text/markdown' }, () => '# Hi');
  return server;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const server = makeServer();
  if (process.argv.includes('--http')) {
    const h = await server.listenHttp({ host: '127.0.0.1', port: 0 });
    process.stdout.write(`${h.url}\n`);
    process.on('SIGTERM', async () => {
      await h.close();
    });
  } else {
    await server.serveStdio();
  }
}
