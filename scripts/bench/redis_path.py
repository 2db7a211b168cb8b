"""Latency of the paths that go through the backplane, for scripts/bench-scaleout.sh.

usage: redis_path.py ROUNDS URL_A URL_B

Measures, sequentially over keep-alive connections (the client's own cost is the same for every
deployment, so differences between runs are the backplane's):
  * an input_required round of demo-server's `confirm` tool: the first call on A, the retry
    (whose sealed requestState is claimed once, MRTR-06) on B;
  * list-change fan-out: `touch` posted to A, until the notification arrives on a
    `subscriptions/listen` stream held by B.
With A == B and no --redis that is the in-process path. Prints `BENCH name p50_us p99_us`.
"""
import http.client
import json
import sys
import threading
import time
import urllib.parse

META = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": {"elicitation": {}},
    "io.modelcontextprotocol/clientInfo": {"name": "bench", "version": "1"},
}


def conn(url):
    u = urllib.parse.urlsplit(url)
    return http.client.HTTPConnection(u.hostname, u.port, timeout=10), u.path or "/mcp"


def post(c, path, method, params, name=None):
    params = dict(params, _meta=META)
    body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": method, "params": params})
    h = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream",
         "MCP-Protocol-Version": "2026-07-28", "Mcp-Method": method}
    if name:
        h["Mcp-Name"] = name
    c.request("POST", path, body, h)
    r = c.getresponse()
    data = r.read()
    if r.status != 200:
        raise SystemExit(f"{method}: HTTP {r.status}: {data[:200]!r}")
    text = data.decode()
    if text.startswith("{"):
        return json.loads(text)
    msgs = [json.loads(line[5:]) for line in text.splitlines() if line.startswith("data:") and line[5:].strip()]
    return msgs[-1]


def pct(xs, p):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(len(xs) * p / 100))]


def report(name, xs):
    print(f"BENCH {name} p50_us={pct(xs, 50) * 1e6:.0f} p99_us={pct(xs, 99) * 1e6:.0f}", flush=True)


def mrtr(rounds, a, b):
    (ca, pa), (cb, pb) = conn(a), conn(b)
    xs = []
    for i in range(rounds):
        args = {"name": "confirm", "arguments": {"question": f"q{i}"}}
        t0 = time.perf_counter()
        first = post(ca, pa, "tools/call", args, "confirm")["result"]
        retry = dict(args, requestState=first["requestState"],
                     inputResponses={"confirm": {"action": "accept", "content": {"ok": True}}})
        done = post(cb, pb, "tools/call", retry, "confirm")
        xs.append(time.perf_counter() - t0)
        if "result" not in done:
            raise SystemExit(f"retry failed: {done}")
    report("mrtr_round", xs)


def fan_out(rounds, a, b):
    u = urllib.parse.urlsplit(b)
    c = http.client.HTTPConnection(u.hostname, u.port, timeout=10)
    body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "subscriptions/listen",
                       "params": {"_meta": META, "notifications": {"toolsListChanged": True}}})
    c.request("POST", u.path or "/mcp", body, {
        "Content-Type": "application/json", "Accept": "application/json, text/event-stream",
        "MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "subscriptions/listen"})
    stream = c.getresponse()
    if stream.status != 200:
        raise SystemExit(f"listen: HTTP {stream.status}")
    arrived = threading.Semaphore(0)

    def reader():
        for line in stream:
            if line.startswith(b"data:") and b"list_changed" in line:
                arrived.release()

    threading.Thread(target=reader, daemon=True).start()
    ca, pa = conn(a)
    xs = []
    for _ in range(rounds):
        t0 = time.perf_counter()
        post(ca, pa, "tools/call", {"name": "touch", "arguments": {}}, "touch")
        if not arrived.acquire(timeout=10):
            raise SystemExit("a list change did not arrive within 10 s")
        xs.append(time.perf_counter() - t0)
    report("fan_out", xs)


if __name__ == "__main__":
    n, a, b = int(sys.argv[1]), sys.argv[2], sys.argv[3]
    mrtr(n, a, b)
    fan_out(max(1, n // 4), a, b)
