"""The release wheel and sdist (scripts/test-wheel.sh builds them and passes their paths in
MCPCORE_WHEEL and MCPCORE_SDIST): one abi3 wheel for CPython >= 3.9, tagged manylinux2014 (as
`auditwheel show` confirms), with its metadata, `py.typed` and the extension, that installs into
fresh venvs of Python 3.9 and 3.13 and works there with no Rust toolchain reachable (nothing is
compiled at install time), including a real stdio round trip between two processes of that venv;
and an sdist that builds with cargo.
"""

from __future__ import annotations

import json
import os
import pathlib
import shutil
import subprocess
import sys
import textwrap
import zipfile
from email.parser import Parser
from typing import Dict, List

import pytest

REPO = pathlib.Path(__file__).resolve().parents[3]


@pytest.fixture(scope="module")
def wheel() -> pathlib.Path:
    paths = os.environ.get("MCPCORE_WHEEL", "").split()
    assert paths, "MCPCORE_WHEEL is not set: run scripts/test-wheel.sh"
    assert len(paths) == 1, f"one build must give one wheel, got {paths}"
    path = pathlib.Path(paths[0])
    assert path.is_file(), path
    return path


def cargo_version() -> str:
    for line in (REPO / "Cargo.toml").read_text().splitlines():
        if line.startswith("version = "):
            return line.split('"')[1]
    raise AssertionError("no workspace version in Cargo.toml")


def test_one_abi3_wheel_for_cpython_39_and_newer(wheel: pathlib.Path):
    # name-version-python-abi-platform.whl (PEP 427): cp39-abi3 loads on every CPython >= 3.9.
    name, version, py_tag, abi_tag, platform = wheel.stem.split("-")
    assert (name, py_tag, abi_tag) == ("mcpcore", "cp39", "abi3")
    assert version == cargo_version()
    # glibc 2.17 (PEP 599's manylinux2014, PEP 600's manylinux_2_17): Debian 10, RHEL 7, Ubuntu
    # 18.04 and newer; a plain `linux` tag would be refused by PyPI.
    assert sorted(platform.split(".")) == ["manylinux2014_x86_64", "manylinux_2_17_x86_64"], (
        platform
    )


