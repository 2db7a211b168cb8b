'use strict';
// `Client`: core's JSON-level client (`Client::request_with`, `list_all_json`) behind
// Promises. Nothing here speaks the protocol.

const native = require('./native.cjs');
const { McpError, abortError, unwrap, unwrapObject } = require('./errors.cjs');
const { Task } = require('./tasks.cjs');
const { NATIVE } = require('./embed.cjs');

const asyncDispose = Symbol.asyncDispose ?? Symbol.for('nodejs.asyncDispose');

function typeOf(v) {
  return v === null ? 'null' : Array.isArray(v) ? 'an array' : typeof v;
}

function isPlainObject(v) {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}

/** Check a call's options object (`{timeout, signal, onProgress}`); a TypeError names `where`. */
function checkCallOptions(where, opts) {
  if (opts === undefined || opts === null) return {};
  if (typeof opts !== 'object') throw new TypeError(`${where}: options must be an object, not ${typeOf(opts)}`);
  const { timeout, signal, onProgress } = opts;
  if (timeout !== undefined && timeout !== null && (typeof timeout !== 'number' || !(timeout >= 0))) {
    throw new TypeError(`${where}: timeout must be a number of milliseconds (>= 0), not ${typeOf(timeout)}`);
  }
  if (signal !== undefined && signal !== null && (typeof signal !== 'object' || typeof signal.addEventListener !== 'function')) {
    throw new TypeError(`${where}: signal must be an AbortSignal`);
  }
  if (onProgress !== undefined && onProgress !== null && typeof onProgress !== 'function') {
    throw new TypeError(`${where}: onProgress must be a function`);
  }
  return opts;
}

/** The connect options that give a callback, by the capability name `declare` and
 * `setCallback` take (core owns which method each answers). */
const CALLBACK_OPTIONS = [['elicitation', 'onElicitation'], ['sampling', 'onSampling'], ['roots', 'onRoots']];

/** The native `[name, invoke | null]` callbacks: the given ones, and `null` for those only named
 * in `declare`. Core declares the client capabilities from them at connect, so a callback that
 * will only come later through `onSampling(fn)` & co. is named in `declare`
 * (`declare: ['sampling']`); until it is set, core answers its requests -32601. Core checks
 * the names. */
function connectCallbacks(opts) {
  const declare = opts.declare ?? [];
  if (!Array.isArray(declare) || !declare.every((d) => typeof d === 'string')) {
    throw new TypeError(`declare takes an array of callback names, not ${JSON.stringify(declare)}`);
  }
  const out = new Map(declare.map((d) => [d, null]));
  for (const [name, option] of CALLBACK_OPTIONS) {
    const fn = opts[option];
    if (fn !== undefined && fn !== null && typeof fn !== 'function') {
      throw new TypeError(`${option} must be a function, not ${typeOf(fn)}`);
    }
    if (fn != null) out.set(name, invoker(fn));
  }
  return out.size ? [...out] : null;
}

/** `fn` as core's OAuth browser step: never rejects; a throw, a rejection or a value that is
 * not a string becomes the detail of the connect's authorization error. */
function authorizer(fn) {
  return async (url) => {
    try {
      const redirect = await fn(url);
      if (typeof redirect === 'string') return { result: redirect };
      return { failed: `onAuthorize must resolve to the redirect URL string, not ${typeOf(redirect)}` };
    } catch (e) {
      return { failed: `onAuthorize threw: ${String(e?.message ?? e)}` };
    }
  };
}

/** `fn` as core's client handler: resolves to `{result}`, `{error}` for a thrown `McpError`
 * (sent as is), or `{failed}` for any other throw (logged here; core answers the server its
 * generic -32603). */
function invoker(fn) {
  return async (params) => {
    try {
      return { result: await fn(params ?? {}) };
    } catch (e) {
      if (e instanceof McpError) return { error: { code: e.code, message: e.message, data: e.data } };
      console.error('mcpcore: client callback failed:', e?.stack ?? e);
      return { failed: `client callback threw ${e?.name ?? typeof e}` };
    }
  };
}

