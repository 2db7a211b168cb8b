// Run with --expose-gc: many calls through an in-process server (a NativeContext, an abort
// callback and a Promise per call). Prints, after full collections, the JS heap growth over the
// second phase and the RSS growth over the fourth (RSS first grows to the allocators' working set,
// then stays flat when nothing leaks).
import { Client } from '../lib/index.js';
import { makeServer } from './server.mjs';

const h = await makeServer().listenHttp({ port: 0 });
const c = await Client.connectHttp(h.url, { mode: 'modern' });
async function calls(n) {
  for (let i = 0; i < n; i += 50) {
    await Promise.all(Array.from({ length: 50 }, (_, j) => c.callTool('add', { a: i, b: j })));
  }
}
function settle() {
  for (let i = 0; i < 5; i++) globalThis.gc();
  return process.memoryUsage();
}
const pause = () => new Promise((r) => setTimeout(r, 50));
await calls(1000);
await pause();
const m0 = settle();
await calls(10000);
await pause();
const m1 = settle();
// Node 22's allocators reach their working set later than Node 20's (RSS still grows ~16 MB over
// this phase, then about 1 MB per further 10,000 calls): one more warm-up phase before the RSS
// is measured.
await calls(10000);
await pause();
const mWarm = settle();
await calls(10000);
await pause();
const m2 = settle();
await c.close();
await h.close();
process.stdout.write(JSON.stringify({ heap: m1.heapUsed - m0.heapUsed, rss: m2.rss - mWarm.rss }));
