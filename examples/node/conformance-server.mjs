// conformance-server.mjs: the fixture the official MCP conformance suite runs against
// (shared/conformance/FIXTURE.md), on the Node binding. It mirrors the Rust fixture
// (examples/conformance/fixture.rs + examples/conformance_server.rs) tool by tool: same names,
// texts, schemas, input_required keys and states. Usage: `node conformance-server.mjs --port N`
// (Streamable HTTP at http://127.0.0.1:N/mcp; `--port 0` picks a free port), `--express --port N`
// (the same endpoint mounted with `nodeHandler()` at `/mcp` of an Express app, express resolved
// from bindings/node's devDependencies), or `--stdio`.
import { Server, ToolError, inputRequired, rawResult } from '../../bindings/node/lib/index.js';
import { taskTools } from './conformance-tasks.mjs';
import { createRequire } from 'node:module';
import { once } from 'node:events';

/** 1×1 transparent PNG. */
const PNG_1X1 = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAQAAAC1HAwCAAAAC0lEQVR42mNkYAAAAAYAAjCB0C8AAAAASUVORK5CYII=';
/** A tiny WAV (RIFF header, no samples). */
const WAV_EMPTY = 'UklGRiQAAABXQVZFZm10IBAAAAABAAEAQB8AAIA+AAACABAAZGF0YQAAAAA=';

const noArgs = () => ({ type: 'object', properties: {} });
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const text = (t) => rawResult({ content: [{ type: 'text', text: t }] });
const userText = (t) => ({ role: 'user', content: { type: 'text', text: t } });

function elicitReq(message, properties, required) {
  return { method: 'elicitation/create', params: { mode: 'form', message, requestedSchema: { type: 'object', properties, required } } };
}

function samplingReq(prompt, maxTokens) {
  return { method: 'sampling/createMessage', params: { messages: [userText(prompt)], maxTokens } };
}

const rootsReq = () => ({ method: 'roots/list', params: {} });

/** An answered elicitation under `key` with `accept` and an object `content`. */
function acceptedContent(ctx, key) {
  const r = ctx.inputResponses?.[key];
  if (r?.action !== 'accept') return undefined;
  const c = r.content;
  return c !== null && typeof c === 'object' && !Array.isArray(c) ? c : undefined;
}

function sampledText(ctx, key) {
  const c = ctx.inputResponses?.[key]?.content;
  const t = c?.text ?? (Array.isArray(c) ? c[0]?.text : undefined);
  return typeof t === 'string' ? t : undefined;
}

function rootsCount(ctx, key) {
  const roots = ctx.inputResponses?.[key]?.roots;
  return Array.isArray(roots) ? roots.length : undefined;
}

/** Rust's `Value` Display of an optional JSON value (`null` when absent). */
const show = (v) => JSON.stringify(v ?? null);

/** Registers a tool with a description (no arguments unless `inputSchema` says otherwise). */
const toolOf = (s) => (name, description, fn, inputSchema = noArgs()) => s.tool({ name, description, inputSchema }, fn);

function contentTools(s) {
  const plain = toolOf(s);
  plain('test_simple_text', 'Returns simple text', () => text('This is a simple text response for testing.'));
  plain('test_image_content', 'Returns an image', () => rawResult({ content: [{ type: 'image', data: PNG_1X1, mimeType: 'image/png' }] }));
  plain('test_audio_content', 'Returns audio', () => rawResult({ content: [{ type: 'audio', data: WAV_EMPTY, mimeType: 'audio/wav' }] }));
  plain('test_embedded_resource', 'Returns an embedded resource', () => rawResult({
    content: [{ type: 'resource', resource: { uri: 'test://embedded-resource', mimeType: 'text/plain', text: 'This is an embedded resource content.' } }],
  }));
  plain('test_multiple_content_types', 'Returns text, image and resource', () => rawResult({
    content: [
      { type: 'text', text: 'Multiple content types test:' },
      { type: 'image', data: PNG_1X1, mimeType: 'image/png' },
      { type: 'resource', resource: { uri: 'test://mixed-content-resource', mimeType: 'application/json', text: '{"test":"data","value":123}' } },
    ],
  }));
  plain('test_tool_with_logging', 'Logs during execution', async (_a, ctx) => {
    const msgs = ['Tool execution started', 'Tool processing data', 'Tool execution completed'];
    for (const [i, m] of msgs.entries()) {
      if (i > 0) await sleep(50);
      ctx.log('info', m, 'conformance');
    }
    return text('Tool with logging executed successfully');
  });
  plain('test_tool_with_progress', 'Reports progress', async (_a, ctx) => {
    for (const [i, p] of [0, 50, 100].entries()) {
      if (i > 0) await sleep(50);
      ctx.progress(p, 100, 'progress');
    }
    return text('Tool with progress executed successfully');
  });
  plain('test_error_handling', 'Returns an error result', () => {
    throw new ToolError('This tool intentionally returns an error for testing');
  });
}

