"""Stdio served from the event loop's own thread through core's pump (core's side:
``bindings/python/src/pump.rs``): this loop reads the input and hands it to core, which frames
and dispatches it; an ``async def`` handler starts right there, and one that finishes without
waiting is answered before the loop moves on, with no thread in between."""

from __future__ import annotations

import asyncio
import collections
import inspect
import os
import socket
import stat
import sys
from typing import Any, Callable, Optional, Tuple

from . import _native, registration

# 3.12+ starts a task in the call that creates it (``_spawn.Spawn`` does the same on asyncio's
# own loop before 3.12): a handler that finishes without waiting is then answered within the
# same ``feed``. Where the first step waits for the loop's next turn instead (uvloop before
# 3.12), the runtime's threads serve about as fast; plain ``def`` handlers are faster there.
EAGER = sys.version_info >= (3, 12)


def _starts_at_once(loop: asyncio.AbstractEventLoop) -> bool:
    return EAGER or isinstance(getattr(loop, "_ready", None), collections.deque)


# Requests handled by polling stdin (core's ``StdioPump::spin``) before the loop runs again.
SPIN_TURNS = 64


def wanted(on_loop: Optional[bool], host: Any) -> bool:
    """Whether to serve from the loop's thread: as asked, or by default where a task's first
    step runs at once and ``host`` has a handler that runs on the loop (an ``async def``, or a
    ``def`` registered ``on_loop=True``: both are called through a coroutine)."""
    if on_loop is not None:
        return on_loop
    return _starts_at_once(asyncio.get_running_loop()) and any(
        inspect.iscoroutinefunction(invoke) for _, _, invoke in registration.entries(host)
    )


def _is_pipe(fd: int) -> bool:
    """A pipe or a socket: what the loop can watch, and whose non-blocking mode belongs to this
    connection (a terminal's is shared with the shell that started us)."""
    try:
        mode = os.fstat(fd).st_mode
    except OSError:
        return False
    return stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode)


class _Connection:
    """One connection: input bytes go to ``pump.feed``, what comes back (and what core queues
    later, announced through the wake-up socket) goes to ``write``."""

    def __init__(
        self,
        pump: _native.NativePump,
        fd: int,
        loop: asyncio.AbstractEventLoop,
        write: Callable[[bytes], None],
        spin: bool,
        direct: Optional[Tuple[int, Callable[[], int]]] = None,
    ) -> None:
        self.pump = pump
        self._loop = loop
        self._write = write
        self._spin = spin
        # The output pipe's descriptor and its transport's buffered byte count: while the
        # transport holds nothing, core writes the answers to the pipe itself (``turn``).
        self._direct = direct
        self.paused = False
        self.stopping = False
        self.gone = False
        self.done: "asyncio.Future[None]" = loop.create_future()
        self._sock: Optional[socket.socket] = socket.socket(fileno=fd)
        loop.add_reader(self._sock, self._woken)

    def write(self, out: Optional[bytes]) -> None:
        if out and not self.gone:
            self._write(out)

    def _woken(self) -> None:
        self.write(self.pump.take())

    def on_data(self, data: bytes) -> None:
        if self.stopping:
            return
        direct = self._direct
        if direct is not None and not self.paused and not self.gone and direct[1]() == 0:
            # One native call answers this request and the ones polled after it, writing
            # each answer to the pipe as it is made; what the pipe did not take goes to the
            # transport (which then also reports a failed write).
            self.write(self.pump.turn(data, direct[0], SPIN_TURNS if self._spin else 0))
        else:
            self._feed_and_spin(data)
        if self.pump.failed is not None:
            self.stop(False)

    def _feed_and_spin(self, data: bytes) -> None:
        out = self.pump.feed(data)
        self.write(out)
        # Poll for the next request a little before going back to the loop: a client that
        # talks in turns sends it microseconds after reading the answer, and waking from the
        # loop's sleep costs more. At most SPIN_TURNS requests per turn of the loop, and only
        # after an answer went out: a request still running (a task not started yet) needs
        # the loop, which must not be held up.
        turns = SPIN_TURNS if self._spin else 0
        for _ in range(turns):
            if not out or self.paused or self.stopping or self.pump.failed is not None:
                break
            out = self.pump.spin()
            if out is None:
                break
            self.write(out)

    def on_end(self) -> None:
        if not self.stopping:
            self.write(self.pump.end())
        self.stop(False)

    def on_output_lost(self) -> None:
        self.gone = True
        self.stop(True)

    def stop(self, stdout_gone: bool) -> None:
        if self.stopping:
            return
        self.stopping = True
        asyncio.ensure_future(self._finish(stdout_gone or self.gone), loop=self._loop)

    async def _finish(self, stdout_gone: bool) -> None:
        try:
            await self.pump.drain(stdout_gone)
            self.write(self.pump.take())
        except BaseException as e:  # noqa: BLE001 - handed to the serve call
            if not self.done.done():
                self.done.set_exception(e)
            return
        finally:
            self._close_wake()
        if self.done.done():
            return
        failed = self.pump.failed
        if failed is not None:
            self.done.set_exception(OSError(failed))
        else:
            self.done.set_result(None)

    def _close_wake(self) -> None:
        sock, self._sock = self._sock, None
        if sock is not None:
            self._loop.remove_reader(sock)
            sock.close()


