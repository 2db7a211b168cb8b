// A client call under an AbortSignal whose arguments the addon refuses synchronously must not
// leave its cancellation token in the native client's map (testing/cancel-leak.mjs: 300,000
// such calls, measured against as many without a signal; a token each would be ~45 MB).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

test('refused calls under a signal leave no cancellation token behind (--expose-gc)', { timeout: 120_000 }, () => {
  const script = fileURLToPath(new URL('../testing/cancel-leak.mjs', import.meta.url));
  const r = spawnSync(process.execPath, ['--expose-gc', script], { encoding: 'utf8', timeout: 100_000 });
  assert.equal(r.status, 0, `${r.error ?? ''}\n${r.stderr}`);
  const { control, signal, refused, expected, ok } = JSON.parse(r.stdout);
  assert.equal(refused, expected, 'every call with a non-string method is refused');
  assert.ok(ok, 'the client works afterwards');
  const mb = (b) => (b / 1024 / 1024).toFixed(1);
  assert.ok(signal < 16 * 1024 * 1024, `RSS grew ${mb(signal)} MiB over 300,000 refused calls under a signal (${mb(control)} MiB without)`);
});
