"""Tool return values as results (over real HTTP, both eras), and connection failures."""

from __future__ import annotations

import base64

import pytest

from mcpcore import (
    Audio,
    Client,
    Image,
    McpConnectionError,
    McpError,
    McpcoreError,
    Server,
)

PNG = b"\x89PNG\r\n\x1a\n-not-really"
WAV = b"RIFF-not-really"

server = Server("results", "1.0.0")


@server.tool()
def image() -> object:
    return Image(PNG)


@server.tool()
def audio() -> object:
    return Audio(WAV)


@server.tool(mime_type="image/jpeg")
def raw_bytes() -> bytes:
    return b"jpeg-bytes"


@server.tool()
def blocks() -> list:
    return [{"type": "text", "text": "look:"}, Image(PNG, "image/gif")]


@server.tool()
def whole() -> dict:
    return {"content": [{"type": "text", "text": "failed politely"}], "isError": True}


@server.tool()
def plain_dict() -> dict:
    return {"content": "not blocks", "n": 1}


@server.tool()
def bytes_without_type() -> bytes:
    return b"?"


@pytest.fixture
async def url():
    handle = await server.serve_http("127.0.0.1", 0)
    try:
        yield handle.url
    finally:
        await handle.close()


@pytest.mark.parametrize("mode", ["legacy", "modern"])
async def test_tool_results_from_python_values(url, mode):
    async with await Client.connect_http(url, mode=mode) as c:
        r = await c.call_tool("image", {})
        assert r["content"] == [
            {"type": "image", "data": base64.b64encode(PNG).decode(), "mimeType": "image/png"}
        ]
        r = await c.call_tool("audio", {})
        assert r["content"][0]["type"] == "audio"
        assert r["content"][0]["mimeType"] == "audio/wav"
        assert base64.b64decode(r["content"][0]["data"]) == WAV
        r = await c.call_tool("raw_bytes", {})
        assert r["content"][0]["type"] == "image"
        assert r["content"][0]["mimeType"] == "image/jpeg"
        r = await c.call_tool("blocks", {})
        assert [b["type"] for b in r["content"]] == ["text", "image"]
        assert r["content"][1]["mimeType"] == "image/gif"
        r = await c.call_tool("whole", {})
        assert r["isError"] is True
        assert r["content"] == [{"type": "text", "text": "failed politely"}]
        assert "structuredContent" not in r
        # A dict that is not a whole result stays structured content.
        r = await c.call_tool("plain_dict", {})
        assert r["structuredContent"] == {"content": "not blocks", "n": 1}
        # bytes without a MIME type is the handler's bug: a generic internal error on the wire.
        with pytest.raises(McpError) as e:
            await c.call_tool("bytes_without_type", {})
        assert e.value.code == -32603
        assert "MIME" not in e.value.message


def test_media_checks_its_arguments():
    with pytest.raises(TypeError):
        Image("not bytes")  # type: ignore[arg-type]
    with pytest.raises(ValueError):
        Image(PNG, "png")
    with pytest.raises(ValueError):
        Image(PNG, "text/plain")
    with pytest.raises(ValueError):

        @server.tool(mime_type="nonsense")
        def bad() -> bytes:
            return b""


async def test_connection_failures_are_connection_errors():
    # Port 9 (discard) on loopback: nothing listens there in the test environment.
    with pytest.raises(McpConnectionError) as e:
        await Client.connect_http("http://127.0.0.1:9/mcp", mode="modern")
    assert isinstance(e.value, ConnectionError)
    assert isinstance(e.value, McpcoreError)
    assert e.value.kind == "transport"
