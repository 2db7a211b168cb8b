#!/usr/bin/env bash
# Cross-door parity: the one server definition of examples/parity, written with the Rust API, the
# C ABI, the Python binding and the Node binding, answers the same requests identically in both
# eras over stdio (scripts/parity.py compares the answers byte for byte after normalising ids).
# Needs the Python binding installed in MCPCORE_PY_VENV and the Node addon built in bindings/node
# (scripts/test.sh runs this after both).
set -euo pipefail
cd "$(dirname "$0")/.."

export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$HOME/.cache/mcpcore/target}"
venv="${MCPCORE_PY_VENV:-$(dirname "$CARGO_TARGET_DIR")/py-venv}"
out="$CARGO_TARGET_DIR/parity"
mkdir -p "$out"

cargo build -q -p mcpcore-examples --bin parity-server
cargo build -q -p mcpcore-ffi
cc -std=c11 -Wall -Wextra -Werror -Iinclude examples/parity/server.c \
  "$CARGO_TARGET_DIR/debug/libmcpcore.a" -lpthread -ldl -lm -o "$out/parity_server_c"

timeout 300 python3 scripts/parity.py \
  rust="$CARGO_TARGET_DIR/debug/parity-server" \
  c="$out/parity_server_c" \
  python="$venv/bin/python examples/parity/server.py" \
  node="node examples/parity/server.mjs"
