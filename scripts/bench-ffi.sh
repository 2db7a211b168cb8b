#!/usr/bin/env bash
# Per-call overhead of a C-ABI handler vs a Rust handler (in-process tools/call through a
# session, no transport). Prints ns/call for both and the difference. A benchmark, not a test.
#
#   scripts/bench-ffi.sh [CALLS]     (default 100000; BENCH_PROFILE=dev for a quick debug run)
set -euo pipefail
cd "$(dirname "$0")/.."
calls="${1:-100000}"
profile_flag=(--release)
[ "${BENCH_PROFILE:-release}" = dev ] && profile_flag=()
out="$(BENCH_CALLS="$calls" cargo test "${profile_flag[@]}" -q -p mcpcore-ffi --lib bench::handler_overhead \
  -- --ignored --nocapture --test-threads=1 2>&1)" || { echo "$out" >&2; exit 1; }
echo "$out" | grep -E "calls|handler|overhead"
