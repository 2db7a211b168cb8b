"""The official Python SDK (`mcp`, pinned) as the client of `mcpcore gateway` in front of two
servers no one here wrote the client for: the official `@modelcontextprotocol/server-everything`
(TypeScript, installed from npm) and the Rust `demo-server`. Over stdio and Streamable HTTP, in
the legacy era (`initialize`), the modern era (`discover`, an `input_required` round driven by
hand) and `mode="auto"`: list, call tools of both, progress, an elicitation.
"""

from __future__ import annotations

import contextlib
import json
import os
import pathlib
import shutil
import subprocess
from typing import Any, AsyncIterator, Iterator, List, Tuple

import mcp
import mcp.types as types
import pytest
from mcp import ClientSession, StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client

from conftest import REPO, _target_dir

EVERYTHING = "@modelcontextprotocol/server-everything"
EVERYTHING_VERSION = "2026.8.31"  # the pin of cli/tests/everything.rs


def everything_entry() -> pathlib.Path:
    """server-everything's entry, installed once into the cache the Rust tests share."""
    root = pathlib.Path.home() / ".cache" / "mcpcore" / "npm"
    d = root / f"{EVERYTHING.replace('/', '+')}@{EVERYTHING_VERSION}"
    entry = d / "node_modules" / EVERYTHING / "dist" / "index.js"
    if not entry.exists():
        npm = shutil.which("npm")
        assert npm, "npm is required to install server-everything"
        staging = root / f".staging-py-{os.getpid()}"
        staging.mkdir(parents=True, exist_ok=True)
        (staging / "package.json").write_text('{"private":true}')
        subprocess.run(
            [npm, "install", "--no-audit", "--no-fund", "--ignore-scripts", "--no-package-lock",
             f"{EVERYTHING}@{EVERYTHING_VERSION}"],
            cwd=staging, check=True, timeout=300, capture_output=True,
        )  # fmt: skip
        if not entry.exists():
            staging.rename(d)
    assert entry.exists(), entry
    return entry


@pytest.fixture(scope="module")
def gateway_cmd(tmp_path_factory: pytest.TempPathFactory, demo_server: str) -> List[str]:
    exe = _target_dir() / "debug" / "mcpcore"
    if not exe.exists():
        subprocess.run(
            ["cargo", "build", "-q", "-p", "mcpcore-cli", "--bin", "mcpcore"], cwd=REPO, check=True
        )
    cfg = tmp_path_factory.mktemp("gw") / "gateway.json"
    allow = ["echo", "get-sum", "trigger-long-running-operation"]
    cfg.write_text(
        json.dumps(
            {
                "upstreams": {
                    "ev": {"command": ["node", str(everything_entry()), "stdio"], "allow": allow},
                    "demo": {"command": [demo_server]},
                }
            }
        )
    )
    return [str(exe), "gateway", str(cfg), "--quiet"]


@contextlib.contextmanager
def http_gateway(cmd: List[str]) -> Iterator[str]:
    p = subprocess.Popen([*cmd, "--http", "127.0.0.1:0"], stderr=subprocess.PIPE, text=True)
    try:
        assert p.stderr is not None
        for line in p.stderr:
            if line.startswith("mcpcore: serving "):
                yield line.split()[-1]
                break
        else:
            raise AssertionError("the gateway did not start")
    finally:
        p.terminate()
        p.wait(timeout=30)


class Answers:
    def __init__(self) -> None:
        self.asked: List[str] = []

    async def elicitation(
        self, context: Any, params: types.ElicitRequestParams
    ) -> types.ElicitResult:
        self.asked.append(params.message)
        return types.ElicitResult(action="accept", content={"ok": True})


