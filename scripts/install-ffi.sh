#!/usr/bin/env bash
# Build the C library (libmcpcore.a + libmcpcore.so) and install it with its header and a
# pkg-config file:
#
#   scripts/install-ffi.sh [--prefix DIR] [--debug] [--no-build]
#
#   DIR/include/mcpcore.h
#   DIR/lib/libmcpcore.a, DIR/lib/libmcpcore.so.VERSION (+ .so.0 and .so links; SONAME .so.0)
#   DIR/lib/pkgconfig/mcpcore.pc
#   DIR/lib/cmake/mcpcore/mcpcore-config.cmake (+ mcpcore-config-version.cmake)
#
# Then: PKG_CONFIG_PATH=DIR/lib/pkgconfig cc prog.c $(pkg-config --cflags --libs mcpcore)
# (shared), or with `pkg-config --static --libs` and -l:libmcpcore.a (static); or from CMake:
# find_package(mcpcore CONFIG REQUIRED) and target_link_libraries(app mcpcore::mcpcore); see
# ffi/README.md.
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
    -h|--help) sed -n '2,16p' "$0"; exit 0 ;;
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
# The CMake package: imported targets mcpcore::shared and mcpcore::static, and mcpcore::mcpcore,
# the shared one unless MCPCORE_STATIC is set ON before find_package. Paths are relative to the
# config file, so the installed tree can be moved.
mkdir -p "$prefix/lib/cmake/mcpcore"
cat > "$prefix/lib/cmake/mcpcore/mcpcore-config.cmake" <<'CMAKE'
# mcpcore: the Model Context Protocol engine's C ABI (mcpcore.h).
#   find_package(mcpcore CONFIG REQUIRED)
#   target_link_libraries(app PRIVATE mcpcore::mcpcore)   # shared; set MCPCORE_STATIC ON for static
get_filename_component(_mcpcore_prefix "${CMAKE_CURRENT_LIST_DIR}/../../.." ABSOLUTE)
find_package(Threads REQUIRED)
if(NOT TARGET mcpcore::shared)
  add_library(mcpcore::shared SHARED IMPORTED)
  set_target_properties(mcpcore::shared PROPERTIES
    IMPORTED_LOCATION "${_mcpcore_prefix}/lib/libmcpcore.so.0"
    IMPORTED_SONAME "libmcpcore.so.0"
    INTERFACE_INCLUDE_DIRECTORIES "${_mcpcore_prefix}/include")
endif()
if(NOT TARGET mcpcore::static)
  add_library(mcpcore::static STATIC IMPORTED)
  # A Rust static library needs the system libraries its standard library uses.
  set_target_properties(mcpcore::static PROPERTIES
    IMPORTED_LOCATION "${_mcpcore_prefix}/lib/libmcpcore.a"
    INTERFACE_INCLUDE_DIRECTORIES "${_mcpcore_prefix}/include"
    INTERFACE_LINK_LIBRARIES "Threads::Threads;${CMAKE_DL_LIBS};m")
endif()
if(NOT TARGET mcpcore::mcpcore)
  if(MCPCORE_STATIC)
    add_library(mcpcore::mcpcore INTERFACE IMPORTED)
    set_target_properties(mcpcore::mcpcore PROPERTIES INTERFACE_LINK_LIBRARIES mcpcore::static)
  else()
    add_library(mcpcore::mcpcore INTERFACE IMPORTED)
    set_target_properties(mcpcore::mcpcore PROPERTIES INTERFACE_LINK_LIBRARIES mcpcore::shared)
  endif()
endif()
unset(_mcpcore_prefix)
CMAKE
cat > "$prefix/lib/cmake/mcpcore/mcpcore-config-version.cmake" <<CMAKE
# Same major version (0.x: same minor) is compatible, as for the SONAME.
set(PACKAGE_VERSION "$version")
string(REPLACE "." ";" _have "\${PACKAGE_VERSION}")
if(PACKAGE_FIND_VERSION VERSION_GREATER PACKAGE_VERSION)
  set(PACKAGE_VERSION_COMPATIBLE FALSE)
elseif(PACKAGE_FIND_VERSION_MAJOR STREQUAL "" OR NOT PACKAGE_FIND_VERSION)
  set(PACKAGE_VERSION_COMPATIBLE TRUE)
else()
  list(GET _have 0 _have_major)
  list(GET _have 1 _have_minor)
  if(NOT PACKAGE_FIND_VERSION_MAJOR EQUAL _have_major)
    set(PACKAGE_VERSION_COMPATIBLE FALSE)
  elseif(_have_major EQUAL 0 AND NOT PACKAGE_FIND_VERSION_MINOR EQUAL _have_minor)
    set(PACKAGE_VERSION_COMPATIBLE FALSE)
  else()
    set(PACKAGE_VERSION_COMPATIBLE TRUE)
  endif()
endif()
if(PACKAGE_FIND_VERSION STREQUAL PACKAGE_VERSION)
  set(PACKAGE_VERSION_EXACT TRUE)
endif()
CMAKE
echo "installed mcpcore $version ($profile) into $prefix"
