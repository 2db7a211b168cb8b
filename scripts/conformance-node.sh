#!/usr/bin/env bash
# Runs the official MCP conformance suite's server legs (../shared/conformance/run.sh, pinned
# version, installed from npm with the Node 22 it needs) against the Node binding's fixture,
# examples/node/conformance-server.mjs (its built-in listener, then mounted in Express with
# `--express`), exactly as scripts/conformance.sh does for the Rust fixture
# (both revisions, unscored plain-protocol scenarios counted too; the task tools in
# examples/node/conformance-tasks.mjs), against the same baseline (conformance/expected-failures.yaml):
# the binding must score what core scores. Needs the addon built (npm install in
# bindings/node). NODE names the node binary that runs the fixture (default: node on PATH).
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
runner="${MCP_CONFORMANCE_RUNNER:-$root/../shared/conformance/run.sh}"
[ -f "$runner" ] || runner="$root/conformance/run.sh"
[ -f "$runner" ] || { echo "conformance runner not found at $runner" >&2; exit 2; }
baseline="$root/conformance/expected-failures.yaml"
node="${NODE:-$(command -v node)}"
fixture="$root/examples/node/conformance-server.mjs"

echo "== conformance: Node fixture, server legs (2025-11-25, 2026-07-28)"
bash "$runner" server --server-cmd "$node $fixture --port {port}" --spec-version 2025-11-25,2026-07-28 \
  --include-unscored --expected-failures "$baseline"

# The same fixture mounted in an Express app (`nodeHandler()` at /mcp): the mount must score
# what the built-in listener scores.
echo "== conformance: Node fixture mounted in Express, server legs (2025-11-25, 2026-07-28)"
bash "$runner" server --server-cmd "$node $fixture --express --port {port}" --spec-version 2025-11-25,2026-07-28 \
  --include-unscored --expected-failures "$baseline"
