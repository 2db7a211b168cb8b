#!/usr/bin/env bash
# Benchmark (not a test): the Node binding against the official TypeScript SDK v2, one `echo
# {text}` tool with a JavaScript handler on both sides, measured by the same load generators in
# the same run, servers pinned to one core and the load generator to the other:
#   * Streamable HTTP, modern (2026-07-28) tools/call, JSON responses, stateless:
#     wrk with scripts/bench/echo.lua (as scripts/bench-http.sh), CONNECTIONS connections:
#     requests/s, p99 latency, ratio. The SDK side is `createMcpHandler(…, {responseMode:
#     'json'})` behind its Node adapter `toNodeHandler` (@modelcontextprotocol/node).
#   * the same HTTP load against the addon mounted in Express (`nodeHandler()` at /mcp) beside the
#     built-in listener, and against the SDK's own Express setup (`express.json()`, then its
#     stateless JSON handler with the parsed body: bench/node/ts-express.mjs): requests/s, p99,
#     ratio mount/official (target >= 5x), and a bare Express route (express.json(), then the same
#     JSON answer, no MCP: what Express alone costs per request, a ceiling for any mount in it).
#   * stdio, legacy initialize then tools/call: the repo's Rust driver (bench/, `stdio-bench`),
#     sequential and pipelined calls/s, ratio; and in the same rounds the Rust demo-server (no
#     JavaScript at all): the floor of the pipe and core, and the addon's share of it.
# The addon is a release build (cargo build --release -p mcpcore-node) copied with lib/ into
# $PEERS/mcpcore-node-release; the SDK is installed from npm into $PEERS/ts-sdk-… (pinned).
# Knobs: DURATION=5s CONNECTIONS=64 ROUNDS=3 SEQ=20000 PIPE=50000 WINDOW=64 WARMUP=2000
#   SERVER_CPU=0 LOAD_CPU=1 NODE=node
#   BENCH_OPTIONS (core ServerOptions JSON for the addon server, e.g. {"limits":{"stdioIdleSpinUs":0}})
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
DURATION=${DURATION:-5s}
CONNECTIONS=${CONNECTIONS:-64}
ROUNDS=${ROUNDS:-3}
SEQ=${SEQ:-20000}
PIPE=${PIPE:-50000}
WINDOW=${WINDOW:-64}
WARMUP=${WARMUP:-2000}
SERVER_CPU=${SERVER_CPU:-0}
LOAD_CPU=${LOAD_CPU:-1}
NODE=${NODE:-node}
PEERS="${MCPCORE_PEERS_DIR:-$HOME/.cache/mcpcore/peers}"
TS_SERVER=2.4.0 # @modelcontextprotocol/server
TS_NODE=2.1.2   # @modelcontextprotocol/node (its Node http adapter)
EXPRESS=5.3.0   # express, for the SDK's Express setup (the mount uses bindings/node's devDependency)
ZOD=4.6.7
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$HOME/.cache/mcpcore/target}"
NODE=$(command -v "$NODE")

if ! command -v wrk >/dev/null; then
  echo "installing wrk (apt-get)" >&2
  apt-get install -y wrk >/dev/null 2>&1 || { apt-get update >/dev/null && apt-get install -y wrk >/dev/null; }
fi

echo "== building the addon and the stdio driver (release)"
# Two builds: `--bin` would narrow a shared invocation to binaries and skip the addon library.
cargo build --release -q -p mcpcore-node --lib
cargo build --release -q -p mcpcore-bench --bin stdio-bench -p mcpcore-examples --bin demo-server
TRIPLE=$("$NODE" -p "require('./bindings/node/lib/triple.cjs').triple")
PKG="$PEERS/mcpcore-node-release"
rm -rf "$PKG" && mkdir -p "$PKG"
cp -r bindings/node/lib bindings/node/package.json "$PKG/"
cp "$CARGO_TARGET_DIR/release/libmcpcore_node.so" "$PKG/mcpcore.$TRIPLE.node"
export MCPCORE_NODE_PKG="$PKG"
DRIVER="$CARGO_TARGET_DIR/release/stdio-bench"
FLOOR="$CARGO_TARGET_DIR/release/demo-server"

PEER="$PEERS/ts-sdk-server-$TS_SERVER-node-$TS_NODE-express-$EXPRESS-zod-$ZOD"
if [ ! -f "$PEER/node_modules/@modelcontextprotocol/node/package.json" ] || [ ! -f "$PEER/node_modules/express/package.json" ]; then
  echo "== installing the TypeScript SDK v2 and express into $PEER"
  rm -rf "$PEER.tmp" && mkdir -p "$PEER.tmp"
  printf '{"name":"bench-ts-peer","private":true,"type":"module","dependencies":{"@modelcontextprotocol/server":"%s","@modelcontextprotocol/node":"%s","express":"%s","zod":"%s"}}\n' \
    "$TS_SERVER" "$TS_NODE" "$EXPRESS" "$ZOD" >"$PEER.tmp/package.json"
  (cd "$PEER.tmp" && timeout 300 npm install --no-audit --no-fund --ignore-scripts --loglevel=error)
  rm -rf "$PEER" && mv "$PEER.tmp" "$PEER"
