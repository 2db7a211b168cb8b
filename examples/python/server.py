"""An example MCP server on the mcpcore Python binding: tools (one with progress, one that asks
the user), a prompt, resources and completion. Serves stdio by default, or Streamable HTTP on
127.0.0.1 with ``--http PORT`` (0 picks a free port; the URL is printed on stderr).

    python server.py              # stdio (for client.py, or any MCP client)
    python server.py --http 8000  # http://127.0.0.1:8000/mcp
"""

from __future__ import annotations

import argparse
import asyncio
import signal
import sys
from typing import Any, Dict, List

from mcpcore import Context, Server, ToolError

server = Server("example-server", "1.0.0", instructions="An example server: notes and sums.")

NOTES: Dict[str, str] = {"welcome": "Hello from mcpcore.", "todo": "Write more examples."}


@server.tool()
def add(a: float, b: float) -> dict:
    """Add two numbers (the result is structured content)."""
    return {"sum": a + b}


@server.tool()
async def count(to: int, ctx: Context) -> str:
    """Count to ``to``, reporting progress on the way."""
    if to < 1 or to > 100:
        raise ToolError("to must be between 1 and 100")
    for i in range(1, to + 1):
        await ctx.progress(i, to, f"counted {i}")
        await asyncio.sleep(0.01)
    return f"counted to {to}"


@server.tool()
async def add_note(title: str, ctx: Context) -> str:
    """Ask the user for the note's text (elicitation), then store it."""
    schema = {"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]}
    answer = await ctx.elicit(f"Text of the note {title!r}?", schema)
    if answer.get("action") != "accept":
        return f"note {title!r} not added ({answer.get('action')})"
    # After the last elicitation: on 2026-07-28 the handler runs again with the answer.
    NOTES[title] = str(answer["content"]["text"])
    return f"note {title!r} added"


@server.prompt()
def summarize(title: str) -> str:
    """Ask the model to summarize a note."""
    return f"Summarize this note: {NOTES.get(title, '(no such note)')}"


@server.resource("notes://list", mime_type="application/json")
def note_list() -> List[str]:
    """The note titles."""
    return sorted(NOTES)


@server.resource("notes://{title}", mime_type="text/plain")
def note(title: str) -> str:
    """One note."""
    return NOTES.get(title, "")


@server.completion()
def complete(ref: Dict[str, Any], argument: Dict[str, str]) -> List[str]:
    """Complete note titles for the ``summarize`` prompt and the ``notes://{title}`` template."""
    return [t for t in sorted(NOTES) if t.startswith(argument.get("value", ""))]


async def serve_http(port: int) -> None:
    handle = await server.serve_http("127.0.0.1", port)
    print(f"listening on {handle.url}", file=sys.stderr, flush=True)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    await stop.wait()
    await handle.close()


def main() -> None:
    parser = argparse.ArgumentParser(description="An example MCP server (stdio by default).")
    parser.add_argument("--http", type=int, metavar="PORT", help="serve HTTP on 127.0.0.1:PORT")
    args = parser.parse_args()
    if args.http is None:
        server.run_stdio()
    else:
        asyncio.run(serve_http(args.http))


if __name__ == "__main__":
    main()
