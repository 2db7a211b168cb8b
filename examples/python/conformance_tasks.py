"""The conformance fixture's task tools (the suite's ``tasks-*`` scenarios, SEP-2663) on the
Python binding, mirroring examples/conformance/tasks.rs tool by tool: ``greet`` (never a task),
``slow_compute``, ``failing_job`` (task required), ``protocol_error_job``, ``confirm_delete``
and ``multi_input`` (input while running as a task), ``test_tool_with_task`` (MRTR rounds on
the request through its gate, then a task)."""

from __future__ import annotations

import asyncio
from typing import Any, Dict, Optional

from mcpcore import Context, McpError, Server, ToolError


def _schema(props: Dict[str, Any]) -> Dict[str, Any]:
    return {"type": "object", "properties": props}


def _elicit(message: str, props: Dict[str, Any]) -> Dict[str, Any]:
    params = {"mode": "form", "message": message, "requestedSchema": _schema(props)}
    return {"method": "elicitation/create", "params": params}


def _answer(ctx: Context, key: str) -> Optional[Dict[str, Any]]:
    """The ``content`` of an accepted elicitation answered under ``key``."""
    r = (ctx.input_responses or {}).get(key)
    if not isinstance(r, dict) or r.get("action") != "accept":
        return None
    c = r.get("content")
    return c if isinstance(c, dict) else None


def _seconds(v: Any) -> float:
    return min(max(float(v), 0.0), 600.0) if isinstance(v, (int, float)) else 0.0


def _rust_float(v: float) -> str:
    """A float as Rust's ``{}`` prints it (``2`` for 2.0), as the Rust fixture's texts."""
    return str(int(v)) if v.is_integer() else repr(v)


def register(server: Server) -> None:
    """Register the task tools on ``server``."""

    @server.tool(
        name="greet",
        description="Greets by name (never a task).",
        input_schema=_schema({"name": {"type": "string"}}),
    )
    def greet(name: Any = None) -> str:
        return f"Hello, {name if isinstance(name, str) else 'World'}!"

    @server.tool(
        name="slow_compute",
        description="Sleeps `seconds`, then answers; runs as a task when asked.",
        input_schema=_schema({"seconds": {"type": "number"}, "label": {"type": "string"}}),
        task_support="optional",
    )
    async def slow_compute(seconds: Any = 0, label: Any = None) -> str:
        secs = _seconds(seconds)
        await asyncio.sleep(secs)  # a tasks/cancel cancels this coroutine
        return f"Computed {label if isinstance(label, str) else 'job'} in {_rust_float(secs)}s"

    @server.tool(
        name="failing_job",
        description="A task that ends in a tool error.",
        input_schema=_schema({}),
        task_support="required",
    )
    async def failing_job() -> str:
        await asyncio.sleep(1.0)
        raise ToolError("failing_job failed on purpose")

    @server.tool(
        name="protocol_error_job",
        description="A task that ends in a protocol error.",
        input_schema=_schema({}),
        task_support="optional",
    )
    def protocol_error_job() -> str:
        raise McpError(-32603, "protocol_error_job failed on purpose")

    _input_tools(server)


def _input_tools(server: Server) -> None:
    @server.tool(
        name="confirm_delete",
        description="Asks the client to confirm, then deletes (pretend).",
        input_schema=_schema({"filename": {"type": "string"}}),
        task_support="optional",
    )
    def confirm_delete(ctx: Context, filename: Any = None) -> Any:
        file = filename if isinstance(filename, str) else "file"
        c = _answer(ctx, "confirm")
        if c is None:
            ask = _elicit(f"Delete {file}?", {"confirm": {"type": "boolean"}})
            return ctx.input_required({"confirm": ask})
        return f"{'Deleted' if c.get('confirm') is True else 'Kept'} {file}"

    @server.tool(
        name="multi_input",
        description="Asks two questions at once.",
        input_schema=_schema({}),
        task_support="optional",
    )
    def multi_input(ctx: Context) -> Any:
        def name(key: str) -> Optional[str]:
            n = (_answer(ctx, key) or {}).get("name")
            return n if isinstance(n, str) else None

        a, b = name("first"), name("second")
        if a is None or b is None:
            props = {"name": {"type": "string"}}
            return ctx.input_required(
                {"first": _elicit("First name?", props), "second": _elicit("Second name?", props)}
            )
        return f"Got {a} and {b}"

    def ask_name(ctx: Context) -> Any:
        if _answer(ctx, "user_name") is not None:
            return {}
        ask = _elicit("What is your name?", {"name": {"type": "string"}})
        return ctx.input_required({"user_name": ask})

    @server.tool(
        name="test_tool_with_task",
        description="Asks for a name (MRTR), then greets as a task.",
        input_schema=_schema({}),
        task_support="required",
        gate=ask_name,
    )
    async def test_tool_with_task(ctx: Context) -> str:
        await asyncio.sleep(0.2)
        n = (_answer(ctx, "user_name") or {}).get("name")
        return f"Hello, {n if isinstance(n, str) else 'stranger'}!"
