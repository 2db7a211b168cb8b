"""Run by test_telemetry.py in a process of its own (core's telemetry installs once per process):
an OTLP/HTTP receiver on 127.0.0.1 decodes what core exports with the official
``opentelemetry-proto`` definitions; Python tools (a ``def`` and an ``async def``) start their own
OpenTelemetry SDK spans, with no propagation code, and they nest under the server spans; and a
call over stdio to a child process that exports on its own joins the client's trace. Checks: client and server
spans of ``tools/call nested`` in one trace, the server span's attributes, the handler's span a
child of the exported server span, and the metrics export. Prints ``ok``."""

from __future__ import annotations

import asyncio
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Dict, List

from opentelemetry import trace as otel
from opentelemetry.proto.collector.metrics.v1 import metrics_service_pb2
from opentelemetry.proto.collector.trace.v1 import trace_service_pb2
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

import mcpcore
from mcpcore import Client, Context, Server

BODIES: Dict[str, List[bytes]] = {"/v1/traces": [], "/v1/metrics": []}


class Receiver(BaseHTTPRequestHandler):
    def do_POST(self) -> None:  # noqa: N802 (http.server's name)
        body = self.rfile.read(int(self.headers.get("content-length", "0")))
        assert self.headers.get("content-type") == "application/x-protobuf"
        BODIES[self.path].append(body)
        self.send_response(200)
        self.send_header("content-length", "0")
        self.end_headers()

    def log_message(self, *_args: object) -> None:
        pass


def attrs(span: Any) -> Dict[str, Any]:
    out: Dict[str, Any] = {}
    for kv in span.attributes:
        v = kv.value
        out[kv.key] = v.string_value if v.HasField("string_value") else v.int_value
    return out


STDIO_SERVER = """
import sys
import mcpcore
from mcpcore import Server

mcpcore.configure_telemetry(
    {"otlp": {"endpoint": sys.argv[1], "serviceName": "py-stdio-server", "intervalMs": 50}}
)
server = Server("otlp-stdio", "1.0")


@server.tool()
def echo(text: str) -> str:
    \"\"\"Echo the text.\"\"\"
    return text


server.run_stdio()
assert mcpcore.flush_telemetry(10.0)
"""


def decoded_spans() -> List[Any]:
    """Every span received so far, with its service name: ``(service, span)``."""
    out = []
    for body in BODIES["/v1/traces"]:
        for rs in trace_service_pb2.ExportTraceServiceRequest.FromString(body).resource_spans:
            service = next(
                kv.value.string_value for kv in rs.resource.attributes if kv.key == "service.name"
            )
            out += [(service, s) for ss in rs.scope_spans for s in ss.spans]
    return out


async def stdio_leg(endpoint: str) -> None:
    """A call over stdio to a server process exporting on its own: the client span (this
    process) and the server span (the child) are one trace, the server span the child."""
    for mode, text in (("legacy", "legacy over stdio"), ("modern", "modern over stdio")):
        argv = [sys.executable, "-c", STDIO_SERVER, endpoint]
        async with Client.connect_stdio(argv, mode=mode) as c:
            assert (await c.call_tool("echo", {"text": text}))["content"][0]["text"] == text
        assert await asyncio.to_thread(mcpcore.flush_telemetry, 10.0)
        spans = decoded_spans()
        srv = [
            s
            for svc, s in spans
            if svc == "py-stdio-server"
            and s.name == "tools/call echo"
            and s.kind == s.SPAN_KIND_SERVER
            and attrs(s).get("jsonrpc.request.id") is not None
        ]
        cli = {
            s.span_id: s for svc, s in spans if svc == "py-otlp" and s.kind == s.SPAN_KIND_CLIENT
        }
        linked = [s for s in srv if s.parent_span_id in cli]
        assert linked, (mode, spans)
        s = linked[-1]
        assert attrs(s)["network.transport"] == "pipe", attrs(s)
        assert s.trace_id == cli[s.parent_span_id].trace_id
        BODIES["/v1/traces"].clear()


