'use strict';
// `Server`: registration and result shaping only. Every protocol rule (both eras, validation,
// cancellation, MRTR) is core's; a handler becomes core's Handler through the native addon.

const native = require('./native.cjs');
const { McpError, McpcoreError, fromNative, unwrapObject } = require('./errors.cjs');
const { Context, InputRequired, RawResult, ToolError } = require('./context.cjs');
const { resolveToolSchemas, validate } = require('./schema.cjs');
const { Registered } = require('./registered.cjs');
const embed = require('./embed.cjs');

/** A handler's plain return value as the native reply: core shapes it for the entry's kind
 * (`mcpcore::server::ResultShape`: text, structured content, content blocks, messages,
 * resource contents, completion values); bytes go as base64. */
function plain(v) {
  if (ArrayBuffer.isView(v)) return { bytes: { data: Buffer.from(v.buffer, v.byteOffset, v.byteLength).toString('base64') } };
  return { value: v === undefined ? null : v };
}

/** A gate's reply: its value is not sent (the task is created, or the gate threw). */
const gateReply = () => ({ result: {} });

/** A handler's throw as the native reply (see `wrap`). */
function failure(e, shape, ctx) {
  if (e instanceof ToolError && shape === TOOL) return { toolError: e.message };
  if (e instanceof McpError) {
    const error = { code: e.code, message: e.message };
    if (e.data !== undefined) error.data = e.data;
    return { error };
  }
  // A 2026-07-28 `requestClient` the client has not answered yet: core answers the request
  // `input_required` and the handler runs again with the answers. Not a failure to log.
  if (e instanceof McpcoreError && e.code === 'input_required') return { failed: e.message };
  // Never sent: the peer sees a generic -32603.
  console.error(`mcpcore: ${ctx.method} ${ctx.name ?? ''} failed:`, e?.stack ?? e);
  return { failed: String(e?.message ?? e) };
}

function isThenable(v) {
  return v !== null && (typeof v === 'object' || typeof v === 'function') && typeof v.then === 'function';
}

/** The OpenTelemetry API's global registry (version 1), where an SDK registers its context
 * manager: present when the host uses OpenTelemetry. */
const OTEL_GLOBAL = Symbol.for('opentelemetry.js.api.1');
/** `@opentelemetry/api` once looked up (null: not installed). */
let otelApi;

/** Run `f` in the server span's context when the host uses OpenTelemetry (a context manager is
 * registered), so the handler's own spans nest under the server's; else just run it. */
function inServerSpan(ctx, f) {
  if (globalThis[OTEL_GLOBAL]?.context === undefined) return f();
  if (otelApi === undefined) {
    try {
      otelApi = require('@opentelemetry/api');
    } catch {
      otelApi = null;
    }
  }
  if (otelApi === null) return f();
  const parent = otelApi.propagation.extract(otelApi.context.active(), ctx.traceContext ?? {});
  return otelApi.context.with(parent, f);
}

/** The native reply as JSON text: the addon then reads one string instead of walking a
 * JavaScript object through N-API (a property lookup per member, in both directions). JSON's
 * own rules apply to what a handler returns (`toJSON`, members that are `undefined` left out);
 * a value JSON cannot carry (a cycle, a BigInt) fails the call as a throw would. */
function encode(reply, shape, ctx) {
  try {
    return JSON.stringify(reply);
  } catch (e) {
    try {
      return JSON.stringify(failure(e, shape, ctx));
    } catch {
      return '{"failed":"the handler reply is not JSON"}';
    }
  }
}

/** `fn` as the native pair `{invoke, direct}`. `direct(call, method, name, requestId, params)`
 * answers the native reply synchronously when `fn` does (stdio served from this thread then
 * needs no hand-off), else a Promise of it; `invoke` is the same as an always-Promise function
 * (the threadsafe path). Both never reject. `params` and the reply are JSON text (see
 * `encode`). A returned `InputRequired` (`ctx.inputRequired(...)`) is core's `input_required`
 * outcome; `validator` (a tool's Standard Schema) checks the arguments first and hands `fn` its
 * parsed value. */
