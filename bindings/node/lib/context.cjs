'use strict';
// `Context`, what a handler gets as its second argument, and `InputRequired`, the explicit
// `input_required` answer (SEP-2322). Everything is core's RequestContext: this only marshals.

const native = require('./native.cjs');
const { unwrap } = require('./errors.cjs');
const { isPlainObject } = require('./schema.cjs');

function typeOf(v) {
  return v === null ? 'null' : Array.isArray(v) ? 'an array' : typeof v;
}

/**
 * An explicit `input_required` answer: `inputRequests` maps your keys to `{method, params}`
 * (`elicitation/create`, `sampling/createMessage`, `roots/list`); the client answers them in
 * `inputResponses` under the same keys and retries with `requestState` (sealed by core) echoed.
 * Return it from a tool, prompt or resource handler (`return ctx.inputRequired(...)`).
 */
class InputRequired {
  constructor(inputRequests, { requestState } = {}) {
    if (requestState !== undefined && requestState !== null && typeof requestState !== 'string') {
      throw new TypeError(`inputRequired(..., {requestState}): requestState must be a string, not ${typeOf(requestState)}`);
    }
    // Core's rule (`InputRequired::validate`, MRTR-02), so the handler hears at once.
    const wrong = native.checkInputRequired(inputRequests, requestState ?? null);
    if (wrong !== null && wrong !== undefined) throw new TypeError(`inputRequired(inputRequests): ${wrong}`);
    this.inputRequests = inputRequests;
    this.requestState = requestState ?? undefined;
  }

  /** The shape the native layer takes (core's `InputRequired`). */
  toWire() {
    const w = { inputRequests: this.inputRequests };
    if (this.requestState !== undefined) w.requestState = this.requestState;
    return w;
  }
}

/** A handler's whole result object (a CallToolResult with its own `content`, `isError`,
 * `_meta`, …), sent as is instead of being shaped from a string or object. */
class RawResult {
  constructor(value) {
    if (!isPlainObject(value)) throw new TypeError(`rawResult(value): value must be an object, not ${typeOf(value)}`);
    this.value = value;
  }
}

/** `return rawResult({content: [...], isError: true})`. */
function rawResult(value) {
  return new RawResult(value);
}

/** Thrown by a tool handler: the call answers a tool-level error (`isError: true`, the message
 * as text) the model can read, not a JSON-RPC error. */
class ToolError extends Error {
  constructor(message) {
    super(message);
    this.name = 'ToolError';
  }
}

/** What a handler gets as its second argument. */
class Context {
  #call;
  #method;
  #name;
  #requestId;
  /** The native context, made on first use (`native.contextOf`): most handlers never look
   * past their arguments, and a native object per call is a tenth of a stdio call's cost. */
  #nativeCtx = null;
  #signal = null;
  /** `meta` and `headers`, read from core on first use (most handlers never look). */
  #meta = undefined;
  #headers = undefined;

  constructor(call, method, name, requestId) {
    this.#call = call;
    this.#method = method;
    this.#name = name ?? null;
    this.#requestId = requestId;
  }

  get #native() {
    if (this.#nativeCtx === null) this.#nativeCtx = native.contextOf(this.#call);
    return this.#nativeCtx;
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
    return this.#method;
  }

  /** The tool or prompt name, or the resource URI. */
  get name() {
    return this.#name;
  }

  get isModern() {
    return this.#native.isModern;
  }

  /** The request's JSON-RPC id as the client sent it (a number or a string). */
  get requestId() {
    return this.#requestId;
  }

