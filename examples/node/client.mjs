// An MCP client on the Node binding of mcpcore: spawns examples/node/server.mjs and drives it
// over stdio (`node client.mjs [legacy|modern|auto]`, default auto, which picks 2026-07-28 when
// the server speaks it). Prints what it does, one line each.
import { fileURLToPath } from 'node:url';
import { Client } from '../../bindings/node/lib/index.js';

const mode = process.argv[2] ?? 'auto';
const server = fileURLToPath(new URL('./server.mjs', import.meta.url));

const client = await Client.connectStdio(process.execPath, [server], {
  mode,
  // Answers the server's elicitation (a real request on legacy, an input_required round on
  // 2026-07-28).
  onElicitation: async (params) => ({ action: 'accept', content: { name: `Ada (asked: ${params.message})` } }),
});
try {
  console.log(`connected: ${client.serverInfo.name} ${client.serverInfo.version}, era ${client.era} (${client.protocolVersion})`);
  console.log(`tools: ${(await client.listTools()).map((t) => t.name).join(', ')}`);
  console.log(`add: ${(await client.callTool('add', { a: 2, b: 40 })).structuredContent.sum}`);
  const steps = [];
  const counted = await client.callTool('count', { n: 3 }, { onProgress: (p, total) => steps.push(`${p}/${total}`) });
  console.log(`count: ${counted.content[0].text} (progress ${steps.join(' ')})`);
  console.log(`greet: ${(await client.callTool('greet')).content[0].text}`);
  const prompt = await client.getPrompt('review', { language: 'Rust' });
  console.log(`prompt: ${prompt.messages[0].content.text}`);
  const note = await client.readResource('notes://7');
  console.log(`resource: ${note.contents[0].text}`);
} finally {
  await client.close();
}
