#!/usr/bin/env bash
# Runs the official MCP conformance suite's server legs (../shared/conformance/run.sh, as
# scripts/conformance.sh does) against the Python binding's fixture,
# examples/python/conformance_server.py, which mirrors the Rust fixture tool by tool (its task
# tools in examples/python/conformance_tasks.py); it must score what the Rust fixture scores,
# against the same baseline (conformance/expected-failures.yaml). The same legs run a second time
# against the fixture served as an ASGI app under uvicorn (`--asgi`: `server.asgi_app()`, the
# mount's adapter on core's HttpService::exchange), which must score the same.
#   MCPCORE_PY_VENV   the venv with the binding installed (scripts/test-python.sh builds it; same
#                     default: next to CARGO_TARGET_DIR)
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
runner="${MCP_CONFORMANCE_RUNNER:-$root/../shared/conformance/run.sh}"
[ -f "$runner" ] || runner="$root/conformance/run.sh"
[ -f "$runner" ] || { echo "conformance runner not found at $runner" >&2; exit 2; }
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$HOME/.cache/mcpcore/target}"
venv="${MCPCORE_PY_VENV:-$(dirname "$CARGO_TARGET_DIR")/py-venv}"
python="$venv/bin/python"
if ! "$python" -c 'import mcpcore' 2>/dev/null; then
  echo "the mcpcore binding is not installed in $venv (run scripts/test-python.sh first)" >&2
  exit 2
fi
baseline="$root/conformance/expected-failures.yaml"

echo "== conformance: Python fixture, server legs (2025-11-25, 2026-07-28)"
bash "$runner" server \
  --server-cmd "$python $root/examples/python/conformance_server.py --port {port}" \
  --spec-version 2025-11-25,2026-07-28 --include-unscored --expected-failures "$baseline"

echo "== conformance: Python fixture as an ASGI app under uvicorn, server legs (2025-11-25, 2026-07-28)"
bash "$runner" server \
  --server-cmd "$python $root/examples/python/conformance_server.py --asgi --port {port}" \
  --spec-version 2025-11-25,2026-07-28 --include-unscored --expected-failures "$baseline"