  /** The request's `params._meta` as sent (`{}` when it has none). */
  get meta() {
    if (this.#meta === undefined) this.#meta = this.#native.meta;
    return this.#meta;
  }

  /** The headers of the HTTP request that carried this request (Streamable HTTP): lower-case
   * name → value (a repeated header's values joined with ", "); null over stdio. Every header
   * is there, `authorization` included: never pass the client's token on to another service
   * (AUTH-06); `principal` says who is calling. */
  get headers() {
    if (this.#headers === undefined) this.#headers = this.#native.headers ?? null;
    return this.#headers;
  }

  /** The W3C trace context of the server span handling this request, `{ traceparent,
   * tracestate? }`: in the caller's trace when the request carried one. When the host uses
   * OpenTelemetry (an SDK registered its context manager), the handler already runs in this
   * context, so its own spans nest under the server's; elsewhere hand it to a propagator:
   * `propagation.extract(context.active(), ctx.traceContext)`. */
  get traceContext() {
    return this.#native.traceContext ?? null;
  }

  /** The task this call runs as (its `taskId`), or null for a plain call. */
  get taskId() {
    return this.#native.taskId ?? null;
  }

  get protocolVersion() {
    return this.#native.protocolVersion;
  }

  get clientCapabilities() {
    return this.#native.clientCapabilities;
  }

  /** The client's implementation info (`{name, version, ...}`), when known. */
  get clientInfo() {
    return this.#native.clientInfo;
  }

  /** The verified access token's principal on an OAuth-protected HTTP endpoint
   * (`{subject, issuer, scopes, clientId, expiresAt, claims}`), else null. */
  get principal() {
    return this.#native.principal;
  }

  /** The `inputResponses` of a retried request (2026-07-28), keyed as `inputRequired` asked. */
  get inputResponses() {
    return this.#native.inputResponses;
  }

  /** The `requestState` of a retried request, verified and unsealed by core. */
  get requestState() {
    return this.#native.requestState;
  }

  /** Throws the precise -32021 McpError (data.requiredCapabilities) unless the client declared
   * the capability: `requireClientCapability('sampling')`, `('elicitation', 'url')`. */
  requireClientCapability(...path) {
    if (path.length === 0 || !path.every((p) => typeof p === 'string')) {
      throw new TypeError('requireClientCapability(...path): the path is one or more strings, e.g. "sampling"');
    }
    unwrap(this.#native.requireClientCapability(path));
  }

  /** Legacy Streamable HTTP: close this request's SSE stream now; the client resumes with
   * `Last-Event-ID` and gets the rest. False on transports without such a stream. */
  closeSseStream() {
    return this.#native.closeSseStream();
  }

  /** Report progress; false when nothing was sent. */
  progress(progress, total, message) {
    if (typeof progress !== 'number') throw new TypeError(`progress(progress): progress must be a number, not ${typeOf(progress)}`);
    return this.#native.progress(progress, total ?? null, message ?? null);
  }

  /** Send a log notification (`level`: "debug" … "emergency"); false when filtered or not sent. */
  log(level, data, logger) {
    return this.#native.log(level, data, logger ?? null);
  }

  /** Ask the client anything core allows (`elicitation/create`, `sampling/createMessage`,
   * `roots/list`): a server→client request (legacy) or an `input_required` round (2026-07-28). */
  async requestClient(method, params) {
    if (typeof method !== 'string') throw new TypeError(`requestClient(method): method must be a string, not ${typeOf(method)}`);
    if (params !== undefined && params !== null && !isPlainObject(params)) {
      throw new TypeError(`requestClient(method, params): params must be an object, not ${typeOf(params)}`);
    }
    return unwrap(await this.#native.requestClient(method, params ?? null));
  }

  /** `elicitation/create` with `params` ({message, requestedSchema}). */
  elicit(params) {
    return this.requestClient('elicitation/create', params);
  }

  /** `sampling/createMessage` with `params` ({messages, maxTokens, ...}). */
  sample(params) {
    return this.requestClient('sampling/createMessage', params);
  }

  /** `roots/list`: resolves to the array of roots, as Python's `list_roots()` and this
   * binding's `listTools()` do. The array also carries `roots` (itself) for code written when
   * this resolved to the `{roots}` result. */
  async listRoots() {
    const answer = await this.requestClient('roots/list', {});
    const roots = Array.isArray(answer?.roots) ? answer.roots : [];
    Object.defineProperty(roots, 'roots', { value: roots, enumerable: false });
    return roots;
  }

  /** An explicit `input_required` answer with your own keys and state: `return
   * ctx.inputRequired({user_name: {method: 'elicitation/create', params}}, {requestState})`. */
  inputRequired(inputRequests, opts) {
    return new InputRequired(inputRequests, opts);
  }
}

/** `new InputRequired(inputRequests, opts)` as a function. */
function inputRequired(inputRequests, opts) {
  return new InputRequired(inputRequests, opts);
}

module.exports = { Context, InputRequired, inputRequired, RawResult, rawResult, ToolError };
