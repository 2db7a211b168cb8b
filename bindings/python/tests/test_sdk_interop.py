"""The official Python SDK (`mcp`, pinned in scripts/test-python.sh) as the client of a server
written with this binding (tests/app.py), over stdio pipes and Streamable HTTP on 127.0.0.1.

Each era is driven the SDK's own way: `ClientSession.initialize()` (the handshake, legacy era),
`ClientSession.discover()` (2026-07-28, `server/discover` then per-request `_meta`), and the
high-level `mcp.Client(mode="auto")`, which probes `server/discover` and falls back to the
handshake; against our server it must pick the modern era. The SDK is a hard requirement: a
missing `mcp` fails the import below instead of skipping.
"""

from __future__ import annotations

import contextlib
import pathlib
import sys
from typing import Any, AsyncIterator, List, Tuple

import mcp
import mcp.types as types
import pytest
from mcp import ClientSession, StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client

from app import server

APP_PATH = pathlib.Path(__file__).resolve().parent / "app.py"

SDK_VERSION = "2.3.0"  # the pin in scripts/test-python.sh
MODERN = "2026-07-28"
TRANSPORTS = ["stdio", "http"]


def test_the_pinned_sdk_is_installed():
    from importlib.metadata import version

    assert version("mcp") == SDK_VERSION


@pytest.fixture
async def http_url() -> AsyncIterator[str]:
    handle = await server.serve_http("127.0.0.1", 0)
    try:
        yield handle.url
    finally:
        await handle.close()


def _stdio_params() -> StdioServerParameters:
    return StdioServerParameters(command=sys.executable, args=[str(APP_PATH)])


class Callbacks:
    """The SDK client's server→client callbacks; each records that it ran."""

    def __init__(self) -> None:
        self.calls: List[str] = []

    async def elicitation(
        self, context: Any, params: types.ElicitRequestParams
    ) -> types.ElicitResult:
        self.calls.append(f"elicit:{params.message}")
        return types.ElicitResult(action="accept", content={"name": "Ada"})

    async def sampling(
        self, context: Any, params: types.CreateMessageRequestParams
    ) -> types.CreateMessageResult:
        self.calls.append("sampling")
        text = params.messages[0].content.text  # type: ignore[union-attr]
        return types.CreateMessageResult(
            role="assistant",
            content=types.TextContent(type="text", text=f"4 (asked {text})"),
            model="fake",
        )

    async def roots(self, context: Any) -> types.ListRootsResult:
        self.calls.append("roots")
        return types.ListRootsResult(roots=[types.Root(uri="file:///tmp/r", name="r")])


@contextlib.asynccontextmanager
async def sdk_session(
    transport: str, url: str, era: str, cb: Callbacks
) -> AsyncIterator[ClientSession]:
    """A ClientSession over the SDK's own transport, negotiated the SDK's way for `era`."""
    async with contextlib.AsyncExitStack() as stack:
        if transport == "stdio":
            read, write = await stack.enter_async_context(stdio_client(_stdio_params()))
        else:
            read, write = await stack.enter_async_context(streamable_http_client(url))
        session = await stack.enter_async_context(
            ClientSession(
                read,
                write,
                read_timeout_seconds=30,
                elicitation_callback=cb.elicitation,
                sampling_callback=cb.sampling,
                list_roots_callback=cb.roots,
            )
        )
        if era == "legacy":
            init = await session.initialize()
            assert init.server_info.name == "py-test" and init.server_info.version == "1.2.3"
            assert init.instructions == "Test server."
        else:
            discovered = await session.discover()
            assert MODERN in discovered.supported_versions
        yield session


async def _common_surface(session: ClientSession, era: str) -> None:
    """list tools, text and structured tool results, progress, prompt, resources."""
    tools = {t.name: t for t in (await session.list_tools()).tools}
    assert {"echo", "add", "ask", "sample_and_roots"} <= set(tools)
    assert tools["echo"].input_schema["properties"]["text"]["type"] == "string"
    assert tools["add"].description == "Add two numbers"

    r = await session.call_tool("echo", {"text": "from the SDK"})
    assert r.is_error is not True
    assert r.content[0].text == "from the SDK"  # type: ignore[union-attr]

    progress: List[Tuple[float, Any, Any]] = []

    async def on_progress(p: float, total: Any, message: Any) -> None:
        progress.append((p, total, message))

    r = await session.call_tool("add", {"a": 2, "b": 3}, progress_callback=on_progress)
    assert r.structured_content is not None
    assert r.structured_content["sum"] == 5
    assert r.structured_content["era"] == era
    assert progress == [(1, 1, "added")]

    r = await session.call_tool("fail_tool", {})
    assert r.is_error is True and "the tool says no" in r.content[0].text  # type: ignore[union-attr]

    prompts = [p.name for p in (await session.list_prompts()).prompts]
    assert "greet" in prompts
    g = await session.get_prompt("greet", {"name": "Ada", "style": "formal"})
    assert g.messages[0].role == "user"
    assert g.messages[0].content.text == "Say hello to Ada in a formal way"  # type: ignore[union-attr]

    uris = [str(res.uri) for res in (await session.list_resources()).resources]
    assert "demo://readme" in uris
    rr = await session.read_resource("demo://readme")
    assert rr.contents[0].text == "# Readme"  # type: ignore[union-attr]
    assert rr.contents[0].mime_type == "text/markdown"
    rr = await session.read_resource("demo://notes/42")
    assert rr.contents[0].text == "Note 42"  # type: ignore[union-attr]


