"""What handlers return: result value types (``ToolResult``, ``Media``/``Image``/``Audio``,
``InputRequiredResult``, ``Sent``) and how a return value becomes an MCP result."""

from __future__ import annotations

from typing import Any, Dict, Generator, List, Optional

from . import _native
from ._schema import to_json

__all__ = ["Sent", "ToolResult", "Media", "Image", "Audio", "InputRequiredResult"]


class Sent:
    """What ``Context.progress``/``Context.log`` return: the notification is already queued.

    ``await`` it in ``async def`` handlers, or ignore it (or test it: it is truthy when something
    was sent) in plain ``def`` handlers, which run in a worker thread and cannot await.
    """

    __slots__ = ("sent",)

    def __init__(self, sent: bool) -> None:
        self.sent = sent

    def __await__(self) -> Generator[Any, None, bool]:
        return self.sent
        yield  # pragma: no cover - makes this a generator

    def __bool__(self) -> bool:
        return self.sent

    def __repr__(self) -> str:
        return f"Sent({self.sent!r})"


class ToolResult:
    """A whole ``CallToolResult``, for tools whose content is not one text block: return
    ``ToolResult([{"type": "image", "data": ..., "mimeType": "image/png"}])``."""

    __slots__ = ("content", "structured_content", "is_error")

    def __init__(
        self,
        content: List[Dict[str, Any]],
        *,
        structured_content: Optional[Dict[str, Any]] = None,
        is_error: bool = False,
    ) -> None:
        if not isinstance(content, list):
            raise TypeError("content must be a list of content blocks")
        self.content = content
        self.structured_content = structured_content
        self.is_error = is_error

    def to_json(self) -> Dict[str, Any]:
        """The ``CallToolResult`` JSON this value stands for."""
        out: Dict[str, Any] = {"content": self.content}
        if self.structured_content is not None:
            out["structuredContent"] = self.structured_content
        if self.is_error:
            out["isError"] = True
        return out

    def __repr__(self) -> str:
        return f"ToolResult({self.content!r}, is_error={self.is_error!r})"


class Media:
    """Binary content with its MIME type; return it (or a list holding it) from a tool:
    ``image/*`` becomes an image block, ``audio/*`` an audio block (base64 ``data``)."""

    __slots__ = ("data", "mime_type")

    def __init__(self, data: bytes, mime_type: str) -> None:
        if not isinstance(data, (bytes, bytearray, memoryview)):
            raise TypeError(f"data must be bytes, not {type(data).__name__}")
        if not isinstance(mime_type, str):
            raise ValueError(
                f"mime_type must be a MIME type such as 'image/png', not {mime_type!r}"
            )
        _native.media_block(b"", mime_type)  # core's rule: image/* or audio/*, told now
        self.data = bytes(data)
        self.mime_type = mime_type

    def to_block(self) -> Dict[str, Any]:
        """The content block (core's ``media_block``: the type by the MIME type's prefix)."""
        return _native.media_block(self.data, self.mime_type)

    def __repr__(self) -> str:
        return f"Media(<{len(self.data)} bytes>, {self.mime_type!r})"


def Image(data: bytes, mime_type: str = "image/png") -> Media:  # noqa: N802 - a value type
    """An image block from bytes (``return Image(png_bytes)``)."""
    return Media(data, mime_type)


def Audio(data: bytes, mime_type: str = "audio/wav") -> Media:  # noqa: N802 - a value type
    """An audio block from bytes (``return Audio(wav_bytes)``)."""
    return Media(data, mime_type)


class InputRequiredResult:
    """An explicit ``input_required`` answer (return it from a handler: see
    :meth:`Context.input_required`)."""

    __slots__ = ("input_requests", "request_state")

    def __init__(
        self, input_requests: Dict[str, Dict[str, Any]], request_state: Optional[str] = None
    ) -> None:
        if not isinstance(input_requests, dict):
            raise TypeError(
                "input_requests must be a dict of {key: {'method': ..., 'params': ...}}"
            )
        if request_state is not None and not isinstance(request_state, str):
            raise TypeError("request_state must be a str")
        # Core's rule (InputRequired::validate, MRTR-02), so the handler hears at once.
        _native.check_input_required(input_requests, request_state)
        self.input_requests = input_requests
        self.request_state = request_state

    def __repr__(self) -> str:
        return f"InputRequiredResult({self.input_requests!r}, {self.request_state!r})"


def reply_tool(responder: _native.Responder, value: Any, mime_type: Optional[str]) -> None:
    """Hand a tool's return value to core, which shapes the CallToolResult
    (``mcpcore::server::tool_result``); only Python types are adapted here."""
    if isinstance(value, ToolResult):
        responder.ok(value.to_json())
    elif isinstance(value, Media):
        responder.bytes(value.data, value.mime_type)
    elif isinstance(value, (bytes, bytearray, memoryview)):
        if mime_type is None:
            raise TypeError(
                "a tool returning bytes needs a MIME type: @server.tool(mime_type=...), "
                "or return Image(...)/Audio(...)"
            )
        responder.bytes(bytes(value), mime_type)
    elif isinstance(value, list) and any(isinstance(b, Media) for b in value):
        responder.value([b.to_block() if isinstance(b, Media) else to_json(b) for b in value])
    else:
        responder.value(to_json(value))
