"""A blocking twin of :class:`mcpcore.Client` for scripts (no ``async``/``await``).

Each :class:`Client` runs a private asyncio event loop in a background thread; every call
submits the asynchronous call to that loop and waits for its result. Callbacks (``on_sampling``,
``on_notification``, …) run on that background loop (a plain ``def`` callback in a worker
thread), so they must not call back into this client synchronously.
"""

from __future__ import annotations

import asyncio
import threading
from typing import Any, Coroutine, Dict, Iterator, List, Optional, Sequence, TypeVar

from . import client as _client

__all__ = ["Client", "Subscription"]

_T = TypeVar("_T")


class _LoopThread:
    """An event loop running in a daemon thread until :meth:`stop`."""

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self._thread = threading.Thread(
            target=self.loop.run_forever, name="mcpcore-sync-client", daemon=True
        )
        self._thread.start()

    def run(self, coro: Coroutine[Any, Any, _T], timeout: Optional[float] = None) -> _T:
        return asyncio.run_coroutine_threadsafe(coro, self.loop).result(timeout)

    def stop(self) -> None:
        if self.loop.is_closed():
            return
        self.loop.call_soon_threadsafe(self.loop.stop)
        self._thread.join()
        self.loop.close()


class Subscription:
    """A blocking :class:`mcpcore.client.Subscription`: ``with client.listen(...) as sub:``
    then ``for n in sub`` (or ``sub.next(timeout)``) yields ``{"method", "params"}``."""

    def __init__(self, inner: _client.Subscription, runner: _LoopThread) -> None:
        self._inner = inner
        self._runner = runner

    @property
    def honored(self) -> Dict[str, Any]:
        """What the server agreed to send (after :meth:`open`)."""
        return self._inner.honored

    def open(self) -> "Subscription":
        """Open the stream now (waits for the acknowledgement); idempotent."""
        self._runner.run(self._inner.open())
        return self

    def next(self, timeout: Optional[float] = None) -> Dict[str, Any]:
        """The next notification; ``StopIteration`` once the stream ended, ``TimeoutError``
        after ``timeout`` seconds without one (the stream stays open)."""
        try:
            return self._runner.run(asyncio.wait_for(self._inner.__anext__(), timeout))
        except StopAsyncIteration:
            raise StopIteration from None
        except asyncio.TimeoutError:  # not the built-in TimeoutError before Python 3.11
            raise TimeoutError(f"no notification within {timeout} s") from None

    def close(self) -> None:
        """End the stream (legacy: unsubscribe); idempotent."""
        if not self._runner.loop.is_closed():
            self._runner.run(self._inner.aclose())

    def __iter__(self) -> Iterator[Dict[str, Any]]:
        return self

    def __next__(self) -> Dict[str, Any]:
        return self.next()

    def __enter__(self) -> "Subscription":
        return self.open()

    def __exit__(self, *exc: Any) -> None:
        self.close()