function wrap(fn, shape, validator = null) {
  if (typeof fn !== 'function') throw new TypeError('the handler must be a function');
  const settle = (v) => {
    if (v instanceof InputRequired) return { inputRequired: v.toWire() };
    if (v instanceof RawResult) return { result: v.value };
    return shape === gateReply ? gateReply() : plain(v);
  };
  const run = (args, ctx) => {
    const v = inServerSpan(ctx, () => fn(args, ctx));
    if (!isThenable(v)) return settle(v);
    return Promise.resolve(v)
      .then((r) => settle(r))
      .catch((e) => failure(e, shape, ctx));
  };
  const reply = (ctx, params) => {
    try {
      const args = JSON.parse(params) ?? {};
      if (!validator) return run(args, ctx);
      return validate(validator, args)
        .then((checked) => (checked.invalid !== undefined ? { invalid: checked.invalid } : run(checked.value, ctx)))
        .catch((e) => failure(e, shape, ctx));
    } catch (e) {
      return failure(e, shape, ctx);
    }
  };
  // `call` names the call for its native context (made when the handler asks, see `Context`);
  // `params` comes as JSON text (see `encode`).
  const direct = (call, method, name, requestId, params) => {
    const ctx = new Context(call, method, name, requestId);
    const r = reply(ctx, params);
    if (!isThenable(r)) return encode(r, shape, ctx);
    return r.then((v) => encode(v, shape, ctx));
  };
  const invoke = async (call, method, name, requestId, params) => direct(call, method, name, requestId, params);
  return { invoke, direct };
}

/** Requests handled by polling stdin (`NativeStdioPump.spin`) before the event loop runs again. */
const SPIN_TURNS = 64;

/** Drive `native.openStdio` with `input` / `output` until `input` ends (or the output is gone,
 * or a frame crossed the size cap: then the promise rejects). `spin`: `input` is this process's
 * stdin, which core may poll directly between turns (`StdioPump::spin` reads fd 0). */
function serveStdioOn(native, input, output, spin = true) {
  return new Promise((resolve, reject) => {
    let gone = false;
    let stopping = false;
    const write = (buf) => {
      if (buf === null || gone) return;
      // Backpressure (STDIO-01): where stdout writes are asynchronous (not Linux pipes),
      // stop reading while the written bytes wait.
      if (!output.write(buf) && !stopping) {
        input.pause();
        output.once('drain', () => stopping || input.resume());
      }
    };
    // `pump` is assigned before any wake can run (wakes are queued to this thread).
    let pump = null;
    const opened = native.openStdio(() => pump && write(pump.take()));
    if (opened.error) {
      reject(fromNative(opened.error));
      return;
    }
    pump = opened;
    const onData = (chunk) => {
      write(pump.feed(chunk));
      // Poll for the next request a little before going back to the event loop (a client
      // that talks in turns sends it microseconds after reading our answer; waking from the
      // loop's sleep costs more). Bounded: at most SPIN_TURNS requests per turn of the loop.
      // Never while the stream holds bytes it read itself (they come first) or is paused.
      for (let i = 0; spin && i < SPIN_TURNS && !pump.stopped && input.readableLength === 0 && !input.isPaused(); i++) {
        const out = pump.spin();
        if (out === null) break;
        write(out);
      }
      if (pump.stopped) stop(false);
    };
    const onEnd = () => {
      write(pump.end());
      stop(false);
    };
    const onOutputError = () => {
      gone = true;
      stop(true);
    };
    const stop = (stdoutGone) => {
      if (stopping) return;
      stopping = true;
      input.off('data', onData);
      input.off('end', onEnd);
      input.off('error', onOutputError);
      input.pause();
      pump.drain(stdoutGone || gone).then((r) => {
        write(pump.take());
        output.off('error', onOutputError);
        if (r.error) reject(fromNative(r.error));
        // Resolve once what was written left the stream's buffer (a web stream pair writes
        // asynchronously).
        // (an empty write's callback runs after the writes before it).
        else if (gone || !output.writableLength) resolve();
        else output.write(Buffer.alloc(0), () => resolve());
      }, reject);
    };
    input.on('data', onData);
    input.on('end', onEnd);
    input.on('error', onOutputError);
    output.on('error', onOutputError);
  });
}

const asyncDispose = Symbol.asyncDispose ?? Symbol.for('nodejs.asyncDispose');

function typeOf(v) {
  return v === null ? 'null' : Array.isArray(v) ? 'an array' : typeof v;
}

