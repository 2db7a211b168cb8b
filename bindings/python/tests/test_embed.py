"""Embedding: the endpoint mounted in a FastAPI app (``server.asgi_app()``) under uvicorn and
hypercorn on 127.0.0.1, reached by the official SDK's client and mcpcore's in both eras; bad
input answered as the built-in listener answers it; a disconnect cancelling a 2026-07-28
handler; ``serve_streams`` over TCP; ``Client.connect_in_memory``."""

from __future__ import annotations

import asyncio
import contextlib
import json
from typing import Any, Dict, List, Tuple
from urllib.parse import urlsplit

import httpx2 as httpx
import pytest
from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client

from conftest import INITIALIZE
from embed_fixtures import (
    Hang,
    fastapi_app,
    hypercorn_serving,
    make_server,
    modern_body,
    modern_headers,
    post,
    uvicorn_serving,
)
from mcpcore import Client, Context

MODES = ["legacy", "modern", "auto"]


def text(result: Dict[str, Any]) -> str:
    return str(result["content"][0]["text"])


async def test_fastapi_mount_under_uvicorn_serves_its_route_and_the_official_sdk():
    server = make_server()
    async with uvicorn_serving(fastapi_app(server)) as base:
        async with httpx.AsyncClient() as http:
            r = await http.get(f"{base}/health")
            assert r.status_code == 200 and r.json() == {"status": "ok"}
        async with contextlib.AsyncExitStack() as stack:
            read, write = await stack.enter_async_context(streamable_http_client(f"{base}/mcp/"))
            session = await stack.enter_async_context(
                ClientSession(read, write, read_timeout_seconds=30)
            )
            init = await session.initialize()
            assert init.server_info.name == "embed-test"
            tools = await session.list_tools()
            assert {"echo", "hang"} <= {t.name for t in tools.tools}
            out = await session.call_tool("echo", {"text": "via fastapi"})
            assert out.content[0].text == "via fastapi"  # type: ignore[union-attr]


@pytest.mark.parametrize("mode", MODES)
async def test_mcpcore_client_reaches_the_mount_in_each_era(mode):
    server = make_server()
    async with uvicorn_serving(fastapi_app(server)) as base:
        async with Client.connect_http(f"{base}/mcp/", mode=mode) as c:
            assert c.era == ("legacy" if mode == "legacy" else "modern")
            assert "echo" in {t["name"] for t in await c.list_tools()}
            assert text(await c.call_tool("echo", {"text": mode})) == mode


@pytest.mark.parametrize("mode", ["legacy", "modern"])
async def test_the_mount_runs_under_hypercorn(mode):
    server = make_server()
    async with hypercorn_serving(fastapi_app(server)) as base:
        async with httpx.AsyncClient() as http:
            assert (await http.get(f"{base}/health")).json() == {"status": "ok"}
        async with Client.connect_http(f"{base}/mcp/", mode=mode) as c:
            assert c.era == mode
            assert text(await c.call_tool("echo", {"text": "hypercorn"})) == "hypercorn"


def _bad_inputs() -> List[Any]:
    list_body = modern_body("tools/list")
    h = modern_headers("tools/list")
    return [
        ("malformed JSON", h, b'{"jsonrpc": "2.0", ', 400),
        ("Content-Type text/plain", {**h, "Content-Type": "text/plain"}, list_body, 415),
        ("Accept text/html", {**h, "Accept": "text/html"}, list_body, 406),
        ("foreign Origin", {**h, "Origin": "https://evil.example"}, list_body, 403),
        ("body over the cap", h, modern_body("tools/call", {"x": "y" * 4096}), 413),
    ]


HOSTS = {"uvicorn": uvicorn_serving, "hypercorn": hypercorn_serving}


@pytest.mark.parametrize("host", HOSTS)
@pytest.mark.parametrize("what,headers,body,status", _bad_inputs())
async def test_bad_input_through_the_mount_is_answered_as_the_listener_answers(
    host, what, headers, body, status
):
    server = make_server(options={"limits": {"maxMessageBytes": 2048}})
    handle = await server.serve_http("127.0.0.1", 0)
    try:
        async with HOSTS[host](fastapi_app(server)) as base:
            mounted = await post(f"{base}/mcp/", headers, body)
            own = await post(handle.url, headers, body)
    finally:
        await handle.close()
    assert mounted == own, f"{what}: the mount and the built-in listener differ"
    assert mounted[0] == status, f"{what}: {mounted}"
    if what == "malformed JSON":
        assert json.loads(mounted[2])["error"]["code"] == -32700


