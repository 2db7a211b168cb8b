"""Context helpers, explicit input_required, completion, list pages, subscriptions and the
protocol cancel, in both eras, over stdio (a child process) and real HTTP on 127.0.0.1."""

from __future__ import annotations

import asyncio
import contextlib
import pathlib
import sys
from typing import Any, AsyncIterator, Dict, List, Tuple

import pytest

from mcpcore import Client, McpcoreError, McpError

import features_app

HERE = pathlib.Path(__file__).resolve().parent

MODES = ["legacy", "modern"]
TRANSPORTS = ["stdio", "http"]
CASES = [(t, m) for t in TRANSPORTS for m in MODES]


@contextlib.asynccontextmanager
async def connect(transport: str, mode: str, **kwargs: Any) -> AsyncIterator[Client]:
    if transport == "stdio":
        argv = [sys.executable, str(HERE / "features_app.py")]
        async with await Client.connect_stdio(argv, mode=mode, **kwargs) as c:
            yield c
        return
    handle = await features_app.features.serve_http("127.0.0.1", 0)
    try:
        async with await Client.connect_http(handle.url, mode=mode, **kwargs) as c:
            yield c
    finally:
        await handle.close()


def text(result: Dict[str, Any]) -> str:
    return str(result["content"][0]["text"])


async def eventually(check: Any, timeout: float = 5.0) -> None:
    deadline = asyncio.get_running_loop().time() + timeout
    while not await check():
        assert asyncio.get_running_loop().time() < deadline, "condition not met in time"
        await asyncio.sleep(0.02)


@pytest.mark.parametrize("transport,mode", CASES)
async def test_sample_list_roots_and_client_info(transport, mode):
    seen: List[Dict[str, Any]] = []

    async def on_sampling(params):
        seen.append(params)
        prompt = params["messages"][0]["content"]["text"]
        return {
            "role": "assistant",
            "content": {"type": "text", "text": prompt.upper()},
            "model": "m",
        }

    def on_roots(_params):
        return {"roots": [{"uri": "file:///work", "name": "work"}]}

    opts = {"clientInfo": {"name": "feature-client", "version": "9.9"}}
    async with connect(
        transport, mode, options=opts, on_sampling=on_sampling, on_roots=on_roots
    ) as c:
        r = await c.call_tool("summarize", {"text": "abc"})
        assert r["structuredContent"] == {"summary": "SUMMARIZE: ABC", "roots": ["file:///work"]}
        assert seen[-1]["maxTokens"] == 40 and seen[-1]["temperature"] == 0.1
        info = (await c.call_tool("whoami", {}))["structuredContent"]
        assert info["clientInfo"]["name"] == "feature-client"
        assert info["modern"] is (mode == "modern")


@pytest.mark.parametrize("transport,mode", CASES)
async def test_require_client_capability(transport, mode):
    async with connect(transport, mode) as c:
        with pytest.raises(McpError) as e:
            await c.call_tool("needs_sampling", {})
        assert e.value.code == -32021
        assert e.value.data == {"requiredCapabilities": {"sampling": {}}}
    async with connect(transport, mode, declare=["sampling"]) as c:
        assert text(await c.call_tool("needs_sampling", {})) == "Success"


@pytest.mark.parametrize("transport,mode", CASES)
async def test_explicit_input_required_round(transport, mode):
    asked: List[Dict[str, Any]] = []

    def on_elicitation(params):
        asked.append(params)
        return {"action": "accept", "content": {"name": "Ada"}}

    async with connect(transport, mode, on_elicitation=on_elicitation) as c:
        r = await c.call_tool("greet", {})
        assert text(r) == "Hello, Ada! (state asked)"
        assert asked and asked[0]["message"] == "Your name?"
        with pytest.raises(McpError) as e:
            await c.call_tool("bad_input_required", {})
        assert e.value.code == -32603


