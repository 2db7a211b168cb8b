"""``Opening``: what ``Client.connect_*`` and ``Server.serve_http`` return.

Both spellings users of ``aiohttp``/``httpx`` expect work: ``x = await Client.connect_stdio(...)``
(then ``await x.close()``) and ``async with Client.connect_stdio(...) as x:`` (closed on exit,
also when the body raises); ``async with await ...`` keeps working because the opened object is
an async context manager itself.
"""

from __future__ import annotations

from types import TracebackType
from typing import Any, Callable, Coroutine, Generator, Generic, Optional, Protocol, Type, TypeVar


class _Closable(Protocol):
    async def close(self) -> None: ...


_T = TypeVar("_T", bound=_Closable)

__all__ = ["Opening"]


class Opening(Coroutine[Any, Any, _T], Generic[_T]):
    """An open in progress: awaitable (the opened object) and an async context manager (the
    opened object, closed on exit).

    Nothing starts before it is awaited or entered (the event loop is the one running then),
    and it opens once: awaiting or entering it again raises ``RuntimeError``. It is a
    ``Coroutine`` too (as ``aiohttp``'s request context managers are), so ``asyncio.run``,
    ``asyncio.ensure_future`` and ``asyncio.create_task`` take it as they took the coroutine
    that ``connect_*`` used to be.
    """

    __slots__ = ("_start", "_coro", "_opened")

    def __init__(self, start: Callable[[], Coroutine[Any, Any, _T]]) -> None:
        self._start = start
        self._coro: Optional[Coroutine[Any, Any, _T]] = None
        self._opened: Optional[_T] = None

    def _running(self) -> Coroutine[Any, Any, _T]:
        if self._coro is None:
            self._coro = self._start()
        return self._coro

    def _fresh(self) -> Coroutine[Any, Any, _T]:
        if self._coro is not None:
            raise RuntimeError("this connect was already awaited; call it again to reconnect")
        return self._running()

    # ---- the Coroutine protocol (a task steps it with send/throw) ----

    def send(self, value: Any) -> Any:
        """Step the opening coroutine (the Coroutine protocol; event loops call it)."""
        return self._running().send(value)

    def throw(
        self, typ: Any, val: Any = None, tb: Optional[TracebackType] = None
    ) -> Any:  # the single signature covers both of Coroutine.throw's overloads
        """Raise into the opening coroutine (the Coroutine protocol; event loops call it)."""
        coro = self._running()
        if val is None and tb is None:
            return coro.throw(typ)
        return coro.throw(typ, val, tb)  # pragma: no cover - the deprecated 3-argument form

    def close(self) -> None:
        """Close the pending open (``Coroutine.close``), not the opened object."""
        if self._coro is not None:
            self._coro.close()

    def __await__(self) -> Generator[Any, None, _T]:
        return self._fresh().__await__()

    # ---- the async context manager ----

    async def __aenter__(self) -> _T:
        self._opened = await self._fresh()
        return self._opened

    async def __aexit__(
        self,
        exc_type: Optional[Type[BaseException]],
        exc: Optional[BaseException],
        tb: Optional[TracebackType],
    ) -> None:
        opened, self._opened = self._opened, None
        if opened is not None:
            await opened.close()
