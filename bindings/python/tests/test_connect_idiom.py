"""Every connect (and ``serve_http``) is awaitable and an async context manager.

``client = await Client.connect_stdio(...)``, ``async with await Client.connect_stdio(...)``
and ``async with Client.connect_stdio(...) as client:`` all work, and leaving ``async with``
closes the connection also when the body raises. This file is type-checked with
``mypy --strict`` (scripts/test-python.sh), so the three spellings also type-check in user code.
"""

from __future__ import annotations

import asyncio
from typing import AsyncIterator, List

import pytest

from mcpcore import Client, HttpHandle, McpcoreError, Opening

from app import server


class Recording(Client):
    """A subclass: ``connect_*`` return the subclass, and its ``close`` is what exit calls."""

    closes = 0

    async def close(self) -> None:
        Recording.closes += 1
        await super().close()


@pytest.fixture
async def endpoint() -> AsyncIterator[str]:
    async with server.serve_http("127.0.0.1", 0) as handle:
        yield handle.url


async def _echo(client: Client, text: str) -> str:
    r = await client.call_tool("echo", {"text": text})
    out: str = r["content"][0]["text"]
    return out


async def test_stdio_three_spellings(app_argv: List[str]) -> None:
    client = await Client.connect_stdio(app_argv, mode="auto")
    try:
        assert await _echo(client, "awaited") == "awaited"
    finally:
        await client.close()

    async with await Client.connect_stdio(app_argv, mode="auto") as c:
        assert await _echo(c, "async with await") == "async with await"

    async with Client.connect_stdio(app_argv, mode="auto") as c2:
        assert await _echo(c2, "async with") == "async with"
    with pytest.raises(McpcoreError):  # closed on exit
        await c2.list_tools()


async def test_http_three_spellings(endpoint: str) -> None:
    client = await Client.connect_http(endpoint, mode="modern")
    try:
        assert await _echo(client, "awaited") == "awaited"
    finally:
        await client.close()

    async with await Client.connect_http(endpoint, mode="legacy") as c:
        assert await _echo(c, "async with await") == "async with await"

    async with Client.connect_http(endpoint, mode="legacy") as c2:
        assert await _echo(c2, "async with") == "async with"
    with pytest.raises(McpcoreError):  # the session was closed (DELETE) on exit
        await c2.list_tools()


@pytest.mark.parametrize("transport", ["stdio", "http"])
async def test_exit_closes_when_the_body_raises(
    app_argv: List[str], endpoint: str, transport: str
) -> None:
    before = Recording.closes
    opening = (
        Recording.connect_stdio(app_argv)
        if transport == "stdio"
        else Recording.connect_http(endpoint)
    )
    kept: List[Recording] = []
    with pytest.raises(ZeroDivisionError):
        async with opening as client:
            kept.append(client)
            assert isinstance(client, Recording)
            1 / 0
    assert Recording.closes == before + 1
    with pytest.raises(McpcoreError):
        await kept[0].list_tools()


async def test_serve_http_both_spellings() -> None:
    handle: HttpHandle = await server.serve_http("127.0.0.1", 0)
    try:
        async with Client.connect_http(handle.url) as c:
            assert await _echo(c, "served") == "served"
    finally:
        await handle.close()

    async with server.serve_http("127.0.0.1", 0) as h:
        url = h.url
        async with Client.connect_http(url) as c:
            assert await _echo(c, "served twice") == "served twice"
    with pytest.raises(McpcoreError):  # the listener stopped on exit
        await Client.connect_http(url, options={"requestTimeoutMs": 5000})


async def test_opening_is_a_coroutine(app_argv: List[str]) -> None:
    # asyncio.ensure_future / create_task take it as they took the old coroutine.
    task: asyncio.Future[Client] = asyncio.ensure_future(Client.connect_stdio(app_argv))
    client = await task
    await client.close()

    # It opens once; an open never awaited starts nothing (no "never awaited" warning).
    opening: Opening[Client] = Client.connect_stdio(app_argv)
    async with opening as c:
        assert await _echo(c, "once") == "once"
    with pytest.raises(RuntimeError, match="already awaited"):
        await opening
    Client.connect_stdio(app_argv)
