// Run with --expose-gc: 200,000 client requests under an AbortSignal whose arguments the addon
// refuses synchronously (a method that is not a string). Each one made a cancellation token in the
// native client's map first; prints the RSS growth over them after a warm-up, in bytes. A token
// left behind per refused call costs ~150 bytes: ~30 MB here.
import { Client } from '../lib/index.js';
import { makeServer } from './server.mjs';

const h = await makeServer().listenHttp({ port: 0 });
const c = await Client.connectHttp(h.url, { mode: 'modern' });
const { signal } = new AbortController();
let refused = 0;
async function refusedCalls(n) {
  for (let i = 0; i < n; i++) {
    try {
      await c.request(42, {}, { signal });
    } catch {
      refused += 1;
    }
  }
}
function settle() {
  for (let i = 0; i < 5; i++) globalThis.gc();
  return process.memoryUsage().rss;
}
await refusedCalls(20_000);
const r0 = settle();
await refusedCalls(200_000);
const r1 = settle();
// The client still works, and a signal still cancels after all that.
const ok = (await c.callTool('add', { a: 1, b: 2 }, { signal })).structuredContent.sum === 3;
await c.close();
await h.close();
process.stdout.write(JSON.stringify({ rss: r1 - r0, refused, ok }));
