// Run with --expose-gc: the leak contract. Each phase runs connect/close cycles of a client
// against an in-process Streamable HTTP server (alternating the legacy era, a session per
// connection, and the modern one), stdio connect/close cycles against a child server process,
// and tool calls. After a warm-up phase, two measured phases of equal work; prints the RSS and
// JS heap after each (after full collections) and the elapsed time, as JSON.
//
// Usage: leak-cycles.mjs HTTP_CYCLES STDIO_CYCLES CALLS  (per measured phase)
import { fileURLToPath } from 'node:url';
import { Client } from '../lib/index.js';
import { makeServer } from './server.mjs';

const [httpCycles, stdioCycles, calls] = process.argv.slice(2).map(Number);
const script = fileURLToPath(new URL('./server.mjs', import.meta.url));
const t0 = Date.now();
const h = await makeServer().listenHttp({ port: 0 });

async function httpCycle(i) {
  const c = await Client.connectHttp(h.url, { mode: i % 2 ? 'modern' : 'legacy' });
  const r = await c.callTool('add', { a: i, b: 1 });
  if (r.structuredContent.sum !== i + 1) throw new Error(`wrong sum ${JSON.stringify(r)}`);
  await c.close();
}

async function stdioCycle(i) {
  const c = await Client.connectStdio(process.execPath, [script], { mode: i % 2 ? 'modern' : 'legacy' });
  await c.callTool('add', { a: i, b: 1 });
  await c.close();
}

async function phase(nHttp, nStdio, nCalls) {
  // Cycles 8 at a time: connects overlap as they do in a real server's life.
  for (let i = 0; i < nHttp; i += 8) {
    await Promise.all(Array.from({ length: Math.min(8, nHttp - i) }, (_, j) => httpCycle(i + j)));
  }
  for (let i = 0; i < nStdio; i += 4) {
    await Promise.all(Array.from({ length: Math.min(4, nStdio - i) }, (_, j) => stdioCycle(i + j)));
  }
  const c = await Client.connectHttp(h.url, { mode: 'modern' });
  for (let i = 0; i < nCalls; i += 50) {
    await Promise.all(Array.from({ length: 50 }, (_, j) => c.callTool('echo', { text: `${i + j}` })));
  }
  await c.close();
  await new Promise((r) => setTimeout(r, 50));
  for (let i = 0; i < 5; i++) globalThis.gc();
  const m = process.memoryUsage();
  return { rss: m.rss, heap: m.heapUsed };
}

// Warm-up: two phases, until the allocators (one arena per tokio worker thread) and V8 reach
// their working set; with one phase only, RSS still grows by ~10 % over the next.
await phase(httpCycles, stdioCycles, calls);
await phase(httpCycles, stdioCycles, calls);
const first = await phase(httpCycles, stdioCycles, calls);
const second = await phase(httpCycles, stdioCycles, calls);
await h.close();
process.stdout.write(JSON.stringify({ first, second, ms: Date.now() - t0 }));