/** `def` is an object whose `key` is a string, else a TypeError naming what is wrong. */
function checkDef(kind, def, key) {
  if (def === null || typeof def !== 'object' || Array.isArray(def)) {
    throw new TypeError(`${kind}(def, fn): def must be an object, not ${typeOf(def)}`);
  }
  if (typeof def[key] !== 'string') {
    throw new TypeError(`${kind}(def, fn): def.${key} must be a string, not ${typeOf(def[key])}`);
  }
}

/** The MIME type of MCP Apps UI resources (core's `APP_MIME_TYPE`). */
const APP_MIME_TYPE = native.appMimeType();

/** The kinds `wrap` tells apart: a tool (a thrown `ToolError` is its `isError` result), the
 * others (core shapes their values by the kind they were registered as). */
const TOOL = 'tool';
const OTHER = 'other';

/** A tool definition with `ui` / `uiVisibility` moved to `_meta.ui` (MCP Apps). */
function uiLink(def) {
  const { ui, uiVisibility, ...rest } = def;
  if (ui === undefined && uiVisibility === undefined) return def;
  const link = {};
  if (ui !== undefined) link.resourceUri = ui;
  if (uiVisibility !== undefined) link.visibility = uiVisibility;
  return { ...rest, _meta: { ...(rest._meta ?? {}), ui: link } };
}

/** An `appResource(def, fn)` as the native `[wire, wrapped]` of a resource. */
function appResourceEntry(def, fn) {
  checkDef('appResource', def, 'uri');
  const { uri, name, html, csp, permissions, domain, prefersBorder, ...rest } = def;
  if (fn === undefined) {
    if (typeof html !== 'string') throw new TypeError('appResource(def): give def.html (a string) or a handler');
    fn = () => html;
  }
  const ui = {};
  if (csp !== undefined) ui.csp = csp;
  if (permissions !== undefined) {
    if (!Array.isArray(permissions)) throw new TypeError('appResource(def): permissions must be an array of names');
    ui.permissions = Object.fromEntries(permissions.map((p) => [String(p), {}]));
  }
  if (domain !== undefined) ui.domain = domain;
  if (prefersBorder !== undefined) ui.prefersBorder = prefersBorder;
  // Naming the app type makes core refuse a URI that is not `ui://`; core completes each
  // content item's URI, MIME type and `_meta.ui`.
  const wire = { ...rest, uri, name: name ?? uri, mimeType: APP_MIME_TYPE };
  if (Object.keys(ui).length > 0) wire._meta = { ...(rest._meta ?? {}), ui };
  return [wire, wrap(fn, OTHER)];
}

/** A running Streamable HTTP listener. It keeps the process alive until `close()`: the
 * native listener holds a referenced threadsafe function from `listenHttp` until it is closed
 * (the listener runs on core's threads, which Node's event loop does not see). */
class HttpHandle {
  #native;

  constructor(nativeHandle) {
    this.#native = nativeHandle;
  }

  get host() {
    return this.#native.host;
  }

  get port() {
    return this.#native.port;
  }

  /** The MCP endpoint's URL, with the configured path and `https` when TLS is on. */
  get url() {
    return this.#native.url;
  }

  /** Graceful shutdown: answers in flight finish or are cancelled, then the socket closes. */
  async close() {
    await this.#native.close();
  }

  /** `await using handle = ...`: `close()`. */
  [asyncDispose]() {
    return this.close();
  }
}

