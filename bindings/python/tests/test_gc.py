"""Cycles through native objects are collectable: a Server or Client whose handler or callback
refers back to it is freed by the cycle collector (the native objects report the Python
callables they hold, and clear them)."""

from __future__ import annotations

import gc
import weakref

import pytest

from mcpcore import Client, Context, Server

from app import server as app_server


@pytest.fixture(autouse=True)
def no_automatic_collection():
    """Collections happen only where the test calls ``gc.collect()``."""
    gc.disable()
    try:
        yield
    finally:
        gc.enable()


async def _serving_cyclic_server():
    """A serving server whose tool refers to it; returns weak references and the listener."""
    server = Server("cyclic", "1")

    @server.tool()
    def me(ctx: Context) -> str:
        """Refers to the server (a cycle through the native handler)."""
        return server.name

    handle = await server.serve_http("127.0.0.1", 0)
    async with await Client.connect_http(handle.url, mode="legacy") as c:
        assert (await c.call_tool("me", {}))["content"][0]["text"] == "cyclic"
    return weakref.ref(server), weakref.ref(server._serving[0]), handle._native


async def test_a_serving_server_in_a_cycle_is_collected():
    ref, native, listener = await _serving_cyclic_server()
    # Only the collector can free it: the references form a cycle.
    assert ref() is not None
    gc.collect()
    assert ref() is None and native() is None
    await listener.close()


async def _cyclic_client(url: str):
    """A client whose callbacks refer to it; returns weak references to it and its native half."""
    client = await Client.connect_http(url, mode="legacy", declare=["elicitation"])

    @client.on_elicitation
    def answer(params):
        return {"action": "decline", "by": client}

    @client.on_notification
    def seen(method, params):
        return client

    assert await client.list_tools()
    return weakref.ref(client), weakref.ref(client._native)


async def test_a_client_in_a_cycle_is_collected():
    handle = await app_server.serve_http("127.0.0.1", 0)
    try:
        ref, native = await _cyclic_client(handle.url)
        assert ref() is not None
        gc.collect()
        assert ref() is None and native() is None
    finally:
        await handle.close()


async def test_a_client_without_callbacks_is_freed_by_refcount():
    handle = await app_server.serve_http("127.0.0.1", 0)
    try:
        client = await Client.connect_http(handle.url, mode="modern")
        assert client.era == "modern"
        ref = weakref.ref(client)
        await client.close()
        del client
        assert ref() is None
    finally:
        await handle.close()
