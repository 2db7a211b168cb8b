"""Changing a server while it serves (``server.add_*``/``remove_*``/``enable_*``/``disable_*``,
``Registration``, decorators used after serving starts), over Streamable HTTP on 127.0.0.1 in
both eras: a legacy session gets ``notifications/*/list_changed``, a 2026-07-28 client its
``subscriptions/listen`` stream."""

from __future__ import annotations

import asyncio
import contextlib
import gc
import pathlib
import subprocess
import sys
import weakref
from typing import Any, AsyncIterator, Dict, List, Tuple

import pytest

from mcpcore import Client, McpError, Registration, Server

MODES = ["legacy", "modern"]
UNKNOWN = -32602  # core's unknown-tool (prompt) error code


def text(r: Dict[str, Any]) -> str:
    return str(r["content"][0]["text"])


class Watch:
    """The list changes one client hears: its ``on_notification`` (legacy) or its listen
    stream (modern), in order."""

    def __init__(self) -> None:
        self.queue: "asyncio.Queue[str]" = asyncio.Queue()
        loop = asyncio.get_running_loop()
        self.note = lambda m, _p: loop.call_soon_threadsafe(self.queue.put_nowait, m)

    async def next(self, method: str) -> None:
        """Wait for ``method`` (bounded: a missing notification fails, not hangs)."""
        while True:
            got = await asyncio.wait_for(self.queue.get(), 10)
            if got == method:
                return


@contextlib.asynccontextmanager
async def session(url: str, mode: str) -> AsyncIterator[Tuple[Client, Watch]]:
    watch = Watch()
    async with await Client.connect_http(url, mode=mode, on_notification=watch.note) as c:
        assert c.era == mode
        if mode == "legacy":
            await c.list_tools()  # the session is up; its GET stream opens meanwhile
            yield c, watch
            return
        sub = c.listen(tools_changed=True, prompts_changed=True, resources_changed=True)
        async with sub:

            async def pump() -> None:
                async for n in sub:
                    watch.queue.put_nowait(n["method"])

            task = asyncio.ensure_future(pump())
            try:
                yield c, watch
            finally:
                task.cancel()


async def legacy_stream_ready(server: Server, c: Client, watch: Watch) -> None:
    """A legacy client's GET stream may still be opening: wait until a list change reaches
    it, so the changes under test are not lost before it exists."""
    for _ in range(500):
        if server.notify_tools_changed():
            await watch.next("notifications/tools/list_changed")
            return
        await asyncio.sleep(0.01)
    raise AssertionError("the legacy GET stream never opened")


def dyn_server() -> Server:
    server = Server("dyn", "1.0.0", options={"dynamic": True})

    @server.tool()
    def base() -> str:
        """Always here."""
        return "base"

    return server


@contextlib.asynccontextmanager
async def serving(server: Server, mode: str) -> AsyncIterator[Tuple[Client, Watch]]:
    async with server.serve_http("127.0.0.1", 0) as handle:
        async with session(handle.url, mode) as (c, watch):
            if mode == "legacy":
                await legacy_stream_ready(server, c, watch)
            yield c, watch


async def tool_names(c: Client) -> List[str]:
    return [t["name"] for t in await c.list_tools()]


@pytest.mark.parametrize("mode", MODES)
async def test_tools_added_replaced_disabled_enabled_removed_while_serving(mode):
    server = dyn_server()
    async with serving(server, mode) as (c, watch):

        def greet(who: str) -> str:
            """Greet someone."""
            return f"hello {who}"

        reg = server.add_tool(greet)
        assert isinstance(reg, Registration)
        assert (reg.kind, reg.key) == ("tool", "greet")
        await watch.next("notifications/tools/list_changed")
        assert await tool_names(c) == ["base", "greet"]
        assert text(await c.call_tool("greet", {"who": "Ada"})) == "hello Ada"

        # Replaced in place: same position, the new handler and description.
        server.add_tool(lambda who: f"hi {who}", name="greet", description="Greet, v2")
        await watch.next("notifications/tools/list_changed")
        tools = await c.list_tools()
        assert [t["name"] for t in tools] == ["base", "greet"]
        assert tools[1]["description"] == "Greet, v2"
        assert text(await c.call_tool("greet", {"who": "Ada"})) == "hi Ada"

        assert reg.disable() is True
        await watch.next("notifications/tools/list_changed")
        assert await tool_names(c) == ["base"]
        with pytest.raises(McpError) as e:
            await c.call_tool("greet", {"who": "Ada"})
        assert e.value.code == UNKNOWN

        assert server.enable_tool("greet") is True
        await watch.next("notifications/tools/list_changed")
        assert await tool_names(c) == ["base", "greet"]
        assert text(await c.call_tool("greet", {"who": "Bo"})) == "hi Bo"

        assert reg.remove() is True
        await watch.next("notifications/tools/list_changed")
        assert await tool_names(c) == ["base"]
        assert reg.remove() is False and reg.enable() is False
        assert server.remove_tool("greet") is False
        with pytest.raises(McpError) as e:
            await c.call_tool("greet", {"who": "Ada"})
        assert e.value.code == UNKNOWN


