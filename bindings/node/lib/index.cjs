'use strict';
// The public API of the `mcpcore` package (CommonJS); `index.js` is the ESM entry.
const { Server, Context, HttpHandle, Registered, APP_MIME_TYPE, image, audio } = require('./server.cjs');
const { InputRequired, inputRequired, RawResult, rawResult, ToolError } = require('./context.cjs');
const { Client, Subscription, uiResourceUri } = require('./client.cjs');
const { Task } = require('./tasks.cjs');
const { McpError, McpcoreError } = require('./errors.cjs');
const native = require('./native.cjs');

/** Install core's telemetry for this process (once; see index.d.ts). */
function configureTelemetry(options) {
  native.configureTelemetry(options ?? undefined);
}

/** Export every finished span and the metrics now. */
function flushTelemetry(timeoutMs) {
  return native.flushTelemetry(timeoutMs ?? undefined);
}

module.exports = {
  Server,
  Context,
  HttpHandle,
  Registered,
  image,
  audio,
  InputRequired,
  inputRequired,
  RawResult,
  rawResult,
  ToolError,
  Client,
  Subscription,
  Task,
  uiResourceUri,
  APP_MIME_TYPE,
  McpError,
  McpcoreError,
  configureTelemetry,
  flushTelemetry,
};