@pytest.mark.parametrize("transport,mode", CASES)
async def test_completion_and_list_pages(transport, mode):
    async with connect(transport, mode) as c:
        ref = {"type": "ref/prompt", "name": "city"}
        r = await c.complete(ref, {"name": "name", "value": "par"})
        assert r["completion"] == {
            "values": ["paris", "park", "party"],
            "total": 3,
            "hasMore": False,
        }
        r = await c.complete(ref, {"name": "name", "value": "pa"}, {"country": "it"})
        assert r["completion"]["values"] == ["parma", "padua"]
        # Over 100 candidates: the first 100 are sent, with the true total (CMP-01).
        r = await c.complete(ref, {"name": "name", "value": "many"})
        assert r["completion"]["values"] == [f"many{i}" for i in range(100)]
        assert r["completion"]["total"] == 150 and r["completion"]["hasMore"] is True
        with pytest.raises(ValueError):
            await c.complete(ref, {"name": "name"})  # type: ignore[typeddict-item]
        names: List[str] = []
        cursor = None
        pages = 0
        while True:
            page = await c.list_tools_page(cursor)
            assert len(page["tools"]) <= 2
            names += [t["name"] for t in page["tools"]]
            pages += 1
            cursor = page.get("nextCursor")
            if cursor is None:
                break
        assert pages > 1
        assert names == [t["name"] for t in await c.list_tools()]
        assert (await c.list_resources_page())["resources"][0]["uri"] == "watch://a"
        assert [p["name"] for p in (await c.list_prompts_page())["prompts"]] == [
            "described",
            "city",
        ]
        assert (await c.list_resource_templates_page())["resourceTemplates"] == []
        with pytest.raises(McpError) as e:
            await c.list_tools_page("not-a-cursor")
        assert e.value.code == -32602


@pytest.mark.parametrize("transport,mode", CASES)
async def test_listen_in_either_era(transport, mode):
    async with connect(transport, mode) as c:
        # 2026-07-28 on stdio: the stream shares the connection, its messages tagged with its
        # id (SUB-03), and ends with notifications/cancelled (SUB-05).
        async with c.listen(tools_changed=True, resources_subscribe=["watch://a"]) as sub:
            assert sub.honored.get("toolsListChanged") is True
            assert sub.honored.get("resourceSubscriptions") == ["watch://a"]
            assert int(text(await c.call_tool("change_tools", {}))) >= 1
            n = await asyncio.wait_for(sub.__anext__(), 5)
            assert n["method"] == "notifications/tools/list_changed"
            told = await c.call_tool("touch", {"uri": "watch://a"})
            assert int(text(told)) >= 1
            n = await asyncio.wait_for(sub.__anext__(), 5)
            assert n["method"] == "notifications/resources/updated"
            assert n["params"]["uri"] == "watch://a"
            # Not asked for: another URI's update never arrives on this stream.
            assert text(await c.call_tool("touch", {"uri": "watch://b"})) == "0"
        # Closed: the subscription ends and the server forgets it.
        with pytest.raises(StopAsyncIteration):
            await sub.__anext__()
        await eventually(lambda: _told(c, "watch://a", 0))


async def _told(c: Client, uri: str, expected: int) -> bool:
    return text(await c.call_tool("touch", {"uri": uri})) == str(expected)


@pytest.mark.parametrize("transport", TRANSPORTS)
async def test_legacy_subscribe_and_on_notification(transport):
    got: List[Tuple[str, Any]] = []
    async with connect(transport, "legacy") as c:

        @c.on_notification
        async def record(method, params):
            got.append((method, params))

        await c.subscribe_resource("watch://a")
        assert text(await c.call_tool("touch", {"uri": "watch://a"})) == "1"
        await eventually(lambda: _has(got, "notifications/resources/updated"))
        await c.unsubscribe_resource("watch://a")
        assert text(await c.call_tool("touch", {"uri": "watch://a"})) == "0"
        await c.call_tool("shout", {}, log_level="info")
        await eventually(lambda: _has(got, "notifications/message"))
        log = [p for m, p in got if m == "notifications/message"][0]
        assert log["data"] == "shouted" and log["logger"] == "features"


async def _has(got: List[Tuple[str, Any]], method: str) -> bool:
    return any(m == method for m, _ in got)


@pytest.mark.parametrize("transport", TRANSPORTS)
async def test_modern_subscribe_resource_is_refused(transport):
    async with connect(transport, "modern") as c:
        with pytest.raises(McpcoreError) as e:
            await c.subscribe_resource("watch://a")
        assert e.value.kind == "invalid_argument"
        with pytest.raises(TypeError):
            c.listen(resources_subscribe="watch://a")