class _Input(asyncio.Protocol):
    def __init__(self, conn: _Connection) -> None:
        self._conn = conn

    def data_received(self, data: bytes) -> None:
        self._conn.on_data(data)

    def eof_received(self) -> Optional[bool]:
        self._conn.on_end()
        return None

    def connection_lost(self, exc: Optional[Exception]) -> None:
        self._conn.on_end()


class _Output(asyncio.Protocol):
    """Backpressure (STDIO-01): while the written bytes wait, the input is not read."""

    def __init__(self) -> None:
        self.conn: Optional[_Connection] = None
        self.input: Optional[asyncio.ReadTransport] = None
        self.closed: "asyncio.Future[None]" = asyncio.get_running_loop().create_future()
        self.closing = False

    def pause_writing(self) -> None:
        if self.conn is not None:
            self.conn.paused = True
        if self.input is not None:
            self.input.pause_reading()

    def resume_writing(self) -> None:
        if self.conn is not None:
            self.conn.paused = False
        if self.input is not None and not self.input.is_closing():
            self.input.resume_reading()

    def connection_lost(self, exc: Optional[Exception]) -> None:
        if not self.closed.done():
            self.closed.set_result(None)
        # Closed by anyone but us (the reader went away, a write failed): nothing more can
        # be delivered.
        if not self.closing and self.conn is not None:
            self.conn.on_output_lost()


async def serve_stdio(native: _native.NativeServer) -> bool:
    """Serve this process's stdin/stdout from the running loop; ``False`` (having done nothing)
    when they are not pipes or sockets, or there is no pump here: the caller then serves them
    on core's runtime."""
    if not (_is_pipe(0) and _is_pipe(1)):
        return False
    opened = native.open_pump()
    if opened is None:
        return False
    pump, fd = opened
    loop = asyncio.get_running_loop()
    output = _Output()
    try:
        out_t, _ = await loop.connect_write_pipe(
            lambda: output, open(1, "wb", buffering=0, closefd=False)
        )
    except (OSError, ValueError, NotImplementedError):
        os.close(fd)
        return False
    pipe = out_t.get_extra_info("pipe")
    direct = (pipe.fileno(), out_t.get_write_buffer_size) if pipe is not None else None
    conn = _Connection(pump, fd, loop, out_t.write, spin=True, direct=direct)
    output.conn = conn
    try:
        in_t, _ = await loop.connect_read_pipe(
            lambda: _Input(conn), open(0, "rb", buffering=0, closefd=False)
        )
    except (OSError, ValueError, NotImplementedError) as e:
        conn.gone = True
        conn.stop(True)
        out_t.close()
        raise OSError(f"stdin: {e}") from e
    output.input = in_t
    try:
        await conn.done
    finally:
        in_t.close()
        output.closing = True
        out_t.close()
        # Every answer leaves before serve_stdio returns (the transport writes what it holds,
        # then reports the pipe closed).
        if not conn.gone:
            await output.closed
    return True


async def serve_streams(
    native: _native.NativeServer, reader: asyncio.StreamReader, writer: Any
) -> bool:
    """Serve one connection over asyncio streams from the running loop; ``False`` when there is
    no pump here."""
    opened = native.open_pump()
    if opened is None:
        return False
    pump, fd = opened
    loop = asyncio.get_running_loop()
    conn = _Connection(pump, fd, loop, writer.write, spin=False)

    async def inbound() -> None:
        while not conn.stopping:
            try:
                data = await reader.read(65536)
            except ConnectionError:
                conn.on_output_lost()
                return
            if not data:
                conn.on_end()
                return
            conn.on_data(data)
            try:
                await writer.drain()
            except ConnectionError:
                conn.on_output_lost()
                return

    reading = asyncio.ensure_future(inbound())
    try:
        await conn.done
        if not conn.gone:
            try:
                await writer.drain()
            except ConnectionError:
                pass
    finally:
        reading.cancel()
    return True
