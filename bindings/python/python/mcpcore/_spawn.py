"""Start a handler's coroutine on the serving loop from one of core's threads.

``asyncio.run_coroutine_threadsafe`` did this before, but it chains a
``concurrent.futures.Future`` to the task through callbacks on both sides: most of an
``async def`` tool call's Python time over stdio. Core only needs the start and a way to cancel.
"""

from __future__ import annotations

import asyncio
import collections
import sys
from typing import Any, Coroutine, Optional


# 3.12+: a task that starts running in the call that creates it; a handler that finishes
# without waiting is then answered within the same turn of the loop.
_EAGER = sys.version_info >= (3, 12)


class Spawn:
    """``Spawn(coro, loop)`` schedules ``coro`` as a task on ``loop`` (thread-safe);
    ``cancel()``, from any thread, cancels that task (or the start, when it has not run yet).
    ``Spawn(coro, loop, True)``, on the loop's own thread, starts it right away (eagerly where
    asyncio can)."""

    __slots__ = ("_loop", "_coro", "_task", "_cancelled")

    def __init__(
        self, coro: Coroutine[Any, Any, Any], loop: asyncio.AbstractEventLoop, now: bool = False
    ) -> None:
        self._loop = loop
        self._coro: Optional[Coroutine[Any, Any, Any]] = coro
        self._task: Optional["asyncio.Task[Any]"] = None
        self._cancelled = False
        if not now:
            try:
                loop.call_soon_threadsafe(self._start)
            except RuntimeError:  # the loop is closed: the coroutine will never run
                self._coro = None
                coro.close()
                raise
        elif _EAGER:
            self._coro = None
            self._task = asyncio.Task(coro, loop=loop, eager_start=True)  # type: ignore[call-arg,unused-ignore]
        else:
            self._start()
            self._first_step_now()

    def _start(self) -> None:
        coro, self._coro = self._coro, None
        if coro is None:
            return
        if self._cancelled:
            coro.close()
            return
        self._task = self._loop.create_task(coro)

    def _first_step_now(self) -> None:
        """Before 3.12 a new task's first step is a callback for the loop's next turn. Run it
        here instead, as 3.12's ``eager_start`` does, when it is plainly the callback just
        scheduled (the last one ready on a standard asyncio loop) and no task is running
        (``_enter_task`` would refuse): a handler that finishes without waiting is then
        answered within this turn. Anything else (uvloop, a running task) keeps the schedule."""
        task = self._task
        ready = getattr(self._loop, "_ready", None)
        if task is None or not isinstance(ready, collections.deque) or not ready:
            return
        if asyncio.current_task(self._loop) is not None:
            return
        handle = ready[-1]
        if getattr(getattr(handle, "_callback", None), "__self__", None) is not task:
            return
        ready.pop()
        handle._run()

    def cancel(self) -> bool:
        try:
            self._loop.call_soon_threadsafe(self._cancel)
        except RuntimeError:  # the loop is closed: nothing runs on it any more
            return False
        return True

    def _cancel(self) -> None:
        self._cancelled = True
        if self._task is not None:
            self._task.cancel()
