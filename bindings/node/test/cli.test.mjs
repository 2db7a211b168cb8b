// `npx mcpcore`: the package's `bin` runs core's command line against the Rust demo-server over
// stdio, with the binary's exit statuses.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { demoServer } from '../testing/demo-server.mjs';

const pkg = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8'));
const bin = fileURLToPath(new URL(`../${pkg.bin.mcpcore}`, import.meta.url));

function mcpcore(args, input = '') {
  return spawnSync(process.execPath, [bin, ...args], { input, encoding: 'utf8', timeout: 120_000 });
}

test('the bin calls a tool and prints its result', () => {
  const p = mcpcore(['call', 'add', 'a=2', 'b=3', '--', demoServer()]);
  assert.equal(p.status, 0, p.stderr);
  assert.deepEqual(JSON.parse(p.stdout).structuredContent, { sum: 5 });
});

test('exit statuses: isError 1, a JSON-RPC error 2, no server 3; --help', () => {
  const demo = demoServer();
  let p = mcpcore(['call', 'echo', '--no-check', '{}', '--', demo]);
  assert.equal(p.status, 1);
  assert.equal(JSON.parse(p.stdout).isError, true);
  p = mcpcore(['call', 'fail', '--', demo]);
  assert.equal(p.status, 2);
  assert.match(p.stderr, /-32603/);
  p = mcpcore(['call', 'echo', 'text=x', '--', '/nonexistent/server']);
  assert.equal(p.status, 3);
  p = mcpcore(['--help']);
  assert.equal(p.status, 0);
  assert.match(p.stdout, /Exit status/);
});

test('an elicitation is asked on stderr and answered on stdin', () => {
  const p = mcpcore(['call', 'confirm', 'question=Ship?', '--', demoServer()], 'y\n');
  assert.equal(p.status, 0, p.stderr);
  assert.equal(JSON.parse(p.stdout).content[0].text, 'confirmed: Ship?');
  assert.match(p.stderr, /The server asks: Ship\?/);
});
