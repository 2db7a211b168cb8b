// A stdio server without telemetry, for testing/otlp-exit.mjs.
import { Server } from '../lib/index.js';

const s = new Server({ name: 'plain-stdio', version: '1' });
s.tool({ name: 'echo', inputSchema: { type: 'object' } }, () => 'ok');
await s.serveStdio();
