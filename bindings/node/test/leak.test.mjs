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

test('registered handlers alone do not keep the process alive', { timeout: 30_000 }, () => {
  const lib = new URL('../lib/index.js', import.meta.url).href;
  const code = `import { Server } from '${lib}';
    new Server({ name: 'x', version: '1' }).tool({ name: 't', inputSchema: { type: 'object' } }, () => 'x');`;
  const t0 = Date.now();
  const r = spawnSync(process.execPath, ['--input-type=module', '-e', code], { encoding: 'utf8', timeout: 20_000 });
  assert.equal(r.status, 0, r.stderr);
  assert.ok(Date.now() - t0 < 10_000);
});
