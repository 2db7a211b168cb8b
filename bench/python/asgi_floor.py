"""The embedding benchmark's floor: a fixed JSON answer from a bare ASGI function (no MCP at all)
mounted at /mcp in Starlette under one uvicorn worker, as echo_mcpcore.py's `asgi` mode and
echo_sdk.py serve theirs: what uvicorn and Starlette alone cost per request. Prints `listening on http://127.0.0.1:PORT/mcp/` on stderr."""

from __future__ import annotations

import asyncio
import socket
import sys
from typing import Any

import uvicorn
from starlette.applications import Starlette
from starlette.routing import Mount

BODY = (
    b'{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"'
    + b"x" * 100
    + b'"}]}}'
)


async def answer(scope: Any, receive: Any, send: Any) -> None:
    while (await receive()).get("more_body"):
        pass
    headers = [
        (b"content-type", b"application/json"),
        (b"content-length", b"%d" % len(BODY)),
    ]
    await send({"type": "http.response.start", "status": 200, "headers": headers})
    await send({"type": "http.response.body", "body": BODY})


async def main() -> None:
    app = Starlette(routes=[Mount("/mcp", answer)])
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    config = uvicorn.Config(app, log_level="warning", access_log=False, workers=1)
    print(f"listening on http://127.0.0.1:{port}/mcp/", file=sys.stderr, flush=True)
    await uvicorn.Server(config).serve(sockets=[sock])


if __name__ == "__main__":
    asyncio.run(main())
