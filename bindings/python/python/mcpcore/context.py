"""``Context``: what a server handler may know about and do for the request it serves."""

from __future__ import annotations

import sys
from typing import Any, Dict, List, Optional, Tuple, Union

from . import _native
from .results import InputRequiredResult, Sent

__all__ = ["Context"]

_LEVELS = ("debug", "info", "notice", "warning", "error", "critical", "alert", "emergency")


def _as_path(capability: str, more: Tuple[str, ...]) -> List[str]:
    path: List[str] = []
    for part in (capability, *more):
        if not isinstance(part, str):
            raise TypeError(f"a capability path is made of str, not {type(part).__name__}")
        path.extend(part.split("."))
    return path


class Context:
    """What a handler may know about and do for the request it serves.

    Declare a parameter annotated ``Context`` to receive it.
    """

    __slots__ = ("_native",)

    def __init__(self, native: _native.NativeContext) -> None:
        self._native = native

    @property
    def cancelled(self) -> bool:
        """True once the client cancelled the request (or the connection ended)."""
        return bool(self._native.cancelled)

    @property
    def task_id(self) -> Optional[str]:
        """The task this call runs as (its ``taskId``), or ``None`` for a plain call."""
        return self._native.task_id

    @property
    def protocol_version(self) -> Optional[str]:
        """The protocol version of this request."""
        return self._native.protocol_version

    @property
    def is_modern(self) -> bool:
        """True on a 2026-07-28 (stateless) request."""
        return bool(self._native.is_modern)

    @property
    def method(self) -> str:
        """The JSON-RPC method (``tools/call``, …)."""
        return self._native.method

    @property
    def request_id(self) -> Union[int, str]:
        """The request's JSON-RPC id as the client sent it (an ``int`` or a ``str``)."""
        rid: Union[int, str] = self._native.request_id
        return rid

    @property
    def meta(self) -> Dict[str, Any]:
        """The request's ``params._meta`` as sent (``{}`` when it has none)."""
        return self._native.meta

    @property
    def headers(self) -> Optional[Dict[str, str]]:
        """The headers of the HTTP request that carried this request, lower-case name →
        value (a repeated header's values joined with ``", "``); ``None`` over stdio. Every
        header is here, ``authorization`` included: use :attr:`principal` for who is calling,
        and never pass the client's token on to another service."""
        return self._native.headers

    @property
    def trace_context(self) -> Dict[str, str]:
        """The W3C trace context of the server span handling this request,
        ``{"traceparent": ..., "tracestate": ...}`` (``tracestate`` when the caller sent one):
        in the caller's trace when the request carried one (``_meta.traceparent``, or over HTTP
        the ``traceparent`` header). When the process uses OpenTelemetry (its API is imported),
        a handler runs with this context as the current OpenTelemetry context, so its own spans
        nest under the server's without further code; elsewhere hand it to a propagator:
        ``TraceContextTextMapPropagator().extract(ctx.trace_context)``."""
        tc: Dict[str, str] = self._native.trace_context
        return tc

    @property
    def name(self) -> Optional[str]:
        """The tool or prompt name, or the resource URI."""
        return self._native.name

    @property
    def client_capabilities(self) -> Dict[str, Any]:
        """The client's capabilities as this request declares them."""
        return self._native.client_capabilities

    @property
    def client_info(self) -> Optional[Dict[str, Any]]:
        """The client's ``clientInfo`` (name, version, …), when it sent one."""
        return self._native.client_info

    @property
    def principal(self) -> Optional[Dict[str, Any]]:
        """The verified access token's principal on an OAuth-protected HTTP endpoint
        (``{"subject", "issuer", "scopes", "clientId", "expiresAt", "claims"}``), else ``None``."""
        return self._native.principal

    @property
    def input_responses(self) -> Optional[Dict[str, Any]]:
        """2026-07-28 retry: the client's answers by key (``inputResponses``); ``None`` on a
        first round. Legacy sessions see the answers core's shim collected."""
        return self._native.input_responses

    @property
    def request_state(self) -> Optional[str]:
        """The ``request_state`` a previous :meth:`input_required` round carried (verified by
        core), or ``None``."""
        return self._native.request_state

    def require_client_capability(self, capability: str, *more: str) -> None:
        """Raise ``McpError`` -32021 (with ``data.requiredCapabilities``) unless the client
        declared the capability: ``"sampling"``, ``"elicitation.url"`` or ``("elicitation",
        "url")``. Let it propagate: the client gets exactly that error."""
        self._native.require_client_capability(_as_path(capability, more))

    def close_sse_stream(self) -> bool:
        """Legacy Streamable HTTP: close this request's SSE stream now; the client reconnects with
        ``Last-Event-ID`` and gets the rest (SSE polling). ``False`` where there is no such
        stream (stdio, 2026-07-28)."""
        return bool(self._native.close_sse_stream())

    def input_required(
        self, input_requests: Dict[str, Dict[str, Any]], request_state: Optional[str] = None
    ) -> InputRequiredResult:
        """An explicit ``input_required`` answer: ``return ctx.input_required({"user_name":
        {"method": "elicitation/create", "params": {...}}}, request_state="step1")``.

        The client answers each key; the retried request sees them in :attr:`input_responses`
        and the state in :attr:`request_state` (sealed by core, so it cannot be forged). Legacy
        sessions send the requests to the client and run the handler again. Only tools,
        prompts and resources may answer it.
        """
        return InputRequiredResult(input_requests, request_state)

    def progress(
        self, progress: float, total: Optional[float] = None, message: Optional[str] = None
    ) -> Sent:
        """Report progress against the request's progress token (falsy when nothing was sent:
        no token, not increasing, cancelled). Awaitable, and usable without ``await``."""
        return Sent(self._native.progress(float(progress), total, message))

    def log(self, level: str, data: Any, logger: Optional[str] = None) -> Sent:
        """Send a log message (``"debug"`` … ``"emergency"``), filtered by the client's level.
        Awaitable, and usable without ``await``."""
        return Sent(self._native.log(level, data, logger))

    async def request_client(self, method: str, params: Optional[Dict[str, Any]] = None) -> Any:
        """Ask the client (``elicitation/create``, ``sampling/createMessage``, ``roots/list``).

        Legacy sessions send a real request; on 2026-07-28 the server answers ``input_required``
        and the handler runs again from the start with the answer (so make the same calls in the
        same order, and do side effects after the last one).
        """
        return await self._native.request_client(method, params)

    async def elicit(
        self, message: Union[str, Dict[str, Any]], schema: Optional[Dict[str, Any]] = None
    ) -> Dict[str, Any]:
        """Ask the user for input matching ``schema``: ``{"action": ..., "content": {...}}``.

        ``await ctx.elicit("Your name?", {"type": "object", ...})``, or the whole
        ``elicitation/create`` params: ``await ctx.elicit({"message": ..., "requestedSchema":
        {...}})`` (also URL mode: ``{"mode": "url", "url": ..., "elicitationId": ...}``)."""
        if isinstance(message, dict):
            if schema is not None:
                raise TypeError("elicit(params) takes the schema inside params")
            params: Dict[str, Any] = dict(message)
        elif schema is None:
            raise TypeError("elicit(message, schema): a schema, or the whole params dict")
        else:
            params = {"message": message, "requestedSchema": schema}
        answer: Dict[str, Any] = await self.request_client("elicitation/create", params)
        return answer

    async def sample(
        self,
        messages: Any,
        max_tokens: int,
        *,
        system_prompt: Optional[str] = None,
        **params: Any,
    ) -> Dict[str, Any]:
        """Ask the client's model (``sampling/createMessage``): ``messages`` is a str (one user
        message) or a list of ``SamplingMessage`` dicts; extra keywords are further params
        (``temperature``, ``modelPreferences``, …). Returns the ``CreateMessageResult``."""
        if isinstance(messages, str):
            messages = [{"role": "user", "content": {"type": "text", "text": messages}}]
        body: Dict[str, Any] = {"messages": list(messages), "maxTokens": int(max_tokens)}
        if system_prompt is not None:
            body["systemPrompt"] = system_prompt
        body.update(params)
        answer: Dict[str, Any] = await self.request_client("sampling/createMessage", body)
        return answer

    async def list_roots(self) -> List[Dict[str, Any]]:
        """The client's roots (``roots/list``): a list of ``{"uri", "name"?}``."""
        answer: Dict[str, Any] = await self.request_client("roots/list", {})
        roots: List[Dict[str, Any]] = answer.get("roots", [])
        return roots


def otel_attach(ctx: Context) -> Any:
    """When the process uses OpenTelemetry (``opentelemetry.context`` is imported), make the
    server span's context current for the handler about to run (its own spans then nest under
    the server's); the token for :func:`otel_detach`, or ``None``."""
    otel = sys.modules.get("opentelemetry.context")
    if otel is None:
        return None
    from opentelemetry import propagate

    return otel.attach(propagate.extract(ctx.trace_context))


def otel_detach(token: Any) -> None:
    """Undo :func:`otel_attach`."""
    if token is not None:
        sys.modules["opentelemetry.context"].detach(token)
