#!/usr/bin/env bash
# Soak of the Streamable HTTP server (guide: docs/src/security.md). Never part of
# the test suite: a bounded run on 127.0.0.1 that writes bench/SOAK.md.
#
#   bash scripts/soak.sh [SECS]        # default 600 s of load, after a set-up of ~1 minute
#
# It builds the release `soak` driver and `soak-server` (bench/), then the driver starts the
# server with the caps this load needs (10,000 legacy sessions + the callers' + 200 for the
# half-open flood; 1,000 listen streams + 50 never-reading ones; enough connections for all of
# them), opens the sessions and streams, and for SECS seconds runs well-behaved callers of both
# eras beside slowloris, never-reading, oversized, garbage, flood and half-open clients while
# sampling the server's RSS, threads, descriptors and tokio tasks.
# Env: SOAK_OUT (default bench/SOAK.md); extra driver flags after SECS (see `soak --help`).
set -euo pipefail
cd "$(dirname "$0")/.."
SECS=${1:-600}
shift || true
OUT=${SOAK_OUT:-bench/SOAK.md}
cargo build --release -q -p mcpcore-bench --bin soak --bin soak-server
TARGET=${CARGO_TARGET_DIR:-target}/release
# 1,000+ streams, a 300-connection flood and the server's sockets all live in this process tree.
if [ "$(ulimit -n)" -lt 8192 ]; then ulimit -n 8192 2>/dev/null || ulimit -n "$(ulimit -Hn)"; fi
SOAK_COMMIT=$(git rev-parse --short HEAD)$(git diff --quiet HEAD -- core bench || echo "+dirty") \
  exec "$TARGET/soak" --server "$TARGET/soak-server" --secs "$SECS" --out "$OUT" "$@"
