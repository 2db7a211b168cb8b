"""Tasks through the binding (SEP-2663; TASK-L01, TASK-M01…M04): a Python server's task-capable
tools and the Python client, over stdio and Streamable HTTP, in both eras, against the Python
server and the Rust ``tasks-server``."""

from __future__ import annotations

import pathlib
import subprocess
import sys

import pytest

from mcpcore import Client, McpError, Task

from conftest import REPO, _target_dir
from tasks_app import server

MODES = ["legacy", "modern"]
HERE = pathlib.Path(__file__).resolve().parent


async def _accept_name(params):
    return {"action": "accept", "content": {"name": "Lin", "confirm": True}}


def _rust_tasks_server() -> str:
    exe = _target_dir() / "debug" / "tasks-server"
    if not exe.exists():
        cmd = ["cargo", "build", "-q", "-p", "mcpcore-tests", "--bin", "tasks-server"]
        subprocess.run(cmd, cwd=REPO, check=True)
    assert exe.exists(), f"tasks-server not found at {exe}"
    return str(exe)


@pytest.fixture
async def endpoint():
    handle = await server.serve_http("127.0.0.1", 0)
    try:
        yield handle.url
    finally:
        await handle.close()


def _text(result):
    return result["content"][0]["text"]


async def _connect(kind, target, mode):
    if kind == "http":
        return await Client.connect_http(target, mode=mode, on_elicitation=_accept_name)
    return await Client.connect_stdio(target, mode=mode, on_elicitation=_accept_name)


async def _exercise(c: Client, ours: bool) -> None:
    """What every server (ours or the Rust fixture) must do with the same task tools."""
    # Without the opt-in an optional task tool is a plain call; a required one is refused.
    assert _text(await c.call_tool("slow_compute", {"seconds": 0, "label": "x"})) == (
        "Computed x in 0s"
    )
    with pytest.raises(McpError) as e:
        await c.call_tool("failing_job", {})
    assert e.value.code == (-32021 if c.era == "modern" else -32601)

    # With it: a task, followed to its end.
    t = await c.call_tool_as_task("slow_compute", {"seconds": 0.1, "label": "y"}, ttl=60)
    assert isinstance(t, Task) and t.status in ("working", "completed")
    got = await c.get_task(t.task_id)
    assert got.task_id == t.task_id
    done = await c.wait_task(t.task_id, timeout=20, minPollIntervalMs=10)
    assert done.status == "completed" and done.terminal
    if c.era == "modern":
        assert done.result is not None and _text(done.result) == "Computed y in 0.1s"

    r = await c.call_tool_to_completion("slow_compute", {"seconds": 0, "label": "z"}, timeout=20)
    assert _text(r) == "Computed z in 0s"
    r = await c.call_tool_to_completion("failing_job", {}, timeout=20)
    assert r["isError"] is True and _text(r) == "failing_job failed on purpose"
    with pytest.raises(McpError) as e:
        await c.call_tool_to_completion("protocol_error_job", {}, timeout=20)
    assert e.value.code == -32603

    # Cancelling a running task ends it cancelled.
    t = await c.call_tool_as_task("slow_compute", {"seconds": 30})
    assert isinstance(t, Task)
    await c.cancel_task(t.task_id)
    assert (await c.get_task(t.task_id)).status == "cancelled"

    # Input while running as a task, answered by the registered elicitation callback.
    r = await c.call_tool_to_completion("confirm_delete", {"filename": "a.txt"}, timeout=20)
    assert _text(r) == "Deleted a.txt"
    if c.era == "modern":
        # The gate's MRTR round completes on the request before the task exists.
        r = await c.call_tool_to_completion("test_tool_with_task", {}, timeout=20)
        assert _text(r) == "Hello, Lin!"
    if ours:
        # The handler sees the task it runs as, and none on a plain call.
        t = await c.call_tool_as_task("task_info", {})
        assert isinstance(t, Task)
        r = await c.call_tool_to_completion("task_info", {}, timeout=20)
        assert _text(r) not in ("", "no task") and len(_text(r)) == 32
        assert _text(await c.call_tool("task_info", {})) == "no task"


@pytest.mark.parametrize("mode", MODES)
async def test_python_server_over_http(endpoint, mode):
    async with await _connect("http", endpoint, mode) as c:
        assert c.era == mode
        # The raw list: core's typed list (list_tools) keeps no `execution` member.
        tools = {t["name"]: t for t in (await c.request("tools/list", {}))["tools"]}
        assert tools["slow_compute"]["execution"] == {"taskSupport": "optional"}
        assert tools["failing_job"]["execution"] == {"taskSupport": "required"}
        assert "execution" not in tools["greet"]
        await _exercise(c, ours=True)


@pytest.mark.parametrize("mode", MODES)
async def test_python_server_over_stdio(mode):
    argv = [sys.executable, str(HERE / "tasks_app.py")]
    async with await _connect("stdio", argv, mode) as c:
        await _exercise(c, ours=True)


@pytest.mark.parametrize("mode", MODES)
async def test_rust_tasks_server_over_stdio(mode):
    async with await _connect("stdio", [_rust_tasks_server()], mode) as c:
        await _exercise(c, ours=False)


async def test_tasks_options_are_core_json():
    from mcpcore import Server

    s = Server("bad", "1", tasks={"pollIntervalMs": 0})
    with pytest.raises(ValueError, match="pollIntervalMs"):
        await s.serve_http("127.0.0.1", 0)
    s = Server("bad", "1", tasks={"noSuchOption": 1})
    with pytest.raises(ValueError):
        await s.serve_http("127.0.0.1", 0)


@pytest.mark.parametrize("mode", MODES)
async def test_the_native_task_outcome_is_cores_one_shape(endpoint, mode):
    """The raw outcome the wrapper reads is core's ``TaskCallOutcome::to_json``: the same JSON
    the C ABI returns and the Node binding reads (``{"kind": "task", "task": {...}}``)."""
    async with await _connect("http", endpoint, mode) as c:
        out = await c._native.call_tool_as_task(
            "slow_compute", {"seconds": 0, "label": "k"}, 60000, None
        )
        assert sorted(out) == ["kind", "task"] and out["kind"] == "task"
        assert isinstance(out["task"]["taskId"], str)
