#!/usr/bin/env bash
# Benchmark (not a test): an `echo` tool written in Python, served by mcpcore's Python binding
# (the release wheel) and by the official Python SDK (`mcp`, MCPServer), measured in one run with
# each server pinned to one core and the load generator on the other. Prints each side's figures
# and the ratios:
#   * Streamable HTTP, modern (2026-07-28) tools/call, wrk with CONNECTIONS connections
#     (scripts/bench/echo.lua, the request scripts/bench-http.sh uses); the SDK runs stateless
#     with JSON responses under one uvicorn worker; mcpcore is measured twice: its built-in
#     listener, and its ASGI app (`server.asgi_app()`) mounted in Starlette under one uvicorn
#     worker, compared with the SDK's own Starlette app under uvicorn (the embedding case), and
#     beside the floor of that host: a fixed answer from a bare ASGI function mounted the same
#     way (bench/python/asgi_floor.py), what uvicorn and Starlette alone cost;
#   * stdio, sequential calls (one after another) and pipelined, driven by the Rust stdio-bench
#     driver (bench/, the one scripts/bench-stdio.sh uses), legacy handshake.
# Both servers are bench/python/echo_{mcpcore,sdk}.py: the same Python function. The stdio run
# also measures the Rust demo-server's echo (no Python at all) as the floor: the driver and pipe
# round trip no Python server can beat.
#
# The SDK, uvicorn and the wheel are installed into a venv under $MCPCORE_PEERS_DIR (default
# ~/.cache/mcpcore/peers/python-sdk-<version>); the wheel is the one scripts/test-wheel.sh builds
# (`maturin build --release`, rebuilt here when stale; a warm target dir makes that a relink).
#
# Knobs (environment): DURATION=10s CONNECTIONS=32 ROUNDS=3 SEQ=5000 PIPE=5000 WINDOW=16
#   WARMUP=500 SDK_VERSION=2.3.0 ECHO=all|both|sync|loop|async (all: the whole run for a plain
#   `def` tool, again for that `def` registered `on_loop=True` (run on the event loop's thread,
#   no worker hand-off), and again for an `async def` tool, with one build; both: `def` and
#   `async def`). The SDK side of `loop` is its plain `def`: it has no such option.
#   SERVER_CPU=0 LOAD_CPU=1 PYTHON=python3
set -euo pipefail
cd "$(dirname "$0")/.."

DURATION="${DURATION:-10s}"
CONNECTIONS="${CONNECTIONS:-32}"
ROUNDS="${ROUNDS:-3}"
SEQ="${SEQ:-5000}"
PIPE="${PIPE:-5000}"
WINDOW="${WINDOW:-16}"
WARMUP="${WARMUP:-500}"
SDK_VERSION="${SDK_VERSION:-2.3.0}"
ECHO="${ECHO:-all}"
SERVER_CPU="${SERVER_CPU:-0}"
LOAD_CPU="${LOAD_CPU:-1}"
PEERS="${MCPCORE_PEERS_DIR:-$HOME/.cache/mcpcore/peers}"
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$HOME/.cache/mcpcore/target}"
export CARGO_TERM_COLOR="${CARGO_TERM_COLOR:-never}"

case "$ECHO" in sync | loop | async) KINDS=("$ECHO") ;; both) KINDS=(sync async) ;;
  all) KINDS=(sync loop async) ;;
  *) echo "ECHO must be all, both, sync, loop or async" >&2; exit 2 ;; esac
label() { case "$1" in sync) echo "plain def" ;; loop) echo "plain def, on_loop=True" ;;
  async) echo "async def" ;; esac; }
if ! command -v wrk >/dev/null; then
  echo "installing wrk (apt-get)" >&2
  apt-get install -y wrk >/dev/null 2>&1 || { apt-get update >/dev/null && apt-get install -y wrk >/dev/null; }
fi

# One venv per interpreter asked for (PYTHON=python3.12 measures both servers on 3.12).
venv="$PEERS/python-sdk-$SDK_VERSION${PYTHON:+-$(basename "$PYTHON")}"
if [ ! -x "$venv/bin/python" ]; then
  echo "== creating the peer venv $venv"
  "${PYTHON:-python3}" -m venv "$venv"
fi
"$venv/bin/python" -m pip install -q --disable-pip-version-check "mcp==$SDK_VERSION" uvicorn \
  "maturin>=1.7,<2"
