'use strict';
// `Registered`: what `server.tool(...)`, `prompt(...)`, `resource(...)`, `resourceTemplate(...)`
// and `appResource(...)` return (the TypeScript SDK's `RegisteredTool` & co.). Its changes go
// through the native server: before serving they edit the registry the server is built from,
// once it serves they are core's dynamic API (`Server::add_json`, `remove`, `set_enabled`),
// which replaces in place, lets calls in flight finish and announces `list_changed`.

const { McpcoreError } = require('./errors.cjs');

/** The native spelling of a handle's kind (remove, setEnabled). */
const NATIVE_KIND = { tool: 'tool', prompt: 'prompt', resource: 'resource', resourceTemplate: 'resource_template' };

/** The server methods a handle forwards, so `server.tool(a, f).tool(b, g)` chains as it did
 * when the registration methods returned the server. */
const FORWARDED = ['tool', 'prompt', 'resource', 'resourceTemplate', 'appResource', 'completion', 'serveStdio', 'listenHttp', 'nodeHandler', 'fetchHandler', 'serveStreams'];

/** `base` with `changes` over it; a key set to `undefined` is dropped. */
function merged(base, changes) {
  const out = { ...base, ...(changes ?? {}) };
  for (const k of Object.keys(out)) if (out[k] === undefined) delete out[k];
  return out;
}

class Registered {
  #server;
  #ops;
  #compile;
  #kind;
  #key;
  #def;
  #fn;
  #enabled = true;
  #removed = false;

  /** Made by `Server`: `compile(def, fn)` checks a definition and resolves to its native
   * entries `{kind, key, adds}`; `ops` applies them (`apply`, `remove`, `setEnabled`). */
  constructor(server, ops, compile, compiled, def, fn) {
    this.#server = server;
    this.#ops = ops;
    this.#compile = compile;
    this.#kind = compiled.kind;
    this.#key = compiled.key;
    this.#def = def;
    this.#fn = fn;
  }

  /** The server this item is registered on. */
  get server() {
    return this.#server;
  }

  /** `'tool'`, `'prompt'`, `'resource'` or `'resourceTemplate'`. */
  get kind() {
    return this.#kind;
  }

  /** Its name, URI or URI template. */
  get key() {
    return this.#key;
  }

  /** False once disabled or removed. */
  get enabled() {
    return this.#enabled && !this.#removed;
  }

  #live(what) {
    if (this.#removed) throw new McpcoreError('invalid_argument', `${what}: the ${this.#kind} ${JSON.stringify(this.#key)} was removed`);
  }

  /** Bring it back (in its place in the list); a change of state is announced. */
  enable() {
    this.#live('enable()');
    this.#ops.setEnabled(NATIVE_KIND[this.#kind], this.#key, true);
    this.#enabled = true;
  }

  /** Hide it: absent from its list, and calling or reading it is the unknown-item error. */
  disable() {
    this.#live('disable()');
    this.#ops.setEnabled(NATIVE_KIND[this.#kind], this.#key, false);
    this.#enabled = false;
  }

  /** Replace its definition and/or handler in place: `changes` is merged over the definition
   * it was registered with (a key set to `undefined` is dropped; `null` keeps it all), `fn`
   * replaces the handler. Calls already running finish with the old handler. A new name (URI)
   * moves it to the end of its list. A disabled item stays disabled. */
  update(changes, fn) {
    this.#live('update()');
    if (changes !== undefined && changes !== null && (typeof changes !== 'object' || Array.isArray(changes))) {
      throw new TypeError('update(changes, fn): changes must be an object (fields of the definition) or null');
    }
    if (fn !== undefined && typeof fn !== 'function') throw new TypeError('update(changes, fn): fn must be a function');
    const def = merged(this.#def, changes);
    const next = fn ?? this.#fn;
    const c = this.#compile(def, next);
    if (c.kind !== this.#kind) {
      throw new TypeError(`update(): a ${this.#kind} cannot become a ${c.kind} (remove it and register the new one)`);
    }
    this.#ops.apply(c);
    if (c.key !== this.#key) this.#ops.remove(NATIVE_KIND[this.#kind], this.#key);
    this.#key = c.key;
    this.#def = def;
    this.#fn = next;
    // Core replaces an item enabled; a disabled one stays disabled.
    if (!this.#enabled) this.#ops.setEnabled(NATIVE_KIND[this.#kind], this.#key, false);
  }

  /** Remove it (announced); calls already running finish normally. A second call does nothing. */
  remove() {
    if (this.#removed) return;
    this.#ops.remove(NATIVE_KIND[this.#kind], this.#key);
    this.#removed = true;
  }
}

for (const name of FORWARDED) {
  Object.defineProperty(Registered.prototype, name, {
    value: function (...args) {
      return this.server[name](...args);
    },
    writable: true,
    configurable: true,
  });
}

module.exports = { Registered };
