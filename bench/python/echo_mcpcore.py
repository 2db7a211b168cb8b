"""The benchmark's `echo` tool served by mcpcore (the release wheel), the same Python function
as echo_sdk.py. Usage: echo_mcpcore.py http|asgi|stdio [sync|async|loop] (`loop`: the plain
`def` registered with `on_loop=True`, run on the event loop's thread). Over HTTP it prints
`listening on http://127.0.0.1:PORT/mcp` on stderr and serves until killed; `asgi` mounts
`server.asgi_app()` at /mcp in a Starlette app under one uvicorn worker, as echo_sdk.py serves
the SDK's own app (the endpoint is then /mcp/, Starlette's Mount)."""

from __future__ import annotations

import asyncio
import sys

from mcpcore import Server

server = Server("bench-echo", "1.0.0")

if len(sys.argv) > 2 and sys.argv[2] == "async":

    @server.tool()
    async def echo(text: str) -> str:
        """Echo the given text back."""
        return text

else:

    @server.tool(on_loop=len(sys.argv) > 2 and sys.argv[2] == "loop")
    def echo(text: str) -> str:
        """Echo the given text back."""
        return text


async def serve_http() -> None:
    handle = await server.serve_http("127.0.0.1", 0)
    print(f"listening on {handle.url}", file=sys.stderr, flush=True)
    await asyncio.Event().wait()


async def serve_asgi() -> None:
    import socket

    import uvicorn
    from starlette.applications import Starlette
    from starlette.routing import Mount

    app = Starlette(routes=[Mount("/mcp", server.asgi_app())])
    # IPPROTO_TCP named: asyncio sets TCP_NODELAY only on sockets that say so, and without it
    # a response written in two parts waits for the client's delayed ACK (~40 ms).
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    config = uvicorn.Config(app, log_level="warning", access_log=False, workers=1)
    print(f"listening on http://127.0.0.1:{port}/mcp/", file=sys.stderr, flush=True)
    await uvicorn.Server(config).serve(sockets=[sock])


if __name__ == "__main__":
    if sys.argv[1] == "http":
        asyncio.run(serve_http())
    elif sys.argv[1] == "asgi":
        asyncio.run(serve_asgi())
    else:
        server.run_stdio()
