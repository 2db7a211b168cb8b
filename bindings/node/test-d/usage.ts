// Type-level usage of the public declarations (lib/index.d.ts), checked by test/types.test.mjs
// with `tsc --noEmit --strict`; never run. Not under test/: node --test on Node 22 (type
// stripping) would load every .ts file there as a test file.
import {
  Client,
  Context,
  HttpHandle,
  McpError,
  McpcoreError,
  Server,
  Task,
  type CallOptions,
  type ConnectOptions,
  type FetchHandler,
  type NodeHandler,
  type NodeHttpRequest,
  type NodeHttpResponse,
  type Json,
  type RegisteredTool,
  type RegisteredPrompt,
  type RegisteredResource,
  type RegisteredResourceTemplate,
  type ToolDefinition,
  audio,
  configureTelemetry,
  flushTelemetry,
  image,
  onLog,
  type LogRecord,
} from 'mcpcore';

export async function serve(): Promise<HttpHandle> {
  const server = new Server({ name: 'typed', version: '1.0.0', instructions: 'x', options: { limits: { maxInflight: 8 } } });
  const def: ToolDefinition = {
    name: 'add',
    inputSchema: { type: 'object', properties: { a: { type: 'number' } } },
    outputSchema: { type: 'object' },
  };
  server
    .tool(def, ({ a, b }: { a: number; b: number }) => ({ sum: a + b }))
    .tool({ name: 'echo', inputSchema: { type: 'object' } }, async (args, ctx: Context) => {
      const signal: AbortSignal = ctx.signal;
      const sent: boolean = ctx.progress(1, 2, 'half');
      ctx.log('info', { signal: signal.aborted, sent });
      const modern: boolean = ctx.isModern;
      const version: string | null = ctx.protocolVersion;
      const name: string | null = ctx.name;
      const answer = await ctx.elicit({ message: 'ok?', requestedSchema: { type: 'object' } });
      if (!modern) throw new McpError(-32000, `${ctx.method} ${name} ${version}`, { answer });
      return String(args.text);
    })
    .tool({ name: 'none', inputSchema: {} }, () => undefined)
    .tool({ name: 'blocks', inputSchema: {} }, () => [{ type: 'text', text: 'look:' }, { type: 'image', data: 'AAEC', mimeType: 'image/png' }]);
  server.prompt({ name: 'greet', arguments: [{ name: 'who', required: true }] }, ({ who }) => [`hi ${who}`]);
  server.resource({ uri: 'demo://{id}', name: 'item' }, ({ id }) => new TextEncoder().encode(id));
  server.resource({ uri: 'demo://readme', name: 'readme', mimeType: 'text/plain' }, () => 'text');
  const n: number = server.notifyToolsListChanged();
  const h = await server.listenHttp({ host: '127.0.0.1', port: n });
  const url: string = h.url;
  const port: number = h.port;
  void [url, port];
  // A wrong log level, a handler returning a number, a definition without inputSchema: refused.
  server.tool({ name: 'bad', inputSchema: {} }, (_a, ctx) => {
    // @ts-expect-error not a LogLevel
    ctx.log('loud', 1);
    return 'x';
  });
  // @ts-expect-error a tool returns a string, an object or nothing
  server.tool({ name: 'num', inputSchema: {} }, () => 42);
  // @ts-expect-error inputSchema is required
  server.tool({ name: 'noschema' }, () => 'x');
  // @ts-expect-error name and version are required
  new Server({ name: 'x' });
  return h;
}

export async function call(url: string): Promise<Json> {
  const opts: ConnectOptions = {
    mode: 'modern',
    onElicitation: async (p) => ({ action: 'accept', content: { got: p.message } }),
    onNotification: (method: string, params) => void [method, params],
  };
  const c = await Client.connectHttp(url, { ...opts, headers: { authorization: 'Bearer x' } });
  const s = await Client.connectStdio('node', ['server.mjs'], { mode: 'legacy' });
  const era: 'legacy' | 'modern' | null = c.era;
  const tools: ToolDefinition[] = await c.listTools();
  const callOpts: CallOptions = {
    timeout: 1000,
    signal: AbortSignal.timeout(10),
    onProgress: (p: number, total: number | null, message: string | null) => void [p, total, message],
  };
  try {
    const r = await c.callTool(tools[0]?.name ?? 'echo', { text: era }, callOpts);
    await c.getPrompt('greet', { who: 'x' });
    await c.readResource('demo://1');
    return r.structuredContent as Json;
  } catch (e) {
    if (e instanceof McpError) return { code: e.code, data: e.data ?? null };
    if (e instanceof McpcoreError) return e.code;
    throw e;
  } finally {
    // @ts-expect-error an unknown connect mode
    await Client.connectHttp(url, { mode: 'newest' }).catch(() => null);
    const onAuthorize = async (u: string): Promise<string> => `${u}#redirected`;
    await Client.connectHttp(url, { http: { auth: { clientId: 'c' } }, onAuthorize }).catch(() => null);
    // @ts-expect-error onAuthorize resolves to the redirect URL string
    await Client.connectHttp(url, { onAuthorize: async (u: string) => u.length }).catch(() => null);
    await c.close();
    await s.close();
  }
}

