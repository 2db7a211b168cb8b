"""Leak check (bounded): connect/close cycles and calls through the binding, client and server in
this process over Streamable HTTP on 127.0.0.1, plus stdio connect/close cycles against the Rust
demo-server (the binding's stdio client path). After a warm-up and `gc.collect()`, RSS is sampled
after a first and after a second measured phase of equal work; it must stay flat (within 10 %
and within a small per-operation budget), and nothing may stay referenced by the interpreter.

Bounds: 1,000 HTTP connect/close cycles, 10,000 calls, 280 stdio cycles in all; the calls are
issued 50 at a time so the test finishes in well under a minute on the dev build.
"""

from __future__ import annotations

import asyncio
import gc
import sys
import time
from typing import Any, Dict, List, Tuple

import pytest

from mcpcore import Client

from app import server

if not sys.platform.startswith("linux"):  # pragma: no cover - CI and dev machines are Linux
    pytest.fail("the leak check reads /proc/self/status (Linux)", pytrace=False)

BATCH = 50  # calls in flight at once
# Growth budget between the two measured phases. A connect/close cycle legitimately leaves memory
# behind for a while: core's keep-alive task of the closed session's GET stream lives until its
# next tick (keepaliveMs, 15 s; ~2.5 KB per legacy session) and the closed client's pool reaper
# until poolIdleTimeoutMs (90 s; under 1 KB). Measured here: ~2.6 KB per cycle (half of them
# legacy) and ~60 B per call; the server's share stops growing once its timer fires (checked by
# waiting it out against the Rust demo-server). A leaked client or session (several KB each) or a leaked object per call
# exceeds the budget; a leaked Python object shows exactly in the object count.
BYTES_PER_CYCLE = 4096
BYTES_PER_CALL = 256


def rss_bytes() -> int:
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
    raise AssertionError("no VmRSS in /proc/self/status")


def settle() -> Tuple[int, int]:
    """RSS and the number of live Python objects after a full collection."""
    for _ in range(3):
        gc.collect()
    return rss_bytes(), len(gc.get_objects())


async def http_cycles(url: str, n: int) -> None:
    # Both eras: legacy opens (initialize) and deletes a session, modern runs `server/discover`.
    for i in range(n):
        c = await Client.connect_http(url, mode="legacy" if i % 2 else "modern")
        await c.close()


async def calls(client: Client, n: int) -> None:
    """n calls, BATCH at a time: text, structured with progress, a resource, a tool error."""
    assert n % BATCH == 0

    def one(i: int) -> Any:
        kind = i % 4
        if kind == 0:
            return client.call_tool("echo", {"text": f"t{i}"})
        if kind == 1:
            return client.call_tool("add", {"a": i, "b": 1})
        if kind == 2:
            return client.read_resource(f"demo://notes/{i}")
        return client.call_tool("fail_tool", {})

    for start in range(0, n, BATCH):
        results: List[Dict[str, Any]] = await asyncio.gather(
            *(one(i) for i in range(start, start + BATCH))
        )
        # The answers are checked, so a phase cannot pass by failing fast.
        for i, r in zip(range(start, start + BATCH), results):
            kind = i % 4
            if kind == 0:
                assert r["content"][0]["text"] == f"t{i}"
            elif kind == 1:
                assert r["structuredContent"]["sum"] == i + 1
            elif kind == 2:
                assert r["contents"][0]["text"] == f"Note {i}"
            else:
                assert r["isError"] is True


def assert_flat(
    label: str, first: Tuple[int, int], second: Tuple[int, int], ops: int, budget: int
) -> None:
    (rss1, objs1), (rss2, objs2) = first, second
    growth = rss2 - rss1
    print(
        f"{label}: RSS {rss1 / 2**20:.1f} -> {rss2 / 2**20:.1f} MiB "
        f"({growth / 1024:+.0f} KiB, budget {budget / 1024:.0f} KiB), objects {objs1} -> {objs2}"
    )
    assert rss2 <= rss1 * 1.10, f"{label}: RSS grew more than 10 %"
    assert growth <= budget, f"{label}: RSS grew {growth} B, over the budget of {budget} B"
    # Python objects: a leaked future or dict per operation would show here exactly.
    assert objs2 - objs1 < ops // 10, f"{label}: {objs2 - objs1} more live Python objects"


async def test_http_connect_close_and_calls_stay_flat():
    started = time.monotonic()
    handle = await server.serve_http("127.0.0.1", 0)
    try:
        async with await Client.connect_http(handle.url, mode="modern") as modern:
            async with await Client.connect_http(handle.url, mode="legacy") as legacy:
                # Warm-up: allocator arenas, thread pools, caches reach their steady size.
                await http_cycles(handle.url, 100)
                await calls(modern, 1000)
                await calls(legacy, 1000)
                before = settle()
                phases = []
                for _ in range(2):
                    await http_cycles(handle.url, 500)
                    await calls(modern, 2500)
                    await calls(legacy, 2500)
                    phases.append(settle())
    finally:
        await handle.close()
    # The first measured phase against the warm-up is reported, the second against the first
    # is asserted (the first can still fill caches sized by load).
    print(f"warm-up -> phase 1: {(phases[0][0] - before[0]) / 2**20:+.1f} MiB")
    budget = 500 * BYTES_PER_CYCLE + 5000 * BYTES_PER_CALL
    assert_flat("http 500 cycles + 5000 calls", phases[0], phases[1], 5500, budget)
    assert time.monotonic() - started < 120, "the leak check overran its time budget"


async def test_stdio_connect_close_stays_flat(demo_server: str):
    async def cycles(n: int) -> None:
        for _ in range(n):
            c = await Client.connect_stdio([demo_server])
            r = await c.call_tool("echo", {"text": "hi"})
            assert r["content"][0]["text"] == "hi"
            await c.close()

    await cycles(40)
    settle()
    phases = []
    for _ in range(3):
        await cycles(80)
        phases.append(settle())
    # A leak grows in every phase; a one-time step of the allocator (a new arena or thread
    # stack, seen once at +1 MiB in a 141 MiB test process with flat object counts) does not:
    # the flatter of the two consecutive pairs must be within the budget.
    pairs = sorted(
        [(phases[0], phases[1]), (phases[1], phases[2])], key=lambda p: p[1][0] - p[0][0]
    )
    assert_flat("stdio 80 cycles", pairs[0][0], pairs[0][1], 80, 80 * BYTES_PER_CYCLE)
