'use strict';
// Loads the addon: the one `napi build --platform` left in the package root (a source build,
// mcpcore.<platform>-<arch>[-<abi>].node), else the per-platform package `mcpcore-<triple>` the
// published package installs as an optional dependency (napi's layout; scripts/stage.mjs).
const { existsSync } = require('node:fs');
const { join } = require('node:path');
const { triple } = require('./triple.cjs');

const name = `mcpcore.${triple}.node`;
const root = join(__dirname, '..');
const built = join(root, name);

function load() {
  if (existsSync(built)) return require(built);
  try {
    return require(`mcpcore-${triple}`);
  } catch (e) {
    if (e?.code !== 'MODULE_NOT_FOUND') throw e;
  }
  throw new Error(
    `mcpcore: no native addon for ${triple}: the optional dependency mcpcore-${triple} is not installed (was the install run with --omit=optional?), and there is no source build ${built}`,
  );
}

module.exports = load();
