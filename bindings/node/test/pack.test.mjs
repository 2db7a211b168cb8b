// `npm pack` makes a tarball that installs into a fresh project without cargo: it carries the
// prebuilt addon for this platform in `npm/<triple>/`, and its install script uses it instead of
// building. The installed package then runs a server and a client.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import triples from '../lib/triple.cjs';

const root = fileURLToPath(new URL('..', import.meta.url));
const { triple } = triples;

/** The environment of a machine without Rust: no PATH entry holding cargo, no npm_* or cargo
 * variables from the `npm test` that runs this. */
function noCargoEnv() {
  const env = {};
  for (const [k, v] of Object.entries(process.env)) {
    if (/^(npm_|CARGO|RUST|MCPCORE_)/i.test(k)) continue;
    env[k] = v;
  }
  env.PATH = (process.env.PATH ?? '')
    .split(delimiter)
    .filter((d) => d && !existsSync(join(d, 'cargo')) && !existsSync(join(d, 'rustc')))
    .join(delimiter);
  return env;
}

function run(cmd, args, opts) {
  const r = spawnSync(cmd, args, { encoding: 'utf8', timeout: 120_000, ...opts });
  assert.equal(r.status, 0, `${cmd} ${args.join(' ')} failed (${r.status ?? r.signal}):\n${r.stdout}\n${r.stderr}`);
  return r.stdout;
}

test('npm pack installs and runs without cargo (prebuilt addon in npm/<triple>/)', { timeout: 240_000 }, () => {
  const tmp = mkdtempSync(join(tmpdir(), 'mcpcore-pack-'));
  try {
    const env = noCargoEnv();
    assert.equal(spawnSync('cargo', ['--version'], { env }).error?.code, 'ENOENT', 'cargo is still on PATH');
    const packed = JSON.parse(run('npm', ['pack', '--json', '--pack-destination', tmp], { cwd: root }));
    const files = packed[0].files.map((f) => f.path);
    assert.ok(files.includes(`npm/${triple}/mcpcore.${triple}.node`), files.join('\n'));
    assert.ok(files.includes(`npm/${triple}/package.json`));
    assert.ok(!files.some((f) => f.startsWith('src/') || f.endsWith('Cargo.toml')), files.join('\n'));
    assert.ok(!files.some((f) => f.startsWith('node_modules/') || f.startsWith('test')));
    const tarball = join(tmp, packed[0].filename);

    const app = join(tmp, 'app');
    run('mkdir', ['-p', app]);
    writeFileSync(join(app, 'package.json'), JSON.stringify({ name: 'app', version: '1.0.0', private: true }));
    run('npm', ['install', '--offline', '--no-audit', '--no-fund', '--foreground-scripts', tarball], { cwd: app, env });
    const pkg = join(app, 'node_modules', 'mcpcore');
    assert.deepEqual(readdirSync(join(pkg, 'npm')), [triple]);
    // The install script itself (which recent npm runs only once approved) finds the prebuilt
    // addon and builds nothing.
    const install = spawnSync(process.execPath, [join(pkg, 'scripts', 'install.mjs')], { cwd: pkg, env, encoding: 'utf8' });
    assert.equal(install.status, 0, install.stderr);
    assert.ok(!existsSync(join(pkg, `mcpcore.${triple}.node`)));

    writeFileSync(
      join(app, 'main.mjs'),
      `import { Server, Client } from 'mcpcore';
import { createRequire } from 'node:module';
const server = new Server({ name: 'packed', version: '1.0.0' });
server.tool({ name: 'add', inputSchema: { type: 'object' } }, ({ a, b }) => ({ sum: a + b }));
const h = await server.listenHttp({ host: '127.0.0.1', port: 0 });
const c = await Client.connectHttp(h.url, { mode: 'modern' });
const r = await c.callTool('add', { a: 2, b: 3 });
await c.close();
await server.close();
const cjs = createRequire(import.meta.url)('mcpcore');
console.log(JSON.stringify({ sum: r.structuredContent.sum, cjs: typeof cjs.Client }));
`,
    );
    const out = run(process.execPath, ['main.mjs'], { cwd: app, env });
    assert.deepEqual(JSON.parse(out.trim()), { sum: 5, cjs: 'function' });
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
});
