"""Scale-out from Python: the one ``redis`` server option (core's JSON shape) makes two Python
servers workers of one deployment. A legacy session initialized on one is served by the other and
DELETE on either ends it on both (REQUIREMENTS LHTTP-02, LHTTP-03). The requests are raw HTTP so
each can be sent to the chosen worker, as a load balancer without sticky sessions would."""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import socket
import subprocess
import tempfile
import time
import urllib.error
import urllib.request

import pytest

from mcpcore import Server

VERSION = "2025-11-25"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture
def redis_url():
    """A real redis-server on 127.0.0.1 without persistence; missing, the test fails."""
    exe = os.environ.get("MCPCORE_REDIS_SERVER") or shutil.which("redis-server")
    assert exe, "redis-server is required (apt-get install redis-server; scripts/test.sh does)"
    port = _free_port()
    with tempfile.TemporaryDirectory() as d:
        proc = subprocess.Popen(
            [
                exe,
                "--bind",
                "127.0.0.1",
                "--port",
                str(port),
                "--save",
                "",
                "--appendonly",
                "no",
                "--dir",
                d,
            ],
            stdout=subprocess.DEVNULL,
        )
        try:
            deadline = time.monotonic() + 10
            while True:
                try:
                    with socket.create_connection(("127.0.0.1", port), timeout=1) as c:
                        c.sendall(b"PING\r\n")
                        if c.recv(16).startswith(b"+PONG"):
                            break
                except OSError:
                    pass
                assert time.monotonic() < deadline, "redis-server did not answer PING"
                time.sleep(0.02)
            yield f"redis://127.0.0.1:{port}/0"
        finally:
            proc.kill()
            proc.wait()


# The request-state key every worker shares: a Redis-backed server refuses to start without one.
_KEY = {"id": "k1", "key": "KioqKioqKioqKioqKioqKioqKioqKioqKioqKioqKio="}


def _worker(name: str, redis: str) -> Server:
    s = Server(
        "py-worker",
        "1.0.0",
        options={"redis": redis, "redisPrefix": "py-test:", "requestState": {"keys": [_KEY]}},
    )

    @s.tool()
    def whoami() -> str:
        """The worker that ran the call."""
        return name

    return s


def _post(url: str, msg: dict, sid: str | None = None, method: str = "POST"):
    headers = {"Accept": "application/json, text/event-stream"}
    body = None
    if method == "POST":
        headers["Content-Type"] = "application/json"
        body = json.dumps(msg).encode()
    if sid is not None:
        headers["Mcp-Session-Id"] = sid
        headers["MCP-Protocol-Version"] = VERSION
    req = urllib.request.Request(url, data=body, headers=headers, method=method)
    try:
        with urllib.request.urlopen(req, timeout=30) as r:
            text = r.read().decode()
            status, ctype, got_sid = (
                r.status,
                r.headers.get("Content-Type", ""),
                r.headers.get("Mcp-Session-Id"),
            )
    except urllib.error.HTTPError as e:
        return e.code, None, None
    if not text:
        return status, None, got_sid
    if ctype.startswith("text/event-stream"):
        text = [ln[5:].strip() for ln in text.splitlines() if ln.startswith("data:")][-1]
    return status, json.loads(text), got_sid


async def test_workers_share_a_legacy_session_through_the_redis_option(redis_url):
    a = await _worker("a", redis_url).serve_http("127.0.0.1", 0)
    b = await _worker("b", redis_url).serve_http("127.0.0.1", 0)
    try:
        init = {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "initialize",
            "params": {
                "protocolVersion": VERSION,
                "capabilities": {},
                "clientInfo": {"name": "pytest", "version": "1"},
            },
        }
        status, reply, sid = await asyncio.to_thread(_post, a.url, init)
        assert status == 200 and sid, reply
        assert reply["result"]["serverInfo"]["name"] == "py-worker"
        done = {"jsonrpc": "2.0", "method": "notifications/initialized"}
        status, _, _ = await asyncio.to_thread(_post, b.url, done, sid)
        assert status == 202
        call = {
            "jsonrpc": "2.0",
            "id": 2,
            "method": "tools/call",
            "params": {"name": "whoami", "arguments": {}},
        }
        status, reply, _ = await asyncio.to_thread(_post, b.url, call, sid)
        assert status == 200, reply
        assert reply["id"] == 2 and reply["result"]["content"][0]["text"] == "b"
        status, _, _ = await asyncio.to_thread(_post, a.url, {}, sid, "DELETE")
        assert status in (200, 204)
        status, _, _ = await asyncio.to_thread(_post, b.url, {**call, "id": 3}, sid)
        assert status == 404, "the session ended on A is unknown on B too"
    finally:
        await a.close()
        await b.close()


async def test_a_bad_redis_url_is_refused_at_start():
    with pytest.raises(ValueError):
        await Server("x", "1", options={"redis": "http://not-redis"}).serve_http("127.0.0.1", 0)
