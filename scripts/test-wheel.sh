#!/usr/bin/env bash
# Builds the Python binding's release wheel and sdist and tests them: one abi3 wheel for CPython
# 3.9 and newer, tagged manylinux2014 (glibc 2.17: Debian 10+, RHEL/CentOS 7+, Ubuntu 18.04+),
# linked by zig (`ziglang` from PyPI) against the old glibc; `auditwheel show` must agree with the
# tag. The wheel is installed with no Rust toolchain reachable into fresh venvs of Python 3.9 and
# 3.13 (pyenv), which run a server and a client; the sdist is built into a wheel with cargo
# (bindings/python/wheel_tests). Called by scripts/test-python.sh; scripts/bench-python.sh reuses
# the wheel.
#   MCPCORE_PY_VENV   the venv that runs the checks (pytest); default as in test-python.sh
#   MCPCORE_WHEEL_DIR where the wheel goes (default: $CARGO_TARGET_DIR/wheel-release)
set -euo pipefail
cd "$(dirname "$0")/.."

export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$HOME/.cache/mcpcore/target}"
export CARGO_INCREMENTAL="${CARGO_INCREMENTAL:-0}"
venv="${MCPCORE_PY_VENV:-$(dirname "$CARGO_TARGET_DIR")/py-venv}"
out="${MCPCORE_WHEEL_DIR:-$CARGO_TARGET_DIR/wheel-release}"
sdist_out="$CARGO_TARGET_DIR/sdist"

# maturin the command-line tool, pinned like the PEP 517 backend's range in pyproject.toml.
# ziglang provides the `zig` maturin links with; auditwheel checks the result's policy.
"$venv/bin/python" -m pip install -q --disable-pip-version-check "maturin>=1.7,<2" \
  "ziglang>=0.13,<0.18" "auditwheel>=6,<7"
# maturin runs `python3 -m ziglang`: the venv's python3 must come first.
export PATH="$venv/bin:$PATH"

start=$(date +%s)
# A fresh directory: exactly one wheel must come out of one build.
rm -rf "$out"
# zig builds for an explicit target (CARGO_TARGET_DIR/x86_64-unknown-linux-gnu/release); a warm
# target dir relinks only what changed. Bounded so a stuck build fails the run.
timeout 1800 "$venv/bin/maturin" build --release --quiet -m bindings/python/Cargo.toml \
  --interpreter "$venv/bin/python" --zig --compatibility manylinux2014 --out "$out"
echo "== wheel built in $(($(date +%s) - start)) s: $(cd "$out" && ls)"
rm -rf "$sdist_out"
"$venv/bin/maturin" sdist -m bindings/python/Cargo.toml --out "$sdist_out"

MCPCORE_WHEEL="$(ls "$out"/*.whl)" MCPCORE_SDIST="$(ls "$sdist_out"/*.tar.gz)" timeout 1200 "$venv/bin/python" -m pytest \
  bindings/python/wheel_tests -q -p no:cacheprovider -r fEs