/** The legacy tools that ask the client (server→client requests on a session). */
function clientRequestTools(s) {
  const plain = toolOf(s);
  plain(
    'test_sampling',
    "Asks the client's LLM",
    async ({ prompt }, ctx) => {
      const r = await ctx.sample({ messages: [userText(prompt ?? '')], maxTokens: 100 });
      return text(`LLM response: ${r?.content?.text ?? ''}`);
    },
    { type: 'object', properties: { prompt: { type: 'string' } }, required: ['prompt'] },
  );
  plain(
    'test_elicitation',
    'Asks the user',
    async ({ message }, ctx) => {
      const r = await ctx.elicit({
        message: message ?? '',
        requestedSchema: { type: 'object', properties: { response: { type: 'string', description: "User's response" } }, required: ['response'] },
      });
      return text(`User response: action=${r.action ?? '?'}, content=${show(r.content)}`);
    },
    { type: 'object', properties: { message: { type: 'string' } }, required: ['message'] },
  );
  plain('test_elicitation_sep1034_defaults', 'Elicits a form with defaults', async (_a, ctx) => {
    const r = await ctx.elicit({
      message: 'Please review and update the form fields with defaults',
      requestedSchema: {
        type: 'object',
        properties: {
          name: { type: 'string', description: 'User name', default: 'John Doe' },
          age: { type: 'integer', description: 'User age', default: 30 },
          score: { type: 'number', description: 'User score', default: 95.5 },
          status: { type: 'string', description: 'User status', enum: ['active', 'inactive', 'pending'], default: 'active' },
          verified: { type: 'boolean', description: 'Verification status', default: true },
        },
      },
    });
    return text(`Elicitation completed: action=${r.action ?? '?'}, content=${show(r.content)}`);
  });
  plain('test_elicitation_sep1330_enums', 'Elicits the enum schema shapes', async (_a, ctx) => {
    const titled = (prefix, word) => [1, 2, 3].map((i) => ({ const: `${prefix}${i}`, title: `${['First', 'Second', 'Third'][i - 1]} ${word}` }));
    const r = await ctx.elicit({
      message: 'Please select options from the enum fields',
      requestedSchema: {
        type: 'object',
        properties: {
          untitledSingle: { type: 'string', description: 'Select one option', enum: ['option1', 'option2', 'option3'] },
          titledSingle: { type: 'string', description: 'Select one option with titles', oneOf: titled('value', 'Option') },
          legacyEnum: {
            type: 'string',
            description: 'Select one option (legacy)',
            enum: ['opt1', 'opt2', 'opt3'],
            enumNames: ['Option One', 'Option Two', 'Option Three'],
          },
          untitledMulti: {
            type: 'array',
            description: 'Select multiple options',
            minItems: 1,
            maxItems: 3,
            items: { type: 'string', enum: ['option1', 'option2', 'option3'] },
          },
          titledMulti: {
            type: 'array',
            description: 'Select multiple options with titles',
            minItems: 1,
            maxItems: 3,
            items: { anyOf: titled('value', 'Choice') },
          },
        },
      },
    });
    return text(`Elicitation completed: action=${r.action ?? '?'}, content=${show(r.content)}`);
  });
}

