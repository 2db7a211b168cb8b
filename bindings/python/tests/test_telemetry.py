"""Telemetry through the Python door: the Prometheus exposition (``server.metrics()`` and the
listener's ``metricsPath``) parsed by ``prometheus_client``'s parser after a scripted
workload; ``ctx.trace_context`` continuing the caller's W3C trace; and, in a process of its
own (``otlp_scenario.py``: telemetry is installed once per process), spans exported over OTLP
decoded with the official ``opentelemetry-proto`` definitions, a Python handler's own
OpenTelemetry span nesting under the server's span; core's log events on the ``mcpcore``
logger at the level ``set_log_level`` sets."""

from __future__ import annotations

import asyncio
import json
import logging
import os
import subprocess
import sys
import urllib.request
from typing import Any, Dict, List, Optional, Tuple

import pytest

from prometheus_client.parser import text_string_to_metric_families

from mcpcore import Client, Context, Server, set_log_level

TP = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"


def make_server(metrics: bool) -> Server:
    server = Server("telemetry-test", "1.0", options={"metrics": metrics})

    @server.tool()
    def echo(text: str) -> str:
        """Echo the text."""
        return text

    @server.tool()
    def trace(ctx: Context) -> str:
        """The handler's trace context."""
        return ctx.trace_context["traceparent"]

    return server


def sample(text: str, family: str, labels: Dict[str, str]) -> Optional[float]:
    for fam in text_string_to_metric_families(text):
        for s in fam.samples:
            if s.name == family and s.labels == labels:
                return float(s.value)
    return None


async def test_metrics_are_a_prometheus_exposition_of_the_workload():
    server = make_server(metrics=True)
    opts = {"metricsPath": "/metrics"}
    async with server.serve_http(options=opts) as handle:
        async with Client.connect_http(handle.url, mode="modern") as c:
            for _ in range(3):
                await c.call_tool("echo", {"text": "x"})
            try:
                await c.call_tool("missing", {})
            except Exception:
                pass
        async with Client.connect_http(handle.url, mode="legacy") as c:
            await c.call_tool("echo", {"text": "y"})
            scraped = urllib.request.urlopen(handle.url.replace("/mcp", "/metrics")).read()
            text = scraped.decode()
            live = sample(text, "mcpcore_legacy_sessions", {})
            assert live == 1.0, text
    echo = {"mcp_method_name": "tools/call", "gen_ai_tool_name": "echo"}
    assert sample(text, "mcpcore_server_requests_total", echo) == 4.0, text
    assert sample(text, "mcp_server_operation_duration_seconds_count", echo) == 4.0
    missing = {
        "mcp_method_name": "tools/call",
        "gen_ai_tool_name": "missing",
        "error_type": "-32602",
    }
    assert sample(text, "mcpcore_server_requests_total", missing) == 1.0, text
    assert sample(text, "mcpcore_server_refused_total", {"reason": "busy"}) == 0.0
    # Once the listener closed its core server is gone: nothing is serving, no series.
    assert sample(server.metrics(), "mcpcore_server_requests_total", echo) is None


async def test_server_metrics_adds_up_every_transport_it_serves():
    server = make_server(metrics=True)
    async with server.serve_http() as a, server.serve_http() as b:
        for h in (a, b):
            async with Client.connect_http(h.url, mode="modern") as c:
                await c.call_tool("echo", {"text": "x"})
        echo = {"mcp_method_name": "tools/call", "gen_ai_tool_name": "echo"}
        assert sample(server.metrics(), "mcpcore_server_requests_total", echo) == 2.0


async def test_metrics_off_records_no_series():
    server = make_server(metrics=False)
    async with server.serve_http() as h:
        async with Client.connect_http(h.url, mode="modern") as c:
            await c.call_tool("echo", {"text": "x"})
        text = server.metrics()
        echo = {"mcp_method_name": "tools/call", "gen_ai_tool_name": "echo"}
        assert sample(text, "mcpcore_server_requests_total", echo) is None
        assert sample(text, "mcpcore_server_requests_in_flight", {}) == 0.0


