"""The client API: ``Client.connect_stdio`` / ``Client.connect_http`` and awaitable calls."""

from __future__ import annotations

import asyncio
import functools
import inspect
import logging
from typing import Any, Awaitable, Callable, Dict, List, Optional, Sequence, Set, Union

from . import _native
from .errors import McpError

logger = logging.getLogger("mcpcore")

#: A client callback: takes the request's params, returns its result (sync or async).
Callback = Callable[[Dict[str, Any]], Union[Dict[str, Any], Awaitable[Dict[str, Any]]]]

__all__ = ["Client"]


def _invoker(method: str, fn: Callback) -> _native._ClientInvoke:
    is_async = inspect.iscoroutinefunction(fn)

    async def invoke(params: Any, responder: _native.Responder) -> None:
        try:
            if is_async:
                result = await fn(params)  # type: ignore[misc]
            else:
                result = await asyncio.to_thread(functools.partial(fn, params))
            responder.ok(result)
        except McpError as e:
            responder.error(e.code, e.message, e.data)
        except Exception:
            logger.exception("mcpcore: client callback for %s failed", method)
            responder.error(-32603, "Internal error")

    return invoke


#: ``on_notification(method, params)``; ``progress(progress, total, message)``.
Listener = Callable[..., Any]

_tasks: Set["asyncio.Task[Any]"] = set()


def _deliverer(fn: Listener) -> Callable[..., None]:
    """``fn`` as a loop callback: exceptions are logged, coroutines become tasks."""

    def deliver(*args: Any) -> None:
        try:
            r = fn(*args)
            if inspect.isawaitable(r):
                task = asyncio.ensure_future(r)
                _tasks.add(task)
                task.add_done_callback(_tasks.discard)
        except Exception:
            logger.exception("mcpcore: callback %r failed", fn)

    return deliver


def _handlers(
    on_elicitation: Optional[Callback],
    on_sampling: Optional[Callback],
    on_roots: Optional[Callback],
) -> Dict[str, _native._ClientInvoke]:
    pairs = {
        "elicitation/create": on_elicitation,
        "sampling/createMessage": on_sampling,
        "roots/list": on_roots,
    }
    return {m: _invoker(m, f) for m, f in pairs.items() if f is not None}


