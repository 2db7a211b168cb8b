#!/usr/bin/env python3
"""Idle legacy session RSS and start-up time for scripts/bench-http.sh (stdlib only).

usage: sessions.py SERVER_BINARY [N_SESSIONS]
Starts `SERVER --http 127.0.0.1:0` (pinned by the caller), measures the time from spawn to the
first answered request, then opens N legacy sessions (initialize, left idle) and reports the RSS
growth per session.
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


def main():
    exe = sys.argv[1]
    n = int(sys.argv[2]) if len(sys.argv) > 2 else 5000
    t0 = time.perf_counter()
    p = subprocess.Popen([exe, "--http", "127.0.0.1:0"], stderr=subprocess.PIPE, stdin=subprocess.DEVNULL)
    try:
        line = p.stderr.readline().decode()
        addr = line.split("http://")[1].strip().removesuffix("/mcp")
        host, port = addr.rsplit(":", 1)
        conn = http.client.HTTPConnection(host, int(port), timeout=10)
        init = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "capabilities": {},
            "clientInfo": {"name": "bench", "version": "1"}}})
        headers = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
        conn.request("POST", "/mcp", init, headers)
        r = conn.getresponse()
        r.read()
        startup_ms = (time.perf_counter() - t0) * 1000
        assert r.status == 200, r.status
        time.sleep(0.2)
        before = rss_kib(p.pid)
        for _ in range(n):
            conn.request("POST", "/mcp", init, headers)
            r = conn.getresponse()
            r.read()
            assert r.status == 200, r.status
        time.sleep(0.5)
        after = rss_kib(p.pid)
        per = (after - before) * 1024 / n
        print(f"BENCH startup_ms={startup_ms:.1f} sessions={n} rss_before_kib={before} "
              f"rss_after_kib={after} bytes_per_idle_session={per:.0f}")
    finally:
        p.terminate()
        try:
            p.wait(5)
        except subprocess.TimeoutExpired:
            p.kill()


if __name__ == "__main__":
    main()