@pytest.mark.parametrize("transport,mode", CASES)
async def test_cancelling_a_call_cancels_it_on_the_wire(transport, mode):
    features_app.slow_state["state"] = "idle"
    async with connect(transport, mode) as c:
        # With a progress callback the answer is a stream from the first notification on: a
        # modern HTTP client cancels by closing it (HTTP-08), which the server sees. (Before any
        # byte of the answer, the server does not notice a closed connection: core's to solve.)
        progressed: List[float] = []
        task = asyncio.ensure_future(
            c.call_tool("slow", {}, progress=lambda p, _t, _m: progressed.append(p))
        )
        await eventually(lambda: _status(c, "running"))
        await eventually(lambda: _truthy(progressed))
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        # The server's handler saw the cancellation (legacy: notifications/cancelled; modern
        # HTTP: the closed stream; modern stdio: notifications/cancelled).
        await eventually(lambda: _status(c, "cancelled"))
        # The connection is still usable.
        assert text(await c.call_tool("slow_status", {})) == "cancelled"


async def _truthy(value: Any) -> bool:
    return bool(value)


async def _status(c: Client, state: str) -> bool:
    return text(await c.call_tool("slow_status", {})) == state


@pytest.mark.parametrize("transport,mode", CASES)
async def test_close_sse_stream(transport, mode):
    async with connect(transport, mode) as c:
        r = await c.call_tool("sse_close", {})
        # Only a legacy Streamable HTTP request has a stream to close; the result still arrives.
        expected = transport == "http" and mode == "legacy"
        assert r["structuredContent"] == {"closed": expected}


@pytest.mark.parametrize("transport,mode", CASES)
async def test_tool_result_prompt_arguments_and_server_info(transport, mode):
    async with connect(transport, mode) as c:
        assert c.server_info == {"name": "py-features", "version": "0.1.0"}
        assert c.server_capabilities["tools"] is not None
        r = await c.call_tool("picture", {})
        assert r["content"] == [{"type": "image", "data": "AAAA", "mimeType": "image/png"}]
        assert r["structuredContent"] == {"w": 1} and not r.get("isError")
        prompts = {p["name"]: p for p in await c.list_prompts()}
        assert prompts["described"]["arguments"] == [
            {"name": "topic", "description": "What to write about", "required": True}
        ]
        r = await c.get_prompt("described", {"topic": "owls"})
        assert r["messages"][0]["content"]["text"] == "Write about owls"
        with pytest.raises(McpError) as e:
            await c.get_prompt("described", {})
        assert e.value.code == -32602


def test_sync_client_mirrors_the_new_calls():
    from mcpcore.sync import Client as SyncClient

    argv = [sys.executable, str(HERE / "features_app.py")]
    got: List[str] = []
    with SyncClient.connect_stdio(argv, mode="legacy") as c:
        c.on_notification(lambda method, _params: got.append(method))
        page = c.list_tools_page()
        assert len(page["tools"]) == 2 and page["nextCursor"]
        assert c.list_tools_page(page["nextCursor"])["tools"]
        assert c.list_prompts_page()["prompts"] and c.list_resources_page()["resources"]
        assert c.list_resource_templates_page()["resourceTemplates"] == []
        r = c.complete({"type": "ref/prompt", "name": "city"}, {"name": "name", "value": "pari"})
        assert r["completion"]["values"] == ["paris"]
        c.subscribe_resource("watch://a")
        assert text(c.call_tool("touch", {"uri": "watch://a"})) == "1"
        c.unsubscribe_resource("watch://a")
        assert text(c.call_tool("touch", {"uri": "watch://a"})) == "0"
        assert c.server_info == {"name": "py-features", "version": "0.1.0"}
    assert "notifications/resources/updated" in got


def test_sync_listen_in_the_legacy_era():
    from mcpcore.sync import Client as SyncClient

    argv = [sys.executable, str(HERE / "features_app.py")]
    with SyncClient.connect_stdio(argv, mode="legacy") as c:
        with c.listen(tools_changed=True, resources_subscribe=["watch://a"]) as sub:
            assert sub.honored["resourceSubscriptions"] == ["watch://a"]
            assert text(c.call_tool("touch", {"uri": "watch://a"})) == "1"
            n = sub.next(timeout=5)
            assert n == {
                "method": "notifications/resources/updated",
                "params": {"uri": "watch://a"},
            }
            c.call_tool("change_tools", {})
            assert next(sub)["method"] == "notifications/tools/list_changed"
            with pytest.raises(TimeoutError):
                sub.next(timeout=0.2)
        with pytest.raises(StopIteration):
            sub.next()
        # Leaving the block unsubscribed.
        assert text(c.call_tool("touch", {"uri": "watch://a"})) == "0"