async def main() -> None:
    rx = ThreadingHTTPServer(("127.0.0.1", 0), Receiver)
    threading.Thread(target=rx.serve_forever, daemon=True).start()
    endpoint = f"http://127.0.0.1:{rx.server_address[1]}"
    mcpcore.configure_telemetry(
        {"otlp": {"endpoint": endpoint, "serviceName": "py-otlp", "intervalMs": 50}}
    )
    try:
        mcpcore.configure_telemetry({})
        raise AssertionError("a second install must be refused")
    except ValueError:
        pass

    sdk = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(sdk))
    tracer = provider.get_tracer("handler")

    server = Server("otlp-py", "1.0", options={"metrics": True})

    # No propagation code in the handlers: with OpenTelemetry imported, a handler runs in the
    # server span's context, so the spans it starts nest under it.
    @server.tool()
    def nested(ctx: Context) -> str:
        """Start an OpenTelemetry span under the server's (a plain def, on a worker thread)."""
        with tracer.start_as_current_span("handler-work"):
            pass
        return ctx.trace_context["traceparent"]

    @server.tool()
    async def nested_async(ctx: Context) -> str:
        """The same from an async def, on the serving loop."""
        with tracer.start_as_current_span("handler-work-async"):
            await asyncio.sleep(0)
        return ctx.trace_context["traceparent"]

    async with server.serve_http() as h:
        async with Client.connect_http(h.url, mode="modern") as c:
            seen = (await c.call_tool("nested", {}))["content"][0]["text"]
            seen_async = (await c.call_tool("nested_async", {}))["content"][0]["text"]
        assert await asyncio.to_thread(mcpcore.flush_telemetry, 10.0)
        metrics_text = server.metrics()

    spans = [
        s
        for body in BODIES["/v1/traces"]
        for rs in trace_service_pb2.ExportTraceServiceRequest.FromString(body).resource_spans
        for ss in rs.scope_spans
        for s in ss.spans
    ]
    services = {
        kv.value.string_value
        for body in BODIES["/v1/traces"]
        for rs in trace_service_pb2.ExportTraceServiceRequest.FromString(body).resource_spans
        for kv in rs.resource.attributes
        if kv.key == "service.name"
    }
    assert services == {"py-otlp"}, services
    named = [s for s in spans if s.name == "tools/call nested"]
    server_span = [s for s in named if s.kind == s.SPAN_KIND_SERVER]
    client_span = [s for s in named if s.kind == s.SPAN_KIND_CLIENT]
    assert len(server_span) == 1 and len(client_span) == 1, spans
    srv, cli = server_span[0], client_span[0]
    a = attrs(srv)
    assert a["mcp.method.name"] == "tools/call" and a["gen_ai.tool.name"] == "nested", a
    assert a["network.transport"] == "tcp" and a["mcp.protocol.version"] == "2026-07-28", a
    assert srv.trace_id == cli.trace_id
    http_span = next(s for s in spans if s.span_id == srv.parent_span_id)
    assert http_span.name == "POST" and http_span.parent_span_id == cli.span_id
    # The handler's context is the exported server span's, and its own span nests under it.
    assert seen == f"00-{srv.trace_id.hex()}-{srv.span_id.hex()}-01", (seen, srv)
    work = {w.name: w for w in sdk.get_finished_spans()}
    assert set(work) == {"handler-work", "handler-work-async"}, work
    srv_async = next(
        s for s in spans if s.name == "tools/call nested_async" and s.kind == s.SPAN_KIND_SERVER
    )
    assert seen_async == f"00-{srv_async.trace_id.hex()}-{srv_async.span_id.hex()}-01"
    for w, parent in ((work["handler-work"], srv), (work["handler-work-async"], srv_async)):
        assert w.parent is not None, w
        assert w.parent.span_id == int.from_bytes(parent.span_id, "big"), (w, parent)
        assert w.context.trace_id == int.from_bytes(parent.trace_id, "big")

    await stdio_leg(endpoint)

    points = [
        (m.name, dp)
        for body in BODIES["/v1/metrics"]
        for rm in metrics_service_pb2.ExportMetricsServiceRequest.FromString(body).resource_metrics
        for sm in rm.scope_metrics
        for m in sm.metrics
        for dp in m.histogram.data_points
    ]
    durations = [
        dp
        for name, dp in points
        if name == "mcp.server.operation.duration"
        and any(
            kv.key == "gen_ai.tool.name" and kv.value.string_value == "nested"
            for kv in dp.attributes
        )
    ]
    assert durations and durations[-1].count == 1, points
    assert sum(durations[-1].bucket_counts) == 1
    assert len(durations[-1].bucket_counts) == len(durations[-1].explicit_bounds) + 1
    assert "mcp_server_operation_duration_seconds" in metrics_text
    otel.get_tracer_provider()  # the global provider was never touched by core
    rx.shutdown()
    print("ok")


asyncio.run(main())
