'use strict';
// `Server`: registration and result shaping only. Every protocol rule (both eras, validation,
// cancellation, MRTR) is core's; a handler becomes core's Handler through the native addon.

const native = require('./native.cjs');
const { McpError, McpcoreError, unwrap, unwrapObject } = require('./errors.cjs');

function text(t) {
  return { type: 'text', text: t };
}

function isPlainObject(v) {
  return v !== null && typeof v === 'object' && !Array.isArray(v) && !ArrayBuffer.isView(v);
}

/** A tool's return value as a CallToolResult (a string is one text block, an object is
 * `structuredContent` with its JSON as text). */
function toolResult(v) {
  if (v === undefined || v === null) return { content: [] };
  if (typeof v === 'string') return { content: [text(v)] };
  if (isPlainObject(v)) return { content: [text(JSON.stringify(v))], structuredContent: v };
  return { content: [text(JSON.stringify(v))] };
}

/** A prompt's return value as a GetPromptResult (a string is one user message). */
function promptResult(v) {
  if (typeof v === 'string') return { messages: [{ role: 'user', content: text(v) }] };
  if (Array.isArray(v)) {
    return { messages: v.map((m) => (typeof m === 'string' ? { role: 'user', content: text(m) } : m)) };
  }
  if (isPlainObject(v)) return v;
  throw new TypeError(`a prompt returns a string, an array of messages or an object, not ${typeof v}`);
}

/** A resource's return value as a ReadResourceResult (a string is text, bytes a blob). */
function resourceResult(def) {
  return (v, ctx) => {
    if (isPlainObject(v)) return v;
    const item = { uri: ctx.name ?? def.uri ?? def.uriTemplate };
    if (ArrayBuffer.isView(v)) {
      item.mimeType = def.mimeType ?? 'application/octet-stream';
      item.blob = Buffer.from(v.buffer, v.byteOffset, v.byteLength).toString('base64');
    } else {
      item.mimeType = def.mimeType ?? 'text/plain';
      item.text = typeof v === 'string' ? v : JSON.stringify(v);
    }
    return { contents: [item] };
  };
}

/** What a handler gets as its second argument. */
class Context {
  #native;
  #signal = null;

  constructor(nativeCtx) {
    this.#native = nativeCtx;
  }

