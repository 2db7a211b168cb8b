"""The client API: ``Client.connect_stdio`` / ``connect_http`` / ``connect_in_memory`` and
awaitable calls."""

from __future__ import annotations

import asyncio
import inspect
import logging
import os
from dataclasses import dataclass
from typing import (
    Any,
    Callable,
    Dict,
    List,
    Optional,
    Sequence,
    Set,
    TYPE_CHECKING,
    Type,
    TypeVar,
    Union,
)

from . import _native
from ._opening import Opening
from .tasks import Task

if TYPE_CHECKING:  # pragma: no cover
    from .server import Server

logger = logging.getLogger("mcpcore")

from ._adapters import Authorize, Callback, _authorizer, _invoker

__all__ = ["AppResource", "Client", "Opening", "Subscription", "ui_resource_uri"]


#: ``on_notification(method, params)``; ``progress(progress, total, message)``.
Listener = Callable[..., Any]

_tasks: Set["asyncio.Task[Any]"] = set()

_F = TypeVar("_F", bound=Callback)
_C = TypeVar("_C", bound="Client")


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


def _callbacks(
    on_elicitation: Optional[Callback],
    on_sampling: Optional[Callback],
    on_roots: Optional[Callback],
    declare: Sequence[str],
) -> Dict[str, Optional[_native._ClientInvoke]]:
    """The declared callbacks by capability name (core checks the names): the given ones as
    handlers, the ones only named in ``declare`` as ``None`` (set later by decorator)."""
    if isinstance(declare, str):
        raise ValueError(f"declare takes a sequence of callback names, not {declare!r}")
    given = {"elicitation": on_elicitation, "sampling": on_sampling, "roots": on_roots}
    out: Dict[str, Optional[_native._ClientInvoke]] = {name: None for name in declare}
    out.update({name: _invoker(fn) for name, fn in given.items() if fn is not None})
    return out


class _Notifications:
    """The client's notification fan-out (runs on the connecting loop): the ``on_notification``
    callbacks."""

    def __init__(self) -> None:
        self.handlers: List[Callable[..., None]] = []

    def __call__(self, method: str, params: Any) -> None:
        for h in list(self.handlers):
            h(method, params)

    def clear(self) -> None:
        self.handlers.clear()


class Subscription:
    """A stream of server notifications: ``async for n in client.listen(...)`` yields
    ``{"method": ..., "params": ...}``; ``async with`` opens it first and closes it on exit.

    Core's listen client serves both eras: 2026-07-28 connections open one
    ``subscriptions/listen`` request; legacy sessions ``resources/subscribe`` the URIs and take
    the session's matching notifications. :attr:`honored` is what the server agreed to send.
    """

    def __init__(
        self,
        client: "Client",
        flags: Dict[str, bool],
        uris: List[str],
        timeout: Optional[float],
    ) -> None:
        self._client = client
        self._flags = flags
        self._uris = uris
        self._timeout = timeout
        self._native: Optional[_native.NativeSubscription] = None
        self._state = "new"
        self.honored: Dict[str, Any] = {}

    def _filter(self) -> Dict[str, Any]:
        keys = {"tools": "toolsListChanged", "prompts": "promptsListChanged"}
        keys["resources"] = "resourcesListChanged"
        f: Dict[str, Any] = {keys[k]: True for k, on in self._flags.items() if on}
        if self._uris:
            f["resourceSubscriptions"] = list(self._uris)
        return f

    async def open(self) -> "Subscription":
        """Open the stream now (waits for the server's acknowledgement); idempotent."""
        if self._state != "new":
            return self
        self._state = "opening"
        native = self._client._native
        try:
            self._native = await native.listen(self._filter(), self._timeout)
            self.honored = self._native.honored
        except BaseException:
            self._state = "closed"
            raise
        self._state = "open"
        return self

    async def aclose(self) -> None:
        """Close the stream (legacy: core unsubscribes the resources); idempotent."""
        if self._state == "closed":
            return
        self._state = "closed"
        if self._native is not None:
            await self._native.close()

    def __aiter__(self) -> "Subscription":
        return self

    async def __anext__(self) -> Dict[str, Any]:
        await self.open()
        item: Any = None
        if self._state == "open" and self._native is not None:
            item = await self._native.next()
            if item is not None:
                item = {"method": item.get("method"), "params": item.get("params", {})}
        if item is None:
            raise StopAsyncIteration
        result: Dict[str, Any] = item
        return result

    async def __aenter__(self) -> "Subscription":
        return await self.open()

    async def __aexit__(self, *exc: Any) -> None:
        await self.aclose()


