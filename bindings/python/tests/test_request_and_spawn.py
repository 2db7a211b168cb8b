"""``Client.connect_stdio(env=, env_clear=, cwd=, stderr=)`` and ``captured_stderr()`` through a
really spawned process; ``ctx.request_id``/``ctx.meta``/``ctx.headers`` over HTTP on 127.0.0.1
and stdio; ``ctx.elicit(params_dict)`` answered by the client's ``on_elicitation``."""

from __future__ import annotations

import asyncio
import json
import pathlib
import sys
import urllib.request
from typing import Any, Dict, Optional, Tuple

import pytest

import mcpcore.sync
from mcpcore import Client, Context

import request_app

APP = [sys.executable, str(pathlib.Path(request_app.__file__).resolve())]
LEGACY = "2025-11-25"


async def test_env_and_cwd_reach_the_spawned_process(tmp_path, monkeypatch):
    monkeypatch.setenv("MCPCORE_TEST_INHERITED", "yes")
    async with await Client.connect_stdio(
        APP, env={"MCPCORE_TEST_FLAVOR": "mint"}, cwd=str(tmp_path), stderr="null"
    ) as c:
        got = (await c.call_tool("where", {}))["structuredContent"]
        assert pathlib.Path(got["cwd"]).resolve() == tmp_path.resolve()
        assert got["flavor"] == "mint" and got["inherited"] == "yes"
        assert c.captured_stderr() is None  # not captured
    async with await Client.connect_stdio(
        APP, env={"MCPCORE_TEST_FLAVOR": "plain"}, env_clear=True, cwd=tmp_path
    ) as c:
        got = (await c.call_tool("where", {}))["structuredContent"]
        assert got["flavor"] == "plain" and got["inherited"] is None


async def test_stderr_capture():
    async with await Client.connect_stdio(APP, stderr="capture") as c:
        await c.call_tool("where", {})
        # The capture is read on core's threads: bounded wait for the line written at start.
        for _ in range(500):
            if "request-app: stderr line" in (c.captured_stderr() or ""):
                break
            await asyncio.sleep(0.01)
        assert "request-app: stderr line" in (c.captured_stderr() or "")


async def test_bad_spawn_options_are_refused_before_spawning():
    with pytest.raises(ValueError, match="loud"):
        await Client.connect_stdio(APP, stderr="loud")
    with pytest.raises(ValueError, match="spawn"):
        await Client.connect_stdio(APP, env={"A": 1})  # type: ignore[dict-item]


def test_sync_client_spawn_options(tmp_path):
    with mcpcore.sync.Client.connect_stdio(APP, cwd=tmp_path, stderr="capture") as c:
        got = c.call_tool("where", {})["structuredContent"]
        assert pathlib.Path(got["cwd"]).resolve() == tmp_path.resolve()
        assert c.captured_stderr() is not None


async def test_request_context_over_stdio_has_no_headers():
    async with await Client.connect_stdio(APP, mode="legacy", stderr="null") as c:
        got = (await c.call_tool("whoami", {}))["structuredContent"]
        assert got["headers_none"] is True and got["tenant"] is None
        assert got["id_type"] == "int" and got["meta"] == {}
        params = {"name": "whoami", "arguments": {}, "_meta": {"trace": "t-1"}}
        got = (await c.request("tools/call", params))["structuredContent"]
        assert got["meta"] == {"trace": "t-1"}


@pytest.fixture
async def endpoint():
    async with request_app.server.serve_http("127.0.0.1", 0) as handle:
        yield handle.url


@pytest.mark.parametrize("mode", ["legacy", "modern"])
async def test_request_context_over_http(endpoint, mode):
    async with await Client.connect_http(endpoint, mode=mode, headers={"X-Tenant": "acme"}) as c:
        params = {"name": "whoami", "arguments": {}, "_meta": {"trace": "t-1"}}
        got = (await c.request("tools/call", params))["structuredContent"]
        assert got["headers_none"] is False
        assert got["tenant"] == "acme"  # lower-case names
        assert got["meta"]["trace"] == "t-1"
        assert got["id_type"] in ("int", "str")


