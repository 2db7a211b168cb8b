// The feature list of the cross-door parity check (scripts/parity.py), written with the Node
// binding. The same list is written in Rust (server.rs), C (server.c) and Python (server.py);
// the four must answer the same requests identically in both eras. Serves stdio.
import { McpError, Server, ToolError } from '../../bindings/node/lib/index.js';

const NAMES = ['alice', 'albert', 'bob'];
const NO_ARGS = { type: 'object' };

const server = new Server({ name: 'parity', version: '1.0.0' });

server.tool(
  {
    name: 'echo',
    description: 'Echo the text back.',
    inputSchema: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] },
  },
  ({ text }) => text,
);
server.tool(
  {
    name: 'add',
    description: 'Add two numbers.',
    inputSchema: { type: 'object', properties: { a: { type: 'integer' }, b: { type: 'integer' } }, required: ['a', 'b'] },
    outputSchema: { type: 'object', properties: { sum: { type: 'integer' } }, required: ['sum'] },
  },
  ({ a, b }) => ({ sum: a + b }),
);
server.tool({ name: 'blocks', description: 'Two text blocks.', inputSchema: NO_ARGS }, () => [
  { type: 'text', text: 'one' },
  { type: 'text', text: 'two' },
]);
server.tool({ name: 'pixel', description: 'A tiny PNG.', inputSchema: NO_ARGS }, () => [
  { type: 'image', data: Buffer.from([0x89, 0x50, 0x4e, 0x47]).toString('base64'), mimeType: 'image/png' },
]);
server.tool({ name: 'refuse', description: 'Fails as a tool (isError).', inputSchema: NO_ARGS }, () => {
  throw new ToolError('no such item');
});
server.tool({ name: 'broken', description: 'Fails with a JSON-RPC error.', inputSchema: NO_ARGS }, () => {
  throw new McpError(-32000, 'backend unavailable');
});
server.prompt(
  { name: 'greet', description: 'Greet someone.', arguments: [{ name: 'name', description: 'Who to greet', required: true }] },
  ({ name }) => `Hello, ${name}!`,
);
server.resource(
  { uri: 'parity://readme', name: 'readme', description: 'About this server.', mimeType: 'text/plain' },
  () => 'parity fixture',
);
server.completion(({ argument }) => NAMES.filter((n) => n.startsWith(argument.value ?? '')));

await server.serveStdio();
