"""The ASGI 3 adapter of ``Server.asgi_app()`` and the stream pump of ``Server.serve_streams``.

Marshalling only: the scope's method, path and query string and headers, the body chunks as
they arrive, then the answer's head and chunks go to and from core's ``HttpService::exchange``
seam, which holds every HTTP rule (eras, sessions, ``Origin``/``Host``, body cap, ``Accept``).
Dropping the exchange (``close()``) is the client disconnecting: core cancels a 2026-07-28
request (HTTP-08) and lets a legacy one run on (LHTTP-04).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from typing import TYPE_CHECKING, Any, Awaitable, Callable, Dict, MutableMapping, Optional, Tuple

from . import _native

if TYPE_CHECKING:  # pragma: no cover
    from .server import Server

__all__ = ["AsgiApp"]

logger = logging.getLogger("mcpcore")

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]


def _target(scope: Scope) -> str:
    """The request target as on the request line: the host's full path (Starlette's ``Mount``
    keeps it in ``path``/``raw_path`` and puts the prefix in ``root_path``), and the query."""
    raw = scope.get("raw_path")
    if raw:
        path = bytes(raw).decode("latin-1")
    else:
        path = str(scope.get("path") or "/")
        root = str(scope.get("root_path") or "")
        if root and not path.startswith(root):
            path = root + path
    query = scope.get("query_string") or b""
    return f"{path}?{bytes(query).decode('latin-1')}" if query else path


async def _lifespan(app: "AsgiApp", receive: Receive, send: Send) -> None:
    """Answer the host's lifespan events. The engine needs no startup (it starts on the first
    request); a shutdown shuts it down gracefully (:meth:`AsgiApp.aclose`)."""
    while True:
        message = await receive()
        kind = message.get("type")
        if kind == "lifespan.startup":
            await send({"type": "lifespan.startup.complete"})
        elif kind == "lifespan.shutdown":
            await app.aclose()
            await send({"type": "lifespan.shutdown.complete"})
            return


async def _feed(receive: Receive, x: _native.NativeExchange) -> None:
    """Push the request body into core as it arrives, then wait for the disconnect."""
    wanted = True
    ended = False
    while True:
        message = await receive()
        kind = message.get("type")
        if kind == "http.request":
            chunk = message.get("body") or b""
            if wanted and not ended and chunk:
                wanted = x.push(chunk)
            if not message.get("more_body", False) and not ended:
                ended = True
                x.end()
        elif kind == "http.disconnect":
            if not ended:
                x.abort()
            x.close()
            return


class AsgiApp:
    """An ASGI 3 application serving a :class:`~mcpcore.Server`'s MCP endpoint.

    Mount it anywhere (``app.mount("/mcp", server.asgi_app())`` in FastAPI or Starlette): it
    answers whatever path the host routes to it, needs no lifespan wiring (it answers lifespan
    events if the host sends them), and starts the engine on the first request, on the event
    loop serving it (a request from another loop, as a fresh test client's, starts it anew).
    A host's lifespan shutdown, or :meth:`aclose`, shuts it down gracefully.
    """

    def __init__(self, server: "Server", options: Optional[Dict[str, Any]] = None) -> None:
        self._server = server
        self._options = options
        self._built: Optional[
            Tuple[asyncio.AbstractEventLoop, _native.NativeServer, _native.NativeHttpService]
        ] = None

    def _service(self) -> _native.NativeHttpService:
        loop = asyncio.get_running_loop()
        built = self._built
        if built is not None and built[0] is loop:
            return built[2]
        native = self._server._build(loop)
        try:
            service = native.http_service(self._options)
        except BaseException:
            self._server._serving.remove(native)
            raise
        if built is not None:
            with contextlib.suppress(ValueError):
                self._server._serving.remove(built[1])
        self._built = (loop, native, service)
        return service

    async def aclose(self) -> None:
        """Shut the engine down gracefully: requests in flight get the ``shutdownDeadlineMs``
        option to finish, ``subscriptions/listen`` streams get their result, legacy sessions
        end. A host that runs lifespan events does this on its shutdown; a later request starts
        the engine anew."""
        built, self._built = self._built, None
        if built is None:
            return
        with contextlib.suppress(ValueError):
            self._server._serving.remove(built[1])
        await built[2].shutdown()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        kind = scope.get("type")
        if kind == "lifespan":
            await _lifespan(self, receive, send)
            return
        if kind != "http":
            raise RuntimeError(f"mcpcore's ASGI app serves HTTP, not {kind!r}")
        x = self._service().exchange(
            str(scope.get("method", "GET")), _target(scope), list(scope.get("headers") or [])
        )
        feeding = asyncio.ensure_future(_feed(receive, x))
        feeding.add_done_callback(_retrieve)
        try:
            await _answer(x, send)
        finally:
            x.close()
            # Not awaited: the watcher only waits for a disconnect nobody needs any more.
            feeding.cancel()


def _retrieve(task: "asyncio.Future[None]") -> None:
    """Retrieve the body watcher's outcome (a host whose receive() failed), so asyncio does not
    report it as never retrieved; the exchange has already been answered or dropped."""
    if not task.cancelled() and task.exception() is not None:
        logger.debug("mcpcore ASGI: receive() failed: %s", task.exception())


async def _answer(x: _native.NativeExchange, send: Send) -> None:
    """Stream the answer out: the head, then each chunk as core produces it."""
    try:
        status, headers, ready, more = await x.head()
    except ConnectionError:
        return  # the client left before the answer was decided
    if not more and not any(k == b"content-length" for k, _ in headers):
        # The whole body is here: framed by length, as hyper frames it, not chunked.
        headers.append((b"content-length", str(len(ready)).encode()))
    try:
        await send({"type": "http.response.start", "status": status, "headers": headers})
        # What core had ready with the head (a JSON answer: all of it).
        await send({"type": "http.response.body", "body": ready, "more_body": more})
        while more:
            chunk = await x.next_chunk()
            more = chunk is not None
            await send({"type": "http.response.body", "body": chunk or b"", "more_body": more})
    except (OSError, RuntimeError) as e:
        # The host cannot send any more (the client went away): drop the exchange.
        logger.debug("mcpcore ASGI: send failed, dropping the exchange: %s", e)


async def serve_streams(
    native: _native.NativeServer, reader: asyncio.StreamReader, writer: asyncio.StreamWriter
) -> None:
    """Copy ``reader`` into a pipe core serves (stdio framing) and its output to ``writer``,
    until the input ends and every answer is written."""
    pipe = native.serve_pipe()

    async def inbound() -> None:
        try:
            while True:
                data = await reader.read(65536)
                if not data or not await pipe.write(data):
                    break
        finally:
            await pipe.close_write()

    async def outbound() -> None:
        while True:
            data = await pipe.read()
            if not data:
                return
            writer.write(data)
            await writer.drain()

    pumping = asyncio.ensure_future(inbound())
    try:
        await outbound()
    except ConnectionError:
        pass  # the peer went away: the connection ends as on end of input
    finally:
        pumping.cancel()
        with contextlib.suppress(BaseException):
            await pumping
        # The peer stopped reading, or the input ended: either way core's side ends now.
        await pipe.close_write()
        await pipe.wait()
