"""What the embedding tests share: a small server, FastAPI apps mounting it, ASGI servers on
127.0.0.1 (uvicorn, hypercorn) in the test's event loop, raw HTTP requests."""

from __future__ import annotations

import asyncio
import contextlib
import json
import socket
from typing import Any, AsyncIterator, Dict, Optional, Tuple

import httpx2 as httpx
from fastapi import FastAPI

from mcpcore import Server


class Hang:
    """What the `hang` tool saw: set when a run starts, and when its asyncio task is cancelled."""

    def __init__(self) -> None:
        self.started = asyncio.Event()
        self.cancelled = asyncio.Event()


def make_server(options: Optional[Dict[str, Any]] = None, hang: Optional[Hang] = None) -> Server:
    server = Server("embed-test", "1.0", options=options)
    seen = hang if hang is not None else Hang()

    @server.tool()
    def echo(text: str) -> str:
        """Echo the text."""
        return text

    @server.tool()
    async def hang() -> str:
        """Wait until cancelled."""
        seen.started.set()
        try:
            await asyncio.Event().wait()
        except asyncio.CancelledError:
            seen.cancelled.set()
            raise
        return "never"

    return server


def fastapi_app(server: Server, options: Optional[Dict[str, Any]] = None) -> FastAPI:
    """A FastAPI app with a route of its own and the MCP endpoint mounted at /mcp."""
    app = FastAPI()

    @app.get("/health")
    def health() -> Dict[str, str]:
        return {"status": "ok"}

    app.mount("/mcp", server.asgi_app(options))
    return app


def _listening() -> socket.socket:
    """A listening socket on 127.0.0.1 (a free port): connections queue until the server runs."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    sock.listen(128)
    return sock


@contextlib.asynccontextmanager
async def uvicorn_serving(app: Any) -> AsyncIterator[str]:
    """Serve `app` with uvicorn in this loop; yields the base URL."""
    import uvicorn

    sock = _listening()
    port = sock.getsockname()[1]
    config = uvicorn.Config(app, log_level="warning", lifespan="on")
    srv = uvicorn.Server(config)
    task = asyncio.ensure_future(srv.serve(sockets=[sock]))
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        srv.should_exit = True
        await asyncio.wait_for(task, 30)
        sock.close()


@contextlib.asynccontextmanager
async def hypercorn_serving(app: Any) -> AsyncIterator[str]:
    """Serve `app` with hypercorn in this loop; yields the base URL."""
    from hypercorn.asyncio import serve
    from hypercorn.config import Config

    sock = _listening()
    port = sock.getsockname()[1]
    config = Config()
    # Hypercorn owns the descriptor from here (it closes it when it stops).
    config.bind = [f"fd://{sock.detach()}"]
    config.loglevel = "WARNING"
    stop = asyncio.Event()
    task = asyncio.ensure_future(serve(app, config, shutdown_trigger=stop.wait))  # type: ignore[arg-type]
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        stop.set()
        await asyncio.wait_for(task, 30)


def modern_headers(method: str) -> Dict[str, str]:
    return {
        "Content-Type": "application/json",
        "Accept": "application/json, text/event-stream",
        "MCP-Protocol-Version": "2026-07-28",
        "Mcp-Method": method,
    }


ENVELOPE = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": {},
    "io.modelcontextprotocol/clientInfo": {"name": "embed-test", "version": "1"},
}


def modern_body(method: str, params: Optional[Dict[str, Any]] = None, rid: int = 1) -> bytes:
    p = dict(params or {})
    p["_meta"] = ENVELOPE
    return json.dumps({"jsonrpc": "2.0", "id": rid, "method": method, "params": p}).encode()


async def post(url: str, headers: Dict[str, str], body: bytes) -> Tuple[int, str, str]:
    """POST and settle: status, Content-Type, body text."""
    async with httpx.AsyncClient() as http:
        r = await http.post(url, headers=headers, content=body)
        return r.status_code, r.headers.get("content-type", ""), r.text
