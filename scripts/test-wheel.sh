#!/usr/bin/env bash
# Builds the Python binding's wheel with `maturin build --release` (one abi3 wheel for CPython
# 3.9 and newer) and tests it: its tag, metadata and files, then an install into a fresh venv with
# no Rust toolchain reachable, `import mcpcore` and a stdio round trip from that venv
# (bindings/python/wheel_tests). Called by scripts/test-python.sh; scripts/bench-python.sh
# reuses the wheel.
#   MCPCORE_PY_VENV   the venv that runs the checks (pytest); default as in test-python.sh
#   MCPCORE_WHEEL_DIR where the wheel goes (default: $CARGO_TARGET_DIR/wheel-release)
set -euo pipefail
cd "$(dirname "$0")/.."

export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$HOME/.cache/mcpcore/target}"
export CARGO_INCREMENTAL="${CARGO_INCREMENTAL:-0}"
venv="${MCPCORE_PY_VENV:-$(dirname "$CARGO_TARGET_DIR")/py-venv}"
out="${MCPCORE_WHEEL_DIR:-$CARGO_TARGET_DIR/wheel-release}"

# maturin the command-line tool, pinned like the PEP 517 backend's range in pyproject.toml.
"$venv/bin/python" -m pip install -q --disable-pip-version-check "maturin>=1.7,<2"

start=$(date +%s)
# A fresh directory: exactly one wheel must come out of one build.
rm -rf "$out"
# The release profile shares CARGO_TARGET_DIR/release with the benchmarks; a warm target dir
# relinks only what changed. Bounded so a stuck build fails the run.
timeout 1800 "$venv/bin/maturin" build --release --quiet -m bindings/python/Cargo.toml \
  --interpreter "$venv/bin/python" --out "$out"
echo "== wheel built in $(($(date +%s) - start)) s: $(cd "$out" && ls)"

MCPCORE_WHEEL="$(ls "$out"/*.whl)" timeout 600 "$venv/bin/python" -m pytest \
  bindings/python/wheel_tests -q -p no:cacheprovider -r fEs
