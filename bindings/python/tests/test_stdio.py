"""A Python server over real stdio (a subprocess), driven by the Python client in each era."""

from __future__ import annotations

import asyncio

import pytest

from mcpcore import Client, McpError, McpTimeoutError

MODES = ["legacy", "modern"]
VERSIONS = {"legacy": "2025-11-25", "modern": "2026-07-28"}


# Each era, served by core's threads and from the loop's own thread (``on_loop``, core's pump).
@pytest.fixture(
    params=[(m, t) for t in ("0", "1") for m in MODES], ids=lambda p: f"{p[0]}-loop{p[1]}"
)
async def client(request, app_argv, monkeypatch):
    async def on_elicitation(params):
        assert params["message"] == "Name?"
        return {"action": "accept", "content": {"name": "Ada"}}

    mode, on_loop = request.param
    monkeypatch.setenv("MCPCORE_TEST_ON_LOOP", on_loop)
    c = await Client.connect_stdio(app_argv, mode=mode, on_elicitation=on_elicitation)
    try:
        yield c
    finally:
        await c.close()


async def test_negotiates_the_era(client):
    mode = "modern" if client.protocol_version == "2026-07-28" else "legacy"
    assert client.era == mode
    assert client.protocol_version == VERSIONS[mode]
    assert client.instructions == "Test server."


async def test_sync_tool_runs_in_a_worker_thread(client):
    r = await client.call_tool("echo", {"text": "hi"})
    assert r["content"] == [{"type": "text", "text": "hi"}]
    r = await client.call_tool("where", {})
    assert r["structuredContent"] == {"main": False}


async def test_async_tool_runs_on_the_loop_with_context(client):
    r = await client.call_tool("add", {"a": 1.5, "b": 2})
    assert r["structuredContent"]["sum"] == 3.5
    assert r["structuredContent"]["era"] == client.era
    assert r["structuredContent"]["version"] == client.protocol_version
    r = await client.call_tool("where_async", {})
    assert r["structuredContent"] == {"main": True}


async def test_async_calls_sent_together_each_get_their_own_answer(client):
    """Many ``async def`` calls at once: the ones queued for the loop together (core's inbox)
    start in one turn of it, each with its own arguments, context and answer."""
    rs = await asyncio.gather(*(client.call_tool("add", {"a": i, "b": 1000}) for i in range(200)))
    assert [r["structuredContent"]["sum"] for r in rs] == [i + 1000.0 for i in range(200)]
    assert {r["structuredContent"]["era"] for r in rs} == {client.era}


async def test_mcp_error_is_sent_exactly(client):
    with pytest.raises(McpError) as e:
        await client.call_tool("fail_rpc", {"code": -32042})
    assert (e.value.code, e.value.message, e.value.data) == (
        -32042,
        "custom failure",
        {"why": "test"},
    )


async def test_tool_error_is_an_is_error_result(client):
    r = await client.call_tool("fail_tool", {})
    assert r["isError"] is True
    assert r["content"][0]["text"] == "the tool says no"


async def test_other_exceptions_are_a_generic_internal_error(client):
    with pytest.raises(McpError) as e:
        await client.call_tool("boom", {})
    assert e.value.code == -32603
    assert "secret" not in str(e.value) and "secret" not in repr(e.value.data)


async def test_bad_arguments_never_reach_the_handler(client):
    r = await client.call_tool("add", {"a": "one", "b": 2})
    assert r["isError"] is True


async def test_elicit_in_either_era(client):
    r = await client.call_tool("ask", {})
    assert r["content"][0]["text"] == "Hello, Ada! (accept)"


async def test_input_required_is_not_swallowed_by_except_exception(client):
    r = await client.call_tool("ask_guarded", {})
    assert r["content"][0]["text"] == "got accept"


async def test_bytes_resource_is_a_blob(client):
    r = await client.read_resource("demo://blob")
    assert r["contents"] == [
        {"uri": "demo://blob", "mimeType": "application/octet-stream", "blob": "AAEC"}
    ]


async def test_completion(client):
    r = await client.request(
        "completion/complete",
        {
            "ref": {"type": "ref/prompt", "name": "greet"},
            "argument": {"name": "name", "value": "al"},
        },
    )
    assert r["completion"]["values"] == ["alice", "alfred"]


async def test_timeout_cancels_the_handler_and_the_connection_still_works(client):
    with pytest.raises(McpTimeoutError):
        await client.call_tool("slow", {"ms": 5000}, timeout=0.2)
    # The client sent notifications/cancelled: the server cancels the handler's asyncio task.
    for _ in range(100):
        r = await client.call_tool("cancelled_count", {})
        if r["content"][0]["text"] == "1":
            break
        await asyncio.sleep(0.02)
    assert r["content"][0]["text"] == "1"
    r = await client.call_tool("echo", {"text": "after"})
    assert r["content"][0]["text"] == "after"


async def test_prompts_and_resources(client):
    prompts = await client.list_prompts()
    assert prompts == [
        {
            "name": "greet",
            "description": "A greeting prompt.",
            "arguments": [
                {"name": "name", "required": True},
                {"name": "style", "required": False},
            ],
        }
    ]
    r = await client.get_prompt("greet", {"name": "Ann", "style": "formal"})
    assert r["messages"] == [
        {"role": "user", "content": {"type": "text", "text": "Say hello to Ann in a formal way"}}
    ]
    resources = await client.list_resources()
    assert [(x["uri"], x.get("mimeType")) for x in resources] == [
        ("demo://blob", "application/octet-stream"),
        ("demo://readme", "text/markdown"),
    ]
    templates = await client.list_resource_templates()
    assert [t["uriTemplate"] for t in templates] == ["demo://notes/{id}"]
    r = await client.read_resource("demo://notes/42")
    assert r["contents"] == [
        {"uri": "demo://notes/42", "mimeType": "text/plain", "text": "Note 42"}
    ]
    r = await client.read_resource("demo://readme")
    assert r["contents"][0]["text"] == "# Readme"


@pytest.mark.parametrize("mode", MODES)
async def test_serve_stdio_inside_a_running_loop(mode, app_argv):
    async with await Client.connect_stdio(app_argv + ["--async"], mode=mode) as c:
        assert c.era == mode
        r = await c.call_tool("echo", {"text": "async serve"})
        assert r["content"][0]["text"] == "async serve"


async def test_auto_mode_picks_modern(app_argv):
    async with await Client.connect_stdio(app_argv, mode="auto") as c:
        assert c.era == "modern"


@pytest.mark.parametrize("tool", ["report", "report_sync"])
@pytest.mark.parametrize("mode", MODES)
async def test_progress_and_log_notifications(mode, tool, app_argv):
    notes = []
    progress = []
    async with await Client.connect_stdio(
        app_argv, mode=mode, on_notification=lambda m, p: notes.append((m, p))
    ) as c:
        r = await c.call_tool(
            tool,
            {},
            progress=lambda p, t, m: progress.append((p, t, m)),
            log_level="info",
        )
        assert r["content"][0]["text"] == "reported"
        for _ in range(100):
            if len(progress) == 2 and notes:
                break
            await asyncio.sleep(0.02)
    assert progress == [(1.0, 2.0, "half"), (2.0, 2.0, "done")]
    logs = [p for m, p in notes if m == "notifications/message"]
    assert logs == [{"level": "warning", "logger": "app", "data": {"note": "careful"}}]