class Client:
    """A connection to an MCP server of either era.

    ``mode`` is ``"auto"`` (probe ``server/discover``, fall back to ``initialize``),
    ``"legacy"`` or ``"modern"``; ``options`` is core's ``ClientOptions`` JSON shape
    (e.g. ``{"requestTimeoutMs": 5000}``). ``on_elicitation``, ``on_sampling`` and ``on_roots``
    take the request's params and return its result (``def`` or ``async def``; raise
    ``McpError`` to refuse): they answer legacy server requests and fulfil 2026-07-28
    ``input_required`` rounds, on the event loop that connected. ``on_notification(method,
    params)`` gets the server's notifications (log messages, list changes) on that loop.
    """

    def __init__(self, native: _native.NativeClient) -> None:
        self._native = native

    @classmethod
    async def connect_stdio(
        cls,
        argv: Sequence[str],
        *,
        mode: str = "auto",
        options: Optional[Dict[str, Any]] = None,
        on_elicitation: Optional[Callback] = None,
        on_sampling: Optional[Callback] = None,
        on_roots: Optional[Callback] = None,
        on_notification: Optional[Listener] = None,
    ) -> "Client":
        """Spawn ``argv`` and connect over its stdin/stdout."""
        handlers = _handlers(on_elicitation, on_sampling, on_roots)
        notify = _deliverer(on_notification) if on_notification else None
        loop = asyncio.get_running_loop()
        return cls(
            await _native.NativeClient.connect_stdio(
                list(argv), mode, options, handlers, notify, loop
            )
        )

    @classmethod
    async def connect_http(
        cls,
        url: str,
        *,
        mode: str = "auto",
        options: Optional[Dict[str, Any]] = None,
        on_elicitation: Optional[Callback] = None,
        on_sampling: Optional[Callback] = None,
        on_roots: Optional[Callback] = None,
        on_notification: Optional[Listener] = None,
    ) -> "Client":
        """Connect to a Streamable HTTP endpoint (``http://host:port/mcp``)."""
        handlers = _handlers(on_elicitation, on_sampling, on_roots)
        notify = _deliverer(on_notification) if on_notification else None
        loop = asyncio.get_running_loop()
        return cls(
            await _native.NativeClient.connect_http(url, mode, options, handlers, notify, loop)
        )

    async def __aenter__(self) -> "Client":
        return self

    async def __aexit__(self, *exc: Any) -> None:
        await self.close()

    @property
    def era(self) -> Optional[str]:
        """``"legacy"`` or ``"modern"``."""
        return self._native.era

    @property
    def protocol_version(self) -> Optional[str]:
        """The negotiated protocol version."""
        return self._native.protocol_version

    @property
    def instructions(self) -> Optional[str]:
        """The server's instructions, if any."""
        return self._native.instructions

    @property
    def server_info(self) -> Optional[Dict[str, Any]]:
        """The server's ``serverInfo`` (name, version, …)."""
        return self._native.server_info

    async def request(
        self,
        method: str,
        params: Optional[Dict[str, Any]] = None,
        *,
        timeout: Optional[float] = None,
        progress: Optional[Listener] = None,
        log_level: Optional[str] = None,
    ) -> Dict[str, Any]:
        """Any request; returns the raw result. Errors: ``McpError`` / ``McpcoreError``.

        ``timeout`` in seconds; ``progress(progress, total, message)`` gets this request's
        progress notifications; ``log_level`` (``"debug"`` … ``"emergency"``) asks for log
        messages at that level or above while it runs (2026-07-28: per request).
        """
        cb = _deliverer(progress) if progress else None
        return await self._native.request(method, params, timeout, cb, log_level)

    async def list_tools(self, *, timeout: Optional[float] = None) -> List[Dict[str, Any]]:
        """Every tool (cursors followed)."""
        return (await self._native.list_all("tools", timeout))["tools"]

    async def list_prompts(self, *, timeout: Optional[float] = None) -> List[Dict[str, Any]]:
        """Every prompt (cursors followed)."""
        return (await self._native.list_all("prompts", timeout))["prompts"]

    async def list_resources(self, *, timeout: Optional[float] = None) -> List[Dict[str, Any]]:
        """Every resource (cursors followed)."""
        return (await self._native.list_all("resources", timeout))["resources"]

    async def list_resource_templates(
        self, *, timeout: Optional[float] = None
    ) -> List[Dict[str, Any]]:
        """Every resource template (cursors followed)."""
        return (await self._native.list_all("resource_templates", timeout))["resourceTemplates"]

    async def call_tool(
        self,
        name: str,
        arguments: Optional[Dict[str, Any]] = None,
        *,
        timeout: Optional[float] = None,
        progress: Optional[Listener] = None,
        log_level: Optional[str] = None,
    ) -> Dict[str, Any]:
        """Call a tool; returns the ``CallToolResult`` (``isError`` results are returned, not raised).

        ``timeout``, ``progress`` and ``log_level`` as for :meth:`request`.
        """
        params = {"name": name, "arguments": arguments or {}}
        return await self.request(
            "tools/call", params, timeout=timeout, progress=progress, log_level=log_level
        )

    async def get_prompt(
        self,
        name: str,
        arguments: Optional[Dict[str, str]] = None,
        *,
        timeout: Optional[float] = None,
    ) -> Dict[str, Any]:
        """Get a prompt; returns the ``GetPromptResult``."""
        params: Dict[str, Any] = {"name": name}
        if arguments:
            params["arguments"] = arguments
        return await self._native.request("prompts/get", params, timeout)

    async def read_resource(self, uri: str, *, timeout: Optional[float] = None) -> Dict[str, Any]:
        """Read a resource; returns the ``ReadResourceResult``."""
        return await self._native.request("resources/read", {"uri": uri}, timeout)

    async def close(self) -> None:
        """Close the connection (stdio: close stdin, wait, then terminate the child)."""
        await self._native.close()
