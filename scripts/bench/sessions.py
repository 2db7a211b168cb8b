#!/usr/bin/env python3
"""Idle legacy session RSS and start-up time for scripts/bench-http.sh (stdlib only).

usage: sessions.py SERVER_BINARY [N_SESSIONS]
Starts `SERVER --http 127.0.0.1:0` (pinned by the caller) five times and reports the time from
spawn to the first answered request (min and median; includes process creation and reading the
bound address), then opens N legacy sessions (initialize + notifications/initialized, left
idle; a session without the notification is reaped after the server's short pre-initialized
timeout) on one server and reports the RSS growth per session.
"""
import http.client
import json
import subprocess
import sys
import time


def rss_kib(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


INIT = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
    "protocolVersion": "2025-11-25", "capabilities": {},
    "clientInfo": {"name": "bench", "version": "1"}}})
INITIALIZED = json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"})
HEADERS = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}


def launch(exe):
    """Start the server; return (process, connection, ms from spawn to the first answer)."""
    t0 = time.perf_counter()
    p = subprocess.Popen([exe, "--http", "127.0.0.1:0"], stderr=subprocess.PIPE,
                         stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL)
    line = p.stderr.readline().decode()
    addr = line.split("http://")[1].strip().removesuffix("/mcp")
    host, port = addr.rsplit(":", 1)
    conn = http.client.HTTPConnection(host, int(port), timeout=10)
    conn.request("POST", "/mcp", INIT, HEADERS)
    r = conn.getresponse()
    r.read()
    assert r.status == 200, r.status
    return p, conn, (time.perf_counter() - t0) * 1000


def stop(p):
    p.terminate()
    try:
        p.wait(5)
    except subprocess.TimeoutExpired:
        p.kill()


def main():
    exe = sys.argv[1]
    n = int(sys.argv[2]) if len(sys.argv) > 2 else 5000
    startups = []
    for _ in range(5):
        p, _conn, ms = launch(exe)
        startups.append(ms)
        stop(p)
    startups.sort()
    p, conn, _ = launch(exe)
    try:
        time.sleep(0.2)
        before = rss_kib(p.pid)
        for _ in range(n):
            conn.request("POST", "/mcp", INIT, HEADERS)
            r = conn.getresponse()
            r.read()
            assert r.status == 200, r.status
            sid = r.getheader("Mcp-Session-Id")
            conn.request("POST", "/mcp", INITIALIZED, {**HEADERS, "Mcp-Session-Id": sid})
            r = conn.getresponse()
            r.read()
            assert r.status == 202, r.status
        time.sleep(0.5)
        after = rss_kib(p.pid)
        per = (after - before) * 1024 / n
        print(f"BENCH startup_ms_min={startups[0]:.1f} startup_ms_median={startups[2]:.1f} "
              f"sessions={n} rss_before_kib={before} rss_after_kib={after} "
              f"bytes_per_idle_session={per:.0f}")
    finally:
        stop(p)


if __name__ == "__main__":
    main()
