"""stdio served from the event loop's own thread (``on_loop``, core's ``StdioPump`` driven by
``mcpcore._pump``) against core's threads: the same answers over a real pipe, with the loop's
thread doing the reading (STDIO-01…04)."""

from __future__ import annotations

import asyncio
import json
import pathlib
import subprocess
import sys
import textwrap
import threading
import time
from typing import Any, Dict, List, Optional

import pytest

from conftest import INITIALIZE, tool_call_line

from mcpcore import Client

SERVER = textwrap.dedent(
    """
    import asyncio, os, sys, threading
    from mcpcore import Server

    server = Server("pump-test", "1.0.0", options={"limits": {"maxMessageBytes": 4096}})

    @server.tool()
    async def probe() -> dict:
        # Only the loop's own reader (asyncio's pipe transport) makes stdin non-blocking.
        return {"stdin_blocking": os.get_blocking(0),
                "on_main": threading.current_thread() is threading.main_thread()}

    @server.tool()
    async def later(n: int) -> int:
        await asyncio.sleep(0.001 * (n % 5))
        return n

    @server.tool()
    def plain(n: int) -> int:
        return -n

    @server.tool()
    async def big(n: int) -> str:
        return str(n % 10) * 30000

    on_loop = {"1": True, "0": False}.get(sys.argv[1])
    server.run_stdio(on_loop=on_loop)
    """
)


@pytest.fixture
def script(tmp_path: pathlib.Path) -> pathlib.Path:
    path = tmp_path / "pump_server.py"
    path.write_text(SERVER)
    return path


def argv(script: pathlib.Path, on_loop: Optional[bool]) -> List[str]:
    flag = {True: "1", False: "0", None: "auto"}[on_loop]
    return [sys.executable, str(script), flag]


@pytest.mark.parametrize("on_loop", [True, False, None])
async def test_the_loop_reads_stdin_only_when_asked(script, on_loop):
    async with await Client.connect_stdio(argv(script, on_loop), mode="legacy") as c:
        r = await c.call_tool("probe", {})
    # The default serves from the loop on asyncio's own loop (a task's first step runs at
    # once): this server has `async def` tools.
    expected = on_loop if on_loop is not None else True
    assert r["structuredContent"] == {"stdin_blocking": not expected, "on_main": True}


@pytest.mark.parametrize("mode", ["legacy", "modern"])
async def test_async_and_plain_calls_sent_together_each_get_their_own_answer(script, mode):
    """On the loop's thread, calls that wait (a task that sleeps, a plain ``def`` on a worker
    thread) are kept and polled there when woken; each gets its own answer."""
    async with await Client.connect_stdio(argv(script, True), mode=mode) as c:
        calls = [c.call_tool("later" if i % 2 else "plain", {"n": i}) for i in range(300)]
        rs = await asyncio.gather(*calls)
    got = [json.loads(r["content"][0]["text"]) for r in rs]
    assert got == [i if i % 2 else -i for i in range(300)]


def _raw_session(script: pathlib.Path, on_loop: bool, lines: List[bytes]) -> Dict[str, Any]:
    data = b"\n".join([json.dumps(INITIALIZE).encode(), *lines]) + b"\n"
    p = subprocess.run(argv(script, on_loop), input=data, capture_output=True, timeout=60)
    answers = [json.loads(x) for x in p.stdout.splitlines() if x.strip()]
    return {"code": p.returncode, "answers": answers, "stderr": p.stderr.decode()}


@pytest.mark.parametrize("on_loop", [True, False])
def test_a_frame_over_the_cap_ends_the_connection_the_same_way(script, on_loop):
    big = json.dumps({"jsonrpc": "2.0", "id": 2, "method": "ping", "params": {"x": "y" * 5000}})
    after = json.dumps({"jsonrpc": "2.0", "id": 3, "method": "ping"})
    out = _raw_session(script, on_loop, [big.encode(), after.encode()])
    # STDIO-01: -32600 without an id, and nothing is read after it (the initialize answer may
    # come first or second: core's threads answer it concurrently).
    got = sorted(
        (a.get("id") or 0, "result" in a, a.get("error", {}).get("code")) for a in out["answers"]
    )
    assert got == [(0, False, -32600), (1, True, None)]
    assert out["code"] != 0 and "4096" in out["stderr"]


@pytest.mark.parametrize("on_loop", [True, False])
def test_end_of_input_answers_what_is_owed_then_exits(script, on_loop):
    """STDIO-04: input ends with calls in flight (a task sleeping, a last frame without a
    newline); every one is answered before the process exits 0."""
    calls = [tool_call_line(10 + i, "later", {"n": i}) for i in range(1, 5)]
    out = _raw_session(
        script, on_loop, [b'{"jsonrpc":"2.0","method":"notifications/initialized"}', *calls]
    )
    assert out["code"] == 0, out["stderr"]
    ids = sorted(a["id"] for a in out["answers"])
    assert ids == [1, 11, 12, 13, 14]


async def test_a_task_started_from_a_loop_callback_takes_its_first_step_at_once():
    """``Spawn(coro, loop, True)`` from a plain callback of the loop runs the coroutine up to
    its first wait before returning (eagerly on 3.12+, by running the step it scheduled on
    asyncio's own loop before that); from inside a running task it keeps the schedule."""
    from mcpcore._spawn import Spawn

    loop = asyncio.get_running_loop()
    steps: List[str] = []

    async def handler(name: str) -> None:
        steps.append(f"{name} started")
        await asyncio.sleep(0)
        steps.append(f"{name} resumed")

    def callback() -> None:
        Spawn(handler("cb"), loop, True)
        steps.append("cb returned")

    loop.call_soon(callback)
    await asyncio.sleep(0.05)
    assert steps[:2] == ["cb started", "cb returned"]
    steps.clear()
    Spawn(handler("task"), loop, True)
    steps.append("task returned")
    await asyncio.sleep(0.05)
    if sys.version_info >= (3, 12):
        assert steps[:2] == ["task started", "task returned"]  # eager_start swaps tasks
    else:
        assert steps[:2] == ["task returned", "task started"]
    assert "cb resumed" not in steps and "task resumed" in steps


def test_answers_the_pipe_cannot_take_yet_wait_in_order_for_a_slow_reader(script):
    """STDIO-01 backpressure with answers written by core straight to the pipe: 300 answers of
    30 KB for a reader that reads nothing for half a second (the pipe takes 64 KB) arrive whole,
    each once, in the order asked, and the server exits 0 at end of input."""
    n = 300
    calls = b"".join(tool_call_line(100 + i, "big", {"n": i}) + b"\n" for i in range(n))
    init = json.dumps(INITIALIZE).encode() + b"\n"
    p = subprocess.Popen(
        argv(script, True), stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )
    assert p.stdin is not None and p.stdout is not None
    stdin = p.stdin

    def send() -> None:
        stdin.write(init)
        stdin.flush()
        for i in range(0, len(calls), 4096):  # many reads on the server's side
            stdin.write(calls[i : i + 4096])
            stdin.flush()
        stdin.close()

    writer = threading.Thread(target=send)
    writer.start()
    time.sleep(0.5)
    out = p.stdout.read()
    writer.join(timeout=60)
    assert p.wait(timeout=60) == 0, p.stderr.read().decode() if p.stderr else ""
    answers = [json.loads(line) for line in out.splitlines()]
    assert [a["id"] for a in answers] == [1] + [100 + i for i in range(n)]
    for i, a in enumerate(answers[1:]):
        assert a["result"]["content"][0]["text"] == str(i % 10) * 30000
