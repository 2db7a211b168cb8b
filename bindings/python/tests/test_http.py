"""The Python server over Streamable HTTP on 127.0.0.1 (port 0), in this test's event loop."""

from __future__ import annotations

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
