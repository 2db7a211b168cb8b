#!/usr/bin/env bash
# What `mcpcore gateway` adds to a call. Never part of the test suite.
#
# In one run, a modern tools/call of `echo` (100-byte text, scripts/bench/echo.lua) over HTTP:
#   * direct:          wrk -> demo-server
#   * gateway (stdio): wrk -> mcpcore gateway -> demo-server as its stdio child
#   * gateway (HTTP):  wrk -> mcpcore gateway -> the direct demo-server over HTTP
# each at 1 connection (per-call latency: p50, p99) and at CONNECTIONS connections (throughput),
# with the gateway's added latency and its throughput as a ratio of the direct one. Every server
# process runs on core 0, wrk on core 1.
# Env: DURATION (default 10s), CONNECTIONS (64).
set -euo pipefail
cd "$(dirname "$0")/.."
DURATION=${DURATION:-10s}
CONNECTIONS=${CONNECTIONS:-64}

if ! command -v wrk >/dev/null; then
  echo "installing wrk (apt-get)" >&2
  apt-get install -y wrk >/dev/null 2>&1 || { apt-get update >/dev/null && apt-get install -y wrk >/dev/null; }
fi
cargo build --release -q -p mcpcore-examples --bin demo-server -p mcpcore-cli --bin mcpcore
TARGET=${CARGO_TARGET_DIR:-target}/release
PIN_SERVER="taskset -c 0"
PIN_LOAD="taskset -c 1"
if [ "$(nproc)" -lt 2 ]; then PIN_SERVER=""; PIN_LOAD=""; fi

PIDS=()
TMP=$(mktemp -d)
cleanup() { for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done; rm -rf "$TMP"; }
trap cleanup EXIT

URL=""
start() { # start PATTERN COMMAND... -> sets URL from the first stderr line matching PATTERN
  local pattern=$1; shift
  local log; log=$(mktemp -p "$TMP")
  TOKIO_WORKER_THREADS=1 $PIN_SERVER "$@" >/dev/null 2>"$log" </dev/null &
  PIDS+=($!)
  for _ in $(seq 200); do
    if grep -q "$pattern" "$log"; then URL=$(grep -o 'http://[^ ]*' "$log" | head -1); return; fi
    sleep 0.05
  done
  echo "did not start: $* $(cat "$log")" >&2; exit 1
}

run() { # run URL CONNECTIONS -> "rps p50_us p99_us"
  local line
  line=$($PIN_LOAD wrk -t1 -c"$2" -d"$DURATION" --latency -s scripts/bench/echo.lua "$1" | grep '^BENCH')
  if ! grep -q 'errors=0 non200=0' <<<"$line"; then echo "warning: $line" >&2; fi
  sed -E 's/.*rps=([0-9]+) p50_us=([0-9]+) p99_us=([0-9]+).*/\1 \2 \3/' <<<"$line"
}

start "http://" "$TARGET/demo-server" --http 127.0.0.1:0; DIRECT=$URL
printf '[upstreams.demo]\ncommand = ["%s"]\n' "$(realpath "$TARGET/demo-server")" >"$TMP/stdio.toml"
printf '[upstreams.demo]\nurl = "%s"\n' "$DIRECT" >"$TMP/http.toml"
start "serving" "$TARGET/mcpcore" gateway "$TMP/stdio.toml" --http 127.0.0.1:0 --quiet; GW_STDIO=$URL
start "serving" "$TARGET/mcpcore" gateway "$TMP/http.toml" --http 127.0.0.1:0; GW_HTTP=$URL

# Each endpoint must answer the call itself (a JSON-RPC error would be a fast 200).
check() {
  python3 - "$1" <<'PY'
import json, sys, urllib.request
body = open("scripts/bench/echo.lua").read().split("wrk.body = ")[1].split("\n\n")[0]
parts = [p.strip().strip("'") for p in body.replace("..", "\n").splitlines() if p.strip()]
text = "".join("x" * 100 if p == "text" else p for p in parts)
req = urllib.request.Request(sys.argv[1], data=text.encode(), method="POST", headers={
    "Content-Type": "application/json", "Accept": "application/json, text/event-stream",
    "MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/call", "Mcp-Name": "echo"})
r = json.load(urllib.request.urlopen(req))
assert r.get("result", {}).get("content", [{}])[0].get("text") == "x" * 100, r
PY
}
for u in "$DIRECT" "$GW_STDIO" "$GW_HTTP"; do check "$u" || { echo "no echo from $u" >&2; exit 1; }; done

declare -A RPS P50 P99 TPUT
for leg in direct stdio http; do
  case $leg in direct) u=$DIRECT ;; stdio) u=$GW_STDIO ;; http) u=$GW_HTTP ;; esac
  run "$u" 1 >/dev/null # warm-up
  read -r RPS[$leg] P50[$leg] P99[$leg] < <(run "$u" 1)
  read -r TPUT[$leg] _ _ < <(run "$u" "$CONNECTIONS")
done

ms() { python3 -c "print(f'{$1/1000:.3f}')"; }
echo "modern tools/call echo over HTTP, ${DURATION} per leg, servers on 1 core:"
printf '  %-16s %12s %10s %10s %14s\n' "" "1 conn req/s" "p50 ms" "p99 ms" "${CONNECTIONS} conn req/s"
for leg in direct stdio http; do
  case $leg in direct) name="direct" ;; stdio) name="gateway (stdio)" ;; http) name="gateway (HTTP)" ;; esac
  printf '  %-16s %12s %10s %10s %14s\n' "$name" "${RPS[$leg]}" "$(ms "${P50[$leg]}")" "$(ms "${P99[$leg]}")" "${TPUT[$leg]}"
done
for leg in stdio http; do
  python3 -c "
d50, d99, g50, g99 = ${P50[direct]}, ${P99[direct]}, ${P50[$leg]}, ${P99[$leg]}
print(f'  gateway ($leg upstream) adds p50 {(g50-d50)/1000:+.3f} ms, p99 {(g99-d99)/1000:+.3f} ms; throughput {${TPUT[$leg]}/${TPUT[direct]}:.2f}x direct')"
done
