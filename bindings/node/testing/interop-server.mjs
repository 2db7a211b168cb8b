// (Outside test/.) testing/server.mjs plus a `steps` tool for the TypeScript SDK interop test:
// `node interop-server.mjs` serves stdio; `makeInteropServer()` is the same server in-process.
import { makeServer } from './server.mjs';

/** Wait long enough that what was written so far leaves in its own read on the client's side. */
const settle = () => new Promise((r) => setTimeout(r, 20));

export function makeInteropServer() {
  const server = makeServer();
  // Progress 1..n of n, then `did n`. It pauses after each notification because the 1.x SDK
  // client dispatches notifications a microtask later than responses: a progress notification
  // read in the same chunk as the response would find its handler already gone.
  server.tool(
    {
      name: 'steps',
      inputSchema: { type: 'object', properties: { n: { type: 'integer', minimum: 1, maximum: 10 } }, required: ['n'] },
    },
    async ({ n }, ctx) => {
      for (let i = 1; i <= n; i++) {
        ctx.progress(i, n, `step ${i}`);
        await settle();
      }
      return `did ${n}`;
    },
  );
  return server;
}

if (import.meta.url === `file://${process.argv[1]}`) await makeInteropServer().serveStdio();