PY="$venv/bin/python"

echo "== building the release wheel and the stdio driver"
wheels="$CARGO_TARGET_DIR/wheel-release"
rm -rf "$wheels"
timeout 1800 "$venv/bin/maturin" build --release --quiet -m bindings/python/Cargo.toml \
  --interpreter "$PY" --out "$wheels"
"$PY" -m pip install -q --disable-pip-version-check --force-reinstall --no-deps "$wheels"/*.whl
cargo build --release -q -p mcpcore-bench --bin stdio-bench -p mcpcore-examples --bin demo-server
DRIVER="$CARGO_TARGET_DIR/release/stdio-bench"
FLOOR="$CARGO_TARGET_DIR/release/demo-server"

PIN_SERVER=(taskset -c "$SERVER_CPU")
PIN_LOAD=(taskset -c "$LOAD_CPU")
if [ "$(nproc)" -lt 2 ] || ! command -v taskset >/dev/null; then
  echo "== WARNING: fewer than 2 cpus or no taskset; running unpinned" >&2
  PIN_SERVER=()
  PIN_LOAD=()
fi
echo "== $(uname -sm), $(nproc) cpus, $("$PY" --version), mcp $("$PY" -c \
  'import importlib.metadata as m; print(m.version("mcp"))'), echo tool: ${KINDS[*]}"
echo "   load average: $(cut -d' ' -f1-3 /proc/loadavg) (other work on the machine skews the figures)"

PIDS=()
cleanup() { for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done; }
trap cleanup EXIT

# One whole run (HTTP, the mount, stdio) for the tool kind in $ECHO.
measure() {
  URL=""
  start() { # start SCRIPT [MODE] → sets URL (the server prints it on stderr)
    local log; log=$(mktemp)
    "${PIN_SERVER[@]}" "$PY" "$1" "${2:-http}" "$ECHO" >/dev/null 2>"$log" </dev/null &
    PIDS+=($!)
    for _ in $(seq 200); do
      if grep -q "http://" "$log"; then URL=$(grep -o 'http://[^ ]*' "$log" | head -1); return; fi
      sleep 0.05
    done
    echo "server did not start: $(cat "$log")" >&2; exit 1
  }

  wrk_run() { # wrk_run URL DURATION → "rps p99_us"
    local out line errors non200
    out=$(timeout 120 "${PIN_LOAD[@]}" wrk -t1 -c"$CONNECTIONS" -d"$2" --latency \
      -s scripts/bench/echo.lua "$1")
    line=$(grep '^BENCH' <<<"$out")
    errors=$(sed -E 's/.*errors=([0-9]+).*/\1/' <<<"$line")
    non200=$(sed -E 's/.*non200=([0-9]+).*/\1/' <<<"$line")
    if [ "$errors" != 0 ] || [ "$non200" != 0 ]; then echo "warning: $line" >&2; fi
    echo "$(sed -E 's/.*rps=([0-9]+).*/\1/' <<<"$line") $(sed -E 's/.*p99_us=([0-9]+).*/\1/' <<<"$line")"
  }

  start bench/python/echo_mcpcore.py; OURS_URL=$URL
  start bench/python/echo_mcpcore.py asgi; MOUNT_URL=$URL
  start bench/python/echo_sdk.py; SDK_URL=$URL
  start bench/python/asgi_floor.py; FLOOR_URL=$URL
  wrk_run "$OURS_URL" 3s >/dev/null # warm-up
  wrk_run "$MOUNT_URL" 3s >/dev/null
  wrk_run "$FLOOR_URL" 3s >/dev/null
  wrk_run "$SDK_URL" 3s >/dev/null
  read -r OURS OURS_P99 < <(wrk_run "$OURS_URL" "$DURATION")
  read -r MOUNT MOUNT_P99 < <(wrk_run "$MOUNT_URL" "$DURATION")
  read -r SDK SDK_P99 < <(wrk_run "$SDK_URL" "$DURATION")
  read -r HOST HOST_P99 < <(wrk_run "$FLOOR_URL" "$DURATION")
  cleanup
  PIDS=()
  ms() { "$PY" -c "print(f'{$1/1000:.2f}')"; }
  HTTP_RATIO=$("$PY" -c "print(f'{$OURS/max($SDK,1):.1f}')")
  MOUNT_RATIO=$("$PY" -c "print(f'{$MOUNT/max($SDK,1):.1f}')")
  HOST_RATIO=$("$PY" -c "print(f'{$HOST/max($SDK,1):.1f}')")

  echo "== stdio (stdio-bench on cpu $LOAD_CPU, servers on cpu $SERVER_CPU)"
  STDIO=$(timeout 1200 "${PIN_LOAD[@]}" "$DRIVER" --rounds "$ROUNDS" --warmup "$WARMUP" \
    --seq "$SEQ" --pipe "$PIPE" --window "$WINDOW" --timeout-secs 300 \
    --server "mcpcore=${PIN_SERVER[*]} $PY bench/python/echo_mcpcore.py stdio $ECHO" \
    --server "sdk=${PIN_SERVER[*]} $PY bench/python/echo_sdk.py stdio $ECHO" \
    --server "rust-floor=${PIN_SERVER[*]} $FLOOR")
  echo "$STDIO"
  # The report's median rows: label, mcpcore, sdk, rust-floor, mcpcore/sdk, mcpcore/rust-floor.
  median() { awk -v key="$1" '$0 ~ "^" key { print $(NF-4), $(NF-3), $(NF-2), $(NF-1) }' <<<"$STDIO"; }
  read -r SEQ_OURS SEQ_SDK SEQ_FLOOR SEQ_RATIO < <(median "sequential calls/s")
  read -r PIPE_OURS PIPE_SDK PIPE_FLOOR PIPE_RATIO < <(median "pipelined calls/s")
  # Median sequential p50 round trip per server: steadier than calls/s when other work on the
  # machine adds stalls (they land in the tail, not in the median).
  p50() { grep -E "^round .* $1 +sequential" <<<"$STDIO" | sed -E 's/.*p50 +([0-9]+) .*/\1/' \
    | sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
  P50_OURS=$(p50 mcpcore); P50_SDK=$(p50 sdk); P50_FLOOR=$(p50 rust-floor)
  P50_RATIO=$("$PY" -c "print(f'{$P50_SDK/max($P50_OURS,1):.1f}')")

  echo
  echo "Python echo tool ($(label "$ECHO")), mcpcore (release wheel) vs the official SDK (mcp $SDK_VERSION, plain def unless async), server on 1 core:"
  echo "  Streamable HTTP, ${CONNECTIONS} connections, ${DURATION}:"
  echo "    mcpcore:  ${OURS} req/s  p99 $(ms "$OURS_P99") ms"
  echo "    mcp SDK:  ${SDK} req/s  p99 $(ms "$SDK_P99") ms"
  echo "    ratio:    ${HTTP_RATIO}x (target >= 10x)"
  echo "  Embedded, ASGI under uvicorn (one worker), ${CONNECTIONS} connections, ${DURATION}:"
  echo "    mcpcore asgi_app() mounted in Starlette:  ${MOUNT} req/s  p99 $(ms "$MOUNT_P99") ms"
  echo "    mcp SDK streamable_http_app():            ${SDK} req/s  p99 $(ms "$SDK_P99") ms"
  echo "    mcpcore built-in listener (for scale):    ${OURS} req/s  p99 $(ms "$OURS_P99") ms"
  echo "    host floor (bare ASGI answer, no MCP):    ${HOST} req/s  p99 $(ms "$HOST_P99") ms"
  echo "    ratio mount/official:  ${MOUNT_RATIO}x (target >= 5x)   floor/official: ${HOST_RATIO}x"
  echo "  stdio, medians of ${ROUNDS} rounds:"
  echo "    sequential:  mcpcore ${SEQ_OURS}/s  mcp SDK ${SEQ_SDK}/s  ratio ${SEQ_RATIO} (target >= 10x)" \
    "  [Rust demo-server, no Python: ${SEQ_FLOOR}/s]"
  echo "    sequential p50 round trip:  mcpcore ${P50_OURS} µs  mcp SDK ${P50_SDK} µs  ratio ${P50_RATIO}x" \
    "  [Rust demo-server: ${P50_FLOOR} µs]"
  echo "    pipelined (window ${WINDOW}):  mcpcore ${PIPE_OURS}/s  mcp SDK ${PIPE_SDK}/s  ratio ${PIPE_RATIO}" \
    "  [Rust demo-server: ${PIPE_FLOOR}/s]"
}

for ECHO in "${KINDS[@]}"; do
  echo
  echo "===== echo tool: $(label "$ECHO")"
  measure
done
