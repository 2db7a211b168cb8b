#!/usr/bin/env bash
# Per-call cost of a C-ABI handler against a Rust handler. A benchmark, not a test.
#
#  1. In process: `tools/call` through a session with no transport, the same tool as a Rust
#     closure and as a C callback through the trampoline (ns/call, best of three rounds).
#  2. Over the wire, in the same run: the C example server (examples/c/echo_server.c, its `echo`
#     a C callback on libmcpcore.a) against demo-server (its `echo` a Rust handler), each on one
#     core with one worker thread, the load on the other core:
#       * stdio: the repo's driver (bench/, `stdio-bench`), legacy initialize then `tools/call`,
#         sequential and pipelined, interleaved rounds, medians and the ratio C / Rust;
#       * Streamable HTTP: wrk with scripts/bench/echo.lua (a modern `tools/call`, as
#         bench-http.sh), the two servers measured in turn for ROUNDS rounds, medians and ratio.
#
#   scripts/bench-ffi.sh [CALLS]     (default 100000; BENCH_PROFILE=dev for a quick debug run
#                                     of the in-process part only)
# Knobs: ROUNDS=3 SEQ=20000 PIPE=100000 WARMUP=2000 DURATION=5s CONNECTIONS=64
#   SERVER_CPU=0 LOAD_CPU=1 WIRE=1 (0 skips part 2)
set -euo pipefail
cd "$(dirname "$0")/.."
calls="${1:-100000}"
ROUNDS=${ROUNDS:-3}
SEQ=${SEQ:-20000}
PIPE=${PIPE:-100000}
WARMUP=${WARMUP:-2000}
DURATION=${DURATION:-5s}
CONNECTIONS=${CONNECTIONS:-64}
SERVER_CPU=${SERVER_CPU:-0}
LOAD_CPU=${LOAD_CPU:-1}
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$HOME/.cache/mcpcore/target}"
profile_flag=(--release)
[ "${BENCH_PROFILE:-release}" = dev ] && profile_flag=()
out="$(BENCH_CALLS="$calls" cargo test "${profile_flag[@]}" -q -p mcpcore-ffi --lib bench::handler_overhead \
  -- --ignored --nocapture --test-threads=1 2>&1)" || { echo "$out" >&2; exit 1; }
echo "$out" | grep -E "calls|handler|overhead"
if [ "${BENCH_PROFILE:-release}" = dev ] || [ "${WIRE:-1}" = 0 ]; then exit 0; fi

if ! command -v wrk >/dev/null; then
  echo "installing wrk (apt-get)" >&2
  apt-get install -y wrk >/dev/null 2>&1 || { apt-get update >/dev/null && apt-get install -y wrk >/dev/null; }
fi
cargo build --release -q -p mcpcore-ffi --lib
cargo build --release -q -p mcpcore-bench --bin stdio-bench -p mcpcore-examples --bin demo-server
T="$CARGO_TARGET_DIR/release"
C_SERVER="$T/bench-c-echo-server"
"${CC:-cc}" -std=c11 -O2 -Iinclude examples/c/echo_server.c "$T/libmcpcore.a" -lpthread -ldl -lm -o "$C_SERVER"
PIN_SERVER="taskset -c $SERVER_CPU"
PIN_LOAD="taskset -c $LOAD_CPU"
if [ "$(nproc)" -lt 2 ]; then PIN_SERVER=""; PIN_LOAD=""; fi
export TOKIO_WORKER_THREADS=1 # both servers' runtimes: one worker (the C example asks for the default)

echo
echo "stdio, legacy tools/call echo (stdio-bench: $SEQ sequential, $PIPE pipelined, $ROUNDS rounds):"
# The first server is compared with the other: the ratios printed are C / Rust.
$PIN_LOAD "$T/stdio-bench" --rounds "$ROUNDS" --warmup "$WARMUP" --seq "$SEQ" --pipe "$PIPE" \
  --server "C-handler=$PIN_SERVER $C_SERVER" --server "Rust-handler=$PIN_SERVER $T/demo-server" \
  | sed -n '/^median/,$p' | sed 's/^/  /'

PIDS=()
WORK=$(mktemp -d)
cleanup() { for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done; exec 3>&- 2>/dev/null || true; rm -rf "$WORK"; }
trap cleanup EXIT
# The C example serves HTTP until its stdin ends: a FIFO this shell keeps open for writing.
mkfifo "$WORK/stdin"
exec 3<>"$WORK/stdin"
$PIN_SERVER "$C_SERVER" --http 127.0.0.1:0 <"$WORK/stdin" >"$WORK/c.log" 2>&1 &
PIDS+=($!)
$PIN_SERVER "$T/demo-server" --http 127.0.0.1:0 </dev/null >/dev/null 2>"$WORK/rust.log" &
PIDS+=($!)
C_URL="" RUST_URL=""
for _ in $(seq 200); do
  port=$(sed -n 's/^port=//p' "$WORK/c.log"); [ -n "$port" ] && C_URL="http://127.0.0.1:$port/mcp"
  RUST_URL=$(grep -o 'http://[^ ]*' "$WORK/rust.log" | head -1 || true)
  [ -n "$C_URL" ] && [ -n "$RUST_URL" ] && break
  sleep 0.05
done
[ -n "$C_URL" ] && [ -n "$RUST_URL" ] || { echo "servers did not start: $(cat "$WORK"/*.log)" >&2; exit 1; }
run() { # run URL → "rps p99_us"
  local line
  line=$($PIN_LOAD wrk -t1 -c"$CONNECTIONS" -d"$DURATION" --latency -s scripts/bench/echo.lua "$1" | grep '^BENCH')
  case $line in *" errors=0 non200=0"*) ;; *) echo "warning: $line" >&2 ;; esac
  echo "$(sed -E 's/.*rps=([0-9]+).*/\1/' <<<"$line") $(sed -E 's/.*p99_us=([0-9]+).*/\1/' <<<"$line")"
}
run "$C_URL" >/dev/null; run "$RUST_URL" >/dev/null # warm-up
C_ALL=() RUST_ALL=()
for r in $(seq "$ROUNDS"); do # the order turns each round
  if [ $((r % 2)) = 1 ]; then C_ALL+=("$(run "$C_URL")"); RUST_ALL+=("$(run "$RUST_URL")")
  else RUST_ALL+=("$(run "$RUST_URL")"); C_ALL+=("$(run "$C_URL")"); fi
done
median() { printf '%s\n' "$@" | sort -n | awk '{a[NR]=$0} END {print a[int((NR+1)/2)]}'; }
read -r C C_P99 < <(median "${C_ALL[@]}")
read -r RUST RUST_P99 < <(median "${RUST_ALL[@]}")
echo
echo "Streamable HTTP, modern tools/call echo, $CONNECTIONS connections, $DURATION x $ROUNDS rounds (medians):"
echo "  C handler:     $C req/s  p99 $(python3 -c "print(f'{$C_P99/1000:.2f}')") ms  (rounds: ${C_ALL[*]%% *})"
echo "  Rust handler:  $RUST req/s  p99 $(python3 -c "print(f'{$RUST_P99/1000:.2f}')") ms  (rounds: ${RUST_ALL[*]%% *})"
echo "  C / Rust:      $(python3 -c "print(f'{$C/$RUST:.2f}x')") (the speed issue asks >= 0.90x)"
