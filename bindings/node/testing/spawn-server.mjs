// A stdio server for test/request-and-spawn.test.mjs: reports its environment and working
// directory (spawn options), what its handlers see of the request (context), and writes a line
// to stderr at start (captured stderr).
import { Server } from '../lib/index.js';

process.stderr.write('spawn-server: started\n');
const server = new Server({ name: 'spawn', version: '1' });
const obj = { type: 'object' };
server.tool({ name: 'env', inputSchema: obj }, () => ({
  foo: process.env.FOO ?? null,
  path: process.env.PATH ?? null,
  cwd: process.cwd(),
}));
server.tool({ name: 'whoami', inputSchema: obj }, (_args, ctx) => ({
  requestId: ctx.requestId,
  meta: ctx.meta,
  headers: ctx.headers,
}));
await server.serveStdio();