class Server {
  #native;
  #listeners = new Set();
  /** The mounted endpoints (`nodeHandler`/`fetchHandler`), shut down by `close()`. */
  #mounts = new Set();
  /** How a `Registered` changes its entries (see lib/registered.cjs). */
  #ops = {
    apply: (c) => this.#apply(c, true),
    remove: (kind, key) => this.#native.remove(kind, key),
    setEnabled: (kind, key, on) => this.#native.setEnabled(kind, key, on),
  };

  #add(kind, def, { invoke, direct }, replace = false) {
    try {
      this.#native.add(kind, def, invoke, direct, replace);
    } catch (e) {
      throw new McpcoreError('invalid_argument', e.message);
    }
  }

  /** @param {{name: string, version: string, instructions?: string, options?: object, tasks?: object, dynamic?: boolean}} info
   * `options` is core's ServerOptions JSON shape (e.g. `{limits: {maxInflight: 256}}`);
   * `tasks` turns tasks on with core's TaskOptions (`{pollIntervalMs: 500}`); `dynamic: true`
   * advertises tools, prompts and resources even when none is registered before serving, so
   * they can be added while it serves. */
  constructor({ name, version, instructions, options, tasks, dynamic } = {}) {
    if (typeof name !== 'string' || typeof version !== 'string') {
      throw new TypeError('new Server({name, version}) needs a name and a version');
    }
    if (dynamic !== undefined && typeof dynamic !== 'boolean') {
      throw new TypeError(`new Server({dynamic}): dynamic must be a boolean, not ${typeOf(dynamic)}`);
    }
    // `tasks`: core's TaskOptions JSON shape (defaultTtlMs, pollIntervalMs, maxTasks, …).
    let opts = tasks === undefined ? options : { ...(options ?? {}), tasks };
    if (dynamic !== undefined) opts = { ...(opts ?? {}), dynamic };
    this.#native = new native.NativeServer(name, version, instructions ?? null, opts ?? null);
  }

  /** Check `def` and `fn` for the registration method `method` and resolve them to native
   * entries: `{kind, key, adds: [[nativeKind, wire, wrapped], …]}` (a `Registered`'s `compile`). */
  #compile(method, def, fn) {
    switch (method) {
      case 'tool': {
        checkDef('tool', def, 'name');
        // `taskSupport` ("optional" | "required") stays in the definition: core reads it.
        // `gate`, a function of the same arguments, runs on the request before the task is
        // created.
        const { gate, ...rest } = def;
        const { def: wire, validator } = resolveToolSchemas(uiLink(rest));
        const adds = [['tool', wire, wrap(fn, TOOL, validator)]];
        if (gate !== undefined) adds.push(['gate', { name: def.name }, wrap(gate, gateReply, validator)]);
        return { kind: 'tool', key: def.name, adds };
      }
      case 'appResource':
        return { kind: 'resource', key: def?.uri, adds: [['resource', ...appResourceEntry(def, fn)]] };
      case 'prompt':
        checkDef('prompt', def, 'name');
        return { kind: 'prompt', key: def.name, adds: [['prompt', def, wrap(fn, OTHER)]] };
      case 'resource': {
        checkDef('resource', def, 'uri');
        const { uri, ...rest } = def;
        if (uri.includes('{')) {
          return { kind: 'resourceTemplate', key: uri, adds: [['resource_template', { ...rest, uriTemplate: uri }, wrap(fn, OTHER)]] };
        }
        return { kind: 'resource', key: uri, adds: [['resource', def, wrap(fn, OTHER)]] };
      }
      case 'resourceTemplate':
        checkDef('resourceTemplate', def, 'uriTemplate');
        return { kind: 'resourceTemplate', key: def.uriTemplate, adds: [['resource_template', def, wrap(fn, OTHER)]] };
      default:
        throw new TypeError(`unknown registration ${method}`);
    }
  }

  /** Add compiled entries: to the registry before serving (with `replace`, a handle's
   * `update`, in place of its entry), to the running server after (core replaces a taken
   * key there). */
  #apply(c, replace = false) {
    if (c.adds.some(([k]) => k === 'gate') && this.#native.serving) {
      throw new McpcoreError('invalid_argument', `tool ${JSON.stringify(c.key)}: a tool with a gate cannot be added while the server serves (register it before serving)`);
    }
    for (const [kind, wire, wrapped] of c.adds) this.#add(kind, wire, wrapped, replace);
  }

  /** Register through `method` and hand back the item's handle. */
  #register(method, def, fn) {
    const compile = (d, f) => this.#compile(method, d, f);
    const c = compile(def, fn);
    this.#apply(c);
    return new Registered(this, this.#ops, compile, c, def, fn);
  }

  /** Register a tool: `fn(args, ctx)` returns a string (text), an object (structured content),
   * an array of content blocks (`image(...)`, `audio(...)`, …),
   * `rawResult(callToolResult)` (sent as is) or `inputRequired(...)`, or a Promise of one;
   * throwing `ToolError` answers an `isError` result. `inputSchema`/`outputSchema` are JSON Schema objects, or a Standard
   * Schema with a JSON Schema export (zod 4, …): its `~standard.validate` then checks the
   * arguments too, and `fn` gets its parsed value. Returns the tool's handle (`enable`,
   * `disable`, `update`, `remove`); called while the server serves, it adds the tool to the
   * running server (replacing one of the same name in place). */
  tool(def, fn) {
    return this.#register('tool', def, fn);
  }

  /** Register an MCP Apps UI resource (`io.modelcontextprotocol/ui`): a `ui://` URI served as
   * `text/html;profile=mcp-app`. Give the HTML as `def.html`, or a `fn(args, ctx)` returning
   * it; `csp`, `permissions` (names such as `'camera'`), `domain` and `prefersBorder` become
   * `_meta.ui`. Link tools to it with `tool({..., ui: uri})`; serving fails if a link names no
   * registered UI resource or the URI is not `ui://`. Returns the resource's handle. */
  appResource(def, fn) {
    return this.#register('appResource', def, fn);
  }

  /** Register a prompt: `fn(args, ctx)` returns a string (one user message), messages or a
   * GetPromptResult. Returns its handle (as `tool`). */
  prompt(def, fn) {
    return this.#register('prompt', def, fn);
  }

  /** Register the `completion/complete` handler (both eras; one per server, a later one
   * replaces it; before serving only): `fn({ref, argument, context}, ctx)` returns the
   * candidate values (an array of strings; core sends the first 100, with `total` and
   * `hasMore`) or a whole CompleteResult. Returns the server. */
  completion(fn) {
    this.#add('completion', null, wrap(fn, OTHER));
    return this;
  }

  /** Register a resource at an exact URI or an RFC 6570 template (`demo://notes/{id}`; `fn`
   * gets the variables). `fn` returns a string (text), bytes (a blob) or a ReadResourceResult.
   * Returns its handle (as `tool`; kind `'resourceTemplate'` for a template URI). */
  resource(def, fn) {
    return this.#register('resource', def, fn);
  }

  /** Register a resource template given as its MCP definition (`{uriTemplate, name, ...}`);
   * as `resource` with a template URI. Returns its handle. */
  resourceTemplate(def, fn) {
    return this.#register('resourceTemplate', def, fn);
  }

  /** Serve stdin/stdout until EOF. The bytes are read and written on this thread
   * (`process.stdin` / `process.stdout`) and core frames and dispatches them; a synchronous
   * handler is answered within the same turn of the event loop. */
  serveStdio() {
    return serveStdioOn(this.#native, process.stdin, process.stdout);
  }

  /** Serve Streamable HTTP at `/mcp` on `host:port` (port 0 picks a free port). */
  async listenHttp({ host = '127.0.0.1', port = 0, options } = {}) {
    if (typeof host !== 'string') throw new TypeError(`listenHttp({host}): host must be a string, not ${typeof host}`);
    if (!Number.isInteger(port) || port < 0 || port > 65535) {
      throw new TypeError(`listenHttp({port}): port must be an integer in 0..65535, not ${JSON.stringify(port) ?? typeof port}`);
    }
    if (options !== undefined && options !== null && (typeof options !== 'object' || Array.isArray(options))) {
      throw new TypeError('listenHttp({options}): options must be an object (core\'s HttpOptions JSON shape)');
    }
    // The never-called function the native listener holds (referenced) while it listens.
    const keepAlive = () => {};
    const h = new HttpHandle(unwrapObject(await this.#native.listenHttp(host, port, options ?? null, keepAlive)));
    this.#listeners.add(h);
    return h;
  }

  /** Serve newline-delimited JSON-RPC (as stdio) over any byte stream pair: a Node
   * `Readable`/`Writable` (a socket, a child's pipes) or a web `ReadableStream`/`WritableStream`.
   * Resolves when the input ends (and the answers were written). */
  serveStreams(readable, writable) {
    const { input, output } = embed.nodeStreams(readable, writable);
    return serveStdioOn(this.#native, input, output, input === process.stdin);
  }

  #mount(where, opts) {
    if (opts === undefined || opts === null) opts = {};
    if (typeof opts !== 'object' || Array.isArray(opts)) throw new TypeError(`${where}(opts): opts must be an object`);
    const { options } = opts;
    if (options !== undefined && options !== null && (typeof options !== 'object' || Array.isArray(options))) {
      throw new TypeError(`${where}({options}): options must be an object (core's HttpOptions JSON shape)`);
    }
    const mount = unwrapObject(this.#native.httpMount(options ?? null));
    this.#mounts.add(mount);
    return mount;
  }

  /** The endpoint as a `node:http` handler, `(req, res, parsedBody?) => Promise<void>`, to mount
   * in your own server: `node:http`, Express (`app.all('/mcp', handler)`; a body `express.json()`
   * already parsed is re-serialized), Fastify (`reply.hijack()`, then `handler(request.raw,
   * reply.raw, request.body)`). `opts.options` is core's HttpOptions JSON shape, as for
   * `listenHttp` (the path is whatever the host routes here). The answer streams (SSE events are
   * written as produced); the client disconnecting cancels a modern request. */
  nodeHandler(opts) {
    return embed.nodeHandler(this.#mount('nodeHandler', opts));
  }

  /** The endpoint as a web-standard handler, `(request: Request) => Promise<Response>` (Hono,
   * any fetch router); options as `nodeHandler`. An SSE answer is a streaming body; aborting
   * `request.signal` or cancelling the body drops the exchange. */
  fetchHandler(opts) {
    return embed.fetchHandler(this.#mount('fetchHandler', opts));
  }

  /** The native server (for `Client.connectInMemory`; not public API). */
  [embed.NATIVE]() {
    return this.#native;
  }

  /** Close every HTTP listener this server started (`HttpHandle.close()` on each) and shut
   * down every mounted endpoint (`nodeHandler`/`fetchHandler`) gracefully: listen streams get
   * their result, legacy sessions end, later requests through a mount are answered 503. */
  async close() {
    const hs = [...this.#listeners];
    const ms = [...this.#mounts];
    this.#listeners.clear();
    this.#mounts.clear();
    await Promise.all([...hs.map((h) => h.close()), ...ms.map((m) => m.shutdown())]);
  }

  /** Tell connected clients the tool list changed (legacy sessions get the notification,
   * 2026-07-28 `subscriptions/listen` streams that asked for it get it on their stream);
   * returns how many were told. */
  notifyToolsListChanged() {
    return this.#native.notifyToolsListChanged();
  }

  /** Tell connected clients the prompt list changed; returns how many were told. */
  notifyPromptsListChanged() {
    return this.#native.notifyPromptsListChanged();
  }

  /** Tell connected clients the resource list changed; returns how many were told. */
  notifyResourcesListChanged() {
    return this.#native.notifyResourcesListChanged();
  }

  /** Tell the clients subscribed to `uri` (legacy `resources/subscribe`, 2026-07-28
   * `subscriptions/listen` with `resourceSubscriptions`) that it changed; returns how many were
   * told. Subscriptions are on unless the server option `resourcesSubscribe` is false. */
  notifyResourceUpdated(uri) {
    if (typeof uri !== 'string') throw new TypeError(`notifyResourceUpdated(uri): uri must be a string, not ${typeOf(uri)}`);
    return this.#native.notifyResourceUpdated(uri);
  }

  /** This server's metrics as a Prometheus text exposition (format 0.0.4): request durations
   * by the OpenTelemetry MCP conventions, requests by method, tool and outcome, in-flight
   * requests, refusals, sessions, listen streams, connections. Recorded when the server option
   * `metrics` is on; HTTP can also serve them at `{ metricsPath: '/metrics' }`. */
  metrics() {
    return this.#native.metrics();
  }

  /** `await using server = ...`: closes its HTTP listeners. */
  [asyncDispose]() {
    return this.close();
  }
}

/** `data` (bytes) as a content block by core's rule (`mcpcore::server::media_block`): an
 * `image/*` MIME type makes an image block, `audio/*` an audio block; `where` names the helper. */
function media(where, data, mimeType) {
  if (!ArrayBuffer.isView(data)) throw new TypeError(`${where}(data, mimeType): data must be bytes (a Buffer or Uint8Array), not ${typeOf(data)}`);
  if (typeof mimeType !== 'string') throw new TypeError(`${where}(data, mimeType): mimeType must be a string, not ${typeOf(mimeType)}`);
  const bytes = Buffer.from(data.buffer, data.byteOffset, data.byteLength);
  try {
    return native.mediaBlock(bytes, mimeType);
  } catch (e) {
    throw new TypeError(`${where}(data, mimeType): ${e.message}`);
  }
}

/** An image content block (`{type, data: base64, mimeType}`): `return [image(png, 'image/png')]`.
 * The block's type follows the MIME type (core's rule: `image/*` or `audio/*`). */
function image(data, mimeType = 'image/png') {
  return media(image.name, data, mimeType);
}

/** An audio content block (`{type, data: base64, mimeType}`), as `image`. */
function audio(data, mimeType = 'audio/wav') {
  return media(audio.name, data, mimeType);
}

module.exports = { Server, Context, HttpHandle, InputRequired, Registered, APP_MIME_TYPE, image, audio };
