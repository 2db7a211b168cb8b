"""The Python client against the Rust demo-server binary, in each era."""

from __future__ import annotations

import pytest

from mcpcore import Client, McpError


@pytest.mark.parametrize("mode", ["legacy", "modern", "auto"])
async def test_python_client_against_rust_server(demo_server, mode):
    async with await Client.connect_stdio([demo_server], mode=mode) as c:
        assert c.era == ("modern" if mode == "auto" else mode)
        assert c.server_info is not None
        tools = {t["name"]: t for t in await c.list_tools()}
        assert {"echo", "add", "slow", "fail"} <= set(tools)
        r = await c.call_tool("echo", {"text": "from python"})
        assert r["content"][0]["text"] == "from python"
        r = await c.call_tool("add", {"a": 1, "b": 2})
        assert r["structuredContent"] == {"sum": 3.0}
        with pytest.raises(McpError) as e:
            await c.call_tool("fail", {})
        assert e.value.code == -32603
        assert "hunter2" not in str(e.value)
        prompts = await c.list_prompts()
        assert [p["name"] for p in prompts][:1] == ["greet"]
        r = await c.get_prompt("greet", {"name": "Bo"})
        assert "Say hello to Bo." in r["messages"][0]["content"]["text"]
        r = await c.read_resource("demo://readme")
        assert r["contents"][0]["uri"] == "demo://readme"
        raw = await c.request("tools/list", {})
        assert [t["name"] for t in raw["tools"]] == list(tools)
