#!/usr/bin/env bash
# Runs the official MCP conformance suite (../shared/conformance/run.sh, pinned version, installed
# from npm with the Node 22 it needs, cached under ~/.cache/mcp-conformance) against our fixture
# server (both revisions, unscored plain-protocol scenarios counted too) and, when built, our
# fixture client. conformance/expected-failures.yaml lists what may fail, each entry with a reason;
# a stale entry fails the run.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
# The shared runner beside the checkout when present, else the vendored copy (conformance/run.sh).
runner="${MCP_CONFORMANCE_RUNNER:-$root/../shared/conformance/run.sh}"
[ -f "$runner" ] || runner="$root/conformance/run.sh"
[ -f "$runner" ] || { echo "conformance runner not found at $runner" >&2; exit 2; }
target="${CARGO_TARGET_DIR:-$root/target}"
baseline="$root/conformance/expected-failures.yaml"

cargo build -q -p mcpcore-examples --bin conformance-server --bin conformance-client
server="$target/debug/conformance-server"
client="$target/debug/conformance-client"

status=0
echo "== conformance: server legs (2025-11-25, 2026-07-28)"
bash "$runner" server --server-cmd "$server --port {port}" --spec-version 2025-11-25,2026-07-28 \
  --include-unscored --expected-failures "$baseline" || status=1
echo "== conformance: client legs (2025-11-25, 2026-07-28)"
bash "$runner" client --client-cmd "$client" --spec-version 2025-11-25,2026-07-28 \
  --include-unscored --expected-failures "$baseline" || status=1
exit $status