async def _stalled(url: str) -> Tuple[int, bytes]:
    """POST a ``tools/list`` whose body stops after 10 of its bytes: the status and body."""
    u = urlsplit(url)
    body = modern_body("tools/list")
    head = [f"POST {u.path} HTTP/1.1", f"Host: {u.netloc}", f"Content-Length: {len(body)}"]
    head += [f"{k}: {v}" for k, v in modern_headers("tools/list").items()]
    reader, writer = await asyncio.open_connection(u.hostname, u.port)
    try:
        writer.write(("\r\n".join(head) + "\r\n\r\n").encode() + body[:10])
        await writer.drain()
        status_line = await asyncio.wait_for(reader.readline(), 10)
        rest = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), 10)
        length = int(
            next(
                ln.split(b":")[1]
                for ln in rest.split(b"\r\n")
                if ln.lower().startswith(b"content-length:")
            )
        )
        return int(status_line.split()[1]), await asyncio.wait_for(reader.readexactly(length), 10)
    finally:
        writer.close()


@pytest.mark.parametrize("host", HOSTS)
async def test_a_body_that_stalls_gets_the_listeners_408_through_the_mount(host):
    """Core's body deadline (bodyReadTimeoutMs) runs through the mount as in its own listener."""
    options = {"bodyReadTimeoutMs": 200}
    server = make_server()
    handle = await server.serve_http("127.0.0.1", 0, options=options)
    try:
        own = await _stalled(handle.url)
        assert own[0] == 408, own
        async with HOSTS[host](fastapi_app(server, options)) as base:
            assert await _stalled(f"{base}/mcp/") == own
    finally:
        await handle.close()


@pytest.mark.parametrize("host", HOSTS)
async def test_a_disconnect_through_the_mount_cancels_a_modern_handler(host):
    hang = Hang()
    server = make_server(hang=hang)
    async with HOSTS[host](fastapi_app(server)) as base:
        async with httpx.AsyncClient() as http:
            call = asyncio.ensure_future(
                http.post(
                    f"{base}/mcp/",
                    headers={**modern_headers("tools/call"), "Mcp-Name": "hang"},
                    content=modern_body("tools/call", {"name": "hang", "arguments": {}}),
                )
            )
            await asyncio.wait_for(hang.started.wait(), 10)
            assert not hang.cancelled.is_set()
            call.cancel()  # httpx closes the connection: the host tells the app http.disconnect
            with contextlib.suppress(asyncio.CancelledError):
                await call
        await asyncio.wait_for(hang.cancelled.wait(), 10)


async def test_sse_answers_stream_through_the_mount():
    """A streamed answer (SSE, progress first) arrives as events through the mount."""
    server = make_server()

    @server.tool()
    async def steps(ctx: Context) -> str:
        await ctx.progress(1, 2, "half")
        return "done"

    seen: List[Any] = []
    async with uvicorn_serving(fastapi_app(server)) as base:
        async with Client.connect_http(f"{base}/mcp/", mode="modern") as c:
            out = await c.call_tool(
                "steps", {}, progress=lambda p, total, msg: seen.append((p, total, msg))
            )
            assert text(out) == "done"
    assert seen == [(1, 2, "half")]


async def test_lifespan_events_are_answered_and_not_needed():
    app = make_server().asgi_app()
    inbox: asyncio.Queue[Dict[str, Any]] = asyncio.Queue()
    sent: List[Dict[str, Any]] = []

    async def send(m: Any) -> None:
        sent.append(dict(m))

    for m in ({"type": "lifespan.startup"}, {"type": "lifespan.shutdown"}):
        inbox.put_nowait(m)
    await asyncio.wait_for(app({"type": "lifespan"}, inbox.get, send), 5)
    assert [m["type"] for m in sent] == ["lifespan.startup.complete", "lifespan.shutdown.complete"]
    # Served bare by uvicorn, which sends lifespan events (lifespan="on" fails on no answer).
    async with uvicorn_serving(app) as base:
        status, _, body = await post(
            f"{base}/anything", modern_headers("tools/list"), modern_body("tools/list")
        )
        assert status == 200 and "echo" in body


class _Exchange:
    """One request handed to an ASGI app by hand: the body, then nothing until ``leave()``;
    what the app sends is kept in ``sent``."""

    def __init__(self, app: Any, target: str, headers: Dict[str, str], body: bytes) -> None:
        self.sent: List[Dict[str, Any]] = []
        self.started = asyncio.Event()
        self.ended = asyncio.Event()
        self._gone = asyncio.Event()
        self._inbox: List[Dict[str, Any]] = [{"type": "http.request", "body": body}]
        scope = {
            "type": "http",
            "asgi": {"version": "3.0"},
            "http_version": "1.1",
            "method": "POST",
            "path": target,
            "raw_path": target.encode(),
            "query_string": b"",
            "headers": [(k.lower().encode(), v.encode()) for k, v in headers.items()]
            + [(b"host", b"127.0.0.1")],
        }
        self.task = asyncio.ensure_future(app(scope, self._receive, self._send))

    async def _receive(self) -> Dict[str, Any]:
        if self._inbox:
            return self._inbox.pop(0)
        await self._gone.wait()
        return {"type": "http.disconnect"}

    async def _send(self, m: Any) -> None:
        self.sent.append(dict(m))
        if m["type"] == "http.response.start":
            self.started.set()
        elif not m.get("more_body", False):
            self.ended.set()

    def leave(self) -> None:
        self._gone.set()


