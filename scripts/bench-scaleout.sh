#!/usr/bin/env bash
# Scale-out benchmark ("Scale-out on Redis" in the README). Never part of the test suite.
#
# Measures, on this machine:
#   * requests/s and p99 of modern tools/call `echo` (scripts/bench/echo.lua, wrk) through
#     rr-proxy in front of 1, 2 and 3 demo-server workers sharing one Redis, each worker on one
#     tokio thread; plus one worker direct (no proxy, no Redis) as the reference;
#   * the added latency of the Redis path vs in-process (scripts/bench/redis_path.py): an
#     input_required round (retry on another worker: requestState claimed in Redis) and a
#     list-change fan-out to a listen stream on another worker, against one process without Redis.
# On a machine with few cores the workers, the proxy, Redis and wrk share them: read the
# scaling figures with that in mind (the script prints the core count).
# Env: DURATION (10s), CONNECTIONS (64), ROUNDS (2000), MCPCORE_REDIS_SERVER.
set -euo pipefail
cd "$(dirname "$0")/.."
DURATION=${DURATION:-10s}
CONNECTIONS=${CONNECTIONS:-64}
ROUNDS=${ROUNDS:-2000}
redis_bin="${MCPCORE_REDIS_SERVER:-redis-server}"

if ! command -v wrk >/dev/null; then
  echo "installing wrk (apt-get)" >&2
  apt-get install -y wrk >/dev/null 2>&1 || { apt-get update >/dev/null && apt-get install -y wrk >/dev/null; }
fi
command -v "$redis_bin" >/dev/null || { echo "$redis_bin is required (apt-get install redis-server)" >&2; exit 2; }
cargo build --release -q -p mcpcore-examples --bin demo-server --bin rr-proxy
TARGET=${CARGO_TARGET_DIR:-target}/release

tmp=$(mktemp -d "${TMPDIR:-/tmp}/mcpcore-bench-scaleout.XXXXXX")
PIDS=()
stop_all() {
  local p
  for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done
  for p in "${PIDS[@]}"; do wait "$p" 2>/dev/null || true; done
  PIDS=()
}
trap 'stop_all; rm -rf "$tmp"' EXIT

free_port() {
  python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1]); s.close()'
}
URL=""
wait_url() { # log → URL: the first http:// URL printed in it (without /mcp)
  local i
  for i in $(seq 200); do
    if grep -q "http://" "$1"; then URL=$(grep -o 'http://[^ /]*' "$1" | head -1); return; fi
    sleep 0.05
  done
  echo "did not start: $(cat "$1")" >&2; exit 1
}

redis_port=$(free_port)
"$redis_bin" --bind 127.0.0.1 --port "$redis_port" --save "" --appendonly no --dir "$tmp" >"$tmp/redis.log" 2>&1 &
REDIS_PID=$!
for _ in $(seq 100); do grep -q "Ready to accept" "$tmp/redis.log" && break; sleep 0.05; done
REDIS="redis://127.0.0.1:$redis_port/0"

n=0
# Not in $(...): the PIDs must reach this shell.
# One request-state key for every Redis worker (none is kept in Redis); a fresh one per run.
MCPCORE_REQUEST_STATE_KEY="k1:$(head -c 32 /dev/urandom | base64)"
export MCPCORE_REQUEST_STATE_KEY
worker() { # worker [FLAGS] → URL of a new demo-server on one tokio thread
  n=$((n + 1))
  local log="$tmp/w$n.log"
  TOKIO_WORKER_THREADS=1 "$TARGET/demo-server" --http 127.0.0.1:0 "$@" \
    >/dev/null 2>"$log" </dev/null &
  PIDS+=($!)
  wait_url "$log"
}
cluster() { # cluster N → URL of rr-proxy in front of N workers on Redis
  local port ups=() i
  port=$(free_port)
  for i in $(seq "$1"); do
    worker --allowed-hosts "127.0.0.1:$port" --redis "$REDIS"
    ups+=(--upstream "$URL")
  done
  "$TARGET/rr-proxy" --listen "127.0.0.1:$port" "${ups[@]}" >/dev/null 2>"$tmp/proxy$1.log" </dev/null &
  PIDS+=($!)
  wait_url "$tmp/proxy$1.log"
}
run() { # run URL → "rps p99_us"
  local out line
  out=$(wrk -t2 -c"$CONNECTIONS" -d"$DURATION" --latency -s scripts/bench/echo.lua "$1/mcp")
  line=$(grep '^BENCH' <<<"$out")
  if ! grep -q 'errors=0 non200=0' <<<"$line"; then echo "warning: $line" >&2; fi
  echo "$(sed -E 's/.*rps=([0-9]+).*/\1/' <<<"$line") $(sed -E 's/.*p99_us=([0-9]+).*/\1/' <<<"$line")"
}
ms() { python3 -c "print(f'{$1/1000:.2f}')"; }

echo "machine: $(nproc) cores; wrk ${CONNECTIONS} connections, ${DURATION}; each worker on 1 tokio thread"
echo "modern tools/call echo:"
worker; run "$URL" >/dev/null   # warm-up
read -r rps p99 < <(run "$URL")
echo "  1 worker direct (no proxy, no Redis): ${rps} req/s  p99 $(ms "$p99") ms"
stop_all
for w in 1 2 3; do
  cluster "$w"; run "$URL" >/dev/null
  read -r rps p99 < <(run "$URL")
  echo "  rr-proxy + ${w} worker(s) + Redis:    ${rps} req/s  p99 $(ms "$p99") ms"
  stop_all
done

echo "Redis path vs in-process (sequential, ${ROUNDS} rounds):"
worker
python3 scripts/bench/redis_path.py "$ROUNDS" "$URL" "$URL" | sed -E 's/^BENCH /  in-process (1 worker, no Redis): /'
stop_all
worker --redis "$REDIS"; a=$URL
worker --redis "$REDIS"; b=$URL
python3 scripts/bench/redis_path.py "$ROUNDS" "$a" "$b" | sed -E 's/^BENCH /  Redis (worker A -> worker B):   /'
stop_all
kill "$REDIS_PID" 2>/dev/null || true
