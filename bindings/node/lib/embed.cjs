'use strict';
// Embedding adapters: the MCP endpoint mounted in the host's own web server. Each request
// becomes one native exchange (core's `HttpService::exchange`): its method, target and headers,
// then its body pushed as it arrives; once the body is in, the answer is started on this thread
// and comes back as a head (with the whole body when it is not an event stream) and, for SSE,
// chunks written as core produces them. Closing the
// exchange is the client disconnecting (core cancels a modern request, HTTP-08). Every rule
// is core's: these functions only move bytes.

const { Readable, Writable } = require('node:stream');

/** How `Client.connectInMemory` reaches a `Server`'s native half (not public API). */
const NATIVE = Symbol('mcpcore.nativeServer');

/** Request headers that describe the bytes on the wire, stale once a body parser has consumed
 * and decoded them (the body is then re-serialized). */
const WIRE_HEADERS = new Set(['content-length', 'transfer-encoding', 'content-encoding']);

/** The body a framework already read, as bytes, or undefined when the stream is still unread.
 * `parsedBody` (Fastify's `request.body`, or the third argument) wins; else Express's
 * `req.body` once a body parser consumed the stream (body-parser 1 also sets `req._body`). */
function consumedBody(req, parsedBody) {
  // A function is Express's `next` (the handler mounted as middleware), not a body.
  let body = typeof parsedBody === 'function' ? undefined : parsedBody;
  if (body === undefined && (req._body === true || (req.readableEnded && req.body !== undefined))) body = req.body;
  if (body === undefined) return undefined;
  if (typeof body === 'string') return Buffer.from(body);
  if (ArrayBuffer.isView(body)) return Buffer.from(body.buffer, body.byteOffset, body.byteLength);
  return Buffer.from(JSON.stringify(body));
}

/** `[name, value, …]` of a `node:http` request, without the wire headers when `rebuilt`. */
function nodeHeaders(req, rebuilt) {
  const raw = req.rawHeaders;
  if (!rebuilt) return raw;
  const out = [];
  for (let i = 0; i + 1 < raw.length; i += 2) {
    if (!WIRE_HEADERS.has(raw[i].toLowerCase())) out.push(raw[i], raw[i + 1]);
  }
  return out;
}

/** Set the head's headers on `res` (a repeated name becomes an array). */
function setHeaders(res, flat) {
  const seen = new Map();
  for (let i = 0; i + 1 < flat.length; i += 2) {
    const k = flat[i];
    const prev = seen.get(k);
    seen.set(k, prev === undefined ? flat[i + 1] : [].concat(prev, flat[i + 1]));
  }
  for (const [k, v] of seen) res.setHeader(k, v);
}

/** Feed `req`'s body to `x` (or `body`, when a parser consumed it already); resolves once core
 * has all it will read: the body ended, crossed the cap (`push` false: core answers 413) or was
 * aborted (400). `onSlow()`: the body is not complete by the end of this turn of the event loop
 * (bytes already received end it before the check phase), so the rest — or all of it — is still
 * on the network: core should start reading now, under its own body deadline (408). */
function feedNode(req, x, body, onSlow) {
  if (body !== undefined) {
    x.push(body);
    x.end();
    return undefined;
  }
  return new Promise((resolve) => {
    let finished = false;
    const done = () => {
      finished = true;
      req.off('data', onData);
      req.off('end', onEnd);
      req.off('aborted', onAborted);
      resolve();
    };
    // False: core needs no more. Stop handing it bytes (the rest is read and dropped).
    const onData = (chunk) => {
      if (!x.push(chunk)) done();
    };
    const onEnd = () => {
      x.end();
      done();
    };
    const onAborted = () => {
      x.abort();
      done();
    };
    req.on('data', onData);
    req.once('end', onEnd);
    req.once('aborted', onAborted);
    setImmediate(() => finished || onSlow());
  });
}

/** The answer's head once the body is in: started on this thread (`headNow`: a synchronous
 * handler answers within the call), else awaited. */
function answer(x) {
  return x.headNow() ?? x.head();
}

/** Write an event-stream body chunk by chunk (flushed: a compression middleware's `flush`). */
async function streamNode(res, x, gone) {
  for (;;) {
    const chunk = await x.nextChunk();
    if (chunk === null || gone()) return;
    if (!res.write(chunk)) {
      await new Promise((resolve) => {
        const done = () => {
          res.off('drain', done);
          res.off('close', done);
          resolve();
        };
        res.once('drain', done);
        res.once('close', done);
      });
    }
    if (typeof res.flush === 'function') res.flush();
  }
}

