"""mcpcore: a Model Context Protocol server and client for Python, on the mcpcore Rust engine.

Both protocol eras (the ``initialize`` handshake era and the stateless 2026-07-28 era), over
stdio and Streamable HTTP; all protocol behaviour lives in the Rust core.
"""

import atexit as _atexit

from . import _native, sync
from .client import AppResource, Client, Opening, ui_resource_uri
from .errors import (
    InputRequired,
    McpcoreError,
    McpCancelledError,
    McpConnectionError,
    McpError,
    McpTimeoutError,
    ToolError,
)
from .results import Audio, Image, InputRequiredResult, Media, Sent, ToolResult
from .registration import Registration
from .server import APP_MIME_TYPE, AsgiApp, Context, HttpHandle, Server
from .tasks import Task
from .telemetry import configure_telemetry, flush_telemetry, set_log_level

# Before the interpreter finalizes, stop the runtime's threads from entering it (a thread that
# enters a finalizing interpreter is killed by CPython, which crashes the process).
_atexit.register(_native.shutdown)

# Core's warnings and errors reach `logging` (logger "mcpcore") from the start; a process whose
# tracing is owned by something else keeps working without them.
try:
    set_log_level("warn")
except ValueError:  # pragma: no cover - another tracing subscriber owns the process
    pass

__all__ = [
    "Server",
    "APP_MIME_TYPE",
    "Context",
    "HttpHandle",
    "AsgiApp",
    "Registration",
    "Sent",
    "InputRequiredResult",
    "ToolResult",
    "Media",
    "Image",
    "Audio",
    "Client",
    "Opening",
    "Task",
    "AppResource",
    "ui_resource_uri",
    "McpError",
    "McpcoreError",
    "McpTimeoutError",
    "McpCancelledError",
    "McpConnectionError",
    "ToolError",
    "InputRequired",
    "sync",
    "configure_telemetry",
    "flush_telemetry",
    "set_log_level",
]
