// An MCP server on the TypeScript SDK for the client interop test (tests/tests/client_interop_ts.rs).
// Usage: node ts-server.mjs v1|v2 stdio|http
//   v1 = @modelcontextprotocol/sdk 1.x (legacy era only: initialize handshake, sessionful HTTP)
//   v2 = @modelcontextprotocol/server 2.x (serveStdio / createMcpHandler: modern 2026-07-28 and
//        the legacy era from one factory)
// HTTP mode listens on 127.0.0.1 port 0 and prints `PORT <n>` on stdout.
import http from 'node:http';
import * as z from 'zod';

const [sdk, transport] = process.argv.slice(2);
const INFO = { name: `ts-interop-${sdk}`, version: '1.0.0' };
const INSTRUCTIONS = 'interop fixture';

// ---- the surface, shared by both SDK lines ----
function register(server, era) {
  server.registerTool(
    'add',
    {
      description: 'Adds two numbers',
      inputSchema: z.object({ a: z.number(), b: z.number() }),
      outputSchema: z.object({ sum: z.number() }),
    },
    async ({ a, b }) => ({
      content: [{ type: 'text', text: String(a + b) }],
      structuredContent: { sum: a + b },
    }),
  );
  server.registerTool(
    'work',
    { description: 'Sends progress and a log message, then answers', inputSchema: z.object({ steps: z.number() }) },
    async ({ steps }, ctx) => {
      const token = sdk === 'v1' ? ctx._meta?.progressToken : ctx.mcpReq._meta?.progressToken;
      for (let i = 1; i <= steps; i++) {
        if (token !== undefined) {
          const n = { method: 'notifications/progress', params: { progressToken: token, progress: i, total: steps } };
          if (sdk === 'v1') await ctx.sendNotification(n);
          else await ctx.mcpReq.notify(n);
        }
      }
      if (sdk === 'v1') await server.sendLoggingMessage({ level: 'info', data: 'working' }, ctx.sessionId);
      else await ctx.mcpReq.log('info', 'working');
      return { content: [{ type: 'text', text: `did ${steps}` }] };
    },
  );
  server.registerTool(
    'hang',
    { description: 'Answers only when cancelled', inputSchema: z.object({}) },
    async (_args, ctx) => {
      const signal = sdk === 'v1' ? ctx.signal : ctx.mcpReq.signal;
      await new Promise((resolve) => signal.addEventListener('abort', resolve, { once: true }));
      process.stderr.write('hang: cancelled\n');
      return { content: [{ type: 'text', text: 'cancelled' }] };
    },
  );
  server.registerTool(
    'confirm',
    { description: 'Asks the user (elicitation) and echoes the answer', inputSchema: z.object({ question: z.string() }) },
    async ({ question }, ctx) => {
      const schema = { type: 'object', properties: { ok: { type: 'boolean' } }, required: ['ok'] };
      if (era === 'modern') {
        const got = ctx.mcpReq.inputResponses?.answer;
        if (!got) {
          return v2.inputRequired({
            inputRequests: { answer: v2.inputRequired.elicit({ message: question, requestedSchema: schema }) },
            requestState: 'round-1',
          });
        }
        const state = ctx.mcpReq.requestState();
        return { content: [{ type: 'text', text: `answer=${JSON.stringify(got.content)} state=${state}` }] };
      }
      const r =
        sdk === 'v1'
          ? await server.server.elicitInput({ message: question, requestedSchema: schema })
          : await ctx.mcpReq.elicitInput({ message: question, requestedSchema: schema });
      return { content: [{ type: 'text', text: `answer=${JSON.stringify(r.content)}` }] };
    },
  );
  server.registerTool(
    'poke',
    { description: 'Announces a tool list change (to listen streams on the modern era)', inputSchema: z.object({}) },
    async () => {
      if (handler) handler.notify.toolsChanged();
      else server.sendToolListChanged();
      return { content: [{ type: 'text', text: 'poked' }] };
    },
  );
  server.registerPrompt(
    'greet',
    {
      description: 'Greets someone',
      // 1.x takes a raw shape for prompt arguments; 2.x a schema object.
      argsSchema: sdk === 'v1' ? { name: z.string() } : z.object({ name: z.string() }),
    },
    ({ name }) => ({ messages: [{ role: 'user', content: { type: 'text', text: `Hello ${name}` } }] }),
  );
  server.registerResource('readme', 'demo://readme', { mimeType: 'text/plain' }, async (uri) => ({
    contents: [{ uri: uri.href, mimeType: 'text/plain', text: 'readme text' }],
  }));
}