/** `(req, res, parsedBody?) => Promise<void>` over `mount` (a `NativeHttpMount`). */
function nodeHandler(mount) {
  return async function mcpcoreNodeHandler(req, res, parsedBody) {
    const body = consumedBody(req, parsedBody);
    const x = mount.exchange(req.method, req.originalUrl ?? req.url, nodeHeaders(req, body !== undefined));
    let closed = false;
    let onClosed;
    const gone = new Promise((resolve) => (onClosed = resolve));
    const close = () => {
      if (closed) return;
      closed = true;
      x.close();
      onClosed();
    };
    // The client left before the answer was complete: drop the exchange (a modern handler's
    // ctx sees the cancellation).
    res.once('close', close);
    req.once('aborted', close);
    // Set when core had to start before the body was in (see feedNode's onSlow).
    let early = null;
    let onEarly;
    const started = new Promise((resolve) => (onEarly = resolve));
    try {
      const fed = feedNode(req, x, body, () => {
        if (early !== null) return;
        early = x.head();
        onEarly();
      });
      if (fed !== undefined) await Promise.race([fed, gone, started]);
      if (closed) return;
      const h = await (early ?? answer(x));
      if (h.status === 0 || closed) return;
      res.statusCode = h.status;
      setHeaders(res, h.headers);
      if (h.body !== undefined && h.body !== null) {
        res.end(h.body);
        return;
      }
      res.flushHeaders();
      await streamNode(res, x, () => closed);
      if (!closed) res.end();
    } finally {
      res.off('close', close);
      req.off('aborted', close);
      close();
    }
  };
}

/** Push a fetch `Request`'s body to `x` as it arrives. */
async function feedFetch(request, x) {
  if (request.body === null) {
    x.end();
    return;
  }
  const reader = request.body.getReader();
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      if (!x.push(value)) {
        await reader.cancel();
        break;
      }
    }
    x.end();
  } catch {
    x.abort();
  }
}

/** `(request: Request) => Promise<Response>` over `mount`. */
function fetchHandler(mount) {
  return async function mcpcoreFetchHandler(request) {
    const url = new URL(request.url);
    const flat = [];
    for (const [k, v] of request.headers) flat.push(k, v);
    // A fetch Request carries its authority in the URL (`Host` is not one of its headers).
    if (!request.headers.has('host')) flat.push('host', url.host);
    const x = mount.exchange(request.method, url.pathname + url.search, flat);
    const signal = request.signal;
    const close = () => x.close();
    if (signal) {
      if (signal.aborted) close();
      else signal.addEventListener('abort', close, { once: true });
    }
    // As feedNode: a body not complete by the end of this turn of the event loop is still on
    // the network, and core reads the rest under its own body deadline (408).
    const fed = feedFetch(request, x);
    const slow = new Promise((resolve) => setImmediate(() => resolve(true)));
    const h = await ((await Promise.race([fed, slow])) === true ? x.head() : answer(x));
    const headers = new Headers();
    for (let i = 0; i + 1 < h.headers.length; i += 2) headers.append(h.headers[i], h.headers[i + 1]);
    // 0: the request was aborted before core answered (nobody reads this Response).
    const status = h.status || 499;
    if (h.body !== undefined && h.body !== null) {
      signal?.removeEventListener('abort', close);
      x.close();
      const empty = h.body.length === 0 || status === 204 || status === 304;
      return new Response(empty ? null : h.body, { status, headers });
    }
    const stream = new ReadableStream({
      async pull(ctrl) {
        const chunk = await x.nextChunk();
        if (chunk === null) {
          signal?.removeEventListener('abort', close);
          ctrl.close();
        } else {
          ctrl.enqueue(new Uint8Array(chunk.buffer, chunk.byteOffset, chunk.byteLength));
        }
      },
      cancel() {
        close();
      },
    });
    return new Response(stream, { status, headers });
  };
}

function isWebReadable(s) {
  return typeof globalThis.ReadableStream === 'function' && s instanceof globalThis.ReadableStream;
}

function isWebWritable(s) {
  return typeof globalThis.WritableStream === 'function' && s instanceof globalThis.WritableStream;
}

/** A Node stream pair for `serveStreams` (web streams are wrapped). */
function nodeStreams(readable, writable) {
  const input = isWebReadable(readable) ? Readable.fromWeb(readable) : readable;
  const output = isWebWritable(writable) ? Writable.fromWeb(writable) : writable;
  if (!input || typeof input.on !== 'function' || typeof input.pause !== 'function') {
    throw new TypeError('serveStreams(readable, writable): readable must be a Node Readable or a web ReadableStream');
  }
  if (!output || typeof output.write !== 'function') {
    throw new TypeError('serveStreams(readable, writable): writable must be a Node Writable or a web WritableStream');
  }
  return { input, output };
}

module.exports = { NATIVE, nodeHandler, fetchHandler, nodeStreams };