  /** An AbortSignal aborted when the request is cancelled (by the peer, or the connection ends).
   * Made on first use: the native abort callback it needs costs a threadsafe function (a libuv
   * handle) per request, which most handlers never look at. */
  get signal() {
    if (this.#signal === null) {
      const ac = new AbortController();
      this.#signal = ac.signal;
      // True when the request is cancelled (or has ended) already: abort at once.
      if (this.#native.onCancel(() => ac.abort())) ac.abort();
    }
    return this.#signal;
  }

  get method() {
    return this.#native.method;
  }

  /** The tool or prompt name, or the resource URI. */
  get name() {
    return this.#native.name;
  }

  get isModern() {
    return this.#native.isModern;
  }

  get protocolVersion() {
    return this.#native.protocolVersion;
  }

  get clientCapabilities() {
    return this.#native.clientCapabilities;
  }

  /** Report progress; false when nothing was sent. */
  progress(progress, total, message) {
    return this.#native.progress(progress, total ?? null, message ?? null);
  }

  /** Send a log notification (`level`: "debug" … "emergency"); false when filtered or not sent. */
  log(level, data, logger) {
    return this.#native.log(level, data, logger ?? null);
  }

  /** Ask the client anything core allows (`elicitation/create`, `sampling/createMessage`,
   * `roots/list`): a server→client request (legacy) or an `input_required` round (2026-07-28). */
  async requestClient(method, params) {
    return unwrap(await this.#native.requestClient(method, params ?? null));
  }

  /** `elicitation/create` with `params` ({message, requestedSchema}). */
  elicit(params) {
    return this.requestClient('elicitation/create', params);
  }
}

/** `fn` as the native `invoke(ctx, params)`: always a Promise, never rejecting. */
function wrap(fn, shape) {
  if (typeof fn !== 'function') throw new TypeError('the handler must be a function');
  return async (nativeCtx, params) => {
    const ctx = new Context(nativeCtx);
    try {
      const v = await fn(params ?? {}, ctx);
      return { result: shape(v, ctx) };
    } catch (e) {
      if (e instanceof McpError) {
        const error = { code: e.code, message: e.message };
        if (e.data !== undefined) error.data = e.data;
        return { error };
      }
      // A 2026-07-28 `requestClient` the client has not answered yet: core answers the request
      // `input_required` and the handler runs again with the answers. Not a failure to log.
      if (e instanceof McpcoreError && e.code === 'input_required') return { failed: e.message };
      // Never sent: the peer sees a generic -32603.
      console.error(`mcpcore: ${nativeCtx.method} ${nativeCtx.name ?? ''} failed:`, e?.stack ?? e);
      return { failed: String(e?.message ?? e) };
    }
  };
}

/** A running Streamable HTTP listener. It keeps the process alive until `close()`. */
class HttpHandle {
  #native;
  #keepAlive;

  constructor(nativeHandle) {
    this.#native = nativeHandle;
    // The listener runs on core's threads, which Node's event loop does not see: this timer
    // is the reference that keeps the process alive while the server listens.
    this.#keepAlive = setInterval(() => {}, 1 << 30);
  }

  get host() {
    return this.#native.host;
  }

  get port() {
    return this.#native.port;
  }

  /** The MCP endpoint, `http://host:port/mcp`. */
  get url() {
    const h = this.host.includes(':') ? `[${this.host}]` : this.host;
    return `http://${h}:${this.port}/mcp`;
  }

  /** Graceful shutdown: answers in flight finish or are cancelled, then the socket closes. */
  async close() {
    clearInterval(this.#keepAlive);
    await this.#native.close();
  }
}

class Server {
  #native;
  #listeners = new Set();

  #add(kind, def, invoke) {
    try {
      this.#native.add(kind, def, invoke);
    } catch (e) {
      throw new McpcoreError('invalid_argument', e.message);
    }
  }

  /** @param {{name: string, version: string, instructions?: string, options?: object}} info
   * `options` is core's ServerOptions JSON shape (e.g. `{limits: {maxInflight: 256}}`). */
  constructor({ name, version, instructions, options } = {}) {
    if (typeof name !== 'string' || typeof version !== 'string') {
      throw new TypeError('new Server({name, version}) needs a name and a version');
    }
    this.#native = new native.NativeServer(name, version, instructions ?? null, options ?? null);
  }

  /** Register a tool: `fn(args, ctx)` returns a string (text), an object (structuredContent)
   * or a Promise of one. */
  tool(def, fn) {
    this.#add('tool', def, wrap(fn, toolResult));
    return this;
  }

  /** Register a prompt: `fn(args, ctx)` returns a string (one user message), messages or a
   * GetPromptResult. */
  prompt(def, fn) {
    this.#add('prompt', def, wrap(fn, promptResult));
    return this;
  }

  /** Register a resource at an exact URI or an RFC 6570 template (`demo://notes/{id}`; `fn`
   * gets the variables). `fn` returns a string (text), bytes (a blob) or a ReadResourceResult. */
  resource(def, fn) {
    const { uri, ...rest } = def;
    if (typeof uri === 'string' && uri.includes('{')) {
      const d = { ...rest, uriTemplate: uri };
      this.#add('resource_template', d, wrap(fn, resourceResult(d)));
    } else {
      this.#add('resource', def, wrap(fn, resourceResult(def)));
    }
    return this;
  }

  /** Serve stdin/stdout until EOF. */
  async serveStdio() {
    unwrap(await this.#native.serveStdio());
  }

  /** Serve Streamable HTTP at `/mcp` on `host:port` (port 0 picks a free port). */
  async listenHttp({ host = '127.0.0.1', port = 0, options } = {}) {
    const h = new HttpHandle(unwrapObject(await this.#native.listenHttp(host, port, options ?? null)));
    this.#listeners.add(h);
    return h;
  }

  /** Close every HTTP listener this server started (`HttpHandle.close()` on each). */
  async close() {
    const hs = [...this.#listeners];
    this.#listeners.clear();
    await Promise.all(hs.map((h) => h.close()));
  }

  /** Tell connected clients the tool list changed; returns how many were told. */
  notifyToolsListChanged() {
    return this.#native.notifyToolsListChanged();
  }
}

module.exports = { Server, Context, HttpHandle };