def test_auditwheel_confirms_manylinux2014(wheel: pathlib.Path):
    p = subprocess.run(
        [sys.executable, "-m", "auditwheel", "show", str(wheel)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert p.returncode == 0, p.stderr
    text = " ".join(p.stdout.split())
    assert 'consistent with the following platform tag: "manylinux_2_17_x86_64"' in text, text


def test_wheel_files_and_metadata(wheel: pathlib.Path):
    with zipfile.ZipFile(wheel) as z:
        names = set(z.namelist())
        meta_name = next(n for n in names if n.endswith(".dist-info/METADATA"))
        meta = Parser().parsestr(z.read(meta_name).decode())
        wheel_info = z.read(meta_name.replace("METADATA", "WHEEL")).decode()
        scripts = z.read(meta_name.replace("METADATA", "entry_points.txt")).decode()
    for f in ("__init__.py", "client.py", "server.py", "sync.py", "errors.py", "_native.pyi"):
        assert f"mcpcore/{f}" in names, f
    # PEP 561: the marker that makes type checkers use the package's annotations and stub.
    assert "mcpcore/py.typed" in names
    assert "mcpcore/_native.abi3.so" in names or "mcpcore/_native.pyd" in names
    assert not any(n.endswith((".rs", "Cargo.toml")) for n in names), "sources in the wheel"
    assert "Root-Is-Purelib: false" in wheel_info
    # The command line, as a script on PATH (also `python -m mcpcore`).
    entry = [line.replace(" ", "") for line in scripts.splitlines()]
    assert "[console_scripts]" in entry and "mcpcore=mcpcore.__main__:main" in entry, scripts

    assert meta["Name"] == "mcpcore"
    assert meta["Version"] == cargo_version()
    assert meta["Summary"] and "Model Context Protocol" in meta["Summary"]
    assert meta["Requires-Python"] == ">=3.9"
    assert "Apache-2.0" in (meta.get("License") or meta.get("License-Expression") or "")
    classifiers = meta.get_all("Classifier") or []
    assert "Typing :: Typed" in classifiers
    assert "Programming Language :: Python :: 3.9" in classifiers
    urls: Dict[str, str] = dict(u.split(", ", 1) for u in meta.get_all("Project-URL") or [])
    assert {"Homepage", "Repository"} <= set(urls)
    # The README is the long description.
    assert meta["Description-Content-Type"].startswith("text/markdown")
    assert "# mcpcore for Python" in meta.get_payload()


def no_rust_path(tmp: pathlib.Path, venv_bin: pathlib.Path) -> str:
    """PATH = the venv's bin + a copy of /usr/bin's entries without cargo, rustc, rustup."""
    shim = tmp / "usr-bin-without-rust"
    shim.mkdir()
    for entry in os.scandir("/usr/bin"):
        if not entry.name.startswith(("cargo", "rust")):
            (shim / entry.name).symlink_to(entry.path)
    path = f"{venv_bin}{os.pathsep}{shim}"
    for tool in ("cargo", "rustc", "rustup", "maturin"):
        assert shutil.which(tool, path=path) is None, f"{tool} is still reachable"
    return path


def run(argv: List[str], env: Dict[str, str], cwd: pathlib.Path) -> str:
    p = subprocess.run(argv, env=env, cwd=cwd, capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, f"{argv} failed:\n{p.stdout}\n{p.stderr}"
    return p.stdout


SERVER = """
from mcpcore import Server

server = Server("wheel-check", "1.0.0")


@server.tool()
def shout(text: str) -> dict:
    \"\"\"Upper-case the text.\"\"\"
    return {"loud": text.upper()}


@server.tool()
async def whisper(text: str) -> dict:
    \"\"\"Lower-case the text (async: from 3.12 on, stdio is then served on the loop's thread).\"\"\"
    return {"quiet": text.lower()}


server.run_stdio()
"""

CLIENT = """
import os, sys, pathlib
import mcpcore
from mcpcore.sync import Client

here = pathlib.Path(mcpcore.__file__).resolve().parent
assert str(here).startswith(os.environ["VENV"]), here  # the installed copy, not a source tree
assert (here / "py.typed").is_file()
for mode in ("legacy", "modern"):
    with Client.connect_stdio([sys.executable, "server.py"], mode=mode) as c:
        assert c.era == mode, c.era
        assert [t["name"] for t in c.list_tools()] == ["shout", "whisper"]
        r = c.call_tool("shout", {"text": "from the wheel"})
        assert r["structuredContent"] == {"loud": "FROM THE WHEEL"}, r
        r = c.call_tool("whisper", {"text": "FROM THE LOOP"})
        assert r["structuredContent"] == {"quiet": "from the loop"}, r
print("round trip ok", mcpcore.__name__)
"""


def interpreter(version: str) -> str:
    """CPython `version` from pyenv or PATH; missing, the test fails (it never skips)."""
    root = pathlib.Path(os.environ.get("PYENV_ROOT", pathlib.Path.home() / ".pyenv"))
    for candidate in sorted(root.glob(f"versions/{version}.*/bin/python{version}")):
        return str(candidate)
    # pyenv's shims answer for every version it knows of, installed or not: not those.
    for d in os.environ.get("PATH", "").split(os.pathsep):
        found = pathlib.Path(d) / f"python{version}"
        if "shims" not in found.parts and os.access(found, os.X_OK):
            return str(found)
    raise AssertionError(f"Python {version} is required (pyenv install {version})")


@pytest.mark.parametrize("version", ["3.9", "3.13"])
def test_installs_and_runs_without_a_rust_toolchain(
    wheel: pathlib.Path, tmp_path: pathlib.Path, version: str
):
    venv = tmp_path / "venv"
    subprocess.run([interpreter(version), "-m", "venv", str(venv)], check=True, timeout=300)
    bin_dir = venv / "bin"
    env = {
        "PATH": no_rust_path(tmp_path, bin_dir),
        "HOME": str(tmp_path),  # no ~/.cargo, no pip cache or config of the caller
        "CARGO": "/nonexistent",
        "RUSTC": "/nonexistent",
        "CARGO_HOME": "/nonexistent",
        "RUSTUP_HOME": "/nonexistent",
        "PIP_NO_INDEX": "1",  # nothing fetched: no build backend, no sdist
        "PIP_DISABLE_PIP_VERSION_CHECK": "1",
        "VENV": str(venv.resolve()),
    }
    run(
        ["python", "-m", "pip", "install", "-q", "--only-binary=:all:", "--no-deps", str(wheel)],
        env,
        tmp_path,
    )
    (tmp_path / "server.py").write_text(textwrap.dedent(SERVER))
    (tmp_path / "client.py").write_text(textwrap.dedent(CLIENT))
    out = run(["python", "client.py"], env, tmp_path)
    assert "round trip ok mcpcore" in out
    # The command line, as `python -m mcpcore` and as the `mcpcore` script pip installed.
    for cli in (["python", "-m", "mcpcore"], [str(bin_dir / "mcpcore")]):
        out = run([*cli, "call", "shout", "text=cli", "--", "python", "server.py"], env, tmp_path)
        assert json.loads(out)["structuredContent"] == {"loud": "CLI"}, out
    ver = run(["python", "-c", "import sys; print('%d.%d' % sys.version_info[:2])"], env, tmp_path)
    assert ver.strip() == version


def test_sdist_builds_with_cargo(tmp_path: pathlib.Path):
    sdist = pathlib.Path(os.environ.get("MCPCORE_SDIST", ""))
    assert sdist.is_file(), "MCPCORE_SDIST is not set: run scripts/test-wheel.sh"
    assert sdist.name == f"mcpcore-{cargo_version()}.tar.gz", sdist.name
    # The dev profile and the caller's CARGO_TARGET_DIR: the dependencies are already built.
    env = dict(os.environ, MATURIN_PEP517_ARGS="--profile dev")
    p = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "-w", str(tmp_path), str(sdist)],
        env=env,
        capture_output=True,
        text=True,
        timeout=1200,
    )
    assert p.returncode == 0, p.stdout + p.stderr
    built = list(tmp_path.glob("mcpcore-*.whl"))
    assert len(built) == 1, built
    with zipfile.ZipFile(built[0]) as z:
        assert "mcpcore/_native.abi3.so" in z.namelist()
