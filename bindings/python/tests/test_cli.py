"""`python -m mcpcore`: the mcpcore command line from the wheel, against the Rust demo-server over
stdio (core's entry point; the same exit statuses as the binary)."""

from __future__ import annotations

import json
import os
import pathlib
import shlex
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


SERVER = '''
import sys

from mcpcore import Server

server = Server("hello", "1.0.0")


@server.tool()
def echo(text: str) -> str:
    """Echo the text."""
    return text


if "--http" in sys.argv:
    server.run_http()  # http://127.0.0.1:8000/mcp
else:
    server.run_stdio()
'''


def test_the_two_spellings_of_one_call_mean_the_same(tmp_path: pathlib.Path) -> None:
    """The command line's own examples, as written: a URL first, or a stdio command after --."""
    (tmp_path / "server.py").write_text(SERVER)
    bin_dir = pathlib.Path(sys.executable).parent
    assert (bin_dir / "mcpcore").exists(), "pip installs the mcpcore script"
    env = {**os.environ, "PATH": f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}"}

    def shell(line: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            shlex.split(line), cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120
        )

    over_stdio = shell("mcpcore call echo text=hi -- python server.py")
    assert over_stdio.returncode == 0, over_stdio.stderr
    http = subprocess.Popen(
        [sys.executable, "server.py", "--http"], cwd=tmp_path, stderr=subprocess.PIPE, text=True
    )
    try:
        assert http.stderr is not None
        line = http.stderr.readline()
        assert "http://127.0.0.1:8000/mcp" in line, line
        over_http = shell("mcpcore call http://127.0.0.1:8000/mcp echo text=hi")
        assert over_http.returncode == 0, over_http.stderr
    finally:
        http.terminate()
        http.wait(timeout=30)
    a, b = json.loads(over_stdio.stdout), json.loads(over_http.stdout)
    assert a["content"] == b["content"] == [{"type": "text", "text": "hi"}]
