'use strict';
// Loads the addon built by `napi build --platform` (mcpcore.<platform>-<arch>[-<abi>].node).
// The names match napi's per-platform packages, so prebuilt `npm/<triple>/` packages can be
// added later without changing this file's callers.
const { existsSync } = require('node:fs');
const { join } = require('node:path');
const { triple } = require('./triple.cjs');

const file = join(__dirname, '..', `mcpcore.${triple}.node`);
if (!existsSync(file)) {
  throw new Error(
    `mcpcore: no native addon for ${triple} (${file}); build it with \`npm run build\` in bindings/node (needs cargo)`,
  );
}
module.exports = require(file);
