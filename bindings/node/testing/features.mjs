// (Outside test/: `node --test` runs the test files, not this one.) A Node MCP server exercising
// the binding's fuller surface: completion, list/resource notifications, Standard Schema (zod)
// tools, the context's client requests and explicit input_required answers. `node features.mjs`
// serves stdio; `--http` listens on 127.0.0.1 port 0 and prints its URL on stdout.
import { z } from 'zod';
import { Server, McpError, inputRequired } from '../lib/index.js';

export function makeFeatureServer() {
  const server = new Server({ name: 'node-features', version: '2.0.0', options: { pageSize: 2 } });
  for (const n of ['t1', 't2', 't3']) {
    server.tool({ name: n, inputSchema: { type: 'object' } }, () => n);
  }
  server.tool(
    {
      name: 'zod_add',
      description: 'Adds two numbers; zod validates (a must not be 13)',
      inputSchema: z.object({ a: z.number().refine((v) => v !== 13, 'a must not be 13'), b: z.number().default(1) }),
      outputSchema: z.object({ sum: z.number() }),
    },
    ({ a, b }) => ({ sum: a + b }),
  );
  // A list of content blocks is the result's content (core's tool shaping).
  server.tool({ name: 'blocks', inputSchema: { type: 'object' } }, () => [
    { type: 'text', text: 'look:' },
    { type: 'image', data: 'AAEC', mimeType: 'image/png' },
  ]);
  server.tool({ name: 'who', inputSchema: { type: 'object' } }, (_a, ctx) => ({ client: ctx.clientInfo?.name ?? null }));
  server.tool({ name: 'need_sampling', inputSchema: { type: 'object' } }, (_a, ctx) => {
    ctx.requireClientCapability('sampling');
    return 'has sampling';
  });
  server.tool({ name: 'sample', inputSchema: { type: 'object' } }, async (_a, ctx) => {
    const r = await ctx.sample({ messages: [{ role: 'user', content: { type: 'text', text: 'Capital of France?' } }], maxTokens: 10 });
    return `sampled: ${r.content.text}`;
  });
  server.tool({ name: 'roots', inputSchema: { type: 'object' } }, async (_a, ctx) => {
    const r = await ctx.listRoots(); // an array, as Python's list_roots(); .roots is the old shape
    return `roots: ${r.map((x) => x.uri).join(',')}${r.roots === r ? '' : ' (no .roots)'}`;
  });
  // An explicit input_required answer with its own key and state (SEP-2322).
  server.tool({ name: 'confirm', inputSchema: { type: 'object' } }, (_a, ctx) => {
    const answer = ctx.inputResponses?.ok_key;
    if (answer?.action === 'accept' && ctx.requestState === 'step-1') return `confirmed: ${answer.content.ok}`;
    return inputRequired(
      { ok_key: { method: 'elicitation/create', params: { message: 'OK?', requestedSchema: { type: 'object', properties: { ok: { type: 'boolean' } }, required: ['ok'] } } } },
      { requestState: 'step-1' },
    );
  });
  server.tool({ name: 'bad_input_required', inputSchema: { type: 'object' } }, (_a, ctx) => ctx.inputRequired('nope'));
  server.tool({ name: 'announce', inputSchema: { type: 'object', properties: { what: { type: 'string' } } } }, ({ what }) => {
    const n =
      what === 'prompts' ? server.notifyPromptsListChanged()
      : what === 'resources' ? server.notifyResourcesListChanged()
      : what === 'tools' ? server.notifyToolsListChanged()
      : server.notifyResourceUpdated(what);
    return { told: n };
  });
  // Legacy Streamable HTTP: the response stream closes mid-call; core's client resumes it with
  // Last-Event-ID and still gets the result (LHTTP-04). Elsewhere nothing to close.
  server.tool({ name: 'close_stream', inputSchema: { type: 'object' } }, async (_a, ctx) => {
    await new Promise((r) => setTimeout(r, 20));
    const closed = ctx.closeSseStream();
    await new Promise((r) => setTimeout(r, 50));
    return { closed };
  });
  server.prompt({ name: 'city', arguments: [{ name: 'name', required: true }] }, ({ name }) => `About ${name}`);
  server.resource({ uri: 'mem://watched', name: 'watched' }, () => 'watched content');
  server.completion(({ ref, argument, context }) => {
    if (ref.type === 'ref/prompt' && ref.name === 'city' && argument.name === 'name') {
      const all = ['Paris', 'Parma', 'Porto', 'Prague'];
      // Over CompleteResult's 100 values: core sends the first 100, with total and hasMore.
      if (argument.value === 'many') return Array.from({ length: 150 }, (_, i) => `many${i}`);
      if (context?.arguments?.country === 'it') return ['Parma'];
      return all.filter((c) => c.toLowerCase().startsWith(argument.value.toLowerCase()));
    }
    if (ref.type === 'ref/resource') return { completion: { values: ['whole'], total: 1, hasMore: false } };
    throw new McpError(-32602, `nothing to complete for ${argument.name}`);
  });
  return server;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const server = makeFeatureServer();
  if (process.argv.includes('--http')) {
    const h = await server.listenHttp({ host: '127.0.0.1', port: 0 });
    console.log(h.url);
    process.on('SIGTERM', () => h.close());
  } else {
    await server.serveStdio();
  }
}