function schemaTool(s) {
  toolOf(s)('json_schema_2020_12_tool', 'Tool with a JSON Schema 2020-12 input schema', (a) => text(`Received: ${JSON.stringify(a)}`), {
    $schema: 'https://json-schema.org/draft/2020-12/schema',
    type: 'object',
    $defs: { address: { $anchor: 'addressDef', type: 'object', properties: { street: { type: 'string' }, city: { type: 'string' } } } },
    properties: {
      name: { type: 'string' },
      address: { $ref: '#/$defs/address' },
      contactMethod: { type: 'string', enum: ['phone', 'email'] },
      phone: { type: 'string' },
      email: { type: 'string' },
    },
    allOf: [{ anyOf: [{ required: ['phone'] }, { required: ['email'] }] }],
    if: { properties: { contactMethod: { const: 'phone' } } },
    then: { required: ['phone'] },
    else: { required: ['email'] },
    additionalProperties: false,
  });
}

function modernTools(s) {
  const plain = (name, description, fn) => s.tool({ name, description, inputSchema: noArgs() }, fn);
  plain('test_missing_capability', 'Needs the sampling capability', (_a, ctx) => {
    ctx.requireClientCapability('sampling');
    return text('Success');
  });
  plain('test_streaming_elicitation', 'Streams notifications, then the result', async (_a, ctx) => {
    ctx.progress(1, 2, 'streaming');
    await sleep(20);
    ctx.progress(2, 2, 'done');
    return text('Streaming complete');
  });
  plain('test_logging_tool', 'Logs only when the request asked for a log level', (_a, ctx) => {
    ctx.log('info', 'log from test_logging_tool', 'conformance');
    return text('Logging tool executed');
  });
  plain('test_trigger_tool_change', 'Announces a tool list change', () =>
    text(`Tool list change announced to ${s.notifyToolsListChanged()} subscribers`),
  );
  plain('test_trigger_prompt_change', 'Announces a prompt list change', () =>
    text(`Prompt list change announced to ${s.notifyPromptsListChanged()} subscribers`),
  );
}

function mrtrTools(s) {
  const plain = (name, description, fn) => s.tool({ name, description, inputSchema: noArgs() }, fn);
  const askName = () => elicitReq('What is your name?', { name: { type: 'string' } }, ['name']);
  const confirm = () => elicitReq('Please confirm', { ok: { type: 'boolean' } }, ['ok']);
  plain('test_input_required_result_elicitation', 'MRTR: asks for a name', (_a, ctx) => {
    const name = acceptedContent(ctx, 'user_name')?.name;
    return typeof name === 'string' ? text(`Hello, ${name}!`) : inputRequired({ user_name: askName() });
  });
  plain('test_input_required_result_sampling', 'MRTR: asks the LLM', (_a, ctx) => {
    const t = sampledText(ctx, 'sample_request');
    return t !== undefined
      ? text(`Sampling result: ${t}`)
      : inputRequired({ sample_request: samplingReq('What is the capital of France?', 100) });
  });
  plain('test_input_required_result_list_roots', 'MRTR: asks for roots', (_a, ctx) => {
    const n = rootsCount(ctx, 'roots_request');
    return n !== undefined ? text(`Found ${n} root(s)`) : inputRequired({ roots_request: rootsReq() });
  });
  plain('test_input_required_result_request_state', 'MRTR: carries requestState', (_a, ctx) =>
    ctx.requestState === 'state-ok' && acceptedContent(ctx, 'confirm')
      ? text('Confirmed with state-ok')
      : inputRequired({ confirm: confirm() }, { requestState: 'state-ok' }),
  );
  plain('test_input_required_result_multiple_inputs', 'MRTR: three inputs at once', (_a, ctx) => {
    const name = acceptedContent(ctx, 'user_name')?.name;
    const greeting = sampledText(ctx, 'greeting');
    const roots = rootsCount(ctx, 'client_roots');
    if (typeof name === 'string' && greeting !== undefined && roots !== undefined && ctx.requestState === 'multi') {
      return text(`${greeting} ${name}! (${roots} roots)`);
    }
    return inputRequired(
      { user_name: askName(), greeting: samplingReq('Generate a greeting', 50), client_roots: rootsReq() },
      { requestState: 'multi' },
    );
  });
  plain('test_input_required_result_multi_round', 'MRTR: two rounds', (_a, ctx) => {
    const step1 = acceptedContent(ctx, 'step1') !== undefined;
    const color = acceptedContent(ctx, 'step2')?.color;
    const state = ctx.requestState;
    if (state === 'round2' && typeof color === 'string') return text(`Completed after two rounds: ${color}`);
    if ((state === 'round1' && step1) || state === 'round2') {
      return inputRequired(
        { step2: elicitReq('What is your favourite color?', { color: { type: 'string' } }, ['color']) },
        { requestState: 'round2' },
      );
    }
    return inputRequired(
      { step1: elicitReq('Step 1: what is your name?', { name: { type: 'string' } }, ['name']) },
      { requestState: 'round1' },
    );
  });
  plain('test_input_required_result_tampered_state', 'MRTR: integrity-protected state', (_a, ctx) =>
    ctx.requestState === 'trusted' && acceptedContent(ctx, 'confirm')
      ? text('State verified')
      : inputRequired({ confirm: confirm() }, { requestState: 'trusted' }),
  );
  plain('test_input_required_result_capabilities', 'MRTR: asks only for declared capabilities', (_a, ctx) => {
    const answered = ctx.inputResponses;
    if (answered && Object.keys(answered).length > 0) return text('Capabilities respected');
    const caps = ctx.clientCapabilities ?? {};
    const reqs = {};
    if (caps.elicitation !== undefined) reqs.user_name = askName();
    if (caps.sampling !== undefined) reqs.sample = samplingReq('Say hi', 20);
    if (caps.roots !== undefined) reqs.roots = rootsReq();
    if (Object.keys(reqs).length === 0) return text('No input capabilities declared');
    return inputRequired(reqs);
  });
}

