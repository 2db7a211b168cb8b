#!/usr/bin/env bash
# Streamable HTTP benchmark ("Speed and memory"). Never part of the test suite.
#
# Measures, on this machine, with the server pinned to core 0 and wrk on core 1:
#   * modern tools/call of `echo` (100-byte text), 64 connections, JSON response:
#     our demo-server vs a bare hyper server that only parses and serializes JSON
#     (examples/bench_bare_hyper.rs), and their ratio, plus p99 latency;
#   * RSS per idle legacy session; start-up time to the first answer.
# Env: DURATION (default 10s), CONNECTIONS (64), SESSIONS (5000), ROUNDS (3: rounds of each leg,
# measured in turn; medians are printed).
# The telemetry legs also print the server's CPU time per request (from /proc), the cost itself.
set -euo pipefail
cd "$(dirname "$0")/.."
DURATION=${DURATION:-10s}
CONNECTIONS=${CONNECTIONS:-64}
SESSIONS=${SESSIONS:-5000}
ROUNDS=${ROUNDS:-3}

if ! command -v wrk >/dev/null; then
  echo "installing wrk (apt-get)" >&2
  apt-get install -y wrk >/dev/null 2>&1 || { apt-get update >/dev/null && apt-get install -y wrk >/dev/null; }
fi
cargo build --release -q -p mcpcore-examples --bin demo-server --bin bench-bare-hyper --bin bench-otlp-sink
TARGET=${CARGO_TARGET_DIR:-target}/release
PIN_SERVER="taskset -c 0"
PIN_LOAD="taskset -c 1"
if [ "$(nproc)" -lt 2 ]; then PIN_SERVER=""; PIN_LOAD=""; fi

PIDS=()
cleanup() { for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done; }
trap cleanup EXIT

URL=""
start() { # start BINARY ARGS... → sets URL; one worker thread, on the server's core unless PIN says
  local log; log=$(mktemp)
  TOKIO_WORKER_THREADS=1 ${PIN-$PIN_SERVER} "$@" >/dev/null 2>"$log" </dev/null &
  PIDS+=($!); LAST_PID=$!
  for _ in $(seq 200); do
    if grep -q "http://" "$log"; then URL=$(grep -o 'http://[^ ]*' "$log" | head -1); return; fi
    sleep 0.05
  done
  echo "server did not start: $(cat "$log")" >&2; exit 1
}

cpu_ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }   # user + system, in clock ticks
TICK_US=$((1000000 / $(getconf CLK_TCK)))

run() { # run URL [PID] → "rps p99_us cpu_us_per_request" (the last "-" without a PID)
  local out c0=0 c1=0
  if [ -n "${2:-}" ]; then c0=$(cpu_ticks "$2"); fi
  out=$($PIN_LOAD wrk -t1 -c"$CONNECTIONS" -d"$DURATION" --latency -s scripts/bench/echo.lua "$1")
  if [ -n "${2:-}" ]; then c1=$(cpu_ticks "$2"); fi
  local line; line=$(grep '^BENCH' <<<"$out")
  local errors non200
  errors=$(sed -E 's/.*errors=([0-9]+).*/\1/' <<<"$line"); non200=$(sed -E 's/.*non200=([0-9]+).*/\1/' <<<"$line")
  if [ "$errors" != 0 ] || [ "$non200" != 0 ]; then echo "warning: $line" >&2; fi
  local reqs cpu="-"; reqs=$(awk '/requests in/ {print $1}' <<<"$out")
  if [ -n "${2:-}" ] && [ "${reqs:-0}" -gt 0 ]; then
    cpu=$(python3 -c "print(f'{($c1 - $c0) * $TICK_US / $reqs:.1f}')")
  fi
  echo "$(sed -E 's/.*rps=([0-9]+).*/\1/' <<<"$line") $(sed -E 's/.*p99_us=([0-9]+).*/\1/' <<<"$line") $cpu"
}

median() { printf '%s\n' "$@" | sort -n | awk '{a[NR]=$0} END {print a[int((NR+1)/2)]}'; }
# Ours and bare hyper measured in turn, ROUNDS times, the order turning each round; each side's
# median is printed with its rounds (one run of each swung the ratio from 0.49 to 0.73 between
# runs on this guest: a slow moment landed on one side).
start "$TARGET/demo-server" --http 127.0.0.1:0; OURS_URL=$URL
start "$TARGET/bench-bare-hyper" 127.0.0.1:0; BARE_URL=$URL
run "$OURS_URL" >/dev/null; run "$BARE_URL" >/dev/null   # warm-up
OURS_ALL=(); BARE_ALL=()
for r in $(seq 0 $((ROUNDS - 1))); do
  if [ $((r % 2)) = 0 ]; then OURS_ALL+=("$(run "$OURS_URL")"); BARE_ALL+=("$(run "$BARE_URL")")
  else BARE_ALL+=("$(run "$BARE_URL")"); OURS_ALL+=("$(run "$OURS_URL")"); fi