@pytest.mark.parametrize("mode", MODES)
async def test_a_decorator_used_after_serving_starts_registers_live(mode):
    server = dyn_server()
    async with serving(server, mode) as (c, watch):

        @server.tool(description="Late tool")
        async def late(n: int) -> dict:
            return {"twice": 2 * n}

        await watch.next("notifications/tools/list_changed")
        assert "late" in await tool_names(c)
        assert (await c.call_tool("late", {"n": 21}))["structuredContent"] == {"twice": 42}
        # The schema is the decorator's own: a wrong type is core's isError result.
        bad = await c.call_tool("late", {"n": "x"})
        assert bad["isError"] is True
        assert server.disable_tool("late") is True
        await watch.next("notifications/tools/list_changed")
        assert "late" not in await tool_names(c)


@pytest.mark.parametrize("mode", MODES)
async def test_removing_a_tool_lets_its_running_call_finish(mode):
    server = dyn_server()
    started = asyncio.Event()
    release = asyncio.Event()

    async def slow() -> str:
        started.set()
        await release.wait()
        return "finished"

    async with serving(server, mode) as (c, watch):
        server.add_tool(slow)
        await watch.next("notifications/tools/list_changed")
        call = asyncio.ensure_future(c.call_tool("slow", {}))
        await asyncio.wait_for(started.wait(), 10)
        assert server.remove_tool("slow") is True
        await watch.next("notifications/tools/list_changed")
        with pytest.raises(McpError) as e:
            await c.call_tool("slow", {})
        assert e.value.code == UNKNOWN
        release.set()
        assert text(await asyncio.wait_for(call, 10)) == "finished"


@pytest.mark.parametrize("mode", MODES)
async def test_prompts_resources_and_templates_change_while_serving(mode):
    server = dyn_server()
    async with serving(server, mode) as (c, watch):
        p = server.add_prompt(lambda topic: f"Tell me about {topic}", name="about")
        await watch.next("notifications/prompts/list_changed")
        assert [x["name"] for x in await c.list_prompts()] == ["about"]
        got = await c.get_prompt("about", {"topic": "owls"})
        assert got["messages"][0]["content"]["text"] == "Tell me about owls"
        assert p.disable() is True
        await watch.next("notifications/prompts/list_changed")
        assert await c.list_prompts() == []
        with pytest.raises(McpError):
            await c.get_prompt("about", {"topic": "owls"})
        assert p.enable() is True
        await watch.next("notifications/prompts/list_changed")
        assert server.remove_prompt("about") is True
        await watch.next("notifications/prompts/list_changed")
        assert await c.list_prompts() == []

        r = server.add_resource(lambda: "v1", "mem://a", name="a", mime_type="text/plain")
        assert (r.kind, r.key) == ("resource", "mem://a")
        await watch.next("notifications/resources/list_changed")
        assert [x["uri"] for x in await c.list_resources()] == ["mem://a"]
        assert (await c.read_resource("mem://a"))["contents"][0]["text"] == "v1"
        server.add_resource(lambda: "v2", "mem://a", name="a")  # replaced
        await watch.next("notifications/resources/list_changed")
        assert (await c.read_resource("mem://a"))["contents"][0]["text"] == "v2"
        assert server.disable_resource("mem://a") is True
        await watch.next("notifications/resources/list_changed")
        assert await c.list_resources() == []
        with pytest.raises(McpError):
            await c.read_resource("mem://a")
        assert server.enable_resource("mem://a") is True
        await watch.next("notifications/resources/list_changed")
        assert server.remove_resource("mem://a") is True
        await watch.next("notifications/resources/list_changed")
        assert await c.list_resources() == []

        t = server.add_resource_template(lambda id: f"note {id}", "mem://notes/{id}", name="n")
        assert (t.kind, t.key) == ("resource_template", "mem://notes/{id}")
        await watch.next("notifications/resources/list_changed")
        templates = await c.list_resource_templates()
        assert [x["uriTemplate"] for x in templates] == ["mem://notes/{id}"]
        assert (await c.read_resource("mem://notes/7"))["contents"][0]["text"] == "note 7"
        assert server.disable_resource_template("mem://notes/{id}") is True
        await watch.next("notifications/resources/list_changed")
        assert await c.list_resource_templates() == []
        assert server.enable_resource_template("mem://notes/{id}") is True
        await watch.next("notifications/resources/list_changed")
        assert t.remove() is True
        await watch.next("notifications/resources/list_changed")
        assert await c.list_resource_templates() == []
        with pytest.raises(McpError):
            await c.read_resource("mem://notes/7")