/** The notification listeners of one connection; the connect option is the first one. */
function notificationListeners(opts) {
  const listeners = new Set();
  if (opts.onNotification != null) {
    if (typeof opts.onNotification !== 'function') {
      throw new TypeError(`onNotification must be a function, not ${typeOf(opts.onNotification)}`);
    }
    listeners.add(opts.onNotification);
  }
  const deliver = (method, params) => {
    for (const fn of listeners) {
      try {
        fn(method, params ?? {});
      } catch (e) {
        console.error('mcpcore: onNotification listener failed:', e?.stack ?? e);
      }
    }
  };
  return { listeners, deliver };
}

/** The spawn options of `connectStdio` as core's StdioCommand JSON (core checks the values). */
const SPAWN_KEYS = ['env', 'envClear', 'cwd', 'stderr', 'closeGraceMs', 'termGraceMs'];

function spawnOptions(opts) {
  if (!isPlainObject(opts)) return null;
  const spawn = {};
  for (const k of SPAWN_KEYS) if (opts[k] !== undefined) spawn[k] = opts[k];
  return Object.keys(spawn).length ? spawn : null;
}

/** `listen()`'s options as core's `subscriptions/listen` filter. */
function listenFilter(f) {
  if (!isPlainObject(f)) throw new TypeError(`listen(filter): filter must be an object, not ${typeOf(f)}`);
  const known = ['toolsChanged', 'promptsChanged', 'resourcesChanged', 'resourcesSubscribe'];
  const unknown = Object.keys(f).filter((k) => !known.includes(k));
  if (unknown.length) throw new TypeError(`listen(filter): unknown key ${unknown[0]} (takes ${known.join(', ')})`);
  const out = {};
  for (const [k, wire] of [['toolsChanged', 'toolsListChanged'], ['promptsChanged', 'promptsListChanged'], ['resourcesChanged', 'resourcesListChanged']]) {
    if (f[k] === undefined) continue;
    if (typeof f[k] !== 'boolean') throw new TypeError(`listen(filter): ${k} must be a boolean, not ${typeOf(f[k])}`);
    if (f[k]) out[wire] = true;
  }
  if (f.resourcesSubscribe !== undefined) {
    if (!Array.isArray(f.resourcesSubscribe) || !f.resourcesSubscribe.every((u) => typeof u === 'string')) {
      throw new TypeError('listen(filter): resourcesSubscribe must be an array of URI strings');
    }
    out.resourceSubscriptions = f.resourcesSubscribe;
  }
  return out;
}

/**
 * An open `subscriptions/listen` stream (2026-07-28): an async iterator of notifications
 * (`{method, params}`). Breaking out of `for await` (its `return()`), `close()` or
 * `await using` ends the subscription.
 */
class Subscription {
  #opening;
  #native = null;
  #done = false;

