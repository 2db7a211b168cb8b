// Run by test/telemetry.test.mjs as a stdio server: telemetry exports to the receiver named by
// MCPCORE_TEST_OTLP with a ten-minute interval, so the spans reach it only because a server
// that stops serving exports what it recorded before serveStdio resolves (stopFlushMs).
import { Server, configureTelemetry } from '../lib/index.js';

configureTelemetry({
  otlp: { endpoint: process.env.MCPCORE_TEST_OTLP, serviceName: 'node-stdio', intervalMs: 600000 },
});
const s = new Server({ name: 'otlp-stdio', version: '1' });
s.tool({ name: 'echo', inputSchema: { type: 'object' } }, () => 'ok');
await s.serveStdio();