async def test_a_kind_not_advertised_says_to_build_with_dynamic():
    server = Server("static", "1.0.0")  # tools only: no prompts or resources advertised

    @server.tool()
    def base() -> str:
        return "base"

    async with server.serve_http("127.0.0.1", 0):
        with pytest.raises(ValueError, match=r'options=\{"dynamic": True\}'):
            server.add_prompt(lambda: "hi", name="p")
        with pytest.raises(ValueError, match="dynamic"):
            server.add_resource(lambda: "x", "mem://x", name="x")
        # Refused: the registry did not change either.
        assert server.remove_prompt("p") is False
        # Tools are advertised: adding one works without the option.
        assert server.add_tool(lambda: "t", name="t").key == "t"
    # A definition core refuses (an input schema that is not an object) is refused as at build.
    async with server.serve_http("127.0.0.1", 0):
        with pytest.raises(ValueError, match="bad"):
            server.add_tool(lambda: "x", name="bad", input_schema={"type": "string"})
        assert server.remove_tool("bad") is False


async def test_changes_before_serving_shape_what_serving_builds():
    server = dyn_server()
    server.add_tool(lambda: "gone", name="gone")
    assert server.remove_tool("gone") is True
    hidden = server.add_tool(lambda: "hidden", name="hidden")
    assert hidden.disable() is True
    async with serving(server, "legacy") as (c, watch):
        assert await tool_names(c) == ["base"]
        assert hidden.enable() is True
        await watch.next("notifications/tools/list_changed")
        assert await tool_names(c) == ["base", "hidden"]


async def test_a_removed_handler_is_released():
    server = dyn_server()

    class Payload:
        pass

    payload = Payload()
    ref = weakref.ref(payload)

    def make(p: Payload) -> Any:
        def held() -> str:
            return type(p).__name__  # the closure keeps the payload alive

        return held

    async def released(r: "weakref.ref[Payload]", c: Client) -> bool:
        for _ in range(200):  # core drops its snapshot on its own threads: bounded wait
            gc.collect()
            if r() is None:
                return True
            await c.list_tools()  # a call into the extension also applies deferred releases
            await asyncio.sleep(0.01)
        return False

    async with serving(server, "legacy") as (c, watch):
        server.add_tool(make(payload))
        await watch.next("notifications/tools/list_changed")
        assert text(await c.call_tool("held", {})) == "Payload"
        del payload
        gc.collect()
        assert ref() is not None  # kept alive while registered
        # Replaced: the old handler is released, the new one kept.
        second = Payload()
        ref2 = weakref.ref(second)
        server.add_tool(make(second))
        del second
        assert await released(ref, c)
        assert ref2() is not None
        assert server.remove_tool("held") is True
        await watch.next("notifications/tools/list_changed")
        assert await released(ref2, c)


@pytest.mark.parametrize("mode", MODES)
async def test_a_handler_adds_a_tool_to_its_own_stdio_server(mode):
    """Over stdio, from a plain ``def`` handler's worker thread: the new tool is listed and
    callable, and a legacy session hears ``notifications/tools/list_changed``."""
    app = pathlib.Path(__file__).resolve().parent / "request_app.py"
    watch = Watch()
    argv = [sys.executable, str(app)]
    async with await Client.connect_stdio(
        argv, mode=mode, stderr="null", on_notification=watch.note
    ) as c:
        assert text(await c.call_tool("grow", {"name": "sprout"})) == "ok"
        if mode == "legacy":
            await watch.next("notifications/tools/list_changed")
        assert "sprout" in await tool_names(c)
        assert text(await c.call_tool("sprout", {})) == "grown sprout"


README_HEADING = "### Changing a server while it serves"


def _readme_example() -> str:
    repo = pathlib.Path(__file__).resolve().parents[3]
    text = (repo / "bindings" / "python" / "README.md").read_text()
    section = text.split(README_HEADING, 1)[1]
    code = section.split("```python\n", 1)[1].split("```", 1)[0]
    return code


def test_the_readme_example_runs(tmp_path):
    script = tmp_path / "live.py"
    script.write_text(_readme_example())
    out = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert out.stdout.splitlines() == ["['echo']", "Buy milk.", "[]"]
