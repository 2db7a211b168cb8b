#!/usr/bin/env bash
# The official conformance suite's server legs (as scripts/conformance.sh runs them: both
# revisions, unscored scenarios counted, conformance/expected-failures.yaml) against a scaled-out
# deployment: one redis-server (127.0.0.1, a free port, no persistence), WORKERS (3)
# conformance-server processes sharing it (`--redis`), and rr-proxy in front sending every HTTP
# request to the next worker. It must score what one process scores. Everything it starts is
# killed on exit.
# Env: WORKERS (3), MCPCORE_REDIS_SERVER (redis-server on PATH), MCP_CONFORMANCE_RUNNER.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
runner="${MCP_CONFORMANCE_RUNNER:-$root/../shared/conformance/run.sh}"
[ -f "$runner" ] || runner="$root/conformance/run.sh"
[ -f "$runner" ] || { echo "conformance runner not found at $runner" >&2; exit 2; }
target="${CARGO_TARGET_DIR:-$root/target}"
baseline="$root/conformance/expected-failures.yaml"
workers="${WORKERS:-3}"
redis_bin="${MCPCORE_REDIS_SERVER:-redis-server}"
command -v "$redis_bin" >/dev/null 2>&1 || { echo "$redis_bin is required (apt-get install redis-server)" >&2; exit 2; }

cargo build -q -p mcpcore-examples --bin conformance-server --bin rr-proxy

tmp=$(mktemp -d "${TMPDIR:-/tmp}/mcpcore-scaleout.XXXXXX")
PIDS=()
cleanup() {
  local p
  for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done
  for p in "${PIDS[@]}"; do wait "$p" 2>/dev/null || true; done
  rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

free_port() {
  python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1]); s.close()'
}
wait_for() { # log-file pattern: the first match of pattern in the log, within 20 s
  local i
  for i in $(seq 200); do
    if grep -q "$2" "$1" 2>/dev/null; then grep -o "$2" "$1" | head -1; return 0; fi
    sleep 0.1
  done
  echo "timed out waiting for $2 in $1:" >&2; cat "$1" >&2; return 1
}

redis_port=$(free_port)
"$redis_bin" --bind 127.0.0.1 --port "$redis_port" --save "" --appendonly no --dir "$tmp" \
  >"$tmp/redis.log" 2>&1 &
PIDS+=($!)
wait_for "$tmp/redis.log" "Ready to accept connections" >/dev/null
redis_url="redis://127.0.0.1:$redis_port/0"
# One request-state key for every worker (none is kept in Redis); a fresh one per run.
MCPCORE_REQUEST_STATE_KEY="k1:$(head -c 32 /dev/urandom | base64)"
export MCPCORE_REQUEST_STATE_KEY

proxy_port=$(free_port)
hosts="127.0.0.1:$proxy_port,localhost:$proxy_port"
upstreams=()
for i in $(seq "$workers"); do
  "$target/debug/conformance-server" --http 127.0.0.1:0 --redis "$redis_url" --allowed-hosts "$hosts" \
    >"$tmp/worker$i.log" 2>&1 &
  PIDS+=($!)
  url=$(wait_for "$tmp/worker$i.log" 'http://[0-9.:]*')
  upstreams+=(--upstream "$url")
done
"$target/debug/rr-proxy" --listen "127.0.0.1:$proxy_port" "${upstreams[@]}" >"$tmp/proxy.log" 2>&1 &
PIDS+=($!)
wait_for "$tmp/proxy.log" 'listening on' >/dev/null
echo "== scale-out: redis $redis_url, $workers workers (${upstreams[*]//--upstream/}), rr-proxy on 127.0.0.1:$proxy_port"

status=0
echo "== conformance: server legs through rr-proxy (2025-11-25, 2026-07-28)"
bash "$runner" server --url "http://127.0.0.1:$proxy_port/mcp" --spec-version 2025-11-25,2026-07-28 \
  --include-unscored --expected-failures "$baseline" || status=1
if [ "$status" != 0 ]; then
  for f in "$tmp"/worker*.log "$tmp/proxy.log"; do echo "--- $(basename "$f") (last 30 lines)"; tail -30 "$f"; done
fi
exit $status
