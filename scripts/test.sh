#!/usr/bin/env bash
# Runs every test of mcpcore: formatting, lints, Rust unit and wire tests (real stdio pipes and
# real HTTP on 127.0.0.1, every message validated against the official schemas: ../shared/spec, or the copies in spec/),
# the C suite (inside `cargo test`: ffi/tests/c_suite.rs builds C11 programs against the header and
# runs them plain, under ASan+UBSan, under LeakSanitizer and under valgrind), a short fuzz run of
# every parser of peer bytes (scripts/fuzz.sh), and the official conformance suite.
set -euo pipefail
cd "$(dirname "$0")/.."

export CARGO_TERM_COLOR="${CARGO_TERM_COLOR:-never}"
# A target dir under $HOME survives between CI runs on one machine; a cold run still fits.
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$HOME/.cache/mcpcore/target}"
# Incremental caches only help edit-compile loops; in a test run they cost disk (gigabytes).
export CARGO_INCREMENTAL="${CARGO_INCREMENTAL:-0}"

# Disk: a cold run needs about 8 GB in the target dir (the debug build, plus the release build of
# the Python wheel). A cached target dir that has grown past MCPCORE_TARGET_MAX_GB (stale
# artifacts of older toolchains and lockfiles) is dropped first.
max_gb="${MCPCORE_TARGET_MAX_GB:-20}"
if [ -d "$CARGO_TARGET_DIR" ]; then
  used_kb=$(du -sk "$CARGO_TARGET_DIR" 2>/dev/null | cut -f1 || echo 0)
  if [ "${used_kb:-0}" -gt $((max_gb * 1024 * 1024)) ]; then
    echo "== target dir over ${max_gb} GB, starting it afresh"
    rm -rf "$CARGO_TARGET_DIR"
  fi
fi
echo "== disk: $(df -h "$HOME" | awk 'NR==2 {print $4 " free on " $6}')"

if ! command -v cargo >/dev/null 2>&1; then
  echo "cargo is required (rustup toolchain)" >&2
  exit 1
fi
rustup component add rustfmt clippy >/dev/null 2>&1 || true

# node + npm: the TypeScript SDK interop test (tests/tests/client_interop_ts.rs installs pinned
# SDK releases from npm into ~/.cache/mcpcore/ts-interop) and the conformance suite (run.sh fetches
# the pinned suite and a Node 22 runtime into ~/.cache/mcp-conformance).
if ! command -v npm >/dev/null 2>&1 || ! command -v node >/dev/null 2>&1; then
  echo "== installing nodejs and npm (apt-get)"
  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq nodejs npm >/dev/null
fi
# The C suite's sanitizer and valgrind variants fail (never skip) when their tool is missing: the
# sanitizer runtimes come with gcc (libasan, libubsan, liblsan), valgrind is installed here.
if ! command -v valgrind >/dev/null 2>&1 || ! command -v cc >/dev/null 2>&1; then
  echo "== installing valgrind and gcc (apt-get)"
  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq valgrind gcc g++ >/dev/null
fi
# The C embedding example mounts the endpoint in libmicrohttpd (ffi/tests/c_embed_suite.rs); a
# missing library fails its build.
if [ ! -f /usr/include/microhttpd.h ]; then
  echo "== installing libmicrohttpd-dev (apt-get)"
  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq libmicrohttpd-dev >/dev/null
fi
# The C library's install tests link consumers through pkg-config and CMake's find_package
# (ffi/tests/c_suite.rs, cmake_package.rs); a missing tool fails them.
if ! command -v cmake >/dev/null 2>&1 || ! command -v pkg-config >/dev/null 2>&1; then
  echo "== installing cmake and pkg-config (apt-get)"
  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq cmake pkg-config >/dev/null
fi
# The scale-out tests (tests/tests/backplane_*.rs, scaleout.rs) and scripts/conformance-scaleout.sh
# run a real redis-server (on 127.0.0.1, a free port, no persistence); a missing one fails them.
if ! command -v redis-server >/dev/null 2>&1; then
  echo "== installing redis-server (apt-get)"
  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq redis-server >/dev/null
fi
MCPCORE_REDIS_SERVER="${MCPCORE_REDIS_SERVER:-$(command -v redis-server)}"
export MCPCORE_REDIS_SERVER
# Here the interop test must run: a missing node/npm or an unreachable registry fails it instead
# of skipping it.
export MCPCORE_REQUIRE_INTEROP="${MCPCORE_REQUIRE_INTEROP:-1}"

echo "== cargo fmt --check"
cargo fmt --all -- --check
echo "== cargo clippy -D warnings"
cargo clippy --workspace --all-targets -- -D warnings
# The fuzz targets' entry points (`fuzzing` feature, enabled only by fuzz/).
echo "== cargo clippy -p mcpcore --features fuzzing"
cargo clippy -p mcpcore --features fuzzing -- -D warnings
# core without its HTTP client (no TLS client, http:// JWKS only) must keep building: only the
# mcpcore library is rebuilt, its dependencies are shared.
echo "== cargo clippy -p mcpcore --no-default-features"
cargo clippy -p mcpcore --no-default-features -- -D warnings
# One invocation for the whole workspace, C suite included, so dependencies are built once with one
# feature set. The C suite runs each program plain, under ASan+UBSan, LSan and valgrind, one program
# at a time (ffi/tests/support `one_at_a_time`).
echo "== cargo test (unit, wire, TypeScript interop, C suite)"
cargo test --workspace
# The Rust API reference builds without a warning (every public item of core is documented:
# `missing_docs` is denied in core/src/lib.rs), and both crates package with complete metadata.
# `--no-verify`: the verification build compiles the packaged crates against the newest registry
# versions in a second target dir, several minutes on CI's 2 cores; it ran clean when the
# metadata was written (`cargo package -p mcpcore -p mcpcore-ffi`).
echo "== cargo doc -D warnings, cargo package"
RUSTDOCFLAGS="-D warnings" cargo doc -p mcpcore --no-deps --all-features
# The C ABI and the bindings' crates are documented for their contributors (private items
# included): their intra-doc links must resolve too.
RUSTDOCFLAGS="-D warnings" cargo doc --no-deps --document-private-items \
  -p mcpcore-ffi -p mcpcore-python -p mcpcore-node
