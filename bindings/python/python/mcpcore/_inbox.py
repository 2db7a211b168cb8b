"""How ``async def`` calls reach the serving event loop without a worker thread in between
(core's side: ``bindings/python/src/inbox.rs``)."""

from __future__ import annotations

import asyncio
import socket
from typing import Any, Optional

from . import _native


class Inbox:
    """While a serve call on ``loop`` runs, ``async def`` calls reach the loop through core's
    inbox instead of through a worker thread: core writes a byte to a socket this side owns
    and the loop watches, and the loop's thread then starts the queued calls. Where the loop
    cannot watch a socket, calls take the thread path. The loop's reader refers to the inbox
    only, not to the server, so a serving server stays collectable. ``close()`` on the loop's
    thread, or from another (then scheduled on the loop)."""

    def __init__(self, native: _native.NativeServer, loop: asyncio.AbstractEventLoop) -> None:
        self._loop = loop
        self._sock: Optional[socket.socket] = None
        opened = native.open_inbox()
        if opened is None:
            return
        fd, self._drain = opened
        sock = socket.socket(fileno=fd)
        try:
            loop.add_reader(sock, self._ready)
        except (NotImplementedError, RuntimeError, ValueError, OSError):
            sock.close()
            self._drain.close()
            return
        self._sock = sock

    def __enter__(self) -> "Inbox":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def _ready(self) -> None:
        # Core reads the wake-up bytes and starts the queued calls; False: its end closed.
        if self._sock is not None and not self._drain.drain():
            self._close_here()

    def close(self) -> None:
        if self._sock is None:
            return
        try:
            running: Optional[asyncio.AbstractEventLoop] = asyncio.get_running_loop()
        except RuntimeError:
            running = None
        if running is self._loop:
            self._close_here()
            return
        try:
            self._loop.call_soon_threadsafe(self._close_here)
        except RuntimeError:  # the loop is closed: nothing watches the socket any more
            sock, self._sock = self._sock, None
            sock.close()
            self._drain.close()

    def _close_here(self) -> None:
        sock, self._sock = self._sock, None
        if sock is None:
            return
        self._loop.remove_reader(sock)
        sock.close()
        self._drain.close()
