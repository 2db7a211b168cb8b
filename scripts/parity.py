#!/usr/bin/env python3
"""Cross-door parity: one server definition (examples/parity: server.rs, server.c, server.py,
server.mjs) run through the Rust API, the C ABI, the Python binding and the Node binding must
answer the same requests identically, in both eras, over real stdio pipes.

    python3 scripts/parity.py rust="CMD" c="CMD" python="CMD" node="CMD"

Each door's answers are compared byte for byte with the first door's, after normalising ids (each
answer is re-serialised compactly with its id set to 0 and its object members sorted: member
order carries no meaning in JSON, and a C handler's result text is sent with its own order). The first
door's answers are also checked against what the protocol says they must be (so four equally
wrong doors still fail), and the comparer checks itself on a deliberately altered answer (a
comparer that cannot see a difference fails the run). Standard library only.
"""

from __future__ import annotations

import copy
import json
import shlex
import subprocess
import sys
import threading
from typing import Any, Dict, List, Optional, Tuple

LEGACY = "2025-11-25"
MODERN = "2026-07-28"
TIMEOUT = 20.0

# (label, method, params): the requests every door answers, in both eras.
REQUESTS: List[Tuple[str, str, Dict[str, Any]]] = [
    ("tools/list", "tools/list", {}),
    ("prompts/list", "prompts/list", {}),
    ("resources/list", "resources/list", {}),
    ("resources/templates/list", "resources/templates/list", {}),
    ("resources/read", "resources/read", {"uri": "parity://readme"}),
    ("resources/read unknown", "resources/read", {"uri": "parity://missing"}),
    ("prompts/get", "prompts/get", {"name": "greet", "arguments": {"name": "ada"}}),
    ("prompts/get unknown", "prompts/get", {"name": "nosuch", "arguments": {}}),
    (
        "completion/complete",
        "completion/complete",
        {
            "ref": {"type": "ref/prompt", "name": "greet"},
            "argument": {"name": "name", "value": "al"},
        },
    ),
    ("call: a string", "tools/call", {"name": "echo", "arguments": {"text": "hi"}}),
    (
        "call: a structured value",
        "tools/call",
        {"name": "add", "arguments": {"a": 2, "b": 3}},
    ),
    ("call: content blocks", "tools/call", {"name": "blocks", "arguments": {}}),
    ("call: an image", "tools/call", {"name": "pixel", "arguments": {}}),
    ("call: a tool error", "tools/call", {"name": "refuse", "arguments": {}}),
    ("call: an error", "tools/call", {"name": "broken", "arguments": {}}),
    (
        "call: invalid arguments",
        "tools/call",
        {"name": "add", "arguments": {"a": "x", "b": 1}},
    ),
    ("call: unknown tool", "tools/call", {"name": "nosuch", "arguments": {}}),
]

ENVELOPE = {
    "io.modelcontextprotocol/protocolVersion": MODERN,
    "io.modelcontextprotocol/clientCapabilities": {},
    "io.modelcontextprotocol/clientInfo": {"name": "parity-check", "version": "1"},
}