let v2;
let handler; // the HTTP entry (v2), whose bus feeds listen streams
function makeV2(ctx) {
  const server = new v2.McpServer(INFO, { capabilities: { logging: {} }, instructions: INSTRUCTIONS });
  register(server, ctx?.era ?? 'legacy');
  return server;
}

async function v1Server() {
  const { McpServer } = await import('@modelcontextprotocol/sdk/server/mcp.js');
  const server = new McpServer(INFO, { capabilities: { logging: {} }, instructions: INSTRUCTIONS });
  register(server, 'legacy');
  return server;
}

async function body(req) {
  const chunks = [];
  for await (const c of req) chunks.push(c);
  return Buffer.concat(chunks);
}

function listen(srv) {
  srv.listen(0, '127.0.0.1', () => {
    process.stdout.write(`PORT ${srv.address().port}\n`);
  });
  process.stdin.on('end', () => process.exit(0));
  process.stdin.resume();
}

if (sdk === 'v2') {
  v2 = await import('@modelcontextprotocol/server');
  if (transport === 'stdio') {
    const { serveStdio } = await import('@modelcontextprotocol/server/stdio');
    serveStdio(makeV2);
  } else {
    handler = v2.createMcpHandler(makeV2);
    // A minimal node:http adapter for the web-standard handler; a client closing the response
    // aborts the request (the modern cancellation).
    listen(
      http.createServer(async (req, res) => {
        const headers = new Headers();
        for (const [k, v] of Object.entries(req.headers)) {
          if (Array.isArray(v)) v.forEach((x) => headers.append(k, x));
          else if (v !== undefined) headers.set(k, v);
        }
        const ac = new AbortController();
        res.on('close', () => ac.abort());
        const hasBody = !['GET', 'HEAD', 'DELETE'].includes(req.method);
        const request = new Request(`http://${req.headers.host}${req.url}`, {
          method: req.method,
          headers,
          body: hasBody ? await body(req) : undefined,
          signal: ac.signal,
        });
        let response;
        try {
          response = await handler.fetch(request);
        } catch (e) {
          res.writeHead(500).end(String(e));
          return;
        }
        res.writeHead(response.status, Object.fromEntries(response.headers));
        if (response.body) {
          const reader = response.body.getReader();
          ac.signal.addEventListener('abort', () => reader.cancel().catch(() => {}), { once: true });
          try {
            for (;;) {
              const { done, value } = await reader.read();
              if (done) break;
              res.write(value);
            }
          } catch {}
        }
        res.end();
      }),
    );
  }
} else {
  if (transport === 'stdio') {
    const { StdioServerTransport } = await import('@modelcontextprotocol/sdk/server/stdio.js');
    await (await v1Server()).connect(new StdioServerTransport());
  } else {
    const { StreamableHTTPServerTransport } = await import('@modelcontextprotocol/sdk/server/streamableHttp.js');
    const { isInitializeRequest } = await import('@modelcontextprotocol/sdk/types.js');
    const { randomUUID } = await import('node:crypto');
    const sessions = new Map();
    listen(
      http.createServer(async (req, res) => {
        const sid = req.headers['mcp-session-id'];
        const parsed = req.method === 'POST' ? JSON.parse((await body(req)).toString() || 'null') : undefined;
        let t = sid ? sessions.get(sid) : undefined;
        if (!t && req.method === 'POST' && !sid && isInitializeRequest(parsed)) {
          t = new StreamableHTTPServerTransport({
            sessionIdGenerator: () => randomUUID(),
            onsessioninitialized: (id) => sessions.set(id, t),
          });
          t.onclose = () => t.sessionId && sessions.delete(t.sessionId);
          await (await v1Server()).connect(t);
        }
        if (!t) {
          res.writeHead(sid ? 404 : 400, { 'content-type': 'application/json' });
          res.end(JSON.stringify({ jsonrpc: '2.0', id: null, error: { code: -32000, message: sid ? 'Session not found' : 'Bad Request: No valid session ID provided' } }));
          return;
        }
        await t.handleRequest(req, res, parsed);
      }),
    );
  }
}
