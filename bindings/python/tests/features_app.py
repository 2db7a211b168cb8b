"""The server the feature tests drive (context helpers, explicit input_required, completion,
subscriptions, cancellation): over stdio (``python features_app.py``) or in-process over HTTP."""

from __future__ import annotations

import asyncio
import sys
from typing import Any, Dict, List

from mcpcore import Context, Server, ToolResult

# A page size of 2 so that the tool list spans several pages.
features = Server("py-features", "0.1.0", options={"pageSize": 2})

#: What the ``slow`` tool saw: "idle", "running", "cancelled" or "finished".
slow_state: Dict[str, str] = {"state": "idle"}


@features.tool()
def whoami(ctx: Context) -> dict:
    """The client's identity and the request's era."""
    return {"clientInfo": ctx.client_info, "modern": ctx.is_modern}


@features.tool()
def needs_sampling(ctx: Context) -> str:
    """Requires the sampling capability."""
    ctx.require_client_capability("sampling")
    return "Success"


@features.tool()
async def summarize(text: str, ctx: Context) -> dict:
    """Samples the client's model and lists its roots."""
    sampled = await ctx.sample(f"Summarize: {text}", 40, temperature=0.1)
    roots = await ctx.list_roots()
    return {"summary": sampled["content"]["text"], "roots": [r["uri"] for r in roots]}


@features.tool()
def greet(ctx: Context) -> Any:
    """Explicit input_required with a key and a request state of its own."""
    answer = (ctx.input_responses or {}).get("user_name")
    if answer and answer.get("action") == "accept" and ctx.request_state == "asked":
        return f"Hello, {answer['content']['name']}! (state {ctx.request_state})"
    schema = {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}
    return ctx.input_required(
        {
            "user_name": {
                "method": "elicitation/create",
                "params": {"mode": "form", "message": "Your name?", "requestedSchema": schema},
            }
        },
        request_state="asked",
    )


@features.tool()
def bad_input_required(ctx: Context) -> Any:
    """An input_required whose requests are not a dict (a TypeError before anything is sent)."""
    return ctx.input_required(["not", "a", "dict"])  # type: ignore[arg-type]


@features.tool()
async def slow(ctx: Context) -> str:
    """Runs until cancelled (records what happened)."""
    slow_state["state"] = "running"
    # With a progress token this opens the response stream (an SSE stream on HTTP).
    await ctx.progress(0.5, 1, "started")
    try:
        await asyncio.sleep(30)
    except asyncio.CancelledError:
        slow_state["state"] = "cancelled"
        raise
    slow_state["state"] = "finished"
    return "done"


@features.tool()
def slow_status() -> str:
    """What ``slow`` saw."""
    return slow_state["state"]


@features.tool()
async def sse_close(ctx: Context) -> dict:
    """Closes its SSE stream mid-call (legacy HTTP); the result still arrives."""
    await asyncio.sleep(0.05)
    closed = ctx.close_sse_stream()
    await asyncio.sleep(0.1)
    return {"closed": closed}


@features.tool()
async def shout(ctx: Context) -> str:
    """Logs one info message."""
    await ctx.log("info", "shouted", logger="features")
    return "ok"


@features.tool()
def touch(uri: str) -> int:
    """Announce that ``uri`` changed; returns how many subscribers were told."""
    return features.notify_resource_updated(uri)


@features.tool()
def change_tools() -> int:
    """Announce a tool list change."""
    return features.notify_tools_changed()


@features.tool()
def picture() -> ToolResult:
    """A whole CallToolResult: an image block and structured content."""
    image = {"type": "image", "data": "AAAA", "mimeType": "image/png"}
    return ToolResult([image], structured_content={"w": 1}, is_error=False)


@features.prompt(
    name="described",
    arguments=[{"name": "topic", "description": "What to write about", "required": True}],
)
def described(**args: str) -> str:
    return f"Write about {args.get('topic')}"


@features.resource("watch://a", mime_type="text/plain")
def watched() -> str:
    """A resource to subscribe to."""
    return "watched"


@features.prompt()
def city(name: str, country: str = "fr") -> str:
    """A prompt whose arguments complete."""
    return f"{name} in {country}"


@features.completion()
def complete(ref: Dict[str, Any], argument: Dict[str, str], context: Any = None) -> List[str]:
    known = (context or {}).get("arguments", {})
    if argument["value"] == "many":  # over CompleteResult's 100: core cuts, with total/hasMore
        return [f"many{i}" for i in range(150)]
    pool = ["parma", "padua"] if known.get("country") == "it" else ["paris", "park", "party"]
    return [v for v in pool if v.startswith(argument["value"])]


if __name__ == "__main__":
    if len(sys.argv) > 1:
        raise SystemExit("usage: features_app.py  (serves stdio)")
    features.run_stdio()
