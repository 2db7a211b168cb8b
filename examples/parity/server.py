"""The feature list of the cross-door parity check (scripts/parity.py), written with the Python
binding. The same list is written in Rust (server.rs), C (server.c) and Node (server.mjs); the
four must answer the same requests identically in both eras. Serves stdio."""

from __future__ import annotations

from typing import Any, Dict, List

from mcpcore import Image, McpError, Server, ToolError

NAMES = ["alice", "albert", "bob"]
NO_ARGS: Dict[str, Any] = {"type": "object"}

server = Server("parity", "1.0.0")


@server.tool(
    description="Echo the text back.",
    input_schema={
        "type": "object",
        "properties": {"text": {"type": "string"}},
        "required": ["text"],
    },
)
def echo(text: str) -> str:
    return text


@server.tool(
    description="Add two numbers.",
    input_schema={
        "type": "object",
        "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}},
        "required": ["a", "b"],
    },
    output_schema={
        "type": "object",
        "properties": {"sum": {"type": "integer"}},
        "required": ["sum"],
    },
)
def add(a: int, b: int) -> Dict[str, int]:
    return {"sum": a + b}


@server.tool(description="Two text blocks.", input_schema=NO_ARGS)
def blocks() -> List[Dict[str, str]]:
    return [{"type": "text", "text": "one"}, {"type": "text", "text": "two"}]


@server.tool(description="A tiny PNG.", input_schema=NO_ARGS)
def pixel() -> Any:
    return Image(bytes([0x89, 0x50, 0x4E, 0x47]), "image/png")


@server.tool(description="Fails as a tool (isError).", input_schema=NO_ARGS)
def refuse() -> str:
    raise ToolError("no such item")


@server.tool(description="Fails with a JSON-RPC error.", input_schema=NO_ARGS)
def broken() -> str:
    raise McpError(-32000, "backend unavailable")


@server.prompt(
    description="Greet someone.",
    arguments=[{"name": "name", "description": "Who to greet", "required": True}],
)
def greet(name: str) -> str:
    return f"Hello, {name}!"


@server.resource(
    "parity://readme", "readme", "About this server.", mime_type="text/plain"
)
def readme() -> str:
    return "parity fixture"


@server.completion()
def complete(ref: Dict[str, Any], argument: Dict[str, str]) -> List[str]:
    return [n for n in NAMES if n.startswith(argument.get("value", ""))]


if __name__ == "__main__":
    server.run_stdio()