fi
cp bench/node/ts-server.mjs bench/node/ts-express.mjs "$PEER/"
# The mount's express: bindings/node's devDependency (npm install there).
[ -f bindings/node/node_modules/express/package.json ] || (cd bindings/node && timeout 300 npm install --no-audit --no-fund --ignore-scripts --loglevel=error)

PIN_SERVER=(taskset -c "$SERVER_CPU")
PIN_LOAD=(taskset -c "$LOAD_CPU")
if ! command -v taskset >/dev/null || [ "$(nproc)" -lt 2 ]; then
  echo "== WARNING: taskset or a second core is missing; running unpinned" >&2
  PIN_SERVER=(); PIN_LOAD=()
fi
echo "== $(uname -sm), $(nproc) cpus, node $("$NODE" --version), server on cpu $SERVER_CPU, load on cpu $LOAD_CPU"
echo "   load average: $(cut -d' ' -f1-3 /proc/loadavg) (other work on the machine skews the figures)"

PIDS=()
cleanup() { for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; wait "$p" 2>/dev/null || true; done; PIDS=(); }
trap cleanup EXIT

URL=""
start() { # start SCRIPT [MODE] → sets URL (the server prints `URL …` on stderr); MODE: http
  local log; log=$(mktemp)
  "${PIN_SERVER[@]}" "$NODE" "$1" "${2:-http}" ${3:+"$3"} >/dev/null 2>"$log" </dev/null &
  PIDS+=($!)
  for _ in $(seq 200); do
    if grep -q '^URL ' "$log"; then URL=$(sed -n 's/^URL //p' "$log" | head -1); return; fi
    sleep 0.05
  done
  echo "server $* did not start: $(cat "$log")" >&2; exit 1
}

check() { # check URL: the echo request of echo.lua is answered with the echoed text as JSON
  local body
  body=$(curl -sS -X POST "$1" -H 'Content-Type: application/json' -H 'Accept: application/json, text/event-stream' \
    -H 'MCP-Protocol-Version: 2026-07-28' -H 'Mcp-Method: tools/call' -H 'Mcp-Name: echo' \
    --data '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"text":"ping"},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientInfo":{"name":"bench","version":"1"}}}}')
  if ! grep -q '"text":"ping"' <<<"$body" || [ "${body:0:1}" != "{" ]; then
    echo "unexpected answer from $1: $body" >&2; exit 1
  fi
}

wrk_run() { # wrk_run URL DURATION → "rps p99_us"
  local out line
  out=$("${PIN_LOAD[@]}" wrk -t1 -c"$CONNECTIONS" -d"$2" --latency -s scripts/bench/echo.lua "$1")
  line=$(grep '^BENCH' <<<"$out")
  if ! grep -q 'errors=0 non200=0' <<<"$line"; then echo "warning: $line" >&2; fi
  echo "$(sed -E 's/.*rps=([0-9]+).*/\1/' <<<"$line") $(sed -E 's/.*p99_us=([0-9]+).*/\1/' <<<"$line")"
}

median() { sort -n | awk '{a[NR]=$1} END {print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'; }

echo "== Streamable HTTP: modern tools/call echo, $CONNECTIONS connections, $DURATION x $ROUNDS rounds (interleaved)"
echo "   (each round starts both servers afresh and warms each up for 2s: the SDK's rate falls"
echo "   over a long-running server's life, which would flatter the ratio)"
OURS_RPS=(); OURS_P99=(); TS_RPS=(); TS_P99=(); MOUNT_RPS=(); MOUNT_P99=(); TSX_RPS=(); TSX_P99=(); BARE_RPS=()
measure() { # measure SCRIPT [MODE [VARIANT]] → "rps p99_us" of a fresh server
  start "$1" "${2:-http}" "${3:-}"
  check "$URL"
  wrk_run "$URL" 2s >/dev/null
  wrk_run "$URL" "$DURATION"
  cleanup
}
for r in $(seq "$ROUNDS"); do
  read -r a b < <(measure bench/node/addon-server.mjs); OURS_RPS+=("$a"); OURS_P99+=("$b")
  read -r c d < <(measure "$PEER/ts-server.mjs"); TS_RPS+=("$c"); TS_P99+=("$d")
  read -r e f < <(measure bench/node/addon-server.mjs express); MOUNT_RPS+=("$e"); MOUNT_P99+=("$f")
  read -r g h < <(measure "$PEER/ts-express.mjs"); TSX_RPS+=("$g"); TSX_P99+=("$h")
  read -r i _ < <(measure bench/node/addon-server.mjs express bare); BARE_RPS+=("$i")
  echo "   round $r/$ROUNDS  mcpcore-node ${a} req/s p99 ${b} µs   ts-sdk-v2 ${c} req/s p99 ${d} µs"
  echo "                express: mcpcore mount ${e} req/s p99 ${f} µs   ts-sdk-v2 ${g} req/s p99 ${h} µs   bare express ${i} req/s"