@pytest.mark.parametrize("transport", TRANSPORTS)
async def test_sdk_client_session_legacy(transport, http_url):
    cb = Callbacks()
    async with sdk_session(transport, http_url, "legacy", cb) as session:
        assert session.protocol_version == "2025-11-25"  # the newest handshake version
        await _common_surface(session, "legacy")
        # Server→client requests on the handshake era: elicitation/create, sampling, roots/list.
        r = await session.call_tool("ask", {})
        assert r.content[0].text == "Hello, Ada! (accept)"  # type: ignore[union-attr]
        r = await session.call_tool("sample_and_roots", {})
        assert r.structured_content is not None
        assert r.structured_content["text"] == "4 (asked 2+2?)"
        assert r.structured_content["roots"] == [{"uri": "file:///tmp/r", "name": "r"}]
        assert {"elicitation", "sampling", "roots"} <= set(r.structured_content["caps"])
    assert cb.calls == ["elicit:Name?", "sampling", "roots"]


@pytest.mark.parametrize("transport", TRANSPORTS)
async def test_sdk_client_session_modern(transport, http_url):
    cb = Callbacks()
    async with sdk_session(transport, http_url, "modern", cb) as session:
        assert session.protocol_version == MODERN
        await _common_surface(session, "modern")
        # 2026-07-28: the elicitation comes back as an input_required result; the SDK's
        # session hands it to us, we answer with the SDK's input_responses + request_state.
        first = await session.call_tool("ask", {}, allow_input_required=True)
        assert isinstance(first, types.InputRequiredResult), first
        ((key, req),) = first.input_requests.items()
        assert req.method == "elicitation/create"
        answer = types.ElicitResult(action="accept", content={"name": "Ada"})
        r = await session.call_tool(
            "ask", {}, input_responses={key: answer}, request_state=first.request_state
        )
        assert isinstance(r, types.CallToolResult)
        assert r.content[0].text == "Hello, Ada! (accept)"  # type: ignore[union-attr]


@pytest.mark.parametrize("transport", TRANSPORTS)
async def test_sdk_client_auto_picks_the_modern_era(transport, http_url):
    cb = Callbacks()
    target: Any = _stdio_params() if transport == "stdio" else http_url
    async with mcp.Client(
        target,
        mode="auto",
        elicitation_callback=cb.elicitation,
        sampling_callback=cb.sampling,
        list_roots_callback=cb.roots,
        read_timeout_seconds=30,
    ) as client:
        assert client.protocol_version == MODERN
        assert client.server_info is not None and client.server_info.name == "py-test"
        await _common_surface(client.session, "modern")
        # The SDK drives the input_required rounds itself, through our callbacks.
        r = await client.call_tool("ask", {})
        assert r.content[0].text == "Hello, Ada! (accept)"  # type: ignore[union-attr]
        r = await client.call_tool("sample_and_roots", {})
        assert r.structured_content is not None
        assert r.structured_content["text"] == "4 (asked 2+2?)"
        assert r.structured_content["roots"] == [{"uri": "file:///tmp/r", "name": "r"}]
    assert cb.calls == ["elicit:Name?", "sampling", "roots"]


@pytest.mark.parametrize("transport", TRANSPORTS)
async def test_sdk_sees_protocol_errors_as_mcp_errors(transport, http_url):
    async with sdk_session(transport, http_url, "legacy", Callbacks()) as session:
        with pytest.raises(mcp.MCPError) as e:
            await session.call_tool("fail_rpc", {"code": -32099})
        assert e.value.error.code == -32099
        with pytest.raises(mcp.MCPError) as e:
            await session.read_resource("demo://missing")
        # 2025-11-25 (the SDK's newest handshake version) reports it as invalid params + uri.
        assert e.value.error.code == -32602
        assert e.value.error.data == {"uri": "demo://missing"}
