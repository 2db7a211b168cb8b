"""examples/python: client.py drives server.py end to end (separate processes, over stdio and
over Streamable HTTP on 127.0.0.1), in both eras."""

from __future__ import annotations

import pathlib
import subprocess
import sys
from typing import List

import pytest

EXAMPLES = pathlib.Path(__file__).resolve().parents[3] / "examples" / "python"

EXPECTED = [
    "server: example-server 1.0.0",
    "tools: add, count, add_note",
    "add: 5",
    "count: counted to 3",
    "progress: counted 1; counted 2; counted 3",
    "count error: to must be between 1 and 100 (isError=True)",
    "elicitation: Text of the note 'shopping'?",
    "add_note: note 'shopping' added",
    "notes://shopping: Buy milk.",
    # Core writes a value's JSON text compactly (mcpcore::server::ResultShape), as for Node.
    'notes://list: ["shopping","todo","welcome"]',
    "prompt: Summarize this note: Hello from mcpcore.",
    "complete: shopping",
    "unknown tool: error -32602",
]


def run_client(args: List[str]) -> List[str]:
    out = subprocess.run(
        [sys.executable, str(EXAMPLES / "client.py"), *args],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert out.returncode == 0, out.stderr
    return out.stdout.splitlines()


@pytest.mark.parametrize("mode", ["legacy", "modern"])
def test_client_drives_the_server_over_stdio(mode):
    lines = run_client(["--mode", mode])
    assert lines[0].startswith(f"era: {mode} (")
    assert lines[1:] == EXPECTED


@pytest.mark.parametrize("mode", ["legacy", "modern"])
def test_client_drives_the_server_over_http(mode):
    server = subprocess.Popen(
        [sys.executable, str(EXAMPLES / "server.py"), "--http", "0"],
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert server.stderr is not None
        first = server.stderr.readline().strip()
        assert first.startswith("listening on http://127.0.0.1:"), first
        url = first.split(" ")[-1]
        lines = run_client(["--mode", mode, "--url", url])
        assert lines[0].startswith(f"era: {mode} (")
        assert lines[1:] == EXPECTED
    finally:
        server.terminate()
        assert server.wait(timeout=10) == 0
