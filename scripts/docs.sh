#!/usr/bin/env bash
# Builds the user guide (docs/, an mdBook) into $CARGO_TARGET_DIR/../book (or target/book) and
# checks it: every chapter of SUMMARY.md exists, every {{#include}} resolved, and no chapter links
# to a missing file. mdbook comes from crates.io (pinned, cached; no `serve`/`watch` features).
# The code blocks themselves are checked by docs/blocks (Rust) and
# scripts/doc_blocks.py (Python, JavaScript, C).
set -euo pipefail
cd "$(dirname "$0")/.."

export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$HOME/.cache/mcpcore/target}"
mdbook_version=0.5.4
tools="$(dirname "$CARGO_TARGET_DIR")/mdbook-$mdbook_version"
mdbook="$tools/bin/mdbook"
if [ ! -x "$mdbook" ]; then
  echo "== installing mdbook $mdbook_version (cargo install)"
  cargo install -q --locked mdbook --version "$mdbook_version" --no-default-features \
    --features search --root "$tools"
fi

out="$(dirname "$CARGO_TARGET_DIR")/book"
rm -rf "$out"
"$mdbook" build docs --dest-dir "$out" 2>&1 | tee "$out.log"
if grep -q "ERROR\|WARN" "$out.log"; then
  echo "mdbook reported problems (above)" >&2
  exit 1
fi
python3 - "$out" <<'PY'
import re, sys
from pathlib import Path
out = Path(sys.argv[1])
src = Path("docs/src")
bad = []
for line in (src / "SUMMARY.md").read_text().splitlines():
    for target in re.findall(r"\]\(([^)]+\.md)\)", line):
        if not (src / target).is_file():
            bad.append(f"SUMMARY.md names a missing chapter {target}")
for page in out.glob("*.html"):
    text = page.read_text()
    if "{{#include" in text:
        bad.append(f"{page.name}: an include did not resolve")
for md in [Path("README.md"), *src.glob("*.md"), Path("ffi/README.md"),
           Path("bindings/python/README.md"), Path("bindings/node/README.md")]:
    for target in re.findall(r"\]\(([^)#:]+)(?:#[^)]*)?\)", md.read_text()):
        if target.startswith(("http", "mailto")):
            continue
        if not (md.parent / target).exists():
            bad.append(f"{md}: links to a missing {target}")
if bad:
    sys.exit("\n".join(bad))
pages = len(list(out.glob("*.html")))
print(f"== guide built: {pages} pages in {out}")
PY
