"""Plain ``def`` handlers over stdio served by core's threads: the thread that reads stdin runs
a ``def`` itself (no hand-off per call), and a ``def`` that blocks still never holds up the
other requests: another thread takes over the reading (STDIO-01…04, over a real pipe)."""

from __future__ import annotations

import asyncio
import json
import pathlib
import subprocess
import sys
import textwrap
import time
from typing import Any, Dict, List

import pytest

from conftest import INITIALIZE, tool_call_line

from mcpcore import Client, McpTimeoutError

MODES = ["legacy", "modern"]

SERVER = textwrap.dedent(
    """
    import threading, time
    from mcpcore import Context, Server

    server = Server("leader-test", "1.0.0")
    opened = threading.Event()

    def thread_name() -> str:
        with open(f"/proc/self/task/{threading.get_native_id()}/comm") as f:
            return f.read().strip()

    @server.tool()
    def where() -> dict:
        return {"thread": thread_name(),
                "on_main": threading.current_thread() is threading.main_thread()}

    @server.tool()
    def wait_open(seconds: float) -> bool:
        # Blocks until another request opens the gate: it can only arrive if a blocked def
        # does not stop the reading.
        return opened.wait(seconds)

    @server.tool()
    def open_gate() -> str:
        opened.set()
        return "opened"

    @server.tool()
    def close_gate() -> str:
        opened.clear()
        return "closed"

    @server.tool()
    def stdio_threads() -> int:
        import os
        names = []
        for tid in os.listdir("/proc/self/task"):
            try:
                with open(f"/proc/self/task/{tid}/comm") as f:
                    names.append(f.read().strip())
            except OSError:
                pass
        return names.count("mcpcore-stdio")

    @server.tool()
    def negate(n: int) -> int:
        return -n

    @server.tool()
    def steps(ctx: Context) -> str:
        for i in range(1, 4):
            ctx.progress(i, 3, f"step {i}")
        return "done"

    server.run_stdio()
    """
)


def value(r: Dict[str, Any]) -> Any:
    return json.loads(r["content"][0]["text"])


@pytest.fixture
def script(tmp_path: pathlib.Path) -> pathlib.Path:
    path = tmp_path / "leader_server.py"
    path.write_text(SERVER)
    return path


@pytest.mark.parametrize("mode", MODES)
async def test_a_def_runs_on_the_thread_that_reads_stdin(script, mode):
    async with await Client.connect_stdio([sys.executable, str(script)], mode=mode) as c:
        for _ in range(20):
            r = await c.call_tool("where", {})
            # Not the loop's thread, not a runtime worker or blocking thread: the reader.
            assert r["structuredContent"] == {"thread": "mcpcore-stdio", "on_main": False}


@pytest.mark.parametrize("mode", MODES)
async def test_a_blocked_def_does_not_hold_up_other_requests(script, mode):
    async with await Client.connect_stdio([sys.executable, str(script)], mode=mode) as c:
        started = time.monotonic()
        waiting = asyncio.ensure_future(c.call_tool("wait_open", {"seconds": 30}))
        await asyncio.sleep(0.2)
        assert not waiting.done()
        # Read and answered while `wait_open` blocks the thread that read it.
        assert "negate" in [t["name"] for t in await c.list_tools()]
        r = await c.call_tool("negate", {"n": 4})
        assert value(r) == -4
        r = await c.call_tool("open_gate", {})
        assert r["content"][0]["text"] == "opened"
        r = await asyncio.wait_for(waiting, 10)
        assert value(r) is True
        assert time.monotonic() - started < 10
        # The reading goes on with the new reader; calls run on it as before.
        for i in range(10):
            r = await c.call_tool("negate", {"n": i})
            assert value(r) == -i
        r = await c.call_tool("where", {})
        assert r["structuredContent"] == {"thread": "mcpcore-stdio", "on_main": False}


async def test_many_blocked_defs_at_once_are_all_served(script):
    """More calls that block than reading threads are let to pile up (64): the rest run on
    core's blocking threads, and every one completes once the gate opens."""
    async with await Client.connect_stdio([sys.executable, str(script)], mode="legacy") as c:
        await c.call_tool("close_gate", {})
        waiting = []
        for _ in range(150):
            # One at a time, so that each is run by the reader and outlasts its tick.
            waiting.append(asyncio.ensure_future(c.call_tool("wait_open", {"seconds": 30})))
            await asyncio.sleep(0.006)
        await asyncio.sleep(0.1)
        assert not any(w.done() for w in waiting)
        r = await c.call_tool("negate", {"n": 1})
        assert value(r) == -1
        # 64 readers stuck in their call and the one reading now, no more.
        r = await c.call_tool("stdio_threads", {})
        assert value(r) == 65
        await c.call_tool("open_gate", {})
        rs = await asyncio.wait_for(asyncio.gather(*waiting), 20)
        assert [value(r) for r in rs] == [True] * 150


@pytest.mark.parametrize("mode", MODES)
async def test_a_blocked_def_can_be_abandoned_and_the_connection_goes_on(script, mode):
    async with await Client.connect_stdio([sys.executable, str(script)], mode=mode) as c:
        await c.call_tool("close_gate", {})
        with pytest.raises(McpTimeoutError):
            await c.call_tool("wait_open", {"seconds": 30}, timeout=0.3)
        # The cancellation was read while the def still blocks; everything else is served.
        rs = await asyncio.gather(*(c.call_tool("negate", {"n": i}) for i in range(50)))
        assert [value(r) for r in rs] == [-i for i in range(50)]
        await c.call_tool("open_gate", {})


def _run(script: pathlib.Path, lines: List[bytes]) -> Dict[str, Any]:
    data = b"\n".join([json.dumps(INITIALIZE).encode(), *lines]) + b"\n"
    p = subprocess.run([sys.executable, str(script)], input=data, capture_output=True, timeout=60)
    return {
        "code": p.returncode,
        "answers": [json.loads(x) for x in p.stdout.splitlines() if x.strip()],
        "stderr": p.stderr.decode(),
    }


def test_calls_written_at_once_each_get_their_answer_before_exit(script):
    """Hundreds of calls in one write (run one after another by the reader), then the input
    ends: every one is answered before the process exits 0 (STDIO-04)."""
    calls = [tool_call_line(10 + i, "negate", {"n": i}) for i in range(400)]
    out = _run(script, [b'{"jsonrpc":"2.0","method":"notifications/initialized"}', *calls])
    assert out["code"] == 0, out["stderr"]
    got = {a["id"]: json.loads(a["result"]["content"][0]["text"]) for a in out["answers"][1:]}
    assert got == {10 + i: -i for i in range(400)}


def test_progress_is_written_before_the_answer_in_order(script):
    """A def's notifications leave before its answer, in the order it sent them (each pump call
    and the write of its output are one turn)."""
    call = {
        "jsonrpc": "2.0",
        "id": 2,
        "method": "tools/call",
        "params": {"name": "steps", "arguments": {}, "_meta": {"progressToken": "t"}},
    }
    out = _run(
        script,
        [b'{"jsonrpc":"2.0","method":"notifications/initialized"}', json.dumps(call).encode()],
    )
    assert out["code"] == 0, out["stderr"]
    tail = [
        (a.get("method"), a.get("params", {}).get("progress"), a.get("id"))
        for a in out["answers"][1:]
    ]
    assert tail == [
        ("notifications/progress", 1.0, None),
        ("notifications/progress", 2.0, None),
        ("notifications/progress", 3.0, None),
        (None, None, 2),
    ]
