// For test/request-and-spawn.test.mjs: a server whose process must stay alive exactly while it
// serves, with no timer. `stdio`: serves stdin/stdout until EOF, then says so on stderr.
// `http`: listens, prints its URL and the process's active resources on stdout; the tool `stop`
// closes the listener, after which the process must exit by itself.
import { Server } from '../lib/index.js';

const server = new Server({ name: 'keepalive', version: '1' });
server.tool({ name: 'stop', inputSchema: { type: 'object' } }, () => {
  setImmediate(() => server.close().then(() => process.stderr.write('keepalive: closed\n')));
  return 'stopping';
});
if (process.argv[2] === 'http') {
  const h = await server.listenHttp({ port: 0 });
  process.stdout.write(`${JSON.stringify({ url: h.url, resources: process.getActiveResourcesInfo() })}\n`);
} else {
  await server.serveStdio();
  process.stderr.write('keepalive: stdin ended\n');
}
