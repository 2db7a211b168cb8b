// (Outside test/.) A stdio server for test/signal-lazy.test.mjs: `late` reads ctx.signal for the
// first time only when `open` is called; `early` reads it at once and answers when it fires;
// `seen` reports what they saw.
import { Server } from '../lib/index.js';

const s = new Server({ name: 'lazy-signal', version: '1.0.0' });
const seen = { late: [], early: [] };
let release;
const gate = new Promise((r) => (release = r));
s.tool({ name: 'late', inputSchema: { type: 'object' } }, async (_a, ctx) => {
  await gate;
  seen.late.push(ctx.signal.aborted);
  return 'late';
});
s.tool({ name: 'early', inputSchema: { type: 'object' } }, async (_a, ctx) => {
  const { signal } = ctx;
  seen.early.push(signal.aborted);
  await new Promise((r) => signal.addEventListener('abort', r, { once: true }));
  seen.early.push(signal.aborted);
  return 'early';
});
s.tool({ name: 'open', inputSchema: { type: 'object' } }, () => {
  release();
  return 'open';
});
s.tool({ name: 'seen', inputSchema: { type: 'object' } }, () => seen);
await s.serveStdio();
