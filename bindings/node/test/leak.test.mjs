// A --expose-gc leak smoke test: 31,000 tool calls in-process over HTTP; neither the JS heap nor
// (once warm) the RSS may keep growing. See testing/leak.mjs.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

test('no growth over 30,000 calls (--expose-gc)', { timeout: 120_000 }, () => {
  const script = fileURLToPath(new URL('../testing/leak.mjs', import.meta.url));
  const r = spawnSync(process.execPath, ['--expose-gc', script], { encoding: 'utf8' });
  assert.equal(r.status, 0, r.stderr);
  const { heap, rss } = JSON.parse(r.stdout);
  assert.ok(heap < 1024 * 1024, `JS heap grew by ${heap} bytes`);
  assert.ok(rss < 16 * 1024 * 1024, `RSS grew by ${rss} bytes over 10,000 calls`);
});

const FIXED_YOUNG_GEN = ['--min-semi-space-size=16', '--max-semi-space-size=16'];

// The contract: 1,000 HTTP connect/close cycles (both eras), 32 stdio ones (child processes) and
// 10,000 calls over two measured phases after a warm-up; RSS flat within 10 % between the phases.
test('RSS flat over connect/close cycles and calls (--expose-gc)', { timeout: 150_000 }, () => {
  const script = fileURLToPath(new URL('../testing/leak-cycles.mjs', import.meta.url));
  // A fixed young generation: V8 otherwise grows its semi-spaces (by ~16 MiB of RSS) at a
  // point that depends on allocation rate and load, which is no leak but looks like one.
  const r = spawnSync(process.execPath, [...FIXED_YOUNG_GEN, '--expose-gc', script, '500', '16', '5000'], {
    encoding: 'utf8',
    timeout: 140_000,
  });
  assert.equal(r.status, 0, `${r.error ?? ''}\n${r.stderr}`);
  const { first, second, ms } = JSON.parse(r.stdout);
  const growth = (second.rss - first.rss) / first.rss;
  const mb = (b) => (b / 1024 / 1024).toFixed(1);
  assert.ok(growth < 0.1, `RSS grew ${(growth * 100).toFixed(1)} % (${mb(first.rss)} → ${mb(second.rss)} MiB)`);
  assert.ok(second.heap - first.heap < 1024 * 1024, `JS heap grew by ${second.heap - first.heap} bytes`);
  console.log(`leak contract: RSS ${mb(first.rss)} → ${mb(second.rss)} MiB, ${ms} ms`);
});

test('registered handlers alone do not keep the process alive', { timeout: 30_000 }, () => {
  const lib = new URL('../lib/index.js', import.meta.url).href;
  const code = `import { Server } from '${lib}';
    new Server({ name: 'x', version: '1' }).tool({ name: 't', inputSchema: { type: 'object' } }, () => 'x');`;
  const t0 = Date.now();
  const r = spawnSync(process.execPath, ['--input-type=module', '-e', code], { encoding: 'utf8', timeout: 20_000 });
  assert.equal(r.status, 0, r.stderr);
  assert.ok(Date.now() - t0 < 10_000);
});