cargo package -p mcpcore -p mcpcore-ffi --no-verify --allow-dirty

# The Python binding: built by pip through maturin (its PEP 517 backend, from PyPI) into a venv,
# with the dev profile and this CARGO_TARGET_DIR so the crates `cargo test` built are reused, then
# its pytest suite (a Python server over stdio and HTTP in both eras, the Python client against
# the Rust demo-server built above).
echo "== python binding (pip install ./bindings/python, pytest)"
py_venv="${MCPCORE_PY_VENV:-$(dirname "$CARGO_TARGET_DIR")/py-venv}"
MCPCORE_PY_VENV="$py_venv" bash scripts/test-python.sh
# The conformance suite's server legs against the Python fixture (examples/python), in the venv
# just built, and against it served as an ASGI app under uvicorn: each must score what the Rust
# fixture scores.
echo "== conformance suite: Python fixture"
MCPCORE_PY_VENV="$py_venv" bash scripts/conformance-python.sh

# The Node binding: `npm install` builds the addon from source with cargo (MCPCORE_NODE_PROFILE=dev
# reuses the debug artifacts `cargo test` just built in this CARGO_TARGET_DIR, so core is compiled
# once), then `npm test` (node --test) runs it over real stdio and HTTP in both eras and against
# the demo-server binary built above. Bounded so a hang fails the script.
echo "== node binding (npm install, npm test)"
(
  cd bindings/node
  export MCPCORE_NODE_PROFILE=dev
  export MCPCORE_DEMO_SERVER="$CARGO_TARGET_DIR/debug/demo-server"
  cargo build -q -p mcpcore-examples --bin demo-server
  timeout 600 npm install --no-audit --no-fund
  timeout 900 npm test
  # The same suite on Node 22 (the addon is N-API, so the same build loads): its binary comes
  # from npm (node-<os>-<arch>, the package `npm install node@22` installs), pinned and cached.
  # A failed download fails the script; it never skips.
  node22_pin=22.23.5
  case "$(uname -s)" in Linux) os=linux ;; Darwin) os=darwin ;; *) echo "no Node 22 package for $(uname -s)" >&2; exit 1 ;; esac
  case "$(uname -m)" in x86_64|amd64) arch=x64 ;; aarch64|arm64) arch=arm64 ;; *) echo "no Node 22 package for $(uname -m)" >&2; exit 1 ;; esac
  node22_dir="$HOME/.cache/mcpcore/node-$node22_pin-$os-$arch"
  node22="$node22_dir/node_modules/node-$os-$arch/bin/node"
  if [ ! -x "$node22" ]; then
    mkdir -p "$node22_dir"
    (cd "$node22_dir" && echo '{"private":true}' >package.json &&
      timeout 300 npm install --no-audit --no-fund --ignore-scripts --loglevel=error "node-$os-$arch@$node22_pin")
  fi
  echo "== node binding on Node $("$node22" --version)"
  timeout 900 "$node22" --test
  # The official conformance suite's server legs against the Node fixture
  # (examples/node/conformance-server.mjs, built-in listener and mounted in Express): the binding
  # must score what core's fixture scores.
  NODE="$(command -v node)" timeout 3000 bash ../../scripts/conformance-node.sh
)

# Parity: one server definition written in Rust, C, Python and Node (examples/parity) answers the
# same requests in both eras byte for byte alike (after normalising ids): lists, completion, and
# calls returning a string, a structured value, content blocks, an image, a tool error, an error
# and invalid arguments.
echo "== parity across the four doors"
MCPCORE_PY_VENV="$py_venv" bash scripts/parity.sh

# The user guide (docs/, mdBook) builds with every chapter and include resolved and no link to a
# missing file; every Python, JavaScript and C block of it and of the README runs (or, marked
# no_run, compiles), with a self-test that broken blocks fail. The Rust blocks ran in
# `cargo test` (crate docs/blocks). Uses the venv, the Node addon and libmcpcore.a built above.
echo "== the guide: mdBook, and its Python, JavaScript and C blocks"
bash scripts/docs.sh
python3 scripts/doc_blocks.py --self-test --python "$py_venv/bin/python"

# Fuzzing: every parser of peer bytes (fuzz/fuzz_targets) for FUZZ_SECONDS (30) each under
# libFuzzer + ASan, built in a target dir beside CARGO_TARGET_DIR (cached); a crash fails here
# and prints its reproducer. `scripts/fuzz.sh --long` is the long run (fuzz/RESULTS.md).
echo "== fuzz (short)"
bash scripts/fuzz.sh

echo "== conformance suite"
bash scripts/conformance.sh

# The same server legs through `mcpcore gateway` in front of the Rust fixture, bridging eras in
# both directions (conformance/expected-failures-gateway-*.yaml say what the legacy wire cannot
# carry).
echo "== conformance suite: through mcpcore gateway"
bash scripts/conformance-gateway.sh

# The same server legs against three conformance-server workers sharing one Redis behind a
# round-robin proxy (every request to the next worker): they must score what one process scores.
echo "== conformance suite: scale-out (3 workers, Redis, rr-proxy)"
timeout 2400 bash scripts/conformance-scaleout.sh
