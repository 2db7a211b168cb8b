'use strict';
// `Client`: core's JSON-level client (`Client::request_with`, `list_all_json`) behind
// Promises. Nothing here speaks the protocol.

const native = require('./native.cjs');
const { McpError, abortError, unwrap, unwrapObject } = require('./errors.cjs');

/** Client callbacks (`{onElicitation, onSampling, onRoots}`) as native `[method, invoke]`. */
function handlers(opts) {
  const out = [];
  const add = (method, fn) => {
    if (typeof fn !== 'function') return;
    out.push([
      method,
      async (params) => {
        try {
          return { result: await fn(params ?? {}) };
        } catch (e) {
          if (e instanceof McpError) return { error: { code: e.code, message: e.message, data: e.data } };
          console.error(`mcpcore: ${method} callback failed:`, e?.stack ?? e);
          return { failed: String(e?.message ?? e) };
        }
      },
    ]);
  };
  add('elicitation/create', opts.onElicitation);
  add('sampling/createMessage', opts.onSampling);
  add('roots/list', opts.onRoots);
  return out.length ? out : null;
}

class Client {
  #native;

  constructor(nativeClient) {
    this.#native = nativeClient;
  }

  /** Spawn `command` with `args` and connect over stdio. `mode`: "auto" (default: probe
   * `server/discover`, fall back to `initialize`), "legacy" or "modern"; `options` is core's
   * ClientOptions JSON shape. */
  static async connectStdio(command, args = [], opts = {}) {
    const n = await native.NativeClient.connectStdio(
      command,
      args,
      opts.mode ?? null,
      opts.options ?? null,
      handlers(opts),
      opts.onNotification ?? null,
    );
    return new Client(unwrapObject(n));
  }

  /** Connect to a Streamable HTTP endpoint (`http://…/mcp`); `headers` go on every request. */
  static async connectHttp(url, opts = {}) {
    const http = { ...(opts.http ?? {}) };
    if (opts.headers) http.headers = opts.headers;
    const n = await native.NativeClient.connectHttp(
      url,
      opts.mode ?? null,
      opts.options ?? null,
      http,
      handlers(opts),
      opts.onNotification ?? null,
    );
    return new Client(unwrapObject(n));
  }

  /** "legacy" or "modern". */
  get era() {
    return this.#native.era;
  }

  get protocolVersion() {
    return this.#native.protocolVersion;
  }

  get instructions() {
    return this.#native.instructions;
  }

  /** The server's implementation info (`serverInfo`: name, version, …). */
  get serverInfo() {
    return this.#native.serverInfo;
  }

  /** The server's capabilities. */
  get serverCapabilities() {
    return this.#native.negotiated?.capabilities ?? {};
  }

  /** Run `call(cancelId)` under `signal`: aborting cancels it through core (which sends the
   * protocol cancellation) and rejects with an error named `AbortError`. */
  async #withSignal(signal, call) {
    if (signal == null) return unwrap(await call(null));
    if (signal.aborted) throw abortError(signal);
    const id = this.#native.newCancel();
    const onAbort = () => this.#native.cancel(id);
    signal.addEventListener('abort', onAbort, { once: true });
    try {
      let pending;
      try {
        pending = call(id);
      } catch (e) {
        // Arguments the addon refused synchronously: the call never ran, so it will not drop
        // its token itself.
        this.#native.dropCancel(id);
        throw e;
      }
      const reply = await pending;
      if (reply?.error && signal.aborted) throw abortError(signal);
      return unwrap(reply);
    } finally {
      signal.removeEventListener('abort', onAbort);
    }
  }

  /** Any request; resolves to the raw JSON result. `timeout` in milliseconds (rejects with an
   * error named `TimeoutError`, code "timeout"); `signal` an AbortSignal (aborting cancels the
   * request and rejects with an error named `AbortError`); `onProgress(progress, total,
   * message)` gets the call's progress notifications. */
  request(method, params, { timeout, signal, onProgress } = {}) {
    return this.#withSignal(signal, (id) =>
      this.#native.request(method, params ?? null, timeout ?? null, onProgress ?? null, id),
    );
  }

  async #all(kind, key, { timeout, signal } = {}) {
    return (await this.#withSignal(signal, (id) => this.#native.listAll(kind, timeout ?? null, id)))[key];
  }

  /** Every tool (all pages). */
  listTools(opts = {}) {
    return this.#all('tools', 'tools', opts);
  }

  listPrompts(opts = {}) {
    return this.#all('prompts', 'prompts', opts);
  }

  listResources(opts = {}) {
    return this.#all('resources', 'resources', opts);
  }

  listResourceTemplates(opts = {}) {
    return this.#all('resourceTemplates', 'resourceTemplates', opts);
  }

  /** Call a tool; resolves to the CallToolResult (`structuredContent` validated by core). */
  callTool(name, args = {}, opts = {}) {
    return this.request('tools/call', { name, arguments: args }, opts);
  }

  getPrompt(name, args = {}, opts = {}) {
    return this.request('prompts/get', { name, arguments: args }, opts);
  }

  readResource(uri, opts = {}) {
    return this.request('resources/read', { uri }, opts);
  }

  /** Close the connection (stdio: close stdin, wait, then terminate the child). */
  async close() {
    await this.#native.close();
  }
}

module.exports = { Client };
