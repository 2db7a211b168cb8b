"""The server API: ``Server`` with ``@tool``/``@prompt``/``@resource`` decorators, ``Context``."""

from __future__ import annotations

import asyncio
import inspect
import logging
import signal
import sys
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple, TypeVar

from . import _asgi, _native, _pump, registration
from ._asgi import AsgiApp
from ._inbox import Inbox
from ._opening import Opening
from ._schema import (
    coerce,
    describe_failure,
    to_json,
    field_defaults,
    first_paragraph,
    function_schema,
    param_types,
)
from ._schema import output_schema as derived_output
from .context import Context, otel_attach, otel_detach
from .registration import Dynamic, Registration
from .errors import InputRequired, McpError, ToolError
from .results import (
    Audio,
    Image,
    InputRequiredResult,
    Media,
    ToolResult,
    reply_tool,
)

__all__ = [
    "APP_MIME_TYPE",
    "Server",
    "Context",
    "Registration",
    "HttpHandle",
    "AsgiApp",
    "InputRequiredResult",
    "ToolResult",
    "Media",
    "Image",
    "Audio",
]

logger = logging.getLogger("mcpcore")

#: The MIME type of MCP Apps UI resources (``io.modelcontextprotocol/ui``; core's constant).
APP_MIME_TYPE: str = _native.APP_MIME_TYPE

F = TypeVar("F", bound=Callable[..., Any])


def _reply_value(responder: _native.Responder, value: Any) -> None:
    """A prompt's value: core shapes it (a str is one user message, a list holds messages)."""
    responder.value(value)


def _reply_resource(responder: _native.Responder, value: Any) -> None:
    """A resource's value: core shapes it (str → text, bytes → blob, with the URI and MIME type)."""
    if isinstance(value, (bytes, bytearray, memoryview)):
        responder.bytes(bytes(value))
    else:
        responder.value(value if isinstance(value, (str, dict)) else to_json(value))


class HttpHandle:
    """A running Streamable HTTP listener (endpoint ``/mcp`` unless the options' ``path`` differs)."""

    def __init__(self, native: _native.HttpHandle) -> None:
        self._native = native
        self._on_close: Optional[Callable[[], None]] = None
        # Once the endpoint stopped: the serving loop's inbox closes (see mcpcore._inbox).
        self._after_close: Optional[Callable[[], None]] = None

    @property
    def port(self) -> int:
        """The bound port (the one picked when port 0 was asked for)."""
        return int(self._native.port)

    @property
    def host(self) -> str:
        """The bound IP address (``localhost`` binds ``127.0.0.1``)."""
        return str(self._native.host)

    @property
    def url(self) -> str:
        """The endpoint's URL, with the configured path and ``https`` when TLS is on."""
        return str(self._native.url)

    async def close(self) -> None:
        """Stop accepting, finish or cancel in-flight work (graceful shutdown)."""
        on_close, self._on_close = self._on_close, None
        if on_close is not None:
            on_close()
        await self._native.close()
        after, self._after_close = self._after_close, None
        if after is not None:
            after()

    async def __aenter__(self) -> "HttpHandle":
        return self

    async def __aexit__(self, *exc: Any) -> None:
        await self.close()


def _is_context(param: inspect.Parameter, annotation: Any) -> bool:
    return annotation is Context or annotation == "Context"


