#!/usr/bin/env bash
# The official conformance suite's server legs against `mcpcore gateway` in front of the Rust
# fixture (one upstream, over stdio, no prefix), in both directions of era bridging:
#   modern: the gateway speaks 2026-07-28 to the fixture; the 2025-11-25 scenarios reach it as
#           legacy clients and are bridged to the modern era;
#   legacy: the gateway speaks 2025-11-25 to the fixture (a legacy-only server to it); the
#           2026-07-28 scenarios are bridged to the legacy era.
# conformance/expected-failures-gateway-<direction>.yaml lists what cannot pass in a direction,
# each entry with its reason; a stale entry fails the run.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
runner="${MCP_CONFORMANCE_RUNNER:-$root/../shared/conformance/run.sh}"
[ -f "$runner" ] || runner="$root/conformance/run.sh"
target="${CARGO_TARGET_DIR:-$root/target}"

cargo build -q -p mcpcore-examples --bin conformance-server -p mcpcore-cli --bin mcpcore
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
status=0
for direction in modern legacy; do
  cfg="$tmp/$direction.toml"
  # per_capabilities: the legacy direction's 2026-07-28 callers declare capabilities per
  # request; the fixture (stateless) is reached on a connection that declared the same.
  printf '[upstreams.fixture]\ncommand = ["%s", "--stdio"]\nmode = "%s"\nper_capabilities = true\n' \
    "$(realpath "$target/debug/conformance-server")" "$direction" >"$cfg"
  echo "== conformance: server legs through mcpcore gateway ($direction upstream)"
  bash "$runner" server --server-cmd "$target/debug/mcpcore gateway $cfg --http 127.0.0.1:{port} --quiet" \
    --spec-version 2025-11-25,2026-07-28 --include-unscored \
    --expected-failures "$root/conformance/expected-failures-gateway-$direction.yaml" || status=1
done
exit $status
