// A client call under an AbortSignal whose arguments the addon refuses synchronously must not
// leave its cancellation token in the native client's map (testing/cancel-leak.mjs).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

test('refused calls under a signal leave no cancellation token behind (--expose-gc)', { timeout: 120_000 }, () => {
  const script = fileURLToPath(new URL('../testing/cancel-leak.mjs', import.meta.url));
  const r = spawnSync(process.execPath, ['--expose-gc', script], { encoding: 'utf8', timeout: 100_000 });
  assert.equal(r.status, 0, r.stderr);
  const { rss, refused, ok } = JSON.parse(r.stdout);
  assert.equal(refused, 220_000, 'every call with a non-string method is refused');
  assert.ok(ok, 'the client works afterwards');
  assert.ok(rss < 10 * 1024 * 1024, `RSS grew by ${rss} bytes over 200,000 refused calls`);
});