done
M=$(printf '%s\n' "${MOUNT_RPS[@]}" | median); MP=$(printf '%s\n' "${MOUNT_P99[@]}" | median)
X=$(printf '%s\n' "${TSX_RPS[@]}" | median); XP=$(printf '%s\n' "${TSX_P99[@]}" | median)
MOUNT_RATIO=$(awk -v a="$M" -v b="$X" 'BEGIN {printf "%.2f", a / b}')
B=$(printf '%s\n' "${BARE_RPS[@]}" | median)
O=$(printf '%s\n' "${OURS_RPS[@]}" | median); OP=$(printf '%s\n' "${OURS_P99[@]}" | median)
T=$(printf '%s\n' "${TS_RPS[@]}" | median); TP=$(printf '%s\n' "${TS_P99[@]}" | median)
HTTP_RATIO=$(awk -v a="$O" -v b="$T" 'BEGIN {printf "%.2f", a / b}')

echo "== stdio: legacy tools/call echo (stdio-bench: $SEQ sequential, $PIPE pipelined, window $WINDOW, $ROUNDS rounds)"
STDIO_OUT=$("${PIN_LOAD[@]}" "$DRIVER" --rounds "$ROUNDS" --warmup "$WARMUP" --seq "$SEQ" --pipe "$PIPE" \
  --window "$WINDOW" --timeout-secs 300 \
  --server "mcpcore-node=${PIN_SERVER[*]} $NODE $ROOT/bench/node/addon-server.mjs stdio" \
  --server "ts-sdk-v2=${PIN_SERVER[*]} $NODE $PEER/ts-server.mjs stdio" \
  --server "rust-floor=${PIN_SERVER[*]} $FLOOR")
echo "$STDIO_OUT" | sed 's/^/   /'
# stdio-bench's median rows: "<label> calls/s  <ours>  <ts>  <floor>  <ours/ts>x  <ours/floor>x".
read -r SEQ_O SEQ_T SEQ_F SEQ_RATIO SEQ_SHARE < <(awk '/^sequential calls\/s/ {print $3, $4, $5, $6, $7}' <<<"$STDIO_OUT")
read -r PIPE_O PIPE_T PIPE_F PIPE_RATIO PIPE_SHARE < <(awk '/^pipelined calls\/s/ {print $3, $4, $5, $6, $7}' <<<"$STDIO_OUT")

echo
echo "== summary (medians; mcpcore-node = the addon, release; ts-sdk-v2 = @modelcontextprotocol/server $TS_SERVER)"
printf '   %-34s %12s %12s %8s\n' "" mcpcore-node ts-sdk-v2 ratio
printf '   %-34s %12s %12s %8s\n' "HTTP req/s ($CONNECTIONS conn)" "$O" "$T" "${HTTP_RATIO}x"
printf '   %-34s %12s %12s\n' "HTTP p99 ms" "$(awk -v v="$OP" 'BEGIN{printf "%.2f", v/1000}')" "$(awk -v v="$TP" 'BEGIN{printf "%.2f", v/1000}')"
printf '   %-34s %12s %12s %8s\n' "Express req/s (mount vs SDK)" "$M" "$X" "${MOUNT_RATIO}x"
printf '   %-34s %12s %12s\n' "Express p99 ms" "$(awk -v v="$MP" 'BEGIN{printf "%.2f", v/1000}')" "$(awk -v v="$XP" 'BEGIN{printf "%.2f", v/1000}')"
printf '   %-34s %12s\n' "mount / built-in listener req/s" "$(awk -v a="$M" -v b="$O" 'BEGIN {printf "%.2f", a / b}')"
printf '   %-34s %12s %12s\n' "bare Express req/s (no MCP), mount/bare" "$B" "$(awk -v a="$M" -v b="$B" 'BEGIN {printf "%.2f", a / b}')"
printf '   %-34s %12s %12s %8s\n' "stdio sequential calls/s" "$SEQ_O" "$SEQ_T" "$SEQ_RATIO"
printf '   %-34s %12s %12s %8s\n' "stdio pipelined calls/s (window $WINDOW)" "$PIPE_O" "$PIPE_T" "$PIPE_RATIO"
printf '   %-34s %12s %12s %8s\n' "stdio sequential, Rust floor" "$SEQ_O" "$SEQ_F" "$SEQ_SHARE"
printf '   %-34s %12s %12s %8s\n' "stdio pipelined, Rust floor" "$PIPE_O" "$PIPE_F" "$PIPE_SHARE"
echo "   targets: HTTP >= 10x, Express mount >= 5x, stdio >= 3x, stdio >= 0.80x the Rust floor"
