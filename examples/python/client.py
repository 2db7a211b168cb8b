"""An example MCP client on the mcpcore Python binding: spawns server.py over stdio (or connects
to ``--url``) and drives every feature it has, printing what comes back.

    python client.py                       # spawns server.py, negotiates the era (auto)
    python client.py --mode legacy         # or modern
    python client.py --url http://127.0.0.1:8000/mcp
"""

from __future__ import annotations

import argparse
import asyncio
import pathlib
import sys
from typing import Any, Dict, List, Optional

from mcpcore import Client, McpError

HERE = pathlib.Path(__file__).resolve().parent


async def on_elicitation(params: Dict[str, Any]) -> Dict[str, Any]:
    """Answer the server's question (a real client would ask its user)."""
    print(f"elicitation: {params['message']}")
    return {"action": "accept", "content": {"text": "Buy milk."}}


async def run(mode: str, url: Optional[str]) -> None:
    progress: List[str] = []
    if url is None:
        argv = [sys.executable, str(HERE / "server.py")]
        client = await Client.connect_stdio(argv, mode=mode, on_elicitation=on_elicitation)
    else:
        client = await Client.connect_http(url, mode=mode, on_elicitation=on_elicitation)
    async with client:
        print(f"era: {client.era} ({client.protocol_version})")
        print(f"server: {client.server_info['name']} {client.server_info['version']}")
        print(f"tools: {', '.join(t['name'] for t in await client.list_tools())}")
        r = await client.call_tool("add", {"a": 2, "b": 3})
        print(f"add: {r['structuredContent']['sum']}")
        r = await client.call_tool(
            "count", {"to": 3}, progress=lambda p, total, msg: progress.append(msg)
        )
        print(f"count: {r['content'][0]['text']}")
        await asyncio.sleep(0.05)  # progress is delivered on this loop; let it drain
        print(f"progress: {'; '.join(progress)}")
        r = await client.call_tool("count", {"to": 0})
        print(f"count error: {r['content'][0]['text']} (isError={r.get('isError')})")
        r = await client.call_tool("add_note", {"title": "shopping"})
        print(f"add_note: {r['content'][0]['text']}")
        r = await client.read_resource("notes://shopping")
        print(f"notes://shopping: {r['contents'][0]['text']}")
        r = await client.read_resource("notes://list")
        print(f"notes://list: {r['contents'][0]['text']}")
        r = await client.get_prompt("summarize", {"title": "welcome"})
        print(f"prompt: {r['messages'][0]['content']['text']}")
        r = await client.complete(
            {"type": "ref/prompt", "name": "summarize"}, {"name": "title", "value": "s"}
        )
        print(f"complete: {', '.join(r['completion']['values'])}")
        try:
            await client.call_tool("no_such_tool", {})
        except McpError as e:
            print(f"unknown tool: error {e.code}")


def main() -> None:
    parser = argparse.ArgumentParser(description="Drive the example server.")
    parser.add_argument("--mode", choices=["auto", "legacy", "modern"], default="auto")
    parser.add_argument("--url", help="connect to this Streamable HTTP endpoint instead")
    args = parser.parse_args()
    asyncio.run(run(args.mode, args.url))


if __name__ == "__main__":
    main()
