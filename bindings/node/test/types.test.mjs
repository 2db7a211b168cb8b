// The public declarations (lib/index.d.ts) type-check under `tsc --noEmit --strict` together with
// a typed usage file (test-d/usage.ts: Server, Context, Client, McpError, McpcoreError, and
// `@ts-expect-error` lines that fail the check if the declarations accept what they must refuse).
// TypeScript is a pinned devDependency.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const tsc = join(root, 'node_modules', 'typescript', 'bin', 'tsc');
const FLAGS = ['--noEmit', '--strict', '--target', 'es2022', '--module', 'nodenext', '--moduleResolution', 'nodenext', '--lib', 'es2022,dom'];

function check(files) {
  assert.ok(existsSync(tsc), `typescript is not installed (${tsc}): run npm install in bindings/node`);
  return spawnSync(process.execPath, [tsc, ...FLAGS, ...files], { cwd: root, encoding: 'utf8', timeout: 120_000 });
}

test('lib/index.d.ts and test-d/usage.ts pass tsc --strict', { timeout: 150_000 }, () => {
  const r = check(['lib/index.d.ts', 'test-d/usage.ts']);
  assert.equal(r.status, 0, `tsc failed:\n${r.stdout}${r.stderr}`);
});

test('a type error fails the check', { timeout: 150_000 }, () => {
  const dir = mkdtempSync(join(tmpdir(), 'mcpcore-tsc-'));
  try {
    const lib = join(root, 'lib', 'index.js');
    const file = join(dir, 'bad.mts');
    writeFileSync(file, `import { Server } from ${JSON.stringify(lib)};\nnew Server({ name: 'x', version: 1 });\n`);
    const r = check([file]);
    assert.notEqual(r.status, 0, 'tsc accepted a number as the version');
    assert.match(r.stdout, /bad\.mts\(2,\d+\): error TS2322/);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
