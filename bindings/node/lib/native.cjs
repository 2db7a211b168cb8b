'use strict';
// Loads the addon: the one `napi build --platform` left in the package root (a source build,
// mcpcore.<platform>-<arch>[-<abi>].node), else the prebuilt one a packed tarball carries in
// `npm/<triple>/` (scripts/prepack.mjs), else a per-platform package `mcpcore-<triple>` (napi's
// layout, for when those are published).
const { existsSync } = require('node:fs');
const { join } = require('node:path');
const { triple } = require('./triple.cjs');

const name = `mcpcore.${triple}.node`;
const root = join(__dirname, '..');
const built = join(root, name);
const prebuilt = join(root, 'npm', triple, name);

function load() {
  if (existsSync(built)) return require(built);
  if (existsSync(prebuilt)) return require(prebuilt);
  try {
    return require(`mcpcore-${triple}`);
  } catch (e) {
    if (e?.code !== 'MODULE_NOT_FOUND') throw e;
  }
  throw new Error(
    `mcpcore: no native addon for ${triple} (neither ${built} nor ${prebuilt}); build it with \`npm run build\` in bindings/node (needs cargo)`,
  );
}

module.exports = load();