@contextlib.asynccontextmanager
async def session(
    cmd: List[str], transport: str, url: str, answers: Answers
) -> AsyncIterator[ClientSession]:
    async with contextlib.AsyncExitStack() as stack:
        if transport == "stdio":
            params = StdioServerParameters(command=cmd[0], args=cmd[1:])
            read, write = await stack.enter_async_context(stdio_client(params))
        else:
            read, write = await stack.enter_async_context(streamable_http_client(url))
        yield await stack.enter_async_context(
            ClientSession(
                read, write, read_timeout_seconds=60, elicitation_callback=answers.elicitation
            )
        )


async def both_servers(s: ClientSession) -> None:
    names = {t.name for t in (await s.list_tools()).tools}
    assert {"ev__echo", "ev__get-sum", "demo__echo", "demo__confirm"} <= names, names
    assert "ev__get-env" not in names, "filtered by the allow list"
    r = await s.call_tool("ev__get-sum", {"a": 2, "b": 3})
    assert "5" in r.content[0].text  # type: ignore[union-attr]
    r = await s.call_tool("demo__echo", {"text": "through the gateway"})
    assert r.content[0].text == "through the gateway"  # type: ignore[union-attr]
    progress: List[Tuple[float, Any, Any]] = []

    async def on_progress(p: float, total: Any, message: Any) -> None:
        progress.append((p, total, message))

    await s.call_tool("demo__slow", {"ms": 40}, progress_callback=on_progress)
    assert progress and progress[-1][0] == progress[-1][1] == 4, progress


TRANSPORTS = ["stdio", "http"]


@pytest.mark.parametrize("transport", TRANSPORTS)
async def test_legacy_sdk_session_through_the_gateway(
    gateway_cmd: List[str], transport: str
) -> None:
    answers = Answers()
    with http_gateway(gateway_cmd) as url:
        async with session(gateway_cmd, transport, url, answers) as s:
            init = await s.initialize()
            assert init.server_info.name == "mcpcore-gateway"
            await both_servers(s)
            r = await s.call_tool("demo__confirm", {"question": "Ship it?"})
            assert r.content[0].text == "confirmed: Ship it?"  # type: ignore[union-attr]
    assert answers.asked == ["Ship it?"]


@pytest.mark.parametrize("transport", TRANSPORTS)
async def test_modern_sdk_session_through_the_gateway(
    gateway_cmd: List[str], transport: str
) -> None:
    with http_gateway(gateway_cmd) as url:
        async with session(gateway_cmd, transport, url, Answers()) as s:
            assert "2026-07-28" in (await s.discover()).supported_versions
            await both_servers(s)
            first = await s.call_tool(
                "demo__confirm", {"question": "Ship?"}, allow_input_required=True
            )
            assert isinstance(first, types.InputRequiredResult), first
            ((key, req),) = first.input_requests.items()
            assert req.method == "elicitation/create"
            answer = types.ElicitResult(action="accept", content={"ok": True})
            r = await s.call_tool(
                "demo__confirm",
                {"question": "Ship?"},
                input_responses={key: answer},
                request_state=first.request_state,
            )
            assert isinstance(r, types.CallToolResult)
            assert r.content[0].text == "confirmed: Ship?"  # type: ignore[union-attr]


@pytest.mark.parametrize("transport", TRANSPORTS)
async def test_auto_sdk_client_through_the_gateway(gateway_cmd: List[str], transport: str) -> None:
    answers = Answers()
    with http_gateway(gateway_cmd) as url:
        target: Any = (
            StdioServerParameters(command=gateway_cmd[0], args=gateway_cmd[1:])
            if transport == "stdio"
            else url
        )
        async with mcp.Client(
            target, mode="auto", elicitation_callback=answers.elicitation, read_timeout_seconds=60
        ) as client:
            assert client.protocol_version == "2026-07-28"
            await both_servers(client.session)
            r = await client.call_tool("demo__confirm", {"question": "Auto?"})
            assert r.content[0].text == "confirmed: Auto?"  # type: ignore[union-attr]
    assert answers.asked == ["Auto?"]
