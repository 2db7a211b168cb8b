#!/usr/bin/env bash
# Runs every test of mcpcore: formatting, lints, Rust unit and wire tests (real stdio pipes,
# every message validated against the official schemas in ../shared/spec).
# The C leg runs inside `cargo test` (ffi/tests/c_suite.rs: C11 programs against the header, plain,
# ASan+UBSan and valgrind when available). Later legs (Python, Node, conformance) join here.
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
cargo test --workspace
