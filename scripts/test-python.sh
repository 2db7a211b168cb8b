#!/usr/bin/env bash
# Builds and installs the Python binding into a venv and runs its pytest suite.
#   MCPCORE_PY_VENV   the venv (default: next to CARGO_TARGET_DIR, reused between runs)
#   PYTHON            the interpreter that creates it (default: python3; 3.9 or newer)
set -euo pipefail
cd "$(dirname "$0")/.."

export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$HOME/.cache/mcpcore/target}"
export CARGO_INCREMENTAL="${CARGO_INCREMENTAL:-0}"
python="${PYTHON:-python3}"
venv="${MCPCORE_PY_VENV:-$(dirname "$CARGO_TARGET_DIR")/py-venv}"

if ! "$python" -c 'import sys; assert sys.version_info >= (3, 9)' 2>/dev/null; then
  echo "$python 3.9 or newer is required for the Python binding" >&2
  exit 1
fi
if [ ! -x "$venv/bin/python" ]; then
  if ! "$python" -m venv "$venv" 2>/dev/null; then
    echo "== installing python3-venv (apt-get)"
    rm -rf "$venv"
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq python3-venv >/dev/null
    "$python" -m venv "$venv"
  fi
fi

start=$(date +%s)
# mcp: the official Python SDK, pinned, the client of tests/test_sdk_interop.py (the test fails
# when it is missing).
"$venv/bin/python" -m pip install -q --disable-pip-version-check pytest pytest-asyncio mypy ruff pydantic \
  mcp==2.3.0 httpx2 pyjwt cryptography fastapi uvicorn hypercorn prometheus_client opentelemetry-sdk \
  opentelemetry-proto
# The dev profile shares the artifacts of `cargo test` (a release build would compile every
# crate again with LTO). --force-reinstall: the version does not change between commits.
MATURIN_PEP517_ARGS="--profile dev" "$venv/bin/python" -m pip install -q --disable-pip-version-check \
  --force-reinstall --no-deps ./bindings/python
built=$(date +%s)
echo "== python binding built and installed in $((built - start)) s"

# Lint (pyflakes-level errors) and formatting of the Python sources, then: the package
# type-checks strictly and the stub matches the extension (pydantic-core's habit).
"$venv/bin/ruff" check --select F,E9 bindings/python examples/python examples/parity
"$venv/bin/ruff" format --check bindings/python examples/python examples/parity
(cd bindings/python/python && "$venv/bin/python" -m mypy --strict --no-incremental -p mcpcore)
(cd "$venv" && bin/python -m mypy.stubtest mcpcore._native)
# User code: the connect spellings of tests/test_connect_idiom.py type-check against the package.
(cd bindings/python/tests && "$venv/bin/python" -m mypy --strict --no-incremental \
  --follow-imports=silent test_connect_idiom.py)

# The demo-server the client tests drive (already built by `cargo test --workspace`).
cargo build -q -p mcpcore-examples --bin demo-server
"$venv/bin/python" -m pytest bindings/python/tests -q -p no:cacheprovider -r fEs
echo "== python tests ran in $(($(date +%s) - built)) s"

# The API reference renders from the docstrings (tests/test_api_docs.py checks none is missing).
MCPCORE_PY_VENV="$venv" bash scripts/docs-python.sh
# The release wheel (manylinux2014, linked by zig) and the sdist: built once (cached in
# CARGO_TARGET_DIR, which the Python benchmark reuses), then installed into fresh venvs of Python
# 3.9 and 3.13 with no Rust toolchain on PATH.
bash scripts/test-wheel.sh
echo "== python suite (with the wheel) took $(($(date +%s) - start)) s"