done
read -r OURS _ < <(median "${OURS_ALL[@]}")
read -r BARE _ < <(median "${BARE_ALL[@]}")
p99s() { median "$(for r in "$@"; do echo "$r" | awk '{print $2}'; done)"; }
OURS_P99=$(p99s "${OURS_ALL[@]}"); BARE_P99=$(p99s "${BARE_ALL[@]}")
RATIO=$(python3 -c "print(f'{$OURS/$BARE:.2f}')")
P99_RATIO=$(python3 -c "print(f'{$OURS_P99/$BARE_P99:.2f}')")
cleanup; PIDS=()

echo "modern tools/call echo, ${CONNECTIONS} connections, ${DURATION}, server on 1 core (median of $ROUNDS rounds):"
echo "  mcpcore:     ${OURS} req/s  p99 $(python3 -c "print(f'{$OURS_P99/1000:.2f}')") ms  (rounds: ${OURS_ALL[*]%% *})"
echo "  bare hyper:  ${BARE} req/s  p99 $(python3 -c "print(f'{$BARE_P99/1000:.2f}')") ms  (rounds: ${BARE_ALL[*]%% *})"
echo "  ratio:       ${RATIO} (target >= 0.7); p99 ratio ${P99_RATIO} (target <= 1.5)"

# Telemetry's cost, same run: telemetry off, metrics recorded (--metrics), spans exported over
# OTLP/HTTP (--otlp) to a sink on the load core that answers every export 200. The three
# servers run side by side (only the one under load works) and are measured in turn, ROUNDS
# times; each leg's median is printed, so a slow moment of the machine does not land on one leg.
# The sink is native (bench-otlp-sink): a Python sink scanning every span took enough of the
# load core to slow wrk.
PIN=$PIN_LOAD start "$TARGET/bench-otlp-sink"; SINK=${URL%/}
start "$TARGET/demo-server" --http 127.0.0.1:0; OFF_URL=$URL; OFF_PID=$LAST_PID
start "$TARGET/demo-server" --metrics --http 127.0.0.1:0; METRICS_URL=$URL; MET_PID=$LAST_PID
OTEL_EXPORTER_OTLP_ENDPOINT=$SINK OTEL_SERVICE_NAME=bench start "$TARGET/demo-server" --otlp --http 127.0.0.1:0
EXPORT_URL=$URL; EXP_PID=$LAST_PID
for u in "$OFF_URL" "$METRICS_URL" "$EXPORT_URL"; do run "$u" >/dev/null; done   # warm-up
OFF_ALL=(); MET_ALL=(); EXP_ALL=()
leg() { case $1 in 0) OFF_ALL+=("$(run "$OFF_URL" "$OFF_PID")") ;;
  1) MET_ALL+=("$(run "$METRICS_URL" "$MET_PID")") ;; 2) EXP_ALL+=("$(run "$EXPORT_URL" "$EXP_PID")") ;; esac; }
for r in $(seq 0 $((ROUNDS - 1))); do   # the order turns each round: no leg always runs first
  for i in 0 1 2; do leg $(((r + i) % 3)); done
done
read -r OFF OFF_P99 _ < <(median "${OFF_ALL[@]}")
read -r MET MET_P99 _ < <(median "${MET_ALL[@]}")
read -r EXP EXP_P99 _ < <(median "${EXP_ALL[@]}")
# The server's CPU time per request (user + system, its exporter thread included), the
# median of the rounds: the cost itself. Requests/s in this closed loop falls by more than it
# (a slower server lets wrk sleep, and waking it costs the server's core more per answer).
cpu() { median "$(for r in "$@"; do echo "$r" | awk '{print $3}'; done)"; }
OFF_CPU=$(cpu "${OFF_ALL[@]}"); MET_CPU=$(cpu "${MET_ALL[@]}"); EXP_CPU=$(cpu "${EXP_ALL[@]}")
EXPORTED=$(python3 -c "import urllib.request as u; print(u.urlopen(\"$SINK/count\").read().decode())" || echo "?")
cleanup; PIDS=()
pct() { python3 -c "print(f'{($1/$OFF-1)*100:+.1f} %')"; }
ms() { python3 -c "print(f'{$1/1000:.2f}')"; }
us() { python3 -c "print(f'{$1:.1f} us/request ({$1 - $OFF_CPU:+.1f})')"; }
echo "telemetry (same requests, same run; median of $ROUNDS rounds):"
echo "  off:            ${OFF} req/s  p99 $(ms "$OFF_P99") ms  (rounds: ${OFF_ALL[*]%% *})"
echo "  metrics on:     ${MET} req/s  p99 $(ms "$MET_P99") ms  ($(pct "$MET"); target within -5 %; rounds: ${MET_ALL[*]%% *})"
echo "  spans exported: ${EXP} req/s  p99 $(ms "$EXP_P99") ms  ($(pct "$EXP"); target within -15 %; rounds: ${EXP_ALL[*]%% *}; ${EXPORTED} spans received)"
echo "  server CPU:     off ${OFF_CPU} us/request, metrics on $(us "$MET_CPU"), spans exported $(us "$EXP_CPU")"
TOKIO_WORKER_THREADS=1 $PIN_SERVER python3 scripts/bench/sessions.py "$TARGET/demo-server" "$SESSIONS" \
  | sed -E 's/^BENCH /  /'
