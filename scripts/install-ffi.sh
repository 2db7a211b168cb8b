#!/usr/bin/env bash
# Build the C library (libmcpcore.a + libmcpcore.so) and install it with its header and a
# pkg-config file:
#
#   scripts/install-ffi.sh [--prefix DIR] [--debug] [--no-build]
#
#   DIR/include/mcpcore.h
#   DIR/lib/libmcpcore.a, DIR/lib/libmcpcore.so.VERSION (+ .so.0 and .so links; SONAME .so.0)
#   DIR/lib/pkgconfig/mcpcore.pc
#
# Then: PKG_CONFIG_PATH=DIR/lib/pkgconfig cc prog.c $(pkg-config --cflags --libs mcpcore)
# (shared), or with `pkg-config --static --libs` and -l:libmcpcore.a (static); see ffi/README.md.
set -euo pipefail
cd "$(dirname "$0")/.."

prefix="${PREFIX:-/usr/local}"
profile=release
build=1
while [ $# -gt 0 ]; do
  case "$1" in
    --prefix) prefix="$2"; shift 2 ;;
    --prefix=*) prefix="${1#--prefix=}"; shift ;;
    --debug) profile=debug; shift ;;
    --no-build) build=0; shift ;;
    -h|--help) sed -n '2,13p' "$0"; exit 0 ;;
    *) echo "unknown argument: $1" >&2; exit 2 ;;
  esac
done

target_dir="${CARGO_TARGET_DIR:-target}"
if [ "$build" = 1 ]; then
  if [ "$profile" = release ]; then
    cargo build --release -p mcpcore-ffi
  else
    cargo build -p mcpcore-ffi
  fi
fi
libdir_src="$target_dir/$profile"
for f in libmcpcore.a libmcpcore.so; do
  [ -f "$libdir_src/$f" ] || { echo "missing $libdir_src/$f (build first or drop --no-build)" >&2; exit 1; }
done

version="$(sed -n 's/^version = "\(.*\)"/\1/p' Cargo.toml | head -1)"
mkdir -p "$prefix/include" "$prefix/lib/pkgconfig"
install -m 0644 include/mcpcore.h "$prefix/include/mcpcore.h"
install -m 0644 "$libdir_src/libmcpcore.a" "$prefix/lib/libmcpcore.a"
# The library's SONAME is libmcpcore.so.0 (ffi/build.rs): install the versioned file with the
# runtime link (.so.0) and the development link (.so).
install -m 0755 "$libdir_src/libmcpcore.so" "$prefix/lib/libmcpcore.so.$version"
ln -sf "libmcpcore.so.$version" "$prefix/lib/libmcpcore.so.0"
ln -sf "libmcpcore.so.0" "$prefix/lib/libmcpcore.so"
cat > "$prefix/lib/pkgconfig/mcpcore.pc" <<PC
prefix=$prefix
exec_prefix=\${prefix}
libdir=\${exec_prefix}/lib
includedir=\${prefix}/include

Name: mcpcore
Description: Model Context Protocol engine (C ABI)
Version: $version
Cflags: -I\${includedir}
Libs: -L\${libdir} -lmcpcore
Libs.private: -lpthread -ldl -lm
PC
echo "installed mcpcore $version ($profile) into $prefix"