class _InvalidArguments(Exception):
    """An argument its parameter's type refused (see :func:`describe_failure`)."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


class _Entry:
    """One registered function and how to call it."""

    def __init__(
        self,
        kind: str,
        definition: Dict[str, Any],
        fn: Callable[..., Any],
        params: List[str],
        ctx_params: List[str],
        reply: Callable[[_native.Responder, Any], None],
        types: Optional[Dict[str, Any]] = None,
        on_loop: bool = False,
    ) -> None:
        self.kind = kind
        self.definition = definition
        self.fn = fn
        self.params = params
        self.ctx_params = ctx_params
        self.reply = reply
        self.types = types or {}
        self.enabled = True  # see mcpcore.registration
        self.is_async = inspect.iscoroutinefunction(fn)
        # A plain `def` asked to run on the serving loop's thread goes the `async def` way
        # (``invoke``): no hand-off to a worker thread, at the price of holding the loop.
        self.on_loop = on_loop and not self.is_async
        self.fills = field_defaults(fn)
        self.var_kw = any(
            p.kind is inspect.Parameter.VAR_KEYWORD
            for p in inspect.signature(fn).parameters.values()
        )

    def label(self) -> str:
        d = self.definition
        return str(d.get("name") or d.get("uri") or d.get("uriTemplate"))

    def _kwargs(self, ctx: Context, params: Any) -> Dict[str, Any]:
        args = params if isinstance(params, dict) else {}
        kwargs = {k: v for k, v in args.items() if self.var_kw or k in self.params}
        for name, default in self.fills.items():
            if name not in kwargs:
                kwargs[name] = default()
        for name, tp in self.types.items():
            if name in kwargs:
                try:
                    kwargs[name] = coerce(tp, kwargs[name])
                except (ValueError, TypeError) as e:  # pydantic's ValidationError is a ValueError
                    raise _InvalidArguments(describe_failure(name, e)) from e
        for name in self.ctx_params:
            kwargs[name] = ctx
        return kwargs

    async def invoke(
        self, native_ctx: _native.NativeContext, params: Any, responder: _native.Responder
    ) -> None:
        """Run an ``async def`` function, or a ``def`` registered ``on_loop=True``, on the
        serving loop; report exactly once."""
        ctx = Context(native_ctx)
        token = otel_attach(ctx)
        try:
            value = self.fn(**self._kwargs(ctx, params))
            if not self.on_loop:
                value = await value
            if isinstance(value, InputRequiredResult):
                responder.input_required(value.input_requests, value.request_state)
                return
        except asyncio.CancelledError:
            responder.cancelled()
            raise
        except (Exception, InputRequired) as e:
            self._fail(responder, e)
        else:
            self._ok(responder, value)
        finally:
            otel_detach(token)

    def run_sync(
        self, native_ctx: _native.NativeContext, params: Any, responder: _native.Responder
    ) -> None:
        """Run a plain ``def`` function; report exactly once. Core calls this on one of its
        worker threads (never the event loop's), so the call needs no further hand-off."""
        ctx = Context(native_ctx)
        token = otel_attach(ctx)
        try:
            value = self.fn(**self._kwargs(ctx, params))
            if isinstance(value, InputRequiredResult):
                responder.input_required(value.input_requests, value.request_state)
                return
        except (Exception, InputRequired) as e:
            self._fail(responder, e)
        else:
            self._ok(responder, value)
        finally:
            otel_detach(token)

    def _fail(self, responder: _native.Responder, e: BaseException) -> None:
        if isinstance(e, _InvalidArguments) and self.kind == "tool":
            # Core's isError result for arguments the schema let through but the parameter's
            # type refuses (TOOL-07): the same wording as core's schema failures.
            responder.invalid_arguments(self.label(), e.reason)
        elif isinstance(e, McpError):
            responder.error(e.code, e.message, e.data)
        elif isinstance(e, ToolError):
            if self.kind == "tool":
                responder.tool_error(str(e))
            else:
                responder.error(-32603, str(e))
        elif isinstance(e, InputRequired):
            # 2026-07-28: core answers input_required for the unanswered request_client calls.
            responder.fail("input required")
        else:
            logger.exception("mcpcore: %s %r failed", self.kind, self.label(), exc_info=e)
            responder.fail(f"{type(e).__name__}: {e}")

    def _ok(self, responder: _native.Responder, value: Any) -> None:
        try:
            self.reply(responder, value)
        except Exception as e:
            logger.exception(
                "mcpcore: %s %r returned a value it cannot send (not JSON, or untyped bytes)",
                self.kind,
                self.label(),
            )
            responder.fail(f"{type(e).__name__}: {e}")


class Server(Dynamic):
    """An MCP server speaking both protocol eras over stdio or Streamable HTTP.

    Registrations (the decorators, ``add_*``, ``remove_*``, ``enable_*``, ``disable_*``) may
    change while it serves (:mod:`mcpcore.registration`)."""

    def __init__(
        self,
        name: str,
        version: str,
        *,
        instructions: Optional[str] = None,
        options: Optional[Dict[str, Any]] = None,
        tasks: Optional[Dict[str, Any]] = None,
    ) -> None:
        self.name = name
        self.version = version
        self.instructions = instructions
        if tasks is not None:
            # Core's TaskOptions JSON shape (defaultTtlMs, pollIntervalMs, maxTasks, ...).
            options = {**(options or {}), "tasks": tasks}
        self.options = options
        self._entries: List[_Entry] = []
        self._serving: List[_native.NativeServer] = []

    # ---- registration ----

    def _signature(self, fn: Callable[..., Any]) -> Tuple[Dict[str, Any], List[str], List[str]]:
        schema, names = function_schema(fn, _is_context)
        sig = inspect.signature(fn)
        try:
            import typing

            hints = typing.get_type_hints(fn)
        except Exception:
            hints = {}
        ctx = [
            p.name
            for p in sig.parameters.values()
            if _is_context(p, hints.get(p.name, p.annotation))
        ]
        return schema, names, ctx

    def tool(
        self,
        name: Optional[str] = None,
        description: Optional[str] = None,
        *,
        input_schema: Optional[Dict[str, Any]] = None,
        output_schema: Optional[Dict[str, Any]] = None,
        title: Optional[str] = None,
        annotations: Optional[Dict[str, Any]] = None,
        mime_type: Optional[str] = None,
        task_support: Optional[str] = None,
        gate: Optional[Callable[..., Any]] = None,
        ui: Optional[str] = None,
        ui_visibility: Optional[Sequence[str]] = None,
        on_loop: bool = False,
    ) -> Callable[[F], F]:
        """Register a tool. The name defaults to the function's, the description to its docstring.

        ``task_support`` (``"optional"`` or ``"required"``) makes it task-capable: core runs it
        as a task when the client asks (turning tasks on with default options unless
        ``Server(tasks=...)`` set them) and :attr:`Context.task_id` names the task. ``gate``, a
        function of the same parameters, runs on the request before the task is created: its
        ``input_required`` rounds complete first (SEP-2663), its value is discarded.

        The input schema comes from the type hints unless ``input_schema`` is given; a
        parameter typed as a dataclass or pydantic model receives an instance. When the return
        annotation is a ``TypedDict``, dataclass or pydantic model it is the output schema
        (unless ``output_schema`` is given). A ``str`` result is a text block; a ``dict``,
        dataclass or pydantic instance is ``structuredContent`` (and its JSON as text); a list
        of content blocks is the content; ``Image(...)``/``Audio(...)`` (or ``bytes`` with
        ``mime_type=``) an image or audio block; a whole result dict (``content`` blocks,
        ``isError``, ``structuredContent``) or a ``ToolResult`` is sent as is. Raise
        ``ToolError`` for an ``isError`` result and ``McpError`` for a JSON-RPC error.

        MCP Apps: ``ui="ui://…"`` links the tool to a UI resource registered with
        :meth:`app_resource` (``_meta.ui.resourceUri``; serving fails with ``ValueError`` if it
        is not registered); ``ui_visibility=["app"]`` hides the tool from the model.

        ``on_loop=True`` runs a plain ``def`` on the serving event loop's thread, as an
        ``async def`` runs, instead of on one of core's worker threads (the default, as the
        official SDK runs a ``def`` off its loop). Over stdio, which is then read on the loop's
        thread too, a quick function's call needs no thread hand-off: about twice the calls/s.
        Over HTTP core's threads read the request and the default is the faster. While such a
        function runs the loop serves nothing else: keep it to quick work that never blocks
        (no I/O, no sleeping).
        """
        if mime_type is not None:
            Media(b"", mime_type)  # the same check as at call time, now

        def register(fn: F) -> F:
            schema, names, ctx = self._signature(fn)
            if input_schema is not None:
                schema = input_schema
                names = list(input_schema.get("properties", {}))
            d: Dict[str, Any] = {"name": name or fn.__name__, "inputSchema": schema}
            desc = description if description is not None else first_paragraph(fn.__doc__)
            if desc:
                d["description"] = desc
            if title:
                d["title"] = title
            out = output_schema if output_schema is not None else derived_output(fn)
            if out is not None:
                d["outputSchema"] = out
            if annotations is not None:
                d["annotations"] = annotations
            if task_support is not None:
                d["taskSupport"] = task_support
            if ui is not None or ui_visibility is not None:
                link: Dict[str, Any] = {}
                if ui is not None:
                    link["resourceUri"] = ui
                if ui_visibility is not None:
                    link["visibility"] = list(ui_visibility)
                d["_meta"] = {"ui": link}
            types = param_types(fn, names) if input_schema is None else {}
            shape: Callable[[_native.Responder, Any], None] = lambda r, v: reply_tool(
                r, v, mime_type
            )
            gate_entry = None
            if gate is not None:
                _s, gnames, gctx = self._signature(gate)
                gd = {"name": d["name"]}
                # A gate's value is not sent: the task is created (or the gate raised).
                gate_reply: Callable[[_native.Responder, Any], None] = lambda r, _v: r.ok({})
                gate_entry = _Entry("gate", gd, gate, gnames, gctx, gate_reply)
            entry = _Entry("tool", d, fn, names, ctx, shape, types, on_loop)
            registration.put(self, entry, gate_entry)
            return fn

        return register

    def prompt(
        self,
        name: Optional[str] = None,
        description: Optional[str] = None,
        *,
        title: Optional[str] = None,
        arguments: Optional[List[Dict[str, Any]]] = None,
        on_loop: bool = False,
    ) -> Callable[[F], F]:
        """Register a prompt; its parameters are the prompt's (string) arguments.

        Return a ``str`` (one user message), a list of messages (``str`` or message dicts) or a
        whole ``GetPromptResult`` dict. ``arguments=`` (``PromptArgument`` dicts: ``name``,
        ``description``, ``required``) replaces the arguments derived from the signature.
        ``on_loop`` as for :meth:`tool`.
        """

        def register(fn: F) -> F:
            schema, names, ctx = self._signature(fn)
            required = set(schema.get("required", []))
            props = schema.get("properties", {})
            args = [{"name": n, "required": n in required} for n in names]
            for a in args:  # an Annotated[str, "…"] / Field(description=…) describes it
                desc_n = props.get(a["name"], {}).get("description")
                if isinstance(desc_n, str):
                    a["description"] = desc_n
            if arguments is not None:
                args = list(arguments)
                names = [str(a["name"]) for a in args]
            d: Dict[str, Any] = {"name": name or fn.__name__, "arguments": args}
            desc = description if description is not None else first_paragraph(fn.__doc__)
            if desc:
                d["description"] = desc
            if title:
                d["title"] = title
            entry = _Entry("prompt", d, fn, names, ctx, _reply_value, on_loop=on_loop)
            registration.put(self, entry)
            return fn

        return register

    def resource(
        self,
        uri: str,
        name: Optional[str] = None,
        description: Optional[str] = None,
        *,
        mime_type: Optional[str] = None,
        title: Optional[str] = None,
        on_loop: bool = False,
    ) -> Callable[[F], F]:
        """Register a resource at an exact URI or an RFC 6570 template (``demo://notes/{id}``).

        The template variables are the function's parameters. Return ``str`` (text), ``bytes``
        (a blob) or a whole ``ReadResourceResult`` dict. ``on_loop`` as for :meth:`tool`.
        """
        template = "{" in uri

        def register(fn: F) -> F:
            _schema, names, ctx = self._signature(fn)
            d: Dict[str, Any] = {"name": name or fn.__name__}
            d["uriTemplate" if template else "uri"] = uri
            desc = description if description is not None else first_paragraph(fn.__doc__)
            if desc:
                d["description"] = desc
            if mime_type:
                d["mimeType"] = mime_type
            if title:
                d["title"] = title

            shape = _reply_resource
            kind = "resource_template" if template else "resource"
            registration.put(self, _Entry(kind, d, fn, names, ctx, shape, on_loop=on_loop))
            return fn

        return register

    def app_resource(
        self,
        uri: str,
        name: Optional[str] = None,
        description: Optional[str] = None,
        *,
        title: Optional[str] = None,
        csp: Optional[Dict[str, List[str]]] = None,
        permissions: Optional[Sequence[str]] = None,
        domain: Optional[str] = None,
        prefers_border: Optional[bool] = None,
    ) -> Callable[[F], F]:
        """Register an MCP Apps UI resource: a ``ui://`` URI whose function returns the HTML.

        Served as ``text/html;profile=mcp-app`` through ``resources/list`` and
        ``resources/read``, and the server advertises ``io.modelcontextprotocol/ui``. ``csp``
        (``{"connectDomains": [...], "resourceDomains": [...], ...}``), ``permissions``
        (``["camera", "clipboardWrite", ...]``), ``domain`` and ``prefers_border`` become
        ``_meta.ui``. Link tools to it with ``@server.tool(ui=uri)``. A URI that is not
        ``ui://`` makes serving fail with ``ValueError``.
        """
        meta: Dict[str, Any] = {}
        if csp is not None:
            meta["csp"] = dict(csp)
        if permissions is not None:
            meta["permissions"] = {p: {} for p in permissions}
        if domain is not None:
            meta["domain"] = domain
        if prefers_border is not None:
            meta["prefersBorder"] = prefers_border

        def register(fn: F) -> F:
            _schema, names, ctx = self._signature(fn)
            d: Dict[str, Any] = {"uri": uri, "name": name or fn.__name__, "mimeType": APP_MIME_TYPE}
            desc = description if description is not None else first_paragraph(fn.__doc__)
            if desc:
                d["description"] = desc
            if title:
                d["title"] = title
            if meta:
                d["_meta"] = {"ui": meta}

            shape = _reply_resource  # core completes the URI, MIME type and _meta.ui
            registration.put(self, _Entry("resource", d, fn, names, ctx, shape))
            return fn

        return register

    def completion(self) -> Callable[[F], F]:
        """Register the ``completion/complete`` handler (one per server).

        The function takes ``ref`` (``{"type": "ref/prompt", "name": ...}`` or
        ``{"type": "ref/resource", "uri": ...}``), ``argument`` (``{"name", "value"}``) and
        optionally ``context``, and returns a list of values or a whole ``CompleteResult`` dict.
        """

        def register(fn: F) -> F:
            _schema, names, ctx = self._signature(fn)

            def shape(r: _native.Responder, value: Any) -> None:
                # Core caps the values at 100 with ``total`` and ``hasMore`` (CMP-01).
                if not isinstance(value, dict):
                    value = [v if isinstance(v, str) else str(v) for v in value]
                r.value(value)

            self._entries = [e for e in self._entries if e.kind != "completion"]
            self._entries.append(_Entry("completion", {}, fn, names, ctx, shape))
            return fn

        return register

    # ---- serving ----

    def _build(self, loop: asyncio.AbstractEventLoop) -> _native.NativeServer:
        """Build from the registry and enroll it for changes made while it serves."""

        def build() -> _native.NativeServer:
            entries = registration.entries(self)
            return _native.NativeServer(
                self.name, self.version, self.instructions, entries, loop, self.options
            )

        return registration.serve(self, build)

    async def serve_stdio(self, *, on_loop: Optional[bool] = None) -> None:
        """Serve stdin/stdout until EOF. ``async def`` handlers run on this event loop.

        ``on_loop``: read and answer on this loop's own thread (when stdin and stdout are pipes
        or sockets), so an ``async def`` handler that finishes without waiting is answered with
        no thread hand-off; otherwise core's threads read and write, and plain ``def`` handlers
        avoid the loop entirely. The default (``None``) picks the loop when the server has an
        ``async def`` (or ``on_loop=True``) handler and a task's first step can run at once (3.12+, or asyncio's own
        loop before 3.12)."""
        loop = asyncio.get_running_loop()
        native = self._build(loop)
        try:
            with Inbox(native, loop):
                if not (_pump.wanted(on_loop, self) and await _pump.serve_stdio(native)):
                    await native.serve_stdio()
        finally:
            self._serving.remove(native)

    def run_stdio(self, *, on_loop: Optional[bool] = None) -> None:
        """Serve stdin/stdout until EOF (blocking; runs its own event loop). ``on_loop`` as
        for :meth:`serve_stdio`."""
        asyncio.run(self.serve_stdio(on_loop=on_loop))

    def run_http(
        self, host: str = "127.0.0.1", port: int = 8000, *, options: Optional[Dict[str, Any]] = None
    ) -> None:
        """Serve Streamable HTTP until SIGINT/SIGTERM (blocking; runs its own event loop).

        Prints ``mcpcore: serving <url>`` on stderr once listening (port 0 picks a free port)."""

        async def main() -> None:
            handle = await self.serve_http(host, port, options=options)
            print(f"mcpcore: serving {handle.url}", file=sys.stderr, flush=True)
            stop = asyncio.Event()
            loop = asyncio.get_running_loop()
            for sig in (signal.SIGINT, signal.SIGTERM):
                try:
                    loop.add_signal_handler(sig, stop.set)
                except (NotImplementedError, RuntimeError, ValueError):
                    pass  # not the main thread, or no signals here: serve until the loop ends
            try:
                await stop.wait()
            finally:
                await handle.close()

        asyncio.run(main())

    def serve_http(
        self, host: str = "127.0.0.1", port: int = 0, *, options: Optional[Dict[str, Any]] = None
    ) -> Opening[HttpHandle]:
        """Serve Streamable HTTP at ``http://host:port/mcp`` (port 0 picks a free port):
        ``async with server.serve_http() as handle:`` (closed on exit) or ``handle = await
        server.serve_http()`` (then ``await handle.close()``).

        ``options`` is core's ``HttpOptions`` JSON shape (``{"maxSessions": 100}``, …)."""

        async def start() -> HttpHandle:
            loop = asyncio.get_running_loop()
            native = self._build(loop)
            inbox = Inbox(native, loop)
            try:
                handle = HttpHandle(await native.serve_http(host, port, options))
            except BaseException:
                inbox.close()
                self._serving.remove(native)
                raise
            handle._on_close = lambda: self._serving.remove(native)
            handle._after_close = inbox.close
            return handle

        return Opening(start)

    def asgi_app(self, options: Optional[Dict[str, Any]] = None) -> AsgiApp:
        """The MCP endpoint as an ASGI 3 application, to mount in a web app of your own:
        ``app.mount("/mcp", server.asgi_app())`` (FastAPI, Starlette; the endpoint is then
        ``/mcp/``) or any ASGI server (``uvicorn``, ``hypercorn``).

        ``options`` is ``serve_http``'s ``HttpOptions`` JSON shape; without ``path`` it serves
        whatever path the host routes to it. Core applies every HTTP rule (eras, sessions,
        ``Origin``/``Host`` checks, body cap, ``Accept``); answers stream (SSE events as they are
        produced), and a client that disconnects cancels its 2026-07-28 request. No lifespan
        wiring is needed: the engine starts on the first request."""
        return AsgiApp(self, options)

    async def serve_streams(
        self,
        reader: asyncio.StreamReader,
        writer: asyncio.StreamWriter,
        *,
        on_loop: Optional[bool] = None,
    ) -> None:
        """Serve one connection over an asyncio stream pair (a TCP or Unix socket from
        ``asyncio.start_server``, a subprocess's pipes): newline-delimited JSON-RPC, as on
        stdio, until the input ends (or the peer goes away) and every answer is written. The
        writer is left open for the caller to close. ``on_loop`` as for :meth:`serve_stdio`."""
        loop = asyncio.get_running_loop()
        native = self._build(loop)
        try:
            with Inbox(native, loop):
                if not (
                    _pump.wanted(on_loop, self)
                    and await _pump.serve_streams(native, reader, writer)
                ):
                    await _asgi.serve_streams(native, reader, writer)
        finally:
            self._serving.remove(native)

    # ---- list changes ----

    def notify_tools_changed(self) -> int:
        """Send ``notifications/tools/list_changed`` to every connected client that gets it.

        Legacy sessions get the notification; 2026-07-28 clients listening with
        ``subscriptions/listen`` get the change on their stream. Returns how many were told.
        """
        return sum(n.notify_tools_list_changed() for n in list(self._serving))

    def notify_prompts_changed(self) -> int:
        """Send ``notifications/prompts/list_changed`` (as :meth:`notify_tools_changed`)."""
        return sum(n.notify_prompts_list_changed() for n in list(self._serving))

    def notify_resources_changed(self) -> int:
        """Send ``notifications/resources/list_changed`` (as :meth:`notify_tools_changed`)."""
        return sum(n.notify_resources_list_changed() for n in list(self._serving))

    def notify_resource_updated(self, uri: str) -> int:
        """Send ``notifications/resources/updated`` to the clients subscribed to ``uri``."""
        return sum(n.notify_resource_updated(uri) for n in list(self._serving))

    # ---- telemetry ----

    def metrics(self) -> str:
        """This server's metrics as a Prometheus text exposition (format 0.0.4): request
        durations by the OpenTelemetry MCP conventions, requests by method, tool and outcome,
        in-flight requests, refusals, live sessions, listen streams and connections, added up
        over every transport it serves. Recorded when the server option ``metrics`` is on
        (``Server(..., options={"metrics": True})``); HTTP can also serve them at
        ``options={"metricsPath": "/metrics"}``."""
        return _native.metrics_text(list(self._serving))