def _hub(on_notification: Optional[Listener]) -> _Notifications:
    hub = _Notifications()
    if on_notification is not None:
        hub.handlers.append(_deliverer(on_notification))
    return hub


@dataclass(frozen=True)
class AppResource:
    """An MCP Apps UI resource as read by :meth:`Client.read_app_resource`."""

    uri: str
    mime_type: str
    html: str
    #: ``_meta.ui`` of the content (``csp``, ``permissions``, ``domain``, ``prefersBorder``).
    meta: Optional[Dict[str, Any]]


def ui_resource_uri(tool: Dict[str, Any]) -> Optional[str]:
    """The MCP Apps UI resource a listed tool renders with (``_meta.ui.resourceUri``)."""
    return _native.NativeClient.tool_ui_resource_uri(tool)


class Client:
    """A connection to an MCP server of either era.

    ``mode`` is ``"auto"`` (probe ``server/discover``, fall back to ``initialize``),
    ``"legacy"`` or ``"modern"``; ``options`` is core's ``ClientOptions`` JSON shape
    (e.g. ``{"requestTimeoutMs": 5000}``). ``on_elicitation``, ``on_sampling`` and ``on_roots``
    take the request's params and return its result (``def`` or ``async def``; raise
    ``McpError`` to refuse): they answer legacy server requests and fulfil 2026-07-28
    ``input_required`` rounds, on the event loop that connected. ``on_notification(method,
    params)`` gets the server's notifications (log messages, list changes) on that loop.

    The callbacks can also be registered (or replaced) after connecting with the decorators
    :meth:`on_elicitation`, :meth:`on_sampling` and :meth:`on_roots`; the one registered when a
    request arrives answers it. The client capabilities are declared at connect from the
    callbacks given then, so name the ones that will only come by decorator in ``declare``
    (e.g. ``declare=["sampling"]``); until such a callback is registered its requests answer
    -32601.
    """

    def __init__(
        self,
        native: _native.NativeClient,
        notifications: Optional[_Notifications] = None,
    ) -> None:
        self._native = native
        self._notifications = notifications if notifications is not None else _Notifications()
        self._on_close: Optional[Callable[[], None]] = None

    def on_notification(self, fn: Listener) -> Listener:
        """Decorator: ``fn(method, params)`` gets every server notification (besides the
        ``on_notification`` given at connect), on the connecting loop; ``async def`` works."""
        self._notifications.handlers.append(_deliverer(fn))
        return fn

    def _register(self, name: str, fn: _F) -> _F:
        """Give core ``fn`` for the declared callback ``name`` (``ValueError`` when it was not
        declared at connect)."""
        self._native.set_callback(name, _invoker(fn))
        return fn

    def on_elicitation(self, fn: _F) -> _F:
        """Decorator: answer ``elicitation/create`` (declare it at connect: ``declare=[...]``)."""
        return self._register("elicitation", fn)

    def on_sampling(self, fn: _F) -> _F:
        """Decorator: answer ``sampling/createMessage`` (declare it at connect)."""
        return self._register("sampling", fn)

    def on_roots(self, fn: _F) -> _F:
        """Decorator: answer ``roots/list`` (declare it at connect)."""
        return self._register("roots", fn)

    @classmethod
    def connect_stdio(
        cls: Type[_C],
        argv: Sequence[str],
        *,
        mode: str = "auto",
        options: Optional[Dict[str, Any]] = None,
        on_elicitation: Optional[Callback] = None,
        on_sampling: Optional[Callback] = None,
        on_roots: Optional[Callback] = None,
        on_notification: Optional[Listener] = None,
        declare: Sequence[str] = (),
        env: Optional[Dict[str, str]] = None,
        env_clear: bool = False,
        cwd: Optional[Union[str, os.PathLike[str]]] = None,
        stderr: str = "inherit",
    ) -> Opening[_C]:
        """Spawn ``argv`` and connect over its stdin/stdout: ``async with
        Client.connect_stdio(argv) as client:`` (closed on exit) or ``client = await
        Client.connect_stdio(argv)`` (then ``await client.close()``).

        The process gets ``env`` added to the inherited environment (to an empty one with
        ``env_clear=True``) and runs in ``cwd``; its stderr is ``"inherit"`` (the default),
        ``"null"`` or ``"capture"`` (the last 64 KiB, read with :meth:`captured_stderr`). Core
        spawns it (``StdioCommand``) and refuses bad options before anything runs."""
        spawn: Dict[str, Any] = {"envClear": bool(env_clear), "stderr": stderr}
        if env is not None:
            spawn["env"] = dict(env)
        if cwd is not None:
            spawn["cwd"] = os.fspath(cwd)

        async def start() -> _C:
            callbacks = _callbacks(on_elicitation, on_sampling, on_roots, declare)
            hub = _hub(on_notification)
            native = await _native.NativeClient.connect_stdio(
                list(argv), mode, options, callbacks, hub, asyncio.get_running_loop(), spawn
            )
            return cls(native, hub)

        return Opening(start)

    @classmethod
    def connect_in_memory(
        cls: Type[_C],
        server: "Server",
        *,
        mode: str = "auto",
        options: Optional[Dict[str, Any]] = None,
        on_elicitation: Optional[Callback] = None,
        on_sampling: Optional[Callback] = None,
        on_roots: Optional[Callback] = None,
        on_notification: Optional[Listener] = None,
        declare: Sequence[str] = (),
    ) -> Opening[_C]:
        """Connect to ``server`` in this process, with no process and no socket: core's
        in-memory pipe, the full protocol of either era (``mode`` as for
        :meth:`connect_stdio`), the server's ``async def`` handlers on this event loop. For
        unit tests: ``async with Client.connect_in_memory(server) as client:``. Closing the
        client ends the server's side too."""

        async def start() -> _C:
            callbacks = _callbacks(on_elicitation, on_sampling, on_roots, declare)
            hub = _hub(on_notification)
            loop = asyncio.get_running_loop()
            served = server._build(loop)
            try:
                native = await _native.NativeClient.connect_in_memory(
                    served, mode, options, callbacks, hub, loop
                )
            except BaseException:
                server._serving.remove(served)
                raise
            client = cls(native, hub)
            client._on_close = lambda: server._serving.remove(served)
            return client

        return Opening(start)

    @classmethod
    def connect_http(
        cls: Type[_C],
        url: str,
        *,
        mode: str = "auto",
        options: Optional[Dict[str, Any]] = None,
        on_elicitation: Optional[Callback] = None,
        on_sampling: Optional[Callback] = None,
        on_roots: Optional[Callback] = None,
        on_notification: Optional[Listener] = None,
        declare: Sequence[str] = (),
        headers: Optional[Dict[str, str]] = None,
        http: Optional[Dict[str, Any]] = None,
        on_authorize: Optional[Authorize] = None,
    ) -> Opening[_C]:
        """Connect to a Streamable HTTP endpoint (``http://host:port/mcp``).

        ``headers`` go on every request (e.g. ``{"Authorization": "Bearer …"}``); ``http`` is
        core's ``HttpClientOptions`` JSON shape (timeouts, pool size, …). Its ``auth`` object
        turns on core's OAuth 2.1 client (discovery, registration, PKCE, tokens); the browser
        step is ``on_authorize(authorization_url) -> redirect_url`` (``def`` or ``async def``):
        show the URL to the user and return the URL the authorization server redirected to,
        with its ``code`` and ``state``. Without it core fetches the authorization URL itself
        and takes the redirect (servers that approve without a user). A callback that raises
        makes the connect fail with a :class:`McpcoreError`.

        Awaitable and an async context manager, as :meth:`connect_stdio`."""

        async def start() -> _C:
            if on_authorize is not None and not callable(on_authorize):
                raise TypeError("on_authorize must be callable")
            callbacks = _callbacks(on_elicitation, on_sampling, on_roots, declare)
            hub = _hub(on_notification)
            native = await _native.NativeClient.connect_http(
                url,
                mode,
                options,
                callbacks,
                hub,
                asyncio.get_running_loop(),
                http=http,
                headers=headers,
                on_authorize=None if on_authorize is None else _authorizer(on_authorize),
            )
            return cls(native, hub)

        return Opening(start)

    async def __aenter__(self) -> "Client":
        return self

    async def __aexit__(self, *exc: Any) -> None:
        await self.close()

    @property
    def era(self) -> Optional[str]:
        """``"legacy"`` or ``"modern"``."""
        return self._native.era

    def metrics(self) -> str:
        """This client's metrics as a Prometheus text exposition: the OpenTelemetry MCP
        conventions' ``mcp.client.operation.duration`` (by method, target and ``error_type``),
        the requests sent, in-flight requests and ``mcp.client.session.duration`` once closed.
        Recorded when connected with ``options={"metrics": True}``."""
        return self._native.metrics_text()

    def captured_stderr(self) -> Optional[str]:
        """What the server process wrote on stderr when spawned with ``stderr="capture"`` (the
        last 64 KiB, oldest first); ``None`` otherwise (another mode, or HTTP). The capture
        goes on until the process exits, also after :meth:`close`."""
        return self._native.captured_stderr()

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

    @property
    def server_capabilities(self) -> Dict[str, Any]:
        """The server's capabilities (``initialize`` or ``server/discover``)."""
        return self._native.server_capabilities

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

    async def list_tools_page(
        self, cursor: Optional[str] = None, *, timeout: Optional[float] = None
    ) -> Dict[str, Any]:
        """One ``tools/list`` page: ``{"tools": [...], "nextCursor"?: ...}``."""
        return await self._native.list_page("tools", cursor, timeout)

    async def list_prompts_page(
        self, cursor: Optional[str] = None, *, timeout: Optional[float] = None
    ) -> Dict[str, Any]:
        """One ``prompts/list`` page: ``{"prompts": [...], "nextCursor"?: ...}``."""
        return await self._native.list_page("prompts", cursor, timeout)

    async def list_resources_page(
        self, cursor: Optional[str] = None, *, timeout: Optional[float] = None
    ) -> Dict[str, Any]:
        """One ``resources/list`` page: ``{"resources": [...], "nextCursor"?: ...}``."""
        return await self._native.list_page("resources", cursor, timeout)

    async def list_resource_templates_page(
        self, cursor: Optional[str] = None, *, timeout: Optional[float] = None
    ) -> Dict[str, Any]:
        """One ``resources/templates/list`` page: ``{"resourceTemplates": [...], ...}``."""
        return await self._native.list_page("resource_templates", cursor, timeout)

    async def complete(
        self,
        ref: Dict[str, Any],
        argument: Dict[str, str],
        context: Optional[Dict[str, str]] = None,
        *,
        timeout: Optional[float] = None,
    ) -> Dict[str, Any]:
        """``completion/complete``: ``ref`` is ``{"type": "ref/prompt", "name": ...}`` or
        ``{"type": "ref/resource", "uri": ...}``, ``argument`` is ``{"name", "value"}``,
        ``context`` the other arguments already known. Returns the ``CompleteResult``
        (``{"completion": {"values": [...], ...}}``)."""
        if not isinstance(argument, dict) or not {"name", "value"} <= set(argument):
            raise ValueError('argument must be {"name": ..., "value": ...}')
        name, value = argument["name"], argument["value"]
        if not isinstance(name, str) or not isinstance(value, str):
            raise TypeError("the argument's name and value are str")
        return await self._native.complete(ref, name, value, context, timeout)

    async def subscribe_resource(self, uri: str, *, timeout: Optional[float] = None) -> None:
        """``resources/subscribe`` (legacy sessions; on 2026-07-28 use :meth:`listen`, core
        raises ``McpcoreError`` kind ``"invalid_argument"``). Updates arrive as
        ``notifications/resources/updated`` to the ``on_notification`` callbacks."""
        await self._native.subscribe_resource(uri, timeout)

    async def unsubscribe_resource(self, uri: str, *, timeout: Optional[float] = None) -> None:
        """``resources/unsubscribe`` (legacy sessions)."""
        await self._native.unsubscribe_resource(uri, timeout)

    def listen(
        self,
        *,
        tools_changed: bool = False,
        prompts_changed: bool = False,
        resources_changed: bool = False,
        resources_subscribe: Sequence[str] = (),
        timeout: Optional[float] = None,
    ) -> Subscription:
        """A :class:`Subscription` to list changes and resource updates, in either era:
        ``async for n in client.listen(tools_changed=True): ...`` (``async with`` to open it
        before doing what triggers the notifications). ``timeout`` bounds the opening."""
        if isinstance(resources_subscribe, str):
            raise TypeError("resources_subscribe takes a sequence of URIs, not a str")
        flags = {"tools": tools_changed, "prompts": prompts_changed}
        flags["resources"] = resources_changed
        return Subscription(self, flags, list(resources_subscribe), timeout)

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

    # ---- tasks (core speaks the protocol of both eras; see mcpcore.tasks) ----

    async def call_tool_as_task(
        self,
        name: str,
        arguments: Optional[Dict[str, Any]] = None,
        *,
        ttl: Optional[float] = None,
        timeout: Optional[float] = None,
    ) -> Union[Dict[str, Any], Task]:
        """Call a tool asking for a task: a :class:`Task` when the server created one, else the
        ``CallToolResult`` it answered at once. ``ttl`` (seconds) asks a legacy server to keep
        the task that long; ``timeout`` bounds the request itself."""
        ttl_ms = None if ttl is None else max(0, int(ttl * 1000))
        out = await self._native.call_tool_as_task(name, arguments or {}, ttl_ms, timeout)
        task = out.get("task")
        if isinstance(task, dict):
            return Task(task)
        result: Dict[str, Any] = out.get("result") or {}
        return result

    async def get_task(self, task_id: str, *, timeout: Optional[float] = None) -> Task:
        """``tasks/get``: the task's current state."""
        return Task(await self._native.get_task(task_id, timeout))

    async def cancel_task(self, task_id: str, *, timeout: Optional[float] = None) -> Optional[Task]:
        """``tasks/cancel``: the task's state after the request (``None`` when the server sent
        none)."""
        raw = await self._native.cancel_task(task_id, timeout)
        return Task(raw) if isinstance(raw, dict) else None

    async def update_task(
        self, task_id: str, input_responses: Dict[str, Any], *, timeout: Optional[float] = None
    ) -> None:
        """``tasks/update`` (2026-07-28): answer a task's ``input_requests`` by key."""
        await self._native.update_task(task_id, input_responses, timeout)

    async def wait_task(
        self, task_id: str, *, timeout: Optional[float] = None, **options: Any
    ) -> Task:
        """Follow a task until it ends; its ``input_required`` requests are answered by the
        registered callbacks. ``timeout`` (seconds) bounds the wait (the task goes on);
        ``options`` are core's ``TaskWaitOptions`` keys (``pollIntervalMs``,
        ``followPushes``, ...)."""
        return Task(await self._native.wait_task(task_id, _wait_options(timeout, options)))

    async def call_tool_to_completion(
        self,
        name: str,
        arguments: Optional[Dict[str, Any]] = None,
        *,
        ttl: Optional[float] = None,
        timeout: Optional[float] = None,
        **options: Any,
    ) -> Dict[str, Any]:
        """:meth:`call_tool_as_task` then :meth:`wait_task`: the ``CallToolResult`` (a failed
        task raises its error)."""
        ttl_ms = None if ttl is None else max(0, int(ttl * 1000))
        wait = _wait_options(timeout, options)
        return await self._native.call_tool_to_completion(name, arguments or {}, ttl_ms, wait)

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

    @property
    def server_supports_apps(self) -> bool:
        """Whether the server offers MCP Apps (``io.modelcontextprotocol/ui``). Pass
        ``options={"apps": True}`` at connect to advertise this client's support."""
        return self._native.server_supports_apps

    async def read_app_resource(self, uri: str, *, timeout: Optional[float] = None) -> AppResource:
        """Read an MCP Apps UI resource (a ``ui://`` URI, e.g. :func:`ui_resource_uri` of a tool).

        Raises ``McpcoreError`` for a URI that is not ``ui://`` (nothing is sent) or a result
        that is not ``text/html;profile=mcp-app`` HTML.
        """
        r = await self._native.read_app_resource(uri, timeout)
        return AppResource(r["uri"], r["mimeType"], r["html"], r["meta"])

    async def close(self) -> None:
        """Close the connection (stdio: close stdin, wait, then terminate the child).

        The registered callbacks are dropped, so that one that refers to this client (a
        decorated closure) does not keep it alive through the native handlers.
        """
        try:
            await self._native.close()
        finally:
            on_close, self._on_close = self._on_close, None
            if on_close is not None:
                on_close()
            for name in self._native.declared_callbacks:
                self._native.set_callback(name, None)
            self._notifications.clear()


def _wait_options(timeout: Optional[float], options: Dict[str, Any]) -> Dict[str, Any]:
    wait = dict(options)
    if timeout is not None:
        wait["timeoutMs"] = max(0, int(timeout * 1000))
    return wait
