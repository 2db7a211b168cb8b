'use strict';

/**
 * A JSON-RPC error. Thrown by a handler, the peer receives exactly this code, message and data;
 * a client call that the server answered with an error rejects with it.
 */
class McpError extends Error {
  constructor(code, message, data) {
    super(message);
    this.name = 'McpError';
    this.code = code;
    if (data !== undefined) this.data = data;
  }
}

/** Any other failure of mcpcore; `code` is core's ErrorKind name (`timeout`, `transport`, …). */
class McpcoreError extends Error {
  constructor(kind, message) {
    super(message);
    this.name = 'McpcoreError';
    this.code = kind;
  }
}

/** The error a native `{error: {kind, message, code?, data?}}` reply stands for. A call's
 * timeout is an McpcoreError named `TimeoutError` (code `timeout`). */
function fromNative(e) {
  if (e.kind === 'rpc') return new McpError(e.code, e.message, e.data);
  const err = new McpcoreError(e.kind, e.message);
  if (e.kind === 'timeout') err.name = 'TimeoutError';
  return err;
}

/** A call aborted through its `signal`: an McpcoreError named `AbortError` (code `cancelled`),
 * with the signal's reason as `cause`. */
function abortError(signal) {
  const err = new McpcoreError('cancelled', 'the call was aborted');
  err.name = 'AbortError';
  err.cause = signal.reason;
  return err;
}

/** The value of a native `{ok}` reply; throws for `{error}`. */
function unwrap(reply) {
  if (reply && reply.error) throw fromNative(reply.error);
  return reply.ok;
}

/** A native object, or throws for an `{error}` reply. */
function unwrapObject(reply) {
  if (reply.error !== undefined) throw fromNative(reply.error);
  return reply;
}

module.exports = { McpError, McpcoreError, abortError, fromNative, unwrap, unwrapObject };
