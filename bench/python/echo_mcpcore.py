"""The benchmark's `echo` tool served by mcpcore (the release wheel), the same Python function
as echo_sdk.py. Usage: echo_mcpcore.py http|stdio [sync|async]. Over HTTP it prints
`listening on http://127.0.0.1:PORT/mcp` on stderr and serves until killed."""

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

    @server.tool()
    def echo(text: str) -> str:
        """Echo the given text back."""
        return text


async def serve_http() -> None:
    handle = await server.serve_http("127.0.0.1", 0)
    print(f"listening on {handle.url}", file=sys.stderr, flush=True)
    await asyncio.Event().wait()


if __name__ == "__main__":
    if sys.argv[1] == "http":
        asyncio.run(serve_http())
    else:
        server.run_stdio()
