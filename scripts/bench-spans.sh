#!/usr/bin/env bash
# What one HTTP request's spans cost with OTLP export on, in process: the HTTP span and the
# MCP span under it made, entered, finished and encoded for the exporter through the process
# subscriber (core/src/telemetry/bench.rs), in ns per request, the fastest of 7 rounds. A
# benchmark, not a test. `bench-http.sh` prints what the same spans cost a served request
# (requests/s and server CPU with spans exported vs off); this figure is the part the span
# code itself controls, steady enough to compare two commits on a busy machine.
#   scripts/bench-spans.sh [CALLS]   (default 200000 per round)
set -euo pipefail
cd "$(dirname "$0")/.."
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$HOME/.cache/mcpcore/target}"
out="$(BENCH_CALLS="${1:-200000}" cargo test --release -q -p mcpcore --lib --features otlp \
  telemetry::bench::span_pair -- --ignored --nocapture --test-threads=1 2>&1)" || { echo "$out" >&2; exit 1; }
grep '^spans:' <<<"$out"
