// Run by test/telemetry.test.mjs: a client that exports to the receiver named by
// MCPCORE_TEST_OTLP with a ten-minute interval, calls a stdio server and exits with
// process.exit() — its spans reach the receiver only through the flush configureTelemetry
// registered for the process's exit.
import { fileURLToPath } from 'node:url';
import { Client, configureTelemetry } from '../lib/index.js';

configureTelemetry({
  otlp: { endpoint: process.env.MCPCORE_TEST_OTLP, serviceName: 'node-exit', intervalMs: 600000 },
});
const server = fileURLToPath(new URL('./otlp-plain-stdio.mjs', import.meta.url));
const c = await Client.connectStdio(process.execPath, [server], { mode: 'modern' });
console.log((await c.callTool('echo', {})).content[0].text);
await c.close();
process.exit(0);
