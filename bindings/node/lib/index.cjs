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
  // What was recorded and not yet exported leaves before the process does (at most
  // `stopFlushMs`): `exit` listeners must be synchronous, so the native flush blocks.
  process.once('exit', () => native.flushTelemetryAtExit());
}

/** The handler `onLog` routes to now (its remover only removes that one). */
let currentLog = null;

/** Route mcpcore's own log events (core's, from every server and client of this process) at
 * `level` or more severe to `handler({ level, target, message })` on this thread; replaces an
 * earlier handler; returns a function that removes it. See index.d.ts. */
function onLog(handler, opts) {
  if (handler !== null && typeof handler !== 'function') {
    throw new TypeError('onLog(handler, {level}): handler must be a function or null');
  }
  const level = opts?.level ?? 'info';
  if (typeof level !== 'string') throw new TypeError('onLog(handler, {level}): level must be a string');
  let warned = false;
  const route =
    handler === null
      ? null
      : (lvl, target, message) => {
          try {
            handler({ level: lvl, target, message });
          } catch (e) {
            // Thrown on a native callback it would end the process: reported once instead.
            if (!warned) process.emitWarning(`mcpcore: the onLog handler threw: ${e}`);
            warned = true;
          }
        };
  native.routeLogs(route, level);
  currentLog = route;
  return () => {
    if (currentLog === route && route !== null) {
      native.routeLogs(null, 'off');
      currentLog = null;
    }
  };
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
  onLog,
};
