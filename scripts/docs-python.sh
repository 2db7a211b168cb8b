#!/usr/bin/env bash
# The Python API reference: HTML rendered by pdoc (from PyPI) from the installed package's
# docstrings and type annotations (the `_native.pyi` stub included), into
# $CARGO_TARGET_DIR/doc-python/ (open mcpcore.html). Needs the binding installed in the venv
# (scripts/test-python.sh does it; this script is run from there).
#   MCPCORE_PY_VENV   the venv (default as in test-python.sh)
set -euo pipefail
cd "$(dirname "$0")/.."
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$HOME/.cache/mcpcore/target}"
venv="${MCPCORE_PY_VENV:-$(dirname "$CARGO_TARGET_DIR")/py-venv}"
out="$CARGO_TARGET_DIR/doc-python"
"$venv/bin/python" -m pip install -q --disable-pip-version-check "pdoc>=14,<17"
rm -rf "$out"
"$venv/bin/python" -m pdoc --docformat restructuredtext -o "$out" mcpcore
test -s "$out/mcpcore.html"
echo "== python API reference: $out/mcpcore.html"