async def test_a_handler_reads_the_callers_trace_context():
    server = make_server(metrics=False)
    async with server.serve_http() as h:
        for mode in ("modern", "legacy"):
            async with Client.connect_http(h.url, mode=mode) as c:
                params = {"name": "trace", "arguments": {}, "_meta": {"traceparent": TP}}
                r = await c.request("tools/call", params)
                seen = r["content"][0]["text"]
                assert seen.startswith("00-4bf92f3577b34da6a3ce929d0e0e4736-"), (mode, seen)
                assert "00f067aa0ba902b7" not in seen, "the server span is a new child"
                fresh = await c.call_tool("trace", {})
                assert "4bf92f3577b34da6a3ce929d0e0e4736" not in fresh["content"][0]["text"]


def test_spans_export_over_otlp_and_a_handlers_span_nests_under_the_servers():
    here = os.path.dirname(__file__)
    done = subprocess.run(
        [sys.executable, os.path.join(here, "otlp_scenario.py")],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "ok" in done.stdout


STOPPING_SERVER = """
import sys
import mcpcore
from mcpcore import Server

mcpcore.configure_telemetry({"otlp": {"endpoint": sys.argv[1], "intervalMs": 600000}})
server = Server("stop-flush", "1.0")


@server.tool()
def echo(text: str) -> str:
    return text


server.run_stdio()
"""


def _trace_receiver() -> Tuple[Any, List[bytes]]:
    """An OTLP/HTTP receiver on 127.0.0.1 keeping the bodies of ``/v1/traces``; shut it down."""
    import threading
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

    bodies: List[bytes] = []

    class Receiver(BaseHTTPRequestHandler):
        def do_POST(self) -> None:  # noqa: N802 (http.server's name)
            body = self.rfile.read(int(self.headers.get("content-length", "0")))
            if self.path == "/v1/traces":
                bodies.append(body)
            self.send_response(200)
            self.send_header("content-length", "0")
            self.end_headers()

        def log_message(self, *_args: object) -> None:
            pass

    rx = ThreadingHTTPServer(("127.0.0.1", 0), Receiver)
    threading.Thread(target=rx.serve_forever, daemon=True).start()
    return rx, bodies


def test_a_stdio_server_exports_its_spans_before_run_stdio_returns():
    """With a ten-minute export interval the spans leave the child only because a server that
    stops serving (stdin ended) exports what it recorded before returning (``stopFlushMs``)."""
    rx, bodies = _trace_receiver()
    argv = [sys.executable, "-c", STOPPING_SERVER, f"http://127.0.0.1:{rx.server_port}"]

    async def call() -> None:
        async with Client.connect_stdio(argv) as c:
            assert (await c.call_tool("echo", {"text": "hi"}))["content"][0]["text"] == "hi"
            assert not bodies, "nothing exported while serving (ten-minute interval)"

    try:
        # Leaving the block ends the child's stdin and waits for it to exit.
        asyncio.run(call())
    finally:
        rx.shutdown()
    assert b"tools/call echo" in b"".join(bodies), "the server span was exported before exit"


EXITING_CLIENT = """
import asyncio
import sys
import mcpcore
from mcpcore import Client

mcpcore.configure_telemetry({"otlp": {"endpoint": sys.argv[1], "intervalMs": 600000}})


async def main():
    async with Client.connect_stdio([sys.executable, "-c", sys.argv[2]]) as c:
        await c.call_tool("echo", {"text": "hi"})


asyncio.run(main())
print("called")
"""

PLAIN_SERVER = """
from mcpcore import Server

server = Server("plain", "1.0")


@server.tool()
def echo(text: str) -> str:
    return text


server.run_stdio()
"""


def test_a_script_exports_its_client_spans_when_the_interpreter_exits():
    """A client script ends without flushing, long before the ten-minute interval: its spans
    leave only because ``configure_telemetry`` registered an ``atexit`` flush."""
    rx, bodies = _trace_receiver()
    try:
        argv = [sys.executable, "-c", EXITING_CLIENT, f"http://127.0.0.1:{rx.server_port}"]
        done = subprocess.run(
            [*argv, PLAIN_SERVER], capture_output=True, text=True, timeout=60, check=False
        )
    finally:
        rx.shutdown()
    assert done.returncode == 0 and "called" in done.stdout, done.stderr
    assert b"tools/call echo" in b"".join(bodies), "the client span was exported at exit"


NOTE = "notifications/mcpcore-test-note"


def _note(url: str) -> None:
    """POST a 2026-07-28 notification nobody handles: core logs it at DEBUG."""
    body = json.dumps({"jsonrpc": "2.0", "method": NOTE, "params": {"_meta": {}}}).encode()
    req = urllib.request.Request(url, data=body, method="POST")
    for k, v in {
        "Content-Type": "application/json",
        "Accept": "application/json, text/event-stream",
        "MCP-Protocol-Version": "2026-07-28",
        "Mcp-Method": NOTE,
    }.items():
        req.add_header(k, v)
    assert urllib.request.urlopen(req).status == 202


class _Records(logging.Handler):
    def __init__(self) -> None:
        super().__init__(level=1)
        self.records: List[logging.LogRecord] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append(record)

    def notes(self) -> List[logging.LogRecord]:
        return [r for r in self.records if f"method={NOTE}" in r.getMessage()]


async def _wait_notes(h: _Records, n: int) -> None:
    for _ in range(200):
        if len(h.notes()) >= n:
            return
        await asyncio.sleep(0.025)
    raise AssertionError(f"no DEBUG record of the notification: {h.records}")


async def test_core_log_events_reach_the_mcpcore_logger_at_the_level_set():
    """Core's events arrive on logger ``mcpcore`` (children named after core's modules) at the
    level ``set_log_level`` asks; warnings by default; "off" stops them."""
    handler = _Records()
    root = logging.getLogger("mcpcore")
    root.addHandler(handler)
    old = root.level
    root.setLevel(1)
    try:
        async with make_server(metrics=False).serve_http() as handle:
            _note(handle.url)  # the default route is "warn": no DEBUG record
            set_log_level("debug")
            _note(handle.url)
            await _wait_notes(handler, 1)
            rec = handler.notes()[0]
            assert rec.levelno == logging.DEBUG
            assert rec.name.startswith("mcpcore.transport.http"), rec.name
            assert rec.getMessage().startswith("ignoring a modern notification")
            set_log_level("off")
            _note(handle.url)
            set_log_level("trace")
            _note(handle.url)
            await _wait_notes(handler, 2)
            await asyncio.sleep(0.2)
            assert len(handler.notes()) == 2, "a record came while the route was off"
        with pytest.raises(ValueError, match="level must be"):
            set_log_level("verbose")
    finally:
        set_log_level("warn")
        root.removeHandler(handler)
        root.setLevel(old)


async def test_a_client_records_what_it_sent():
    """``client.metrics()``: the conventions' client operation histogram and the requests sent
    by method, target and outcome, with ``options={"metrics": True}``; nothing without."""
    server = make_server(metrics=False)
    async with Client.connect_in_memory(server, options={"metrics": True}) as c:
        for _ in range(2):
            await c.call_tool("echo", {"text": "x"})
        with pytest.raises(Exception):
            await c.call_tool("missing", {})
        text = c.metrics()
    echo = {"mcp_method_name": "tools/call", "gen_ai_tool_name": "echo"}
    assert sample(text, "mcpcore_client_requests_total", echo) == 2.0, text
    assert sample(text, "mcp_client_operation_duration_seconds_count", echo) == 2.0, text
    missing = {
        "mcp_method_name": "tools/call",
        "gen_ai_tool_name": "missing",
        "error_type": "-32602",
    }
    assert sample(text, "mcpcore_client_requests_total", missing) == 1.0, text
    sess = c.metrics()
    assert (
        sample(sess, "mcp_client_session_duration_seconds_count", {"network_transport": "pipe"})
        == 1.0
    )
    async with Client.connect_in_memory(server) as quiet:
        await quiet.call_tool("echo", {"text": "x"})
        assert sample(quiet.metrics(), "mcpcore_client_requests_total", echo) is None