function resourcesAndPrompts(s) {
  const contents = (uri, mimeType, body) => ({ contents: [{ uri, mimeType, ...body }] });
  s.resource({ uri: 'test://static-text', name: 'static-text', mimeType: 'text/plain', description: 'A static text resource' }, () =>
    contents('test://static-text', 'text/plain', { text: 'This is the content of the static text resource.' }),
  );
  s.resource({ uri: 'test://static-binary', name: 'static-binary', mimeType: 'image/png', description: 'A static binary resource' }, () =>
    contents('test://static-binary', 'image/png', { blob: PNG_1X1 }),
  );
  s.resource({ uri: 'test://watched-resource', name: 'watched-resource', mimeType: 'text/plain', description: 'A subscribable resource' }, () =>
    contents('test://watched-resource', 'text/plain', { text: 'Watched resource content' }),
  );
  s.resource(
    { uri: 'test://template/{id}/data', name: 'template-data', mimeType: 'application/json', description: 'Data by id' },
    ({ id }, ctx) => contents(ctx.name, 'application/json', { text: JSON.stringify({ id, templateTest: true, data: `Data for ID: ${id}` }) }),
  );
  s.prompt({ name: 'test_simple_prompt', description: 'A simple prompt' }, () => ({ messages: [userText('This is a simple prompt for testing.')] }));
  s.prompt(
    {
      name: 'test_prompt_with_arguments',
      description: 'A prompt with arguments',
      arguments: [
        { name: 'arg1', description: 'First argument', required: true },
        { name: 'arg2', description: 'Second argument', required: true },
      ],
    },
    ({ arg1, arg2 }) => ({ messages: [userText(`Prompt with arguments: arg1='${arg1 ?? ''}', arg2='${arg2 ?? ''}'`)] }),
  );
  s.prompt(
    {
      name: 'test_prompt_with_embedded_resource',
      description: 'A prompt with an embedded resource',
      arguments: [{ name: 'resourceUri', description: 'URI of the resource to embed', required: true }],
    },
    ({ resourceUri }) => ({
      messages: [
        { role: 'user', content: { type: 'resource', resource: { uri: resourceUri ?? '', mimeType: 'text/plain', text: 'Embedded resource content for testing.' } } },
        userText('Please process the embedded resource above.'),
      ],
    }),
  );
  s.prompt({ name: 'test_prompt_with_image', description: 'A prompt with an image' }, () => ({
    messages: [{ role: 'user', content: { type: 'image', data: PNG_1X1, mimeType: 'image/png' } }, userText('Please analyze the image above.')],
  }));
  s.prompt({ name: 'test_input_required_result_prompt', description: 'MRTR on prompts/get' }, (_a, ctx) => {
    const c = acceptedContent(ctx, 'user_context')?.context;
    if (typeof c === 'string') return { messages: [userText(`Context: ${c}`)] };
    return inputRequired({ user_context: elicitReq('What context should the prompt use?', { context: { type: 'string' } }, ['context']) });
  });
  s.completion(({ argument }) => {
    const prefix = typeof argument?.value === 'string' ? argument.value : '';
    const values = ['paris', 'park', 'party'].filter((v) => v.startsWith(prefix));
    return { completion: { values, total: values.length, hasMore: false } };
  });
}

