// `npm run stage`: lay out the packages a release publishes, napi-rs style, under `dist/`:
//
//   dist/mcpcore/                 the main package: lib/, index.d.ts, README, LICENSE; no install
//                                 script and no addon; each platform's addon is an optional
//                                 dependency, so npm fetches only the one matching os/cpu/libc
//   dist/mcpcore-<triple>/        the addon built on this machine (`mcpcore.<triple>.node`),
//                                 with os/cpu/libc fields (`mcpcore-linux-x64-gnu` here)
//
// Then `npm pack` (or `npm publish`) in each directory. The other platforms' packages are built
// on their own runners (.github/workflows/release.yml); the main package names them all.
import { copyFileSync, cpSync, existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import triples from '../lib/triple.cjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const repo = join(root, '..', '..');
const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));
const { triple } = triples;
const addon = `mcpcore.${triple}.node`;
if (!existsSync(join(root, addon))) {
  console.error(`mcpcore: ${addon} is not built; run \`npm run build\` (needs cargo) first`);
  process.exit(1);
}

/** napi's platform names of the targets package.json lists (`x86_64-unknown-linux-gnu` ->
 * `linux-x64-gnu`). */
function platformOf(target) {
  const [arch, , os, abi] = target.split('-');
  const cpu = { x86_64: 'x64', aarch64: 'arm64' }[arch] ?? arch;
  const plat = { linux: 'linux', darwin: 'darwin', windows: 'win32' }[os] ?? os;
  return abi ? `${plat}-${cpu}-${abi}` : `${plat}-${cpu}`;
}

const platforms = pkg.napi.targets.map(platformOf);
if (!platforms.includes(triple)) {
  console.error(`mcpcore: ${triple} is not among package.json's napi.targets`);
  process.exit(1);
}
const dist = join(root, 'dist');
rmSync(dist, { recursive: true, force: true });

// The main package: the repo's manifest without what only a source checkout needs.
const main = join(dist, pkg.name);
mkdirSync(main, { recursive: true });
cpSync(join(root, 'lib'), join(main, 'lib'), { recursive: true });
copyFileSync(join(root, 'index.d.ts'), join(main, 'index.d.ts'));
const readme = existsSync(join(root, 'README.md')) ? join(root, 'README.md') : join(repo, 'README.md');
copyFileSync(readme, join(main, 'README.md'));
copyFileSync(join(repo, 'LICENSE'), join(main, 'LICENSE'));
const { scripts: _scripts, devDependencies: _dev, files: _files, ...published } = pkg;
const manifest = {
  ...published,
  files: ['lib/', 'index.d.ts'],
  optionalDependencies: Object.fromEntries(platforms.map((p) => [`${pkg.name}-${p}`, pkg.version])),
};
writeFileSync(join(main, 'package.json'), `${JSON.stringify(manifest, null, 2)}\n`);

// This machine's platform package.
const plat = join(dist, `${pkg.name}-${triple}`);
mkdirSync(plat, { recursive: true });
copyFileSync(join(root, addon), join(plat, addon));
copyFileSync(join(repo, 'LICENSE'), join(plat, 'LICENSE'));
const [os, cpu, libc] = triple.split('-');
const platform = {
  name: `${pkg.name}-${triple}`,
  version: pkg.version,
  description: `The ${triple} native addon of ${pkg.name} (installed by ${pkg.name} as an optional dependency)`,
  license: pkg.license,
  repository: pkg.repository,
  main: addon,
  files: [addon],
  os: [os],
  cpu: [cpu],
  ...(libc === 'gnu' ? { libc: ['glibc'] } : libc === 'musl' ? { libc: ['musl'] } : {}),
  engines: pkg.engines,
};
writeFileSync(join(plat, 'package.json'), `${JSON.stringify(platform, null, 2)}\n`);
console.error(`mcpcore: staged dist/${pkg.name} and dist/${pkg.name}-${triple}`);