  constructor(opening) {
    this.#opening = opening.then((n) => {
      this.#native = n;
      if (this.#done) return n.close().then(() => n);
      return n;
    });
    // A failed open is reported by the first next() (or opened); never as unhandled.
    this.#opening.catch(() => {});
  }

  /** Resolves once the server acknowledged the subscription (rejects with its error). */
  get opened() {
    return this.#opening.then(() => undefined);
  }

  /** The notification types the server honoured (`{toolsListChanged: true, ...}`). */
  async honored() {
    return (await this.#opening).honored;
  }

  async next() {
    if (this.#done) return { done: true, value: undefined };
    const n = await this.#opening;
    const v = this.#done ? null : await n.next();
    if (v === null) {
      this.#done = true;
      return { done: true, value: undefined };
    }
    return { done: false, value: v };
  }

  async return() {
    await this.close();
    return { done: true, value: undefined };
  }

  /** End the subscription (core cancels the listen request). */
  async close() {
    this.#done = true;
    const n = this.#native;
    if (n) await n.close();
  }

  [Symbol.asyncIterator]() {
    return this;
  }

  [asyncDispose]() {
    return this.close();
  }
}

class Client {
  #native;
  #listeners;

  constructor(nativeClient, listeners = new Set()) {
    this.#native = nativeClient;
    this.#listeners = listeners;
  }

  static async #connect(opts, connect) {
    if (!isPlainObject(opts)) throw new TypeError(`connect options must be an object, not ${typeOf(opts)}`);
    const callbacks = connectCallbacks(opts);
    const { listeners, deliver } = notificationListeners(opts);
    const n = await connect(opts.mode ?? null, opts.options ?? null, callbacks, deliver);
    return new Client(unwrapObject(n), listeners);
  }

  /** Spawn `command` with `args` and connect over stdio. `mode`: "auto" (default: probe
   * `server/discover`, fall back to `initialize`), "legacy" or "modern"; `options` is core's
   * ClientOptions JSON shape. Core spawns the process from `env` (added to the inherited
   * environment), `envClear` (start from an empty one), `cwd`, `stderr` ("inherit" (default),
   * "null", or "capture": the last 64 KiB are kept for `capturedStderr()`), `closeGraceMs` and
   * `termGraceMs` (core's StdioCommand JSON shape). */
  static async connectStdio(command, args = [], opts = {}) {
    if (typeof command !== 'string') throw new TypeError(`connectStdio(command): command must be a string, not ${typeOf(command)}`);
    if (!Array.isArray(args) || !args.every((a) => typeof a === 'string')) {
      throw new TypeError('connectStdio(command, args): args must be an array of strings');
    }
    const spawn = spawnOptions(opts);
    return Client.#connect(opts, (mode, options, callbacks, deliver) =>
      native.NativeClient.connectStdio(command, args, mode, options, callbacks, deliver, spawn),
    );
  }

  /** Connect to a Streamable HTTP endpoint (`http://…/mcp`); `headers` go on every request.
   * `http.auth` turns on core's OAuth 2.1 client; `onAuthorize(authorizationUrl)` is its
   * browser step and resolves to the redirect URL (with `code` and `state`). */
  static async connectHttp(url, opts = {}) {
    if (typeof url !== 'string') throw new TypeError(`connectHttp(url): url must be a string, not ${typeOf(url)}`);
    const http = { ...(opts?.http ?? {}) };
    if (opts?.headers) http.headers = opts.headers;
    const onAuthorize = opts?.onAuthorize;
    if (onAuthorize !== undefined && onAuthorize !== null && typeof onAuthorize !== 'function') {
      throw new TypeError(`connectHttp: onAuthorize must be a function, not ${typeOf(onAuthorize)}`);
    }
    const authorize = typeof onAuthorize === 'function' ? authorizer(onAuthorize) : null;
    return Client.#connect(opts, (mode, options, callbacks, deliver) =>
      native.NativeClient.connectHttp(url, mode, options, http, callbacks, deliver, authorize),
    );
  }

  /** Connect to `server` (a `Server` of this process) over core's in-memory duplex: the full
   * protocol, framed as on stdio, with no process and no socket (unit tests, embedding).
   * Options as `connectStdio`'s `ConnectOptions` (`mode`, `options`, callbacks, notification
   * listeners). The server starts serving (its registry is built) on the first connection. */
  static async connectInMemory(server, opts = {}) {
    const serverNative = typeof server?.[NATIVE] === 'function' ? server[NATIVE]() : null;
    if (serverNative === null) throw new TypeError(`connectInMemory(server): server must be a mcpcore Server, not ${typeOf(server)}`);
    return Client.#connect(opts, (mode, options, callbacks, deliver) =>
      serverNative.connectInMemory(mode, options, callbacks, deliver),
    );
  }

  #setCallback(name, option, fn) {
    if (typeof fn !== 'function') throw new TypeError(`${option}(fn): fn must be a function, not ${typeOf(fn)}`);
    unwrap(this.#native.setCallback(name, invoker(fn)));
    return this;
  }

  /** Answer `sampling/createMessage` with `fn(params)` (replaces the previous one). The
   * capability is declared at connect: give `onSampling` there or `declare: ['sampling']`. */
  onSampling(fn) {
    return this.#setCallback('sampling', 'onSampling', fn);
  }

  /** Answer `elicitation/create` with `fn(params)` (declared at connect, as `onSampling`). */
  onElicitation(fn) {
    return this.#setCallback('elicitation', 'onElicitation', fn);
  }

  /** Answer `roots/list` with `fn(params)` (declared at connect, as `onSampling`). */
  onRoots(fn) {
    return this.#setCallback('roots', 'onRoots', fn);
  }

  /** Add a listener for every notification from the server (`notifications/message`,
   * `…/list_changed`, …); returns a function that removes it. */
  onNotification(fn) {
    if (typeof fn !== 'function') throw new TypeError(`onNotification(fn): fn must be a function, not ${typeOf(fn)}`);
    this.#listeners.add(fn);
    return () => this.#listeners.delete(fn);
  }

  /** The stdio server's standard error as captured (the last 64 KiB, oldest first) when it
   * was spawned with `stderr: 'capture'`; else null. */
  capturedStderr() {
    return this.#native.capturedStderr() ?? null;
  }

  /** "legacy" or "modern". */
  get era() {
    return this.#native.era;
  }

  /** This client's metrics as a Prometheus text exposition (the conventions'
   * `mcp.client.operation.duration` by method, target and `error_type`, requests sent,
   * in-flight, `mcp.client.session.duration` once closed); recorded when connected with
   * `options: { metrics: true }`. */
  metrics() {
    return this.#native.metrics();
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
  request(method, params, opts = {}) {
    try {
      if (typeof method !== 'string') throw new TypeError(`request(method): method must be a string, not ${typeOf(method)}`);
      if (params !== undefined && params !== null && !isPlainObject(params)) {
        throw new TypeError(`request(method, params): params must be an object, not ${typeOf(params)}`);
      }
      checkCallOptions('request', opts);
    } catch (e) {
      return Promise.reject(e);
    }
    const { timeout, signal, onProgress } = opts ?? {};
    return this.#withSignal(signal, (id) =>
      this.#native.request(method, params ?? null, timeout ?? null, onProgress ?? null, id),
    );
  }

  /** Reject with a TypeError unless `value` is a string (`what` names it). */
  static #needString(what, value) {
    return typeof value === 'string' ? null : new TypeError(`${what} must be a string, not ${typeOf(value)}`);
  }

  async #page(kind, cursor, opts = {}) {
    const { timeout, signal } = checkCallOptions(`list ${kind} page`, opts);
    if (cursor !== undefined && cursor !== null && typeof cursor !== 'string') {
      throw new TypeError(`the cursor must be a string, not ${typeOf(cursor)}`);
    }
    return this.#withSignal(signal, (id) => this.#native.listPage(kind, cursor ?? null, timeout ?? null, id));
  }

  /** One page of `tools/list` from `cursor` (the previous page's `nextCursor`): the result,
   * `{tools, nextCursor?}`. */
  listToolsPage(cursor, opts = {}) {
    return this.#page('tools', cursor, opts);
  }

  listPromptsPage(cursor, opts = {}) {
    return this.#page('prompts', cursor, opts);
  }

  listResourcesPage(cursor, opts = {}) {
    return this.#page('resources', cursor, opts);
  }

  listResourceTemplatesPage(cursor, opts = {}) {
    return this.#page('resourceTemplates', cursor, opts);
  }

  /** `completion/complete` (both eras): `ref` is `{type: 'ref/prompt', name}` or
   * `{type: 'ref/resource', uri}`, `argument` `{name, value}`, `context` `{arguments: {...}}`
   * (the other arguments already chosen). Resolves to the CompleteResult. */
  complete(ref, argument, context, { timeout, signal } = {}) {
    if (!isPlainObject(ref) || typeof ref.type !== 'string') {
      return Promise.reject(new TypeError('complete(ref): ref must be {type: "ref/prompt", name} or {type: "ref/resource", uri}'));
    }
    if (!isPlainObject(argument) || typeof argument.name !== 'string' || typeof argument.value !== 'string') {
      return Promise.reject(new TypeError('complete(ref, argument): argument must be {name: string, value: string}'));
    }
    if (context !== undefined && context !== null && !isPlainObject(context?.arguments)) {
      return Promise.reject(new TypeError('complete(ref, argument, context): context must be {arguments: {...}}'));
    }
    return this.#withSignal(signal, (id) =>
      this.#native.complete(ref, argument.name, argument.value, context?.arguments ?? null, timeout ?? null, id),
    );
  }

  /** `resources/subscribe` (legacy; on 2026-07-28 use `listen({resourcesSubscribe})`):
   * `notifications/resources/updated` for `uri` then reach `onNotification`. */
  async subscribeResource(uri, { timeout, signal } = {}) {
    if (typeof uri !== 'string') throw new TypeError(`subscribeResource(uri): uri must be a string, not ${typeOf(uri)}`);
    await this.#withSignal(signal, (id) => this.#native.subscribeResource(uri, true, timeout ?? null, id));
  }

  /** `resources/unsubscribe` (legacy). */
  async unsubscribeResource(uri, { timeout, signal } = {}) {
    if (typeof uri !== 'string') throw new TypeError(`unsubscribeResource(uri): uri must be a string, not ${typeOf(uri)}`);
    await this.#withSignal(signal, (id) => this.#native.subscribeResource(uri, false, timeout ?? null, id));
  }

  /** Listen for change notifications: `for await (const n of c.listen({toolsChanged: true,
   * resourcesSubscribe: ['file:///a']}))`. Each item is `{method, params}`; leaving the loop
   * ends the subscription. Core serves both eras: a `subscriptions/listen` stream on
   * 2026-07-28, the session's matching notifications (and `resources/subscribe`) on legacy
   * connections. `timeout` bounds the wait for the acknowledgement. */
  listen(filter = {}, { timeout } = {}) {
    const wire = listenFilter(filter);
    const opening = this.#native.listen(wire, timeout ?? null).then(unwrapObject);
    return new Subscription(opening);
  }

  async #all(kind, key, opts = {}) {
    const { timeout, signal } = checkCallOptions(`list ${kind}`, opts);
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
    const bad = Client.#needString('callTool(name): name', name)
      ?? (isPlainObject(args ?? {}) ? null : new TypeError(`callTool(name, args): args must be an object, not ${typeOf(args)}`));
    if (bad) return Promise.reject(bad);
    return this.request('tools/call', { name, arguments: args ?? {} }, opts);
  }

  // ---- tasks (core speaks the protocol of both eras) ----

  /** Call a tool asking for a task: resolves to a `Task` when the server created one, else the
   * CallToolResult it answered at once. `ttl` (ms) asks a legacy server to keep the task that
   * long; `timeout`/`signal` bound the request itself. */
  async callToolAsTask(name, args = {}, opts = {}) {
    const bad = Client.#needString('callToolAsTask(name): name', name)
      ?? (isPlainObject(args ?? {}) ? null : new TypeError(`callToolAsTask(name, args): args must be an object, not ${typeOf(args)}`));
    if (bad) throw bad;
    const { ttl, timeout, signal } = checkCallOptions('callToolAsTask', opts);
    const out = await this.#withSignal(signal, (id) =>
      this.#native.callToolAsTask(name, args ?? {}, ttl ?? null, timeout ?? null, id),
    );
    return out.task ? new Task(out.task) : out.result;
  }

  async #task(op, taskId, answers, opts) {
    const bad = Client.#needString(`${op}Task(taskId): taskId`, taskId);
    if (bad) throw bad;
    const { timeout, signal } = checkCallOptions(`${op}Task`, opts);
    return this.#withSignal(signal, (id) => this.#native.taskRequest(op, taskId, answers, timeout ?? null, id));
  }

  /** `tasks/get`: the task's current state. */
  async getTask(taskId, opts = {}) {
    return new Task(await this.#task('get', taskId, null, opts));
  }

  /** `tasks/cancel`: the task's state after the request (null when the server sent none). */
  async cancelTask(taskId, opts = {}) {
    const raw = await this.#task('cancel', taskId, null, opts);
    return raw ? new Task(raw) : null;
  }

  /** `tasks/update` (2026-07-28): answer a task's `inputRequests` by key. */
  async updateTask(taskId, inputResponses, opts = {}) {
    if (!isPlainObject(inputResponses)) throw new TypeError('updateTask(taskId, inputResponses): inputResponses must be an object');
    await this.#task('update', taskId, inputResponses, opts);
  }

  /** Follow a task until it ends (its `input_required` requests are answered by the registered
   * handlers): resolves to the terminal `Task`. `timeout` (ms) bounds the wait (the task goes
   * on), `signal` aborts it; the other options are core's TaskWaitOptions (`pollIntervalMs`,
   * `followPushes`, …). */
  async waitTask(taskId, opts = {}) {
    const bad = Client.#needString('waitTask(taskId): taskId', taskId);
    if (bad) throw bad;
    const { signal, wait } = waitOptions('waitTask', opts);
    return new Task(await this.#withSignal(signal, (id) => this.#native.waitTask(taskId, null, null, null, wait, id)));
  }

  /** `callToolAsTask` then `waitTask`: resolves to the CallToolResult (a failed task rejects
   * with its error). */
  async callToolToCompletion(name, args = {}, opts = {}) {
    const bad = Client.#needString('callToolToCompletion(name): name', name)
      ?? (isPlainObject(args ?? {}) ? null : new TypeError('callToolToCompletion(name, args): args must be an object'));
    if (bad) throw bad;
    const { ttl, ...rest } = opts ?? {};
    const { signal, wait } = waitOptions('callToolToCompletion', rest);
    return this.#withSignal(signal, (id) => this.#native.waitTask(null, name, args ?? {}, ttl ?? null, wait, id));
  }

  getPrompt(name, args = {}, opts = {}) {
    const bad = Client.#needString('getPrompt(name): name', name)
      ?? (isPlainObject(args ?? {}) && Object.values(args ?? {}).every((v) => typeof v === 'string')
        ? null
        : new TypeError('getPrompt(name, args): args must be an object of strings'));
    if (bad) return Promise.reject(bad);
    return this.request('prompts/get', { name, arguments: args ?? {} }, opts);
  }

  readResource(uri, opts = {}) {
    const bad = Client.#needString('readResource(uri): uri', uri);
    if (bad) return Promise.reject(bad);
    return this.request('resources/read', { uri }, opts);
  }

  /** Whether the server offers MCP Apps (`io.modelcontextprotocol/ui`). Connect with
   * `options: {apps: true}` to advertise this client's support. */
  get serverSupportsApps() {
    return this.#native.serverSupportsApps;
  }

  /** Read an MCP Apps UI resource (a `ui://` URI, e.g. `uiResourceUri(tool)`): resolves to
   * `{uri, mimeType, html, meta}` (`meta` is `_meta.ui` or null). Rejects with code
   * "invalid_argument" for a URI that is not `ui://` (nothing is sent) and "protocol" for a
   * result that is not `text/html;profile=mcp-app` HTML. */
  readAppResource(uri, opts = {}) {
    const bad = Client.#needString('readAppResource(uri): uri', uri);
    if (bad) return Promise.reject(bad);
    let checked;
    try {
      checked = checkCallOptions('readAppResource', opts);
    } catch (e) {
      return Promise.reject(e);
    }
    const { timeout, signal } = checked;
    return this.#withSignal(signal, (id) => this.#native.readAppResource(uri, timeout ?? null, id));
  }

  /** Close the connection (stdio: close stdin, wait, then terminate the child). */
  async close() {
    await this.#native.close();
  }

  /** `await using c = await Client.connect…(...)`: `close()`. */
  [asyncDispose]() {
    return this.close();
  }
}

/** `{timeout, signal, ...TaskWaitOptions}` as the signal and core's TaskWaitOptions JSON. */
function waitOptions(where, opts) {
  const { timeout, signal, ...wait } = opts ?? {};
  checkCallOptions(where, { timeout, signal });
  if (timeout != null) wait.timeoutMs = timeout;
  return { signal, wait };
}

/** The MCP Apps UI resource a listed tool renders with (`_meta.ui.resourceUri`), or null. */
function uiResourceUri(tool) {
  return native.toolUiResourceUri(tool) ?? null;
}

module.exports = { Client, Subscription, Task, uiResourceUri };
