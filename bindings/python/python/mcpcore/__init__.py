"""mcpcore: a Model Context Protocol server and client for Python, on the mcpcore Rust engine.

Both protocol eras (the ``initialize`` handshake era and the stateless 2026-07-28 era), over
stdio and Streamable HTTP; all protocol behaviour lives in the Rust core.
"""

from .client import Client
from .errors import (
    InputRequired,
    McpcoreError,
    McpCancelledError,
    McpError,
    McpTimeoutError,
    ToolError,
)
from .server import Context, HttpHandle, Server

__all__ = [
    "Server",
    "Context",
    "HttpHandle",
    "Client",
    "McpError",
    "McpcoreError",
    "McpTimeoutError",
    "McpCancelledError",
    "ToolError",
    "InputRequired",
]