export async function tasks(url: string): Promise<string> {
  const server = new Server({ name: 'jobs', version: '1.0.0', tasks: { pollIntervalMs: 100 } });
  server.tool({ name: 'job', inputSchema: { type: 'object' }, taskSupport: 'optional' }, (_a, ctx: Context) => ctx.taskId ?? 'none');
  // @ts-expect-error taskSupport is one of three names
  server.tool({ name: 'bad', inputSchema: { type: 'object' }, taskSupport: 'sometimes' }, () => 'x');
  const c = await Client.connectHttp(url);
  const t = await c.callToolAsTask('job', {}, { ttl: 1000 });
  if (t instanceof Task) {
    const got: Task = await c.getTask(t.taskId);
    const cancelled: Task | null = await c.cancelTask(got.taskId);
    const done = await c.waitTask(t.taskId, { timeout: 1000, followPushes: true });
    await c.updateTask(t.taskId, { k: { action: 'accept' } });
    return `${done.status} ${cancelled?.status ?? ''}`;
  }
  const r = await c.callToolToCompletion('job', {}, { ttl: 10, timeout: 100 });
  return JSON.stringify(r);
}

export async function dynamic(): Promise<string | null> {
  const server = new Server({ name: 'live', version: '1.0.0', dynamic: true });
  const echo: RegisteredTool = server.tool({ name: 'echo', inputSchema: { type: 'object' } }, (_a, ctx: Context) => {
    const id: number | string = ctx.requestId;
    const tenant: string | undefined = ctx.headers?.['x-tenant'];
    return { id, tenant: tenant ?? null, meta: ctx.meta };
  });
  const kind: 'tool' = echo.kind;
  const on: boolean = echo.enabled;
  echo.disable();
  echo.enable();
  echo.update({ description: 'new' }, () => [image(new Uint8Array([1]), 'image/png'), audio(new Uint8Array([2]))]);
  echo.update(null);
  // @ts-expect-error a tool's name is a string
  echo.update({ name: 1 });
  const p: RegisteredPrompt = server.prompt({ name: 'p' }, () => 'hi');
  const t: RegisteredResourceTemplate = server.resourceTemplate({ uriTemplate: 'x://{id}', name: 'x' }, ({ id }) => id);
  const r: RegisteredResource = server.resource({ uri: 'x://readme', name: 'r' }, () => 'text');
  const rt: RegisteredResourceTemplate = server.resource({ uri: 'x://notes/{id}', name: 'n' }, ({ id }) => id);
  // @ts-expect-error a template URI registers a template
  const wrong: RegisteredResource = server.resource({ uri: 'x://other/{id}', name: 'o' }, () => 'x');
  p.remove();
  t.remove();
  void [r, rt, wrong];
  // Chaining still works: a handle forwards the registration and serving methods.
  const h = await echo.tool({ name: 'two', inputSchema: {} }, () => 'x').listenHttp({ port: 0 });
  const c = await Client.connectStdio('node', ['server.mjs'], { env: { A: 'b' }, envClear: true, cwd: '/tmp', stderr: 'capture' });
  // @ts-expect-error stderr is inherit, null or capture
  await Client.connectStdio('node', [], { stderr: 'loud' }).catch(() => null);
  const err: string | null = c.capturedStderr();
  await h.close();
  return `${kind}${on}${err}`;
}

export async function embed(req: NodeHttpRequest, res: NodeHttpResponse, input: ReadableStream<Uint8Array>, output: WritableStream<Uint8Array>): Promise<string | null> {
  const server = new Server({ name: 'embedded', version: '1.0.0' });
  const handle = server.tool({ name: 'echo', inputSchema: {} }, () => 'x');
  const node: NodeHandler = server.nodeHandler({ options: { allowedOrigins: ['http://app.example'] } });
  await node(req, res);
  await node(req, res, { jsonrpc: '2.0' });
  const forwarded: NodeHandler = handle.nodeHandler();
  const fetchIt: FetchHandler = server.fetchHandler();
  const answer: Response = await fetchIt(new Request('http://127.0.0.1/mcp', { method: 'POST', body: '{}' }));
  // @ts-expect-error options is core's HttpOptions object
  server.nodeHandler({ options: 'strict' });
  // @ts-expect-error a fetch handler takes a Request
  await fetchIt('http://127.0.0.1/mcp');
  const served: Promise<void> = server.serveStreams(input, output);
  // @ts-expect-error serveStreams needs byte streams
  server.serveStreams('in', 'out');
  const c: Client = await Client.connectInMemory(server, { mode: 'modern' });
  // @ts-expect-error connectInMemory takes a Server
  await Client.connectInMemory({ name: 'not a server' });
  // @ts-expect-error mode is auto, legacy or modern
  await Client.connectInMemory(server, { mode: 'sideways' });
  await served;
  void [forwarded, answer];
  return c.era;
}

export async function telemetry(): Promise<boolean> {
  configureTelemetry({ otlp: { endpoint: 'http://127.0.0.1:4318' }, level: 'info' });
  // @ts-expect-error level is one of the tracing levels
  configureTelemetry({ level: 'loud' });
  const server = new Server({ name: 'observed', version: '1.0.0', options: { metrics: true } });
  server.tool({ name: 'trace', inputSchema: { type: 'object' } }, (_a, ctx: Context) => {
    const tp: string | undefined = ctx.traceContext?.traceparent;
    return tp ?? '';
  });
  const text: string = server.metrics();
  const records: LogRecord[] = [];
  const remove: () => void = onLog((r) => records.push(r), { level: 'debug' });
  // @ts-expect-error level is one of the tracing levels or "off"
  onLog(() => {}, { level: 'loud' });
  onLog(null);
  remove();
  return text.length > 0 && (await flushTelemetry(1000));
}

