"""The benchmark's `echo` tool served by the official Python SDK (`mcp`, MCPServer), the same
Python function as echo_mcpcore.py. Usage: echo_sdk.py http|stdio [sync|async]. Over HTTP:
stateless, JSON responses, one uvicorn worker on 127.0.0.1 (a free port, printed on stderr as
`listening on http://127.0.0.1:PORT/mcp`)."""

from __future__ import annotations

import socket
import sys

import anyio
import uvicorn
from mcp.server.mcpserver import MCPServer

mcp = MCPServer("bench-echo")

if len(sys.argv) > 2 and sys.argv[2] == "async":

    @mcp.tool()
    async def echo(text: str) -> str:
        """Echo the given text back."""
        return text

else:

    @mcp.tool()
    def echo(text: str) -> str:
        """Echo the given text back."""
        return text


async def serve_http() -> None:
    app = mcp.streamable_http_app(stateless_http=True, json_response=True)
    # IPPROTO_TCP named: asyncio sets TCP_NODELAY only on sockets that say so, and without it
    # a response written in two parts waits for the client's delayed ACK (~40 ms).
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    config = uvicorn.Config(app, log_level="warning", access_log=False, workers=1)
    print(f"listening on http://127.0.0.1:{port}/mcp", file=sys.stderr, flush=True)
    await uvicorn.Server(config).serve(sockets=[sock])


if __name__ == "__main__":
    if sys.argv[1] == "http":
        anyio.run(serve_http)
    else:
        mcp.run("stdio")
