// A stdio server for test/dynamic.test.mjs: the tool `grow` adds the tool `grown` to the
// running server, `shrink` removes it again.
import { Server } from '../lib/index.js';

const server = new Server({ name: 'grow', version: '1' });
const OBJ = { type: 'object' };
let grown = null;
server.tool({ name: 'grow', inputSchema: OBJ }, () => {
  grown = server.tool({ name: 'grown', inputSchema: OBJ }, () => 'grown');
  return 'ok';
});
server.tool({ name: 'shrink', inputSchema: OBJ }, () => {
  grown?.remove();
  return 'ok';
});
await server.serveStdio();
