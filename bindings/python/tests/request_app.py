"""The server of test_request_and_spawn.py: spawned over stdio (with ``env``, ``cwd``, a
captured stderr) and served over HTTP in-process."""

from __future__ import annotations

import os
import sys
from typing import Any, Dict

from mcpcore import Context, Server

server = Server("request-app", "1.0.0")

NAME_SCHEMA = {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}


@server.tool()
def where() -> Dict[str, Any]:
    """The process's working directory and the environment the test set."""
    return {
        "cwd": os.getcwd(),
        "flavor": os.environ.get("MCPCORE_TEST_FLAVOR"),
        "inherited": os.environ.get("MCPCORE_TEST_INHERITED"),
    }


@server.tool()
async def whoami(ctx: Context) -> Dict[str, Any]:
    """What the request context says about the request."""
    headers = ctx.headers
    return {
        "id": ctx.request_id,
        "id_type": type(ctx.request_id).__name__,
        "meta": ctx.meta,
        "headers_none": headers is None,
        "tenant": None if headers is None else headers.get("x-tenant"),
    }


@server.tool()
async def ask_name(ctx: Context) -> str:
    """Elicit with the whole params dict."""
    answer = await ctx.elicit({"message": "Your name?", "requestedSchema": NAME_SCHEMA})
    return f"{answer['action']}: {answer.get('content', {}).get('name')}"


@server.tool()
def grow(name: str) -> str:
    """Add a tool from inside a handler (a worker thread) while serving."""
    server.add_tool(lambda: f"grown {name}", name=name, description="Added while serving")
    return "ok"


if __name__ == "__main__":
    print("request-app: stderr line", file=sys.stderr, flush=True)
    server.run_stdio()
