"""The blocking client (``mcpcore.sync.Client``) from plain, non-async tests."""

from __future__ import annotations

import threading

import pytest

from mcpcore import McpError
from mcpcore.sync import Client


@pytest.mark.parametrize("mode", ["legacy", "modern"])
def test_sync_client_over_stdio(app_argv, mode):
    def on_elicitation(params):
        return {"action": "accept", "content": {"name": "Sync"}}

    with Client.connect_stdio(app_argv, mode=mode, on_elicitation=on_elicitation) as c:
        assert c.era == mode
        assert c.instructions == "Test server."
        assert "echo" in [t["name"] for t in c.list_tools()]
        assert c.call_tool("echo", {"text": "blocking"})["content"][0]["text"] == "blocking"
        assert c.call_tool("add", {"a": 1, "b": 2})["structuredContent"]["sum"] == 3
        assert c.call_tool("ask", {})["content"][0]["text"] == "Hello, Sync! (accept)"
        r = c.get_prompt("greet", {"name": "Bo"})
        assert "Bo" in r["messages"][0]["content"]["text"]
        assert c.read_resource("demo://notes/7")["contents"][0]["text"] == "Note 7"
        with pytest.raises(McpError) as e:
            c.call_tool("fail_rpc", {"code": -32042})
        assert e.value.code == -32042
    c.close()  # idempotent
    assert not [t for t in threading.enumerate() if t.name == "mcpcore-sync-client"]


def test_sync_client_over_http(app_argv):
    import subprocess
    import sys

    # The server runs in its own process (the blocking client needs no loop of ours).
    code = (
        "import asyncio, sys; sys.path.insert(0, %r)\n"
        "from app import server\n"
        "async def main():\n"
        "    h = await server.serve_http('127.0.0.1', 0)\n"
        "    print(h.url, flush=True)\n"
        "    await asyncio.Event().wait()\n"
        "asyncio.run(main())\n"
    ) % str(__import__("pathlib").Path(app_argv[1]).parent)
    proc = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
    try:
        url = proc.stdout.readline().strip()
        with Client.connect_http(url, mode="modern") as c:
            assert c.era == "modern"
            assert c.call_tool("echo", {"text": "http"})["content"][0]["text"] == "http"
    finally:
        proc.kill()
        proc.wait()


def test_failed_connect_stops_the_loop():
    with pytest.raises(Exception):
        Client.connect_stdio(["/nonexistent/mcp-server"])
    assert not [t for t in threading.enumerate() if t.name == "mcpcore-sync-client"]


def test_sync_client_decorators(app_argv):
    with Client.connect_stdio(app_argv, mode="modern", declare=["sampling", "roots"]) as c:

        @c.on_sampling
        def sample(params):
            return {"role": "assistant", "content": {"type": "text", "text": "4"}, "model": "m"}

        @c.on_roots
        def roots(params):
            return {"roots": []}

        r = c.call_tool("sample_and_roots", {})
        assert r["structuredContent"]["text"] == "4"
        assert c.list_resource_templates()[0]["uriTemplate"] == "demo://notes/{id}"
