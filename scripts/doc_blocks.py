#!/usr/bin/env python3
"""Check the Python, JavaScript/TypeScript and C blocks of the README and the user guide.

Rust blocks are compiled and run by the crate docs/blocks (its src/lib.rs, whose rules this
mirrors): a fenced block's first info word is its language; `no_run` means checked but not
run (it serves forever or needs a peer), `ignore` means neither (output, pseudo-code).

- Python: run with the venv's interpreter (stdin closed, so a stdio server ends at EOF);
  `no_run` blocks are compiled and checked by ruff for undefined names.
- JavaScript: written as an ES module inside the Node package (so `import ... from 'mcpcore'`
  resolves to this checkout) and run with node; `no_run` blocks get `node --check`.
  TypeScript blocks are type-checked with the package's `tsc`.
- C: a block with `main` is compiled, linked against the debug `libmcpcore.a` and run
  (`no_run`: compiled and linked only); another block is a translation-unit fragment,
  compiled with the header included and `-fsyntax-only`.

`--self-test` first checks that a good block of each language passes and a broken one fails.
Usage: doc_blocks.py [--self-test] [--python PY] [--lib-dir DIR] [FILE.md ...]
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
NODE_PKG = ROOT / "bindings" / "node"
LANGS = {
    "python": "python",
    "py": "python",
    "js": "js",
    "javascript": "js",
    "mjs": "js",
    "ts": "ts",
    "typescript": "ts",
    "c": "c",
}
TIMEOUT = 60


@dataclass
class Block:
    file: str
    line: int
    lang: str
    flags: list[str] = field(default_factory=list)
    code: str = ""

    @property
    def name(self) -> str:
        return f"{self.file}:{self.line}"


def extract(file: str, text: str) -> list[Block]:
    """Every fenced block of `text`; an unclosed fence is an error."""
    blocks: list[Block] = []
    cur: Block | None = None
    prefix = ""
    for i, raw in enumerate(text.splitlines(), 1):
        stripped = raw.lstrip()
        if cur is None:
            if stripped.startswith("```"):
                words = stripped[3:].replace(",", " ").split()
                lang = words[0].lower() if words else ""
                cur = Block(file, i, lang, words[1:])
                prefix = raw[: len(raw) - len(stripped)]
        elif stripped.startswith("```"):
            blocks.append(cur)
            cur = None
        else:
            cur.code += (raw[len(prefix) :] if raw.startswith(prefix) else raw) + "\n"
    if cur is not None:
        raise SystemExit(f"{file}:{cur.line}: a code fence is never closed")
    return blocks


class Checker:
    def __init__(self, python: str, lib_dir: Path, work: Path) -> None:
        self.python = python
        self.lib_dir = lib_dir
        self.work = work
        self.n = 0

    def _file(self, block: Block, suffix: str, where: Path | None = None) -> Path:
        self.n += 1
        d = where or self.work
        d.mkdir(parents=True, exist_ok=True)
        p = d / f"block{self.n}{suffix}"
        p.write_text(block.code)
        return p

    def _run(self, argv: list[str], cwd: Path, env: dict[str, str] | None = None) -> str | None:
        try:
            r = subprocess.run(
                argv,
                cwd=cwd,
                stdin=subprocess.DEVNULL,
                capture_output=True,
                text=True,
                timeout=TIMEOUT,
                env={**os.environ, **(env or {})},
            )
        except subprocess.TimeoutExpired:
            return f"did not finish in {TIMEOUT} s (mark it no_run?)"
        if r.returncode != 0:
            return f"exit {r.returncode}\n{r.stdout[-2000:]}{r.stderr[-4000:]}"
        return None

    def check(self, block: Block) -> str | None:
        """None when the block passes, else why it fails."""
        lang = LANGS.get(block.lang)
        run = "no_run" not in block.flags
        if lang == "python":
            p = self._file(block, ".py")
            if run:
                return self._run([self.python, str(p)], p.parent)
            ruff = str(Path(self.python).parent / "ruff")
            return self._run([self.python, "-m", "py_compile", str(p)], p.parent) or self._run(
                [ruff, "check", "--quiet", "--no-cache", "--select", "F", str(p)], p.parent
            )
        if lang == "js":
            p = self._file(block, ".mjs", NODE_PKG / ".doc-blocks")
            return self._run(["node", str(p)] if run else ["node", "--check", str(p)], p.parent)
        if lang == "ts":
            p = self._file(block, ".mts", NODE_PKG / ".doc-blocks")
            tsc = NODE_PKG / "node_modules" / ".bin" / "tsc"
            return self._run(
                [
                    str(tsc),
                    "--noEmit",
                    "--strict",
                    "--module",
                    "nodenext",
                    "--target",
                    "es2022",
                    "--skipLibCheck",
                    str(p),
                ],
                NODE_PKG,
            )
        if lang == "c":
            return self._check_c(block, run)
        return None

    def _check_c(self, block: Block, run: bool) -> str | None:
        inc = ["-I", str(ROOT / "include")]
        flags = ["-std=c11", "-Wall", "-Werror", "-Wno-unused-variable", "-Wno-unused-function"]
        if not re.search(r"\bmain\s*\(", block.code):
            block = Block(block.file, block.line, "c", block.flags, "#include <mcpcore.h>\n" + block.code)
            p = self._file(block, ".c")
            return self._run(["cc", *flags, *inc, "-fsyntax-only", str(p)], p.parent)
        p = self._file(block, ".c")
        exe = p.with_suffix("")
        link = [str(self.lib_dir / "libmcpcore.a"), "-lpthread", "-ldl", "-lm"]
        err = self._run(["cc", *flags, *inc, str(p), "-o", str(exe), *link], p.parent)
        return err or (self._run([str(exe)], p.parent) if run else None)


def self_test(checker: Checker) -> None:
    """A good block of each language passes and a broken one fails."""
    cases = [
        ("python", [], "import json\nassert json.loads('[1]') == [1]\n", "assert undefined_name\n"),
        ("python", ["no_run"], "def f() -> int:\n    return 1\n", "def f():\n    return nope\n"),
        ("js", [], "import assert from 'node:assert';\nassert.equal(1 + 1, 2);\n", "throw new Error('x');\n"),
        ("js", ["no_run"], "const a = 1;\n", "const = 1;\n"),
        ("c", [], "#include <stdio.h>\nint main(void) { return 0; }\n", "int main(void) { return 1; }\n"),
        ("c", ["no_run"], "static int f(void) { return 1; }\n", "static int f(void) { return g(); }\n"),
    ]
    for lang, flags, good, bad in cases:
        g = checker.check(Block("self-test.md", 1, lang, flags, good))
        assert g is None, f"self-test: a good {lang} {flags} block failed: {g}"
        b = checker.check(Block("self-test.md", 1, lang, flags, bad))
        assert b is not None, f"self-test: a broken {lang} {flags} block passed"
    print(f"doc blocks: self-test passed ({len(cases)} good blocks pass, {len(cases)} broken fail)")


def documents() -> list[Path]:
    """The README, the package READMEs the guide includes, and the guide's chapters."""
    packages = ["ffi/README.md", "bindings/python/README.md", "bindings/node/README.md"]
    return [ROOT / "README.md", *(ROOT / p for p in packages), *sorted((ROOT / "docs" / "src").glob("*.md"))]


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--self-test", action="store_true")
    ap.add_argument("--python", default=sys.executable)
    target = Path(os.environ.get("CARGO_TARGET_DIR", ROOT / "target"))
    ap.add_argument("--lib-dir", type=Path, default=target / "debug")
    ap.add_argument("files", nargs="*", type=Path)
    a = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="mcpcore-doc-blocks-") as tmp:
        checker = Checker(a.python, a.lib_dir, Path(tmp))
        try:
            if a.self_test:
                self_test(checker)
            failures, counts = [], {}
            for doc in a.files or documents():
                rel = str(doc.resolve().relative_to(ROOT)) if doc.resolve().is_relative_to(ROOT) else str(doc)
                for b in extract(rel, doc.read_text()):
                    lang = LANGS.get(b.lang)
                    if lang is None or "ignore" in b.flags:
                        continue
                    counts[lang] = counts.get(lang, 0) + 1
                    err = checker.check(b)
                    if err:
                        failures.append(f"{b.name} ({b.lang}): {err}")
        finally:
            for p in (NODE_PKG / ".doc-blocks").glob("block*"):
                p.unlink()
    summary = ", ".join(f"{n} {lang}" for lang, n in sorted(counts.items()))
    if failures:
        print("\n\n".join(failures), file=sys.stderr)
        print(f"doc blocks: {len(failures)} of the blocks failed ({summary} checked)", file=sys.stderr)
        return 1
    print(f"doc blocks: all pass ({summary})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
