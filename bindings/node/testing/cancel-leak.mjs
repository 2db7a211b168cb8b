// Run with --expose-gc: client requests whose arguments the addon refuses synchronously (a method
// that is not a string), first without a signal (the control: no cancellation token involved),
// then as many under an AbortSignal (each makes a token in the native client's map before the
// call). Prints the RSS growth of each phase after full collections, in bytes. A token left behind
// per refused call costs ~150 bytes: ~45 MB more in the second phase than in the first.
import { Client } from '../lib/index.js';
import { makeServer } from './server.mjs';

const N = 300_000;
const h = await makeServer().listenHttp({ port: 0 });
const c = await Client.connectHttp(h.url, { mode: 'modern' });
const { signal } = new AbortController();
let refused = 0;
async function refusedCalls(n, opts) {
  for (let i = 0; i < n; i++) {
    try {
      await c.request(42, {}, opts);
    } catch {
      refused += 1;
    }
  }
}
function settle() {
  for (let i = 0; i < 5; i++) globalThis.gc();
  return process.memoryUsage().rss;
}
await refusedCalls(N / 10, {});
await refusedCalls(N / 10, { signal });
const r0 = settle();
await refusedCalls(N, {});
const r1 = settle();
await refusedCalls(N, { signal });
const r2 = settle();
// The client still works, and a signal still cancels after all that.
const ok = (await c.callTool('add', { a: 1, b: 2 }, { signal })).structuredContent.sum === 3;
await c.close();
await h.close();
process.stdout.write(JSON.stringify({ control: r1 - r0, signal: r2 - r1, refused, expected: 2.2 * N, ok }));
