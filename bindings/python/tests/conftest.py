"""Shared fixtures: the test server script, the Rust demo-server binary, a client factory."""

from __future__ import annotations

import json
import os
import pathlib
import subprocess
import sys

import pytest

HERE = pathlib.Path(__file__).resolve().parent
REPO = HERE.parents[2]
APP = HERE / "app.py"


def _target_dir() -> pathlib.Path:
    env = os.environ.get("CARGO_TARGET_DIR")
    return pathlib.Path(env) if env else REPO / "target"


@pytest.fixture(scope="session")
def app_argv() -> list:
    """The Python test server over stdio."""
    return [sys.executable, str(APP)]


@pytest.fixture(scope="session")
def demo_server() -> str:
    """The Rust demo-server binary (built by cargo when missing)."""
    exe = _target_dir() / "debug" / "demo-server"
    if not exe.exists():
        subprocess.run(
            ["cargo", "build", "-q", "-p", "mcpcore-examples", "--bin", "demo-server"],
            cwd=REPO,
            check=True,
        )
    assert exe.exists(), f"demo-server not found at {exe}"
    return str(exe)


def tool_call_line(id: int, name: str, arguments: dict) -> bytes:
    """A `tools/call` request as one raw-wire frame (without its newline)."""
    call = {"jsonrpc": "2.0", "id": id, "method": "tools/call"}
    call["params"] = {"name": name, "arguments": arguments}
    return json.dumps(call).encode()


# A legacy `initialize` request, as raw-wire tests send it.
INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-11-25",
        "capabilities": {},
        "clientInfo": {"name": "raw", "version": "1"},
    },
}
