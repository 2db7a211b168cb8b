"""``server.notify_*_changed()`` reaches a legacy client's ``on_notification``."""

from __future__ import annotations

import asyncio

from mcpcore import Client

from app import server

LIST_CHANGED = [
    "notifications/tools/list_changed",
    "notifications/prompts/list_changed",
    "notifications/resources/list_changed",
]


async def _wait_for(notes, methods):
    for _ in range(200):
        if all(m in [n[0] for n in notes] for m in methods):
            return
        await asyncio.sleep(0.01)
    raise AssertionError(f"missing notifications: {methods} not all in {notes}")


async def test_list_changed_over_stdio(app_argv):
    notes = []
    async with await Client.connect_stdio(
        app_argv, mode="legacy", on_notification=lambda m, p: notes.append((m, p))
    ) as c:
        r = await c.call_tool("announce", {})
        assert r["structuredContent"] == {"tools": 1, "prompts": 1, "resources": 1}
        await _wait_for(notes, LIST_CHANGED)


async def test_list_changed_over_http_from_the_serving_process():
    assert server.notify_tools_changed() == 0  # not serving: nobody to tell
    handle = await server.serve_http("127.0.0.1", 0)
    notes = []
    try:
        async with await Client.connect_http(
            handle.url, mode="legacy", on_notification=lambda m, p: notes.append((m, p))
        ) as c:
            await c.list_tools()
            told = 0
            for _ in range(200):  # the client's standalone GET stream may still be opening
                told = server.notify_tools_changed()
                if told:
                    break
                await asyncio.sleep(0.01)
            assert told == 1
            await _wait_for(notes, ["notifications/tools/list_changed"])
    finally:
        await handle.close()
    assert server.notify_tools_changed() == 0  # a closed listener is forgotten
