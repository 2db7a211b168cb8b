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

/** The error a native `{error: {kind, message, code?, data?}}` reply stands for. */
function fromNative(e) {
  if (e.kind === 'rpc') return new McpError(e.code, e.message, e.data);
  return new McpcoreError(e.kind, e.message);
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

module.exports = { McpError, McpcoreError, fromNative, unwrap, unwrapObject };
