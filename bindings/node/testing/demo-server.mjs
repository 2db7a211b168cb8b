// The Rust binaries (built by cargo) the tests drive: demo-server (examples/) and mcpcore (cli/).
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { homedir } from 'node:os';
import { fileURLToPath } from 'node:url';

export function demoServer() {
  return cargoBin('demo-server', 'mcpcore-examples', process.env.MCPCORE_DEMO_SERVER);
}

/** The `mcpcore` command (cli/). */
export function mcpcoreBin() {
  return cargoBin('mcpcore', 'mcpcore-cli');
}

function cargoBin(name, pkg, override) {
  const repo = fileURLToPath(new URL('../../..', import.meta.url));
  const exe = process.platform === 'win32' ? `${name}.exe` : name;
  const candidates = [
    override,
    process.env.CARGO_TARGET_DIR && join(process.env.CARGO_TARGET_DIR, 'debug', exe),
    join(homedir(), '.cache', 'mcpcore', 'target', 'debug', exe),
    join(repo, 'target', 'debug', exe),
  ].filter(Boolean);
  const found = candidates.find((p) => existsSync(p));
  // Not a skip: scripts/test.sh builds it (`cargo test --workspace` builds every binary).
  assert.ok(found, `${name} not found (tried ${candidates.join(', ')}); build it with cargo build -p ${pkg} --bin ${name}`);
  return found;
}