async def test_a_lifespan_shutdown_shuts_the_engine_down_gracefully():
    """The host's lifespan shutdown ends an open ``subscriptions/listen`` stream with its result
    (SUB-01: the stream ends when the server stops); the next request starts the engine anew."""
    app = make_server().asgi_app()
    life: asyncio.Queue[Dict[str, Any]] = asyncio.Queue()
    told: List[str] = []

    async def life_send(m: Any) -> None:
        told.append(m["type"])

    lifespan = asyncio.ensure_future(app({"type": "lifespan"}, life.get, life_send))
    life.put_nowait({"type": "lifespan.startup"})
    listen = _Exchange(
        app,
        "/mcp",
        modern_headers("subscriptions/listen"),
        modern_body("subscriptions/listen", {"notifications": {"toolsListChanged": True}}),
    )
    try:
        await asyncio.wait_for(listen.started.wait(), 10)
        await asyncio.sleep(0.2)
        assert not listen.ended.is_set(), (
            f"the listen stream stays open while serving: {listen.sent}"
        )
        life.put_nowait({"type": "lifespan.shutdown"})
        await asyncio.wait_for(lifespan, 10)
        assert told == ["lifespan.startup.complete", "lifespan.shutdown.complete"]
        # Core has sent the stream its result; the host writes it out.
        await asyncio.wait_for(listen.ended.wait(), 10)
        events = b"".join(m.get("body", b"") for m in listen.sent[1:]).decode()
        final = [json.loads(line[5:]) for line in events.splitlines() if line.startswith("data:")]
        assert final and final[-1]["id"] == 1 and "result" in final[-1], events
    finally:
        listen.leave()
        await asyncio.wait_for(listen.task, 10)
    again = _Exchange(app, "/mcp", modern_headers("tools/list"), modern_body("tools/list"))
    await asyncio.wait_for(again.task, 10)
    assert again.sent[0]["status"] == 200
    again.leave()


async def _line(reader: asyncio.StreamReader) -> Dict[str, Any]:
    out: Dict[str, Any] = json.loads(await asyncio.wait_for(reader.readline(), 10))
    return out


@pytest.mark.parametrize("on_loop", [False, True])
async def test_serve_streams_serves_a_tcp_connection(on_loop: bool):
    server = make_server()
    done: List[bool] = []

    async def on_connect(r: asyncio.StreamReader, w: asyncio.StreamWriter) -> None:
        await server.serve_streams(r, w, on_loop=on_loop)
        done.append(True)
        w.close()

    tcp = await asyncio.start_server(on_connect, "127.0.0.1", 0)
    port = tcp.sockets[0].getsockname()[1]
    try:
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        writer.write(json.dumps(INITIALIZE).encode() + b"\n")
        assert (await _line(reader))["result"]["serverInfo"]["name"] == "embed-test"
        writer.write(b'{"jsonrpc":"2.0","method":"notifications/initialized"}\n')
        call = {"jsonrpc": "2.0", "id": 2, "method": "tools/call"}
        call["params"] = {"name": "echo", "arguments": {"text": "over tcp"}}
        writer.write(json.dumps(call).encode() + b"\n")
        reply = await _line(reader)
        assert reply["id"] == 2 and text(reply["result"]) == "over tcp"
        # End of input: the server answers what is owed, ends, and serve_streams returns.
        writer.write_eof()
        assert await asyncio.wait_for(reader.read(), 10) == b""
        writer.close()
        # A second connection, 2026-07-28 (the envelope in each request's _meta).
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        writer.write(modern_body("tools/list", rid=3) + b"\n")
        assert "echo" in {t["name"] for t in (await _line(reader))["result"]["tools"]}
        writer.write_eof()
        assert await asyncio.wait_for(reader.read(), 10) == b""
        writer.close()
    finally:
        tcp.close()
        await tcp.wait_closed()
    assert done == [True, True]


@pytest.mark.parametrize("mode", MODES)
async def test_connect_in_memory_speaks_the_full_protocol(mode):
    server = make_server()
    async with Client.connect_in_memory(server, mode=mode) as c:
        assert c.era == ("legacy" if mode == "legacy" else "modern")
        assert c.server_info is not None and c.server_info["name"] == "embed-test"
        assert text(await c.call_tool("echo", {"text": "in memory"})) == "in memory"
    assert server._serving == []