/** `test_reconnection`: legacy SSE polling (SEP-1699). The handler closes its response stream
 * mid-call; the client resumes with `Last-Event-ID` and receives the result from the replay. */
function reconnectionTool(s) {
  s.tool(
    { name: 'test_reconnection', description: 'Closes its SSE stream mid-call; the result arrives on the resumed stream', inputSchema: noArgs() },
    async (_a, ctx) => {
      await sleep(50);
      ctx.closeSseStream();
      await sleep(100);
      return text('Reconnection test completed');
    },
  );
}

export function makeConformanceServer() {
  // Cache hints ttl 0, private scope: what the Rust fixture sets with `cache_hints(0, false)`.
  const s = new Server({ name: 'mcpcore-conformance', version: '0.1.0', options: { cacheTtlMs: 0, cacheScope: 'private' } });
  contentTools(s);
  clientRequestTools(s);
  schemaTool(s);
  modernTools(s);
  mrtrTools(s);
  reconnectionTool(s);
  resourcesAndPrompts(s);
  taskTools(s);
  // A tool whose arguments are mirrored as `Mcp-Param-*` headers (HTTP-14/15), so the suite's
  // server-side custom-header checks have something to exercise.
  s.tool(
    {
      name: 'test_header_params',
      description: 'Echoes arguments that clients mirror into Mcp-Param-* headers.',
      inputSchema: {
        type: 'object',
        properties: {
          region: { type: 'string', 'x-mcp-header': 'Region' },
          priority: { type: 'integer', 'x-mcp-header': 'Priority' },
          verbose: { type: 'boolean', 'x-mcp-header': 'Verbose' },
        },
      },
    },
    (a) => text(JSON.stringify(a)),
  );
  return s;
}

function usage(problem) {
  console.error(`conformance-server.mjs: ${problem}\nusage: node conformance-server.mjs [[--express] --port N | --stdio]  (or PORT=N)`);
  process.exit(2);
}

/** The fixture's endpoint mounted at `/mcp` of an Express app on 127.0.0.1:`port`. */
async function listenExpress(server, port) {
  const express = createRequire(new URL('../../bindings/node/package.json', import.meta.url))('express');
  const app = express();
  app.disable('x-powered-by');
  app.get('/health', (_req, res) => res.json({ ok: true }));
  const handler = server.nodeHandler();
  app.all('/mcp', (req, res) => handler(req, res));
  const http = app.listen(port, '127.0.0.1');
  await once(http, 'listening');
  const url = `http://127.0.0.1:${http.address().port}/mcp`;
  const close = () => {
    http.closeAllConnections();
    http.close();
  };
  return { url, close };
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const args = process.argv.slice(2);
  const mounted = args[0] === '--express';
  if (mounted) args.shift();
  let port = null;
  if (args.length === 2 && args[0] === '--port') port = args[1];
  else if (args.length === 0 && process.env.PORT) port = process.env.PORT;
  else if (mounted || !(args.length === 1 && args[0] === '--stdio')) usage('unexpected arguments');
  const server = makeConformanceServer();
  if (port === null) {
    await server.serveStdio();
  } else {
    if (!/^\d+$/.test(port) || Number(port) > 65535) usage(`bad port ${port}`);
    const h = mounted ? await listenExpress(server, Number(port)) : await server.listenHttp({ host: '127.0.0.1', port: Number(port) });
    console.error(`conformance-server.mjs: listening on ${h.url}`);
    const stop = () => h.close();
    process.once('SIGTERM', stop);
    process.once('SIGINT', stop);
  }
}
