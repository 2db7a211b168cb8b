// `npm install`: build the addon from source with cargo (no prebuilt binaries yet).
// Release by default. MCPCORE_NODE_PROFILE=dev builds the dev profile instead: scripts/test.sh
// sets it so the addon reuses the debug artifacts `cargo test` already built in the same
// CARGO_TARGET_DIR (a cold release build of core with thin LTO takes several minutes more).
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const cli = join(root, 'node_modules', '.bin', process.platform === 'win32' ? 'napi.cmd' : 'napi');
if (!existsSync(cli)) {
  console.error('mcpcore: @napi-rs/cli is missing (npm install it as a dev dependency to build from source)');
  process.exit(1);
}
const profile = process.env.MCPCORE_NODE_PROFILE === 'dev' ? [] : ['--release'];
const r = spawnSync(cli, ['build', '--platform', ...profile, '--no-js', '--dts', 'index.d.ts'], {
  cwd: root,
  stdio: 'inherit',
});
process.exit(r.status ?? 1);
