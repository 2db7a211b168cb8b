"""The Python server over Streamable HTTP on 127.0.0.1 (port 0), in this test's event loop."""

from __future__ import annotations

import asyncio

import pytest

from mcpcore import Client, McpError

from app import server

MODES = ["legacy", "modern"]


@pytest.fixture
async def endpoint():
    handle = await server.serve_http("127.0.0.1", 0)
    assert handle.port > 0
    assert handle.url == f"http://127.0.0.1:{handle.port}/mcp"
    try:
        yield handle.url
    finally:
        await handle.close()


@pytest.mark.parametrize("mode", MODES)
async def test_http_in_either_era(endpoint, mode):
    async def on_elicitation(params):
        return {"action": "accept", "content": {"name": "Lin"}}

    async with await Client.connect_http(endpoint, mode=mode, on_elicitation=on_elicitation) as c:
        assert c.era == mode
        names = [t["name"] for t in await c.list_tools()]
        assert "echo" in names and "add" in names
        r = await c.call_tool("echo", {"text": "over http"})
        assert r["content"][0]["text"] == "over http"
        r = await c.call_tool("add", {"a": 2, "b": 3})
        assert r["structuredContent"]["sum"] == 5
        assert r["structuredContent"]["era"] == mode
        # The async handler runs on this (the serving) loop, the sync one in a worker thread.
        assert (await c.call_tool("where_async", {}))["structuredContent"] == {"main": True}
        assert (await c.call_tool("where", {}))["structuredContent"] == {"main": False}
        r = await c.call_tool("fail_tool", {})
        assert r["isError"] is True
        with pytest.raises(McpError) as e:
            await c.call_tool("fail_rpc", {"code": -32099})
        assert e.value.code == -32099 and e.value.data == {"why": "test"}
        with pytest.raises(McpError) as e:
            await c.call_tool("boom", {})
        assert e.value.code == -32603
        r = await c.call_tool("ask", {})
        assert r["content"][0]["text"] == "Hello, Lin! (accept)"
        r = await c.read_resource("demo://notes/x")
        assert r["contents"][0]["text"] == "Note x"


def test_an_async_call_after_the_serving_loop_closed_fails_instead_of_waiting():
    """The handle was never closed and the loop that served it is gone: an ``async def`` call
    queued for that loop is taken back after the inbox's patience (1 s) and answered as
    failed, never left waiting."""
    loop = asyncio.new_event_loop()
    handle = loop.run_until_complete(server.serve_http("127.0.0.1", 0))
    loop.close()

    async def call() -> None:
        async with await Client.connect_http(handle.url, mode="modern") as c:
            with pytest.raises(McpError) as e:
                await asyncio.wait_for(c.call_tool("add", {"a": 1, "b": 2}), 15)
            assert e.value.code == -32603
            # A plain def still runs (on core's thread, no loop needed).
            r = await c.call_tool("echo", {"text": "still"})
            assert r["content"][0]["text"] == "still"

    try:
        asyncio.run(call())
    finally:
        asyncio.run(handle.close())


async def test_close_is_idempotent():
    handle = await server.serve_http("127.0.0.1", 0)
    await handle.close()
    await handle.close()


async def test_server_options_use_cores_json_shape():
    from mcpcore import Server

    ok = Server("o", "1", options={"limits": {"maxInflight": 8}})
    handle = await ok.serve_http("127.0.0.1", 0)
    await handle.close()
    with pytest.raises(ValueError):
        await Server("o", "1", options={"noSuchOption": 1}).serve_http("127.0.0.1", 0)


async def test_headers_http_options_and_server_options_reach_core():
    # The server's HttpOptions (core's JSON shape): accept this one foreign Origin.
    evil = "http://evil.example.com"
    handle = await server.serve_http("127.0.0.1", 0, options={"allowedOrigins": [evil]})
    try:
        async with await Client.connect_http(handle.url, headers={"Origin": evil}) as c:
            assert (await c.call_tool("echo", {"text": "allowed"}))["content"][0][
                "text"
            ] == "allowed"
    finally:
        await handle.close()
    # With the default options the same header is refused (403): the header really is sent.
    handle = await server.serve_http("127.0.0.1", 0)
    try:
        with pytest.raises(Exception):
            await Client.connect_http(handle.url, mode="modern", headers={"Origin": evil})
        async with await Client.connect_http(
            handle.url, http={"headers": {"X-Trace": "1"}, "maxConnections": 4}
        ) as c:
            assert c.era == "modern"
    finally:
        await handle.close()
    with pytest.raises(ValueError, match="noSuchOption"):
        await Client.connect_http("http://127.0.0.1:9/mcp", http={"noSuchOption": 1})
    with pytest.raises(ValueError, match="noSuchOption"):
        await server.serve_http("127.0.0.1", 0, options={"noSuchOption": 1})


def test_run_http_serves_until_sigterm(tmp_path):
    import signal
    import subprocess
    import sys

    from mcpcore.sync import Client as SyncClient

    script = tmp_path / "run_http.py"
    script.write_text(
        "from mcpcore import Server\n"
        "s = Server('blocking', '1.0.0')\n"
        "@s.tool()\n"
        "def echo(text: str) -> str:\n"
        "    return text\n"
        "s.run_http('127.0.0.1', 0)\n"
    )
    p = subprocess.Popen([sys.executable, str(script)], stderr=subprocess.PIPE, text=True)
    try:
        assert p.stderr is not None
        line = p.stderr.readline()
        assert line.startswith("mcpcore: serving http://127.0.0.1:"), line
        url = line.split()[-1]
        with SyncClient.connect_http(url) as c:
            assert c.call_tool("echo", {"text": "blocking"})["content"][0]["text"] == "blocking"
        p.send_signal(signal.SIGTERM)
        assert p.wait(timeout=20) == 0
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()


async def test_localhost_and_a_custom_path():
    # "localhost" binds the IPv4 loopback; the handle's url carries the configured path.
    async with server.serve_http("localhost", 0, options={"path": "/tools/mcp"}) as handle:
        assert handle.host == "127.0.0.1"
        assert handle.url == f"http://127.0.0.1:{handle.port}/tools/mcp"
        async with Client.connect_http(handle.url, mode="modern") as c:
            assert "echo" in [t["name"] for t in await c.list_tools()]


async def test_a_host_that_is_not_a_name_is_refused():
    with pytest.raises(ValueError, match="host"):
        await server.serve_http("http://127.0.0.1", 0)