def _post(
    url: str, msg: Dict[str, Any], sid: Optional[str], headers: Dict[str, str]
) -> Tuple[Dict[str, Any], Optional[str]]:
    h = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}
    h.update(headers)
    if sid is not None:
        h["Mcp-Session-Id"] = sid
        h["MCP-Protocol-Version"] = LEGACY
    req = urllib.request.Request(url, data=json.dumps(msg).encode(), headers=h, method="POST")
    with urllib.request.urlopen(req, timeout=30) as r:
        text = r.read().decode()
        ctype = r.headers.get("Content-Type", "")
        got_sid = r.headers.get("Mcp-Session-Id")
    if not text:
        return {}, got_sid
    if ctype.startswith("text/event-stream"):
        text = [ln[5:].strip() for ln in text.splitlines() if ln.startswith("data:")][-1]
    return json.loads(text), got_sid


async def test_request_id_is_the_one_sent(endpoint):
    """A string id comes back to the handler as that string (raw legacy HTTP)."""
    init = {
        "jsonrpc": "2.0",
        "id": "init-1",
        "method": "initialize",
        "params": {
            "protocolVersion": LEGACY,
            "capabilities": {},
            "clientInfo": {"name": "raw", "version": "1"},
        },
    }
    _r, sid = await asyncio.to_thread(_post, endpoint, init, None, {})
    assert sid
    note = {"jsonrpc": "2.0", "method": "notifications/initialized"}
    await asyncio.to_thread(_post, endpoint, note, sid, {})
    call = {
        "jsonrpc": "2.0",
        "id": "req-abc",
        "method": "tools/call",
        "params": {"name": "whoami", "arguments": {}, "_meta": {"k": [1, 2]}},
    }
    r, _ = await asyncio.to_thread(_post, endpoint, call, sid, {"X-Tenant": "raw-tenant"})
    got = r["result"]["structuredContent"]
    assert got["id"] == "req-abc" and got["id_type"] == "str"
    assert got["meta"] == {"k": [1, 2]}
    assert got["tenant"] == "raw-tenant"
    call["id"] = 4242
    r, _ = await asyncio.to_thread(_post, endpoint, call, sid, {})
    assert r["result"]["structuredContent"]["id"] == 4242


@pytest.mark.parametrize("mode", ["legacy", "modern"])
async def test_elicit_with_a_params_dict(endpoint, mode):
    asked = []

    async def on_elicitation(params):
        asked.append(params)
        return {"action": "accept", "content": {"name": "Lin"}}

    async with await Client.connect_http(endpoint, mode=mode, on_elicitation=on_elicitation) as c:
        r = await c.call_tool("ask_name", {})
        assert r["content"][0]["text"] == "accept: Lin"
    assert asked[0]["message"] == "Your name?"
    assert asked[0]["requestedSchema"] == request_app.NAME_SCHEMA


async def test_elicit_keeps_its_two_argument_form_and_checks_mixing():
    class Native:
        async def request_client(self, method: str, params: Any) -> Any:
            return {"method": method, "params": params}

    ctx = Context(Native())  # type: ignore[arg-type]
    got = await ctx.elicit("Q?", {"type": "object"})
    assert got == {
        "method": "elicitation/create",
        "params": {"message": "Q?", "requestedSchema": {"type": "object"}},
    }
    url_mode = {
        "mode": "url",
        "message": "Sign in",
        "url": "https://example.test",
        "elicitationId": "e1",
    }
    assert (await ctx.elicit(url_mode))["params"] == url_mode
    with pytest.raises(TypeError):
        await ctx.elicit("Q?")
    with pytest.raises(TypeError):
        await ctx.elicit({"message": "Q?"}, {"type": "object"})