class Door:
    """One server process over stdio: send a request, read lines until its answer."""

    def __init__(self, name: str, command: str) -> None:
        self.name = name
        self.proc = subprocess.Popen(
            shlex.split(command),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        self.stderr: List[bytes] = []
        threading.Thread(target=self._drain, daemon=True).start()

    def _drain(self) -> None:
        assert self.proc.stderr is not None
        for line in self.proc.stderr:
            self.stderr.append(line)

    def send(self, message: Dict[str, Any]) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(json.dumps(message).encode() + b"\n")
        self.proc.stdin.flush()

    def ask(self, id_: int, method: str, params: Dict[str, Any]) -> bytes:
        self.send({"jsonrpc": "2.0", "id": id_, "method": method, "params": params})
        line = self._read_answer(id_)
        if line is None:
            tail = b"".join(self.stderr[-20:]).decode(errors="replace")
            raise RuntimeError(
                f"{self.name}: no answer to {method} within {TIMEOUT} s\n{tail}"
            )
        return line

    def _read_answer(self, id_: int) -> Optional[bytes]:
        result: List[Optional[bytes]] = [None]

        def read() -> None:
            assert self.proc.stdout is not None
            for raw in self.proc.stdout:
                msg = json.loads(raw)
                # Notifications (and requests) the server sends on its own are not answers.
                if msg.get("id") == id_ and "method" not in msg:
                    result[0] = raw
                    return

        t = threading.Thread(target=read, daemon=True)
        t.start()
        t.join(TIMEOUT)
        return result[0]

    def close(self) -> None:
        if self.proc.stdin:
            self.proc.stdin.close()
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


def normalise(raw: bytes) -> str:
    msg = json.loads(raw)
    msg["id"] = 0
    return json.dumps(msg, separators=(",", ":"), ensure_ascii=False, sort_keys=True)


def run_door(name: str, command: str, era: str) -> Dict[str, str]:
    door = Door(name, command)
    answers: Dict[str, str] = {}
    try:
        if era == LEGACY:
            init = {
                "protocolVersion": LEGACY,
                "capabilities": {},
                "clientInfo": {"name": "parity-check", "version": "1"},
            }
            answers["initialize"] = normalise(door.ask(0, "initialize", init))
            door.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        else:
            answers["server/discover"] = normalise(
                door.ask(0, "server/discover", {"_meta": ENVELOPE})
            )
        for i, (label, method, params) in enumerate(REQUESTS, start=1):
            if era == MODERN:
                params = dict(params, _meta=ENVELOPE)
            answers[label] = normalise(door.ask(i, method, params))
    finally:
        door.close()
    return answers


def compare(reference: Dict[str, str], other: Dict[str, str]) -> List[str]:
    """The labels whose answers differ."""
    return [label for label in reference if reference[label] != other.get(label)]


def expect(answers: Dict[str, str], era: str) -> List[str]:
    """What the protocol requires of the reference door's answers (TOOL-05..07, CMP-01)."""
    a = {k: json.loads(v) for k, v in answers.items()}
    problems = []

    def check(label: str, ok: bool) -> None:
        if not ok:
            problems.append(f"{era} {label}: {answers[label]}")

    r = lambda label: a[label].get("result", {})  # noqa: E731
    check(
        "tools/list",
        [t["name"] for t in r("tools/list").get("tools", [])]
        == ["echo", "add", "blocks", "pixel", "refuse", "broken"],
    )
    check(
        "call: a string",
        r("call: a string").get("content") == [{"type": "text", "text": "hi"}],
    )
    check(
        "call: a structured value",
        r("call: a structured value").get("structuredContent") == {"sum": 5},
    )
    check(
        "call: content blocks", len(r("call: content blocks").get("content", [])) == 2
    )
    check(
        "call: an image",
        r("call: an image").get("content", [{}])[0].get("data") == "iVBORw==",
    )
    check("call: a tool error", r("call: a tool error").get("isError") is True)
    check("call: an error", a["call: an error"].get("error", {}).get("code") == -32000)
    check(
        "call: invalid arguments", r("call: invalid arguments").get("isError") is True
    )
    check("call: unknown tool", "error" in a["call: unknown tool"])
    check("prompts/get unknown", "error" in a["prompts/get unknown"])
    check("resources/read unknown", "error" in a["resources/read unknown"])
    c = r("completion/complete").get("completion", {})
    check(
        "completion/complete",
        c.get("values") == ["alice", "albert"] and c.get("total") == 2,
    )
    if era == MODERN:
        for label in answers:
            if label != "server/discover" and "result" in a[label]:
                check(label, a[label]["result"].get("resultType") == "complete")
    return problems


def self_test(reference: Dict[str, str]) -> None:
    """The comparer sees a one-character change (or the check could never fail)."""
    altered = copy.deepcopy(reference)
    altered["call: a string"] = altered["call: a string"].replace('"hi"', '"hI"')
    if compare(reference, altered) != ["call: a string"] or compare(
        reference, reference
    ):
        raise SystemExit(
            "parity: the comparer does not see a deliberately altered answer"
        )


def main(argv: List[str]) -> int:
    doors = [arg.split("=", 1) for arg in argv]
    if len(doors) < 2 or any(len(d) != 2 for d in doors):
        print(__doc__, file=sys.stderr)
        return 2
    failures = 0
    for era in (LEGACY, MODERN):
        results = {name: run_door(name, cmd, era) for name, cmd in doors}
        ref_name = doors[0][0]
        reference = results[ref_name]
        self_test(reference)
        for problem in expect(reference, era):
            failures += 1
            print(f"parity: {ref_name} answers against the protocol: {problem}")
        for name, answers in results.items():
            for label in compare(reference, answers):
                failures += 1
                print(f"parity: {era} {label}: {name} differs from {ref_name}")
                print(f"  {ref_name}: {reference[label]}")
                print(f"  {name}: {answers.get(label)}")
        print(
            f"== parity {era}: {len(reference)} answers compared across {len(doors)} doors"
        )
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
