"""`python -m mcpcore`: the mcpcore command line from the wheel, against the Rust demo-server over
stdio (core's entry point; the same exit statuses as the binary)."""

from __future__ import annotations

import json
import subprocess
import sys


def run(*args: str, stdin: str = "") -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "mcpcore", *args],
        input=stdin,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def test_call_prints_the_result_and_exits_zero(demo_server: str) -> None:
    p = run("call", "add", "a=2", "b=3", "--", demo_server)
    assert p.returncode == 0, p.stderr
    assert json.loads(p.stdout)["structuredContent"] == {"sum": 5.0}


def test_exit_statuses_and_help(demo_server: str) -> None:
    p = run("call", "echo", "--no-check", "{}", "--", demo_server)
    assert p.returncode == 1, "isError"
    assert json.loads(p.stdout)["isError"] is True
    p = run("call", "fail", "--", demo_server)
    assert p.returncode == 2 and "-32603" in p.stderr
    p = run("call", "echo", "text=x", "--", "/nonexistent/server")
    assert p.returncode == 3
    p = run("--help")
    assert p.returncode == 0 and "Exit status" in p.stdout


def test_an_elicitation_is_answered_on_stdin(demo_server: str) -> None:
    p = run("call", "--mode", "legacy", "confirm", "question=Ship?", "--", demo_server, stdin="y\n")
    assert p.returncode == 0, p.stderr
    assert json.loads(p.stdout)["content"][0]["text"] == "confirmed: Ship?"
    assert "The server asks: Ship?" in p.stderr
