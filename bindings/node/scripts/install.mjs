// `npm install` in (or of) a source checkout: build the addon from source with cargo. The
// published packages carry no install script: the main package gets its addon from the
// per-platform optional dependency `mcpcore-<triple>` (scripts/stage.mjs).
//
// Release by default. MCPCORE_NODE_PROFILE=dev builds the dev profile instead: scripts/test.sh
// sets it so the addon reuses the debug artifacts `cargo test` already built in the same
// CARGO_TARGET_DIR (a cold release build of core with thin LTO costs minutes more on CI).
//
// With @napi-rs/cli present (a checkout where `npm install` installed the dev dependencies) it
// runs `napi build --platform`, which also regenerates index.d.ts. When this package is installed
// as a dependency (`npm install ./bindings/node` elsewhere), dev dependencies are not installed:
// then it runs cargo itself and copies the library to the name napi would give it.
import { spawnSync } from 'node:child_process';
import { copyFileSync, existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const dev = process.env.MCPCORE_NODE_PROFILE === 'dev';
const { triple } = await import('../lib/triple.cjs').then((m) => m.default);

if (!existsSync(join(root, 'Cargo.toml'))) {
  console.error(`mcpcore: no sources to build the ${triple} addon from; install the published mcpcore package`);
  process.exit(1);
}

function run(cmd, args) {
  const r = spawnSync(cmd, args, { cwd: root, stdio: 'inherit', shell: process.platform === 'win32' });
  if (r.status !== 0) process.exit(r.status ?? 1);
}

const cli = join(root, 'node_modules', '.bin', process.platform === 'win32' ? 'napi.cmd' : 'napi');
if (existsSync(cli)) {
  run(cli, ['build', '--platform', ...(dev ? [] : ['--release']), '--no-js', '--dts', 'index.d.ts']);
} else {
  run('cargo', ['build', '-p', 'mcpcore-node', ...(dev ? [] : ['--release'])]);
  const target = process.env.CARGO_TARGET_DIR ?? join(root, '..', '..', 'target');
  const lib = { linux: 'libmcpcore_node.so', darwin: 'libmcpcore_node.dylib', win32: 'mcpcore_node.dll' }[process.platform];
  copyFileSync(join(target, dev ? 'debug' : 'release', lib), join(root, `mcpcore.${triple}.node`));
}
