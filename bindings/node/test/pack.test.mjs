// The published layout (napi-rs): `npm run stage` lays out the main package and this platform's
// package under dist/, `npm pack` packs each, and the two tarballs install together into a fresh
// project offline, on a PATH without cargo: no install script runs (the main package has none),
// the addon comes from the optional dependency mcpcore-<triple>, and `import` and `require`
// both work (test.sh runs this file on Node 20 and on Node 22).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
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

test('the staged main and platform packages install together offline and run without cargo', { timeout: 240_000 }, () => {
  const tmp = mkdtempSync(join(tmpdir(), 'mcpcore-pack-'));
  try {
    const env = noCargoEnv();
    assert.equal(spawnSync('cargo', ['--version'], { env }).error?.code, 'ENOENT', 'cargo is still on PATH');
    // A source checkout refuses to be packed as is: what is published comes from dist/.
    const refused = spawnSync('npm', ['pack', '--dry-run'], { cwd: root, encoding: 'utf8' });
    assert.notEqual(refused.status, 0, 'npm pack of the source checkout must fail');
    run(process.execPath, [join(root, 'scripts', 'stage.mjs')], { cwd: root });
    const pack = (dir) => {
      const [p] = JSON.parse(run('npm', ['pack', '--json', '--pack-destination', tmp], { cwd: join(root, 'dist', dir) }));
      return { files: p.files.map((f) => f.path), tarball: join(tmp, p.filename) };
    };
    const main = pack('mcpcore');
    const plat = pack(`mcpcore-${triple}`);

    const manifest = JSON.parse(readFileSync(join(root, 'dist', 'mcpcore', 'package.json'), 'utf8'));
    assert.equal(manifest.scripts, undefined, 'the published package has no install (or any) script');
    assert.equal(manifest.optionalDependencies[`mcpcore-${triple}`], manifest.version);
    for (const p of ['linux-arm64-gnu', 'darwin-x64', 'darwin-arm64', 'win32-x64-msvc']) {
      assert.ok(manifest.optionalDependencies[`mcpcore-${p}`], `mcpcore-${p} is declared`);
    }
    assert.ok(main.files.includes('lib/index.cjs') && main.files.includes('index.d.ts'), main.files.join('\n'));
    assert.ok(!main.files.some((f) => f.endsWith('.node') || f.startsWith('src/') || f.endsWith('Cargo.toml')), main.files.join('\n'));
    assert.ok(!main.files.some((f) => f.startsWith('scripts/') || f.startsWith('test')), main.files.join('\n'));
    assert.deepEqual(plat.files.sort(), ['LICENSE', `mcpcore.${triple}.node`, 'package.json']);
    const platManifest = JSON.parse(readFileSync(join(root, 'dist', `mcpcore-${triple}`, 'package.json'), 'utf8'));
    assert.deepEqual([platManifest.os, platManifest.cpu], [[process.platform], [process.arch]]);

    const app = join(tmp, 'app');
    run('mkdir', ['-p', app]);
    writeFileSync(join(app, 'package.json'), JSON.stringify({ name: 'app', version: '1.0.0', private: true }));
    run('npm', ['install', '--offline', '--no-audit', '--no-fund', '--foreground-scripts', main.tarball, plat.tarball], { cwd: app, env });
    const pkg = join(app, 'node_modules', 'mcpcore');
    assert.ok(!existsSync(join(pkg, `mcpcore.${triple}.node`)), 'nothing was built into the main package');
    assert.ok(existsSync(join(app, 'node_modules', `mcpcore-${triple}`, `mcpcore.${triple}.node`)));

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
    // `npx mcpcore`: the bin is linked and runs core's command line from the platform addon.
    const version = run('npx', ['--offline', '--no-install', 'mcpcore', '--version'], { cwd: app, env });
    assert.equal(version.trim(), `mcpcore ${manifest.version}`);
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
});
