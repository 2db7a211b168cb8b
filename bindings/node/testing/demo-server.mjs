// The Rust demo-server binary (examples/, built by cargo) the tests drive.
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { homedir } from 'node:os';
import { fileURLToPath } from 'node:url';

export function demoServer() {
  const repo = fileURLToPath(new URL('../../..', import.meta.url));
  const exe = process.platform === 'win32' ? 'demo-server.exe' : 'demo-server';
  const candidates = [
    process.env.MCPCORE_DEMO_SERVER,
    process.env.CARGO_TARGET_DIR && join(process.env.CARGO_TARGET_DIR, 'debug', exe),
    join(homedir(), '.cache', 'mcpcore', 'target', 'debug', exe),
    join(repo, 'target', 'debug', exe),
  ].filter(Boolean);
  const found = candidates.find((p) => existsSync(p));
  // Not a skip: scripts/test.sh builds it (cargo build -p mcpcore-examples --bin demo-server).
  assert.ok(found, `demo-server not found (tried ${candidates.join(', ')}); build it with cargo build -p mcpcore-examples --bin demo-server`);
  return found;
}
