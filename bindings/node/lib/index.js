// The public API of the `mcpcore` package (ESM); one implementation, in `index.cjs`.
import m from './index.cjs';

export const {
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
} = m;
export default m;
