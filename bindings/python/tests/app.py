"""The server the tests drive: over stdio (``python app.py``) or in-process over HTTP."""

from __future__ import annotations

import asyncio
import os
import sys
import threading
from dataclasses import dataclass, field
from typing import Dict, List, Literal, Optional, TypedDict

from mcpcore import Context, McpError, Server, ToolError

server = Server("py-test", "1.2.3", instructions="Test server.")


@server.tool()
def echo(text: str) -> str:
    """Echo the text.

    More detail that is not part of the description.
    """
    return text


@server.tool(name="add", description="Add two numbers")
async def add(a: float, b: float, ctx: Context) -> dict:
    await ctx.progress(1, 1, "added")
    return {
        "sum": a + b,
        "era": "modern" if ctx.is_modern else "legacy",
        "version": ctx.protocol_version,
    }


@server.tool()
def where() -> dict:
    """Which thread a sync handler runs on."""
    return {"main": threading.current_thread() is threading.main_thread()}


@server.tool()
async def where_async() -> dict:
    """Which thread an async handler runs on."""
    return {"main": threading.current_thread() is threading.main_thread()}


@server.tool()
def typed(
    name: str,
    count: int,
    ratio: float,
    flag: bool,
    tags: List[str],
    scores: Dict[str, int],
    mode: Literal["fast", "slow"],
    note: Optional[str] = None,
    limit: int = 10,
) -> str:
    """Every supported annotation."""
    return f"{name}:{count}:{ratio}:{flag}:{tags}:{scores}:{mode}:{note}:{limit}"


@server.tool()
def fail_rpc(code: int) -> str:
    """Raise McpError."""
    raise McpError(code, "custom failure", {"why": "test"})


@server.tool()
async def fail_tool() -> str:
    """Raise ToolError."""
    raise ToolError("the tool says no")


@server.tool()
def boom() -> str:
    """Raise an unexpected exception."""
    raise RuntimeError("secret internal detail")


@server.tool()
async def ask(ctx: Context) -> str:
    """Elicit a name (a server→client request on legacy, input_required on modern)."""
    answer = await ctx.elicit(
        "Name?", {"type": "object", "properties": {"name": {"type": "string"}}}
    )
    return f"Hello, {answer.get('content', {}).get('name')}! ({answer.get('action')})"


@server.tool()
async def sample_and_roots(ctx: Context) -> dict:
    """Ask the client for a completion and its roots (the client's callbacks answer)."""
    caps = sorted(ctx.client_capabilities)
    msg = await ctx.request_client(
        "sampling/createMessage",
        {
            "messages": [{"role": "user", "content": {"type": "text", "text": "2+2?"}}],
            "maxTokens": 5,
        },
    )
    roots = await ctx.request_client("roots/list", {})
    return {"caps": caps, "text": msg["content"]["text"], "roots": roots["roots"]}


class Point(TypedDict):
    x: float
    y: float


class Label(TypedDict, total=False):
    text: str


@dataclass
class Box:
    corner: Point
    size: float
    tags: List[str] = field(default_factory=list)
    color: str = "red"


@dataclass
class Area:
    area: float
    color: str


@server.tool()
def box_area(box: Box, label: Optional[Label] = None) -> Area:
    """The area of a box (dataclass in, dataclass out)."""
    assert isinstance(box, Box)  # the JSON argument arrives as the dataclass
    return Area(area=box.size * box.size, color=box.color)


@server.tool()
def midpoint(a: Point, b: Point) -> Point:
    """A TypedDict in and out."""
    return {"x": (a["x"] + b["x"]) / 2, "y": (a["y"] + b["y"]) / 2}


@server.tool()
def liar() -> Area:
    """Returns something that does not match its output schema."""
    return {"area": "big"}  # type: ignore[return-value]


try:
    import pydantic
except ImportError:  # pragma: no cover - pydantic is optional
    pydantic = None

if pydantic is not None:

    class Item(pydantic.BaseModel):
        name: str
        price: float = 0.0

    class Order(pydantic.BaseModel):
        items: List[Item]
        note: Optional[str] = None

    class Total(pydantic.BaseModel):
        total: float
        count: int

    @server.tool()
    def order_total(order: Order) -> Total:
        """A pydantic model in and out."""
        assert isinstance(order, Order) and isinstance(order.items[0], Item)
        return Total(total=sum(i.price for i in order.items), count=len(order.items))


@server.tool()
def announce() -> dict:
    """Tell the clients every list changed (the counts are how many were told)."""
    return {
        "tools": server.notify_tools_changed(),
        "prompts": server.notify_prompts_changed(),
        "resources": server.notify_resources_changed(),
    }


STATE = {"cancelled": 0}


@server.tool()
async def ask_guarded(ctx: Context) -> str:
    """A broad `except Exception` does not swallow the 2026-07-28 input_required signal."""
    try:
        answer = await ctx.elicit("Name?", {"type": "object", "properties": {}})
    except Exception as e:  # noqa: BLE001 - on purpose
        return f"swallowed {type(e).__name__}"
    return f"got {answer.get('action')}"


@server.resource("demo://blob", mime_type="application/octet-stream")
def blob() -> bytes:
    """Binary content."""
    return b"\x00\x01\x02"


@server.tool()
async def slow(ms: int, ctx: Context) -> str:
    """Sleep; counts the runs that were cancelled (the asyncio task gets CancelledError)."""
    try:
        await asyncio.sleep(ms / 1000)
    except asyncio.CancelledError:
        STATE["cancelled"] += 1
        raise
    return "done"


@server.tool()
def cancelled_count() -> int:
    """How many `slow` runs were cancelled."""
    return STATE["cancelled"]


@server.tool()
async def report(ctx: Context) -> str:
    """Send two progress notifications and a log message."""
    await ctx.progress(1, 2, "half")
    await ctx.log("warning", {"note": "careful"}, logger="app")
    await ctx.progress(2, 2, "done")
    return "reported"


@server.tool()
def report_sync(ctx: Context) -> str:
    """The same from a plain def (a worker thread): no await needed."""
    ctx.progress(1, 2, "half")
    ctx.log("warning", {"note": "careful"}, logger="app")
    assert ctx.progress(2, 2, "done")
    return "reported"


@server.prompt()
def greet(name: str, style: Optional[str] = None) -> str:
    """A greeting prompt."""
    return f"Say hello to {name}" + (f" in a {style} way" if style else "")


@server.resource("demo://readme", mime_type="text/markdown")
def readme() -> str:
    """The readme."""
    return "# Readme"


@server.resource("demo://notes/{id}")
def note(id: str) -> str:
    """A note by id."""
    return f"Note {id}"


@server.completion()
def complete(ref: dict, argument: dict) -> list:
    """Complete prompt arguments from a fixed list."""
    names = ["alice", "bob", "alfred"]
    return [n for n in names if n.startswith(argument.get("value", ""))]


if __name__ == "__main__":
    # MCPCORE_TEST_ON_LOOP=1/0 forces serve_stdio's on_loop (unset: its default).
    forced = os.environ.get("MCPCORE_TEST_ON_LOOP")
    on_loop = None if forced is None else forced == "1"
    if len(sys.argv) > 1 and sys.argv[1] == "--async":
        asyncio.run(server.serve_stdio(on_loop=on_loop))
    else:
        server.run_stdio(on_loop=on_loop)
