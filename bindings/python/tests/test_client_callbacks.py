"""Client callbacks registered with the decorators after connecting (``declare=`` names them)."""

from __future__ import annotations

import pytest

from mcpcore import Client, McpError

MODES = ["legacy", "modern"]


@pytest.mark.parametrize("mode", MODES)
async def test_decorators_registered_after_connect_answer(app_argv, mode):
    async with await Client.connect_stdio(app_argv, mode=mode, declare=["sampling", "roots"]) as c:

        @c.on_sampling
        async def sample(params):
            assert params["messages"][0]["content"]["text"] == "2+2?"
            return {
                "role": "assistant",
                "content": {"type": "text", "text": "4"},
                "model": "test",
            }

        @c.on_roots
        def roots(params):  # a plain def runs in a worker thread
            return {"roots": [{"uri": "file:///tmp/work", "name": "work"}]}

        assert sample.__name__ == "sample"  # the decorator returns the function
        r = await c.call_tool("sample_and_roots", {})
        assert r["structuredContent"]["text"] == "4"
        assert r["structuredContent"]["roots"] == [{"uri": "file:///tmp/work", "name": "work"}]
        assert {"sampling", "roots"} <= set(r["structuredContent"]["caps"])
        assert "elicitation" not in r["structuredContent"]["caps"]

        # A later registration replaces the earlier one.
        @c.on_sampling
        def sample2(params):
            return {"role": "assistant", "content": {"type": "text", "text": "four"}, "model": "t"}

        r = await c.call_tool("sample_and_roots", {})
        assert r["structuredContent"]["text"] == "four"


async def test_declared_but_unregistered_callback_answers_method_not_found(app_argv):
    # The server's `sampling/createMessage` reaches this client over stdio; core (not the
    # binding) answers it -32601, and the server's tool passes that error on as its own.
    async with await Client.connect_stdio(app_argv, mode="legacy", declare=["sampling"]) as c:
        with pytest.raises(McpError) as e:
            await c.call_tool("sample_and_roots", {})
        assert (e.value.code, e.value.message) == (
            -32601,
            "no callback is registered for sampling/createMessage",
        )


@pytest.mark.parametrize("declare", [[], ["sampling"]])
async def test_a_raising_callback_answers_cores_internal_error(app_argv, declare):
    """Any exception other than ``McpError`` answers the server what a panicking Rust handler
    does, -32603 "Internal error", with nothing of the exception (the Node binding answers the
    same); an ``McpError`` goes out as raised."""

    def boom(params):
        raise RuntimeError("secret detail")

    async with await Client.connect_stdio(
        app_argv, mode="legacy", on_sampling=boom, declare=declare
    ) as c:
        with pytest.raises(McpError) as e:
            await c.call_tool("sample_and_roots", {})
        assert (e.value.code, e.value.message, e.value.data) == (-32603, "Internal error", None)

        @c.on_sampling
        async def refuse(params):
            raise McpError(-1, "user rejected", {"why": "no"})

        with pytest.raises(McpError) as e:
            await c.call_tool("sample_and_roots", {})
        assert (e.value.code, e.value.message, e.value.data) == (-1, "user rejected", {"why": "no"})


async def test_registering_an_undeclared_callback_is_refused(app_argv):
    async with await Client.connect_stdio(app_argv, mode="legacy", declare=["roots"]) as c:
        assert c._native.declared_callbacks == ["roots"]
        with pytest.raises(ValueError, match='the "sampling" callback was not declared'):
            c.on_sampling(lambda params: {})


async def test_keyword_callback_can_be_replaced_by_decorator(app_argv):
    async def first(params):
        return {"action": "accept", "content": {"name": "First"}}

    async with await Client.connect_stdio(app_argv, mode="legacy", on_elicitation=first) as c:
        r = await c.call_tool("ask", {})
        assert r["content"][0]["text"] == "Hello, First! (accept)"

        @c.on_elicitation
        async def second(params):
            return {"action": "accept", "content": {"name": "Second"}}

        r = await c.call_tool("ask", {})
        assert r["content"][0]["text"] == "Hello, Second! (accept)"


def test_declare_rejects_unknown_names(app_argv):
    import asyncio

    with pytest.raises(ValueError, match='unknown client callback "weather"'):
        asyncio.run(Client.connect_stdio(app_argv, declare=["sampling", "weather"]))


async def test_close_drops_the_callbacks(app_argv):
    import gc
    import weakref

    async def connect_and_close():
        c = await Client.connect_stdio(app_argv, mode="legacy", declare=["roots"])

        @c.on_roots
        def roots(params):
            return {"roots": [], "client": repr(c)}  # refers to the client: a cycle

        await c.close()
        return weakref.ref(c)

    ref = await connect_and_close()
    gc.collect()
    assert ref() is None
