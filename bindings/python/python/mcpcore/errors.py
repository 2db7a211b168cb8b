"""Exceptions of mcpcore.

* :class:`McpError` — a JSON-RPC error. Raised by a handler, it is sent exactly as given; raised
  by a client call, it is the error the server answered.
* :class:`ToolError` — raised by a tool handler, it becomes an ``isError`` tool result (the model
  sees the message).
* :class:`McpcoreError` — any other failure of a client call, with ``kind`` naming it (``"timeout"``,
  ``"closed"``, ``"transport"``, ``"protocol"``, …: core's ``ErrorKind``).
"""

from __future__ import annotations

from typing import Any, Optional

__all__ = [
    "McpcoreError",
    "McpError",
    "McpTimeoutError",
    "McpCancelledError",
    "McpConnectionError",
    "ToolError",
    "InputRequired",
]


class McpcoreError(Exception):
    """A failure reported by mcpcore; ``kind`` is core's error kind (``"timeout"``, ``"closed"``, …)."""

    def __init__(self, kind: str, message: str) -> None:
        super().__init__(message)
        self.kind = kind
        self.message = message


class McpError(McpcoreError):
    """A JSON-RPC error: ``code``, ``message`` and optional ``data``."""

    def __init__(self, code: int, message: str, data: Optional[Any] = None) -> None:
        super().__init__("rpc", message)
        self.code = code
        self.data = data

    def __str__(self) -> str:
        return f"{self.message} (code {self.code})"

    def __repr__(self) -> str:
        return f"McpError({self.code!r}, {self.message!r}, {self.data!r})"


class McpTimeoutError(McpcoreError, TimeoutError):
    """A call got no answer within its timeout (the request was cancelled on the wire)."""


class McpCancelledError(McpcoreError):
    """A call was cancelled."""


class McpConnectionError(McpcoreError, ConnectionError):
    """The connection failed or is gone (``kind`` ``"transport"`` or ``"closed"``)."""


class ToolError(Exception):
    """Raised by a tool: the call answers an ``isError`` result whose text is the message."""


class InputRequired(BaseException):
    """2026-07-28 only: the client has not answered a ``Context.elicit``/``request_client`` yet.

    Do not catch it: the server answers ``input_required`` and runs the handler again with the
    answer. It derives from ``BaseException`` so that ``except Exception`` does not swallow it.
    """
