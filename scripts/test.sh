#!/usr/bin/env bash
# Runs every test of mcpcore: formatting, lints, Rust unit and wire tests (real stdio pipes and
# real HTTP on 127.0.0.1, every message validated against the official schemas in ../shared/spec),
# the C suite (inside `cargo test`: ffi/tests/c_suite.rs builds C11 programs against the header and
# runs them plain, under ASan+UBSan and under valgrind), and the official conformance suite.
set -euo pipefail
cd "$(dirname "$0")/.."

export CARGO_TERM_COLOR="${CARGO_TERM_COLOR:-never}"
# A target dir under $HOME survives between CI runs on one machine; a cold run still fits.
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$HOME/.cache/mcpcore/target}"

if ! command -v cargo >/dev/null 2>&1; then
  echo "cargo is required (rustup toolchain)" >&2
  exit 1
fi
rustup component add rustfmt clippy >/dev/null 2>&1 || true

echo "== cargo fmt --check"
cargo fmt --all -- --check
echo "== cargo clippy -D warnings"
cargo clippy --workspace --all-targets -- -D warnings
echo "== cargo test (unit + wire)"
cargo test --workspace --exclude mcpcore-ffi
# The C suite runs each program plain, under ASan+UBSan and under valgrind; one program at a time
# keeps sanitizer and valgrind runs from starving each other on a 2-core machine.
echo "== cargo test -p mcpcore-ffi (C ABI, C suite)"
cargo test -p mcpcore-ffi -- --test-threads=1

# The conformance suite needs node + npm (run.sh fetches the pinned suite and a Node 22 runtime
# from the npm registry into ~/.cache/mcp-conformance).
if ! command -v npm >/dev/null 2>&1 || ! command -v node >/dev/null 2>&1; then
  echo "== installing nodejs and npm (apt-get)"
  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq nodejs npm >/dev/null
fi
echo "== conformance suite"
bash scripts/conformance.sh
