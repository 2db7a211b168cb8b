"""Processes that use mcpcore exit cleanly: runtime threads never enter a finalizing interpreter."""

from __future__ import annotations

import json
import subprocess
import sys

from conftest import APP, INITIALIZE

REQUESTS = [
    INITIALIZE,
    {"jsonrpc": "2.0", "method": "notifications/initialized"},
    {
        "jsonrpc": "2.0",
        "id": 2,
        "method": "tools/call",
        "params": {"name": "add", "arguments": {"a": 1, "b": 2}},
    },
]

CLIENT = f"""
import asyncio, sys
from mcpcore import Client

async def main():
    async with await Client.connect_stdio([sys.executable, {str(APP)!r}]) as c:
        r = await c.call_tool("add", {{"a": 1, "b": 2}})
        print(r["structuredContent"]["sum"])

asyncio.run(main())
"""


def test_server_exits_cleanly_at_eof():
    for _ in range(10):
        p = subprocess.Popen(
            [sys.executable, str(APP)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        assert p.stdin is not None and p.stdout is not None
        p.stdin.write(json.dumps(REQUESTS[0]) + "\n")
        p.stdin.flush()
        assert json.loads(p.stdout.readline())["id"] == 1
        p.stdin.write(json.dumps(REQUESTS[1]) + "\n" + json.dumps(REQUESTS[2]) + "\n")
        p.stdin.close()
        answer = json.loads(p.stdout.readline())
        assert answer["result"]["structuredContent"]["sum"] == 3
        assert p.wait(timeout=30) == 0, p.stderr.read() if p.stderr else ""
        p.stdout.close()
        if p.stderr:
            p.stderr.close()


def test_client_program_exits_cleanly():
    for _ in range(5):
        p = subprocess.run(
            [sys.executable, "-c", CLIENT], capture_output=True, text=True, timeout=30
        )
        assert p.returncode == 0, p.stderr
        assert p.stdout.strip() == "3"
        assert "Fatal" not in p.stderr
