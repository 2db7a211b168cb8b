"""A plain ``def`` registered ``on_loop=True`` runs on the serving event loop's thread, as an
``async def`` does, and a default ``def`` does not (it runs on one of core's worker threads, as
the official SDK runs it off its loop): the same answers and errors either way, over a real pipe
and real HTTP on 127.0.0.1."""

from __future__ import annotations

import asyncio
import pathlib
import sys
import textwrap
import threading
from typing import Any, Dict

import pytest

from mcpcore import Client, McpError, Server, Task, ToolError

MODES = ["legacy", "modern"]

SERVER = textwrap.dedent(
    """
    import os, threading
    from mcpcore import Server

    server = Server("on-loop", "1.0.0")

    # No `async def` here: serving from the loop is chosen for the on_loop entries alone.
    @server.tool(on_loop=True)
    def probe() -> dict:
        # Only the loop's own reader (asyncio's pipe transport) makes stdin non-blocking.
        return {"stdin_blocking": os.get_blocking(0),
                "on_main": threading.current_thread() is threading.main_thread()}

    @server.tool()
    def elsewhere() -> dict:
        return {"on_main": threading.current_thread() is threading.main_thread()}

    server.run_stdio()
    """
)


def on_loop_server(loop_thread: Dict[str, int]) -> Server:
    server = Server("on-loop", "1.0.0", options={"dynamic": True})

    def here() -> bool:
        return threading.get_ident() == loop_thread["id"]

    @server.tool(on_loop=True)
    def looped(n: int) -> Dict[str, Any]:
        return {"n": n, "on_loop": here()}

    @server.tool()
    def pooled(n: int) -> Dict[str, Any]:
        return {"n": n, "on_loop": here()}

    @server.tool(on_loop=True)
    def refuses(kind: str) -> str:
        if kind == "tool":
            raise ToolError("no such widget")
        if kind == "rpc":
            raise McpError(-32602, "bad widget")
        raise RuntimeError("secret detail")

    @server.prompt(on_loop=True)
    def greeting(who: str) -> str:
        return f"hello {who} (on loop: {here()})"

    @server.resource("demo://where", on_loop=True)
    def where() -> str:
        return f"on loop: {here()}"

    return server


@pytest.mark.parametrize("mode", MODES)
async def test_an_on_loop_def_runs_on_the_loop_thread_and_a_default_def_does_not(mode):
    loop_thread = {"id": threading.get_ident()}
    server = on_loop_server(loop_thread)
    async with server.serve_http("127.0.0.1", 0) as handle:
        async with await Client.connect_http(handle.url, mode=mode) as c:
            r = await c.call_tool("looped", {"n": 7})
            assert r["structuredContent"] == {"n": 7, "on_loop": True}
            r = await c.call_tool("pooled", {"n": 8})
            assert r["structuredContent"] == {"n": 8, "on_loop": False}

            p = await c.get_prompt("greeting", {"who": "Ada"})
            assert p["messages"][0]["content"]["text"] == "hello Ada (on loop: True)"
            res = await c.read_resource("demo://where")
            assert res["contents"][0]["text"] == "on loop: True"

            # Added while serving, through add_tool's keywords.
            def added(n: int) -> Dict[str, Any]:
                return {"n": n, "on_loop": threading.get_ident() == loop_thread["id"]}

            server.add_tool(added, on_loop=True)
            r = await c.call_tool("added", {"n": 9})
            assert r["structuredContent"] == {"n": 9, "on_loop": True}


@pytest.mark.parametrize("mode", MODES)
async def test_an_on_loop_def_reports_errors_as_a_default_def_does(mode):
    server = on_loop_server({"id": threading.get_ident()})
    async with server.serve_http("127.0.0.1", 0) as handle:
        async with await Client.connect_http(handle.url, mode=mode) as c:
            r = await c.call_tool("refuses", {"kind": "tool"})
            assert r["isError"] is True
            assert r["content"][0]["text"] == "no such widget"
            with pytest.raises(McpError) as e:
                await c.call_tool("refuses", {"kind": "rpc"})
            assert (e.value.code, e.value.message) == (-32602, "bad widget")
            with pytest.raises(McpError) as e:
                await c.call_tool("refuses", {"kind": "other"})
            assert e.value.code == -32603
            assert "secret detail" not in e.value.message
            # Arguments core's schema check refuses never reach the function (TOOL-07).
            r = await c.call_tool("looped", {"n": "seven"})
            assert r["isError"] is True


@pytest.mark.parametrize("mode", MODES)
async def test_over_stdio_a_server_of_on_loop_defs_is_served_from_the_loop(
    tmp_path: pathlib.Path, mode
):
    script = tmp_path / "on_loop_server.py"
    script.write_text(SERVER)
    async with await Client.connect_stdio([sys.executable, str(script)], mode=mode) as c:
        r = await c.call_tool("probe", {})
        assert r["structuredContent"] == {"stdin_blocking": False, "on_main": True}
        r = await c.call_tool("elsewhere", {})
        assert r["structuredContent"] == {"on_main": False}
        # Sent together, mixed with calls that run off the loop: each gets its own answer.
        rs = await asyncio.gather(
            *(c.call_tool("probe" if i % 2 else "elsewhere", {}) for i in range(60))
        )
        assert [x["structuredContent"]["on_main"] for x in rs] == [i % 2 == 1 for i in range(60)]


@pytest.mark.parametrize("mode", MODES)
async def test_an_on_loop_def_runs_as_a_task_on_the_loop_thread(mode):
    loop_id = threading.get_ident()
    server = Server("on-loop-tasks", "1.0.0", tasks={"pollIntervalMs": 20})

    @server.tool(task_support="optional", on_loop=True)
    def tasked(n: int) -> Dict[str, Any]:
        return {"n": n, "on_loop": threading.get_ident() == loop_id}

    async with server.serve_http("127.0.0.1", 0) as handle:
        async with await Client.connect_http(handle.url, mode=mode) as c:
            task = await c.call_tool_as_task("tasked", {"n": 3})
            assert isinstance(task, Task), task  # a task was made, not an answer at once
            done = await c.wait_task(task.task_id, timeout=10)
            assert done.status == "completed", done
            # The result (tasks/result on a legacy server, inline on a modern one).
            r = await c.call_tool_to_completion("tasked", {"n": 4}, timeout=10)
            assert r["structuredContent"] == {"n": 4, "on_loop": True}


def test_on_loop_is_ignored_for_an_async_def():
    server = Server("x", "1")

    @server.tool(on_loop=True)
    async def already() -> str:
        return "ok"

    (entry,) = server._entries
    assert entry.is_async and not entry.on_loop