class Client:
    """A blocking connection to an MCP server of either era (see :class:`mcpcore.Client`).

    Use :meth:`connect_stdio` or :meth:`connect_http`, then call methods directly; ``with``
    closes the connection (and stops the background loop) on exit.
    """

    def __init__(self, inner: _client.Client, runner: _LoopThread) -> None:
        self._inner = inner
        self._runner = runner

    @classmethod
    def _connect(cls, connect: Any, *args: Any, **kwargs: Any) -> "Client":
        async def start() -> _client.Client:
            # On the runner's loop: the connect captures the loop it runs on.
            client: _client.Client = await connect(*args, **kwargs)
            return client

        runner = _LoopThread()
        try:
            inner = runner.run(start())
        except BaseException:
            runner.stop()
            raise
        return cls(inner, runner)

    @classmethod
    def connect_stdio(cls, argv: Sequence[str], **kwargs: Any) -> "Client":
        """Spawn ``argv`` and connect; keywords as for :meth:`mcpcore.Client.connect_stdio`."""
        return cls._connect(_client.Client.connect_stdio, argv, **kwargs)

    @classmethod
    def connect_http(cls, url: str, **kwargs: Any) -> "Client":
        """Connect to ``url``; keywords as for :meth:`mcpcore.Client.connect_http`."""
        return cls._connect(_client.Client.connect_http, url, **kwargs)

    def on_elicitation(self, fn: _client._F) -> _client._F:
        """Decorator: answer ``elicitation/create`` (see :meth:`mcpcore.Client.on_elicitation`)."""
        return self._inner.on_elicitation(fn)

    def on_sampling(self, fn: _client._F) -> _client._F:
        """Decorator: answer ``sampling/createMessage`` (declare it at connect)."""
        return self._inner.on_sampling(fn)

    def on_roots(self, fn: _client._F) -> _client._F:
        """Decorator: answer ``roots/list`` (declare it at connect)."""
        return self._inner.on_roots(fn)

    def on_notification(self, fn: _client.Listener) -> _client.Listener:
        """Decorator: ``fn(method, params)`` gets every server notification (on the background
        loop; see :meth:`mcpcore.Client.on_notification`)."""
        return self._inner.on_notification(fn)

    def __enter__(self) -> "Client":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    @property
    def era(self) -> Optional[str]:
        """``"legacy"`` or ``"modern"``."""
        return self._inner.era

    @property
    def protocol_version(self) -> Optional[str]:
        """The negotiated protocol version."""
        return self._inner.protocol_version

    @property
    def instructions(self) -> Optional[str]:
        """The server's instructions, if any."""
        return self._inner.instructions

    def captured_stderr(self) -> Optional[str]:
        """The server's captured stderr (``stderr="capture"``), else ``None``."""
        return self._inner.captured_stderr()

    def metrics(self) -> str:
        """This client's metrics as Prometheus text (see :meth:`mcpcore.Client.metrics`)."""
        return self._inner.metrics()

    @property
    def server_info(self) -> Optional[Dict[str, Any]]:
        """The server's ``serverInfo``."""
        return self._inner.server_info

    @property
    def server_capabilities(self) -> Dict[str, Any]:
        """The server's capabilities."""
        return self._inner.server_capabilities

    def request(
        self, method: str, params: Optional[Dict[str, Any]] = None, **kwargs: Any
    ) -> Dict[str, Any]:
        """Any request; returns the raw result (keywords as for the async client)."""
        return self._runner.run(self._inner.request(method, params, **kwargs))

    def list_tools(self, *, timeout: Optional[float] = None) -> List[Dict[str, Any]]:
        """Every tool (cursors followed)."""
        return self._runner.run(self._inner.list_tools(timeout=timeout))

    def list_prompts(self, *, timeout: Optional[float] = None) -> List[Dict[str, Any]]:
        """Every prompt (cursors followed)."""
        return self._runner.run(self._inner.list_prompts(timeout=timeout))

    def list_resources(self, *, timeout: Optional[float] = None) -> List[Dict[str, Any]]:
        """Every resource (cursors followed)."""
        return self._runner.run(self._inner.list_resources(timeout=timeout))

    def list_resource_templates(self, *, timeout: Optional[float] = None) -> List[Dict[str, Any]]:
        """Every resource template (cursors followed)."""
        return self._runner.run(self._inner.list_resource_templates(timeout=timeout))

    def list_tools_page(
        self, cursor: Optional[str] = None, *, timeout: Optional[float] = None
    ) -> Dict[str, Any]:
        """One ``tools/list`` page (``nextCursor`` when there is more)."""
        return self._runner.run(self._inner.list_tools_page(cursor, timeout=timeout))

    def list_prompts_page(
        self, cursor: Optional[str] = None, *, timeout: Optional[float] = None
    ) -> Dict[str, Any]:
        """One ``prompts/list`` page."""
        return self._runner.run(self._inner.list_prompts_page(cursor, timeout=timeout))

    def list_resources_page(
        self, cursor: Optional[str] = None, *, timeout: Optional[float] = None
    ) -> Dict[str, Any]:
        """One ``resources/list`` page."""
        return self._runner.run(self._inner.list_resources_page(cursor, timeout=timeout))

    def list_resource_templates_page(
        self, cursor: Optional[str] = None, *, timeout: Optional[float] = None
    ) -> Dict[str, Any]:
        """One ``resources/templates/list`` page."""
        return self._runner.run(self._inner.list_resource_templates_page(cursor, timeout=timeout))

    def complete(
        self,
        ref: Dict[str, Any],
        argument: Dict[str, str],
        context: Optional[Dict[str, str]] = None,
        *,
        timeout: Optional[float] = None,
    ) -> Dict[str, Any]:
        """``completion/complete`` (see :meth:`mcpcore.Client.complete`)."""
        return self._runner.run(self._inner.complete(ref, argument, context, timeout=timeout))

    def subscribe_resource(self, uri: str, *, timeout: Optional[float] = None) -> None:
        """``resources/subscribe`` (legacy sessions; updates go to ``on_notification``)."""
        self._runner.run(self._inner.subscribe_resource(uri, timeout=timeout))

    def unsubscribe_resource(self, uri: str, *, timeout: Optional[float] = None) -> None:
        """``resources/unsubscribe`` (legacy sessions)."""
        self._runner.run(self._inner.unsubscribe_resource(uri, timeout=timeout))

    def listen(self, **kwargs: Any) -> Subscription:
        """A blocking :class:`Subscription` (keywords as for :meth:`mcpcore.Client.listen`)."""
        return Subscription(self._inner.listen(**kwargs), self._runner)

    def call_tool(
        self, name: str, arguments: Optional[Dict[str, Any]] = None, **kwargs: Any
    ) -> Dict[str, Any]:
        """Call a tool; returns the ``CallToolResult`` (keywords as for the async client)."""
        return self._runner.run(self._inner.call_tool(name, arguments, **kwargs))

    def get_prompt(
        self,
        name: str,
        arguments: Optional[Dict[str, str]] = None,
        *,
        timeout: Optional[float] = None,
    ) -> Dict[str, Any]:
        """Get a prompt; returns the ``GetPromptResult``."""
        return self._runner.run(self._inner.get_prompt(name, arguments, timeout=timeout))

    def read_resource(self, uri: str, *, timeout: Optional[float] = None) -> Dict[str, Any]:
        """Read a resource; returns the ``ReadResourceResult``."""
        return self._runner.run(self._inner.read_resource(uri, timeout=timeout))

    @property
    def server_supports_apps(self) -> bool:
        """Whether the server offers MCP Apps (``io.modelcontextprotocol/ui``)."""
        return self._inner.server_supports_apps

    def read_app_resource(
        self, uri: str, *, timeout: Optional[float] = None
    ) -> _client.AppResource:
        """Read an MCP Apps ``ui://`` resource (checks as for the async client)."""
        return self._runner.run(self._inner.read_app_resource(uri, timeout=timeout))

    def close(self) -> None:
        """Close the connection and stop the background loop (idempotent)."""
        if self._runner.loop.is_closed():
            return
        try:
            self._runner.run(self._inner.close())
        finally:
            self._runner.stop()
