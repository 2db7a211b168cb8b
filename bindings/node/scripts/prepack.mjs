// `npm pack` / `npm publish`: put the addon built for this platform into `npm/<triple>/`, laid out
// as napi's per-platform package (`mcpcore.<triple>.node` + a package.json naming its os/cpu), so
// the tarball installs without cargo. Packages for other platforms go beside it (built on their
// own machines) and can later be published on their own as `mcpcore-<triple>`.
import { copyFileSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import triples from '../lib/triple.cjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const { triple } = triples;
const file = `mcpcore.${triple}.node`;
if (!existsSync(join(root, file))) {
  console.error(`mcpcore: ${file} is not built; run \`npm install\` (or \`npm run build\`) first`);
  process.exit(1);
}
const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));
const dir = join(root, 'npm', triple);
mkdirSync(dir, { recursive: true });
copyFileSync(join(root, file), join(dir, file));
const [os, cpu, libc] = triple.split('-');
const platform = {
  name: `${pkg.name}-${triple}`,
  version: pkg.version,
  description: `The ${triple} addon of ${pkg.name}`,
  license: pkg.license,
  main: file,
  files: [file],
  os: [os],
  cpu: [cpu],
  ...(libc === 'gnu' ? { libc: ['glibc'] } : libc === 'musl' ? { libc: ['musl'] } : {}),
  engines: pkg.engines,
};
writeFileSync(join(dir, 'package.json'), `${JSON.stringify(platform, null, 2)}\n`);
console.error(`mcpcore: packed the prebuilt addon as npm/${triple}/${file}`);
