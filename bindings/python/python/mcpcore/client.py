"""The client API: ``Client.connect_stdio`` / ``Client.connect_http`` and awaitable calls."""

from __future__ import annotations

from typing import Any, Dict, List, Optional, Sequence

from . import _native

__all__ = ["Client"]


class Client:
    """A connection to an MCP server of either era.

    ``mode`` is ``"auto"`` (probe ``server/discover``, fall back to ``initialize``),
    ``"legacy"`` or ``"modern"``; ``options`` is core's ``ClientOptions`` JSON shape
    (e.g. ``{"requestTimeoutMs": 5000}``).
    """

    def __init__(self, native: Any) -> None:
        self._native = native

    @classmethod
    async def connect_stdio(
        cls, argv: Sequence[str], *, mode: str = "auto", options: Optional[Dict[str, Any]] = None
    ) -> "Client":
        """Spawn ``argv`` and connect over its stdin/stdout."""
        return cls(await _native.NativeClient.connect_stdio(list(argv), mode, options))

    @classmethod
    async def connect_http(
        cls, url: str, *, mode: str = "auto", options: Optional[Dict[str, Any]] = None
    ) -> "Client":
        """Connect to a Streamable HTTP endpoint (``http://host:port/mcp``)."""
        return cls(await _native.NativeClient.connect_http(url, mode, options))

    async def __aenter__(self) -> "Client":
        return self

    async def __aexit__(self, *exc: Any) -> None:
        await self.close()

    @property
    def era(self) -> Optional[str]:
        """``"legacy"`` or ``"modern"``."""
        return self._native.era

    @property
    def protocol_version(self) -> Optional[str]:
        """The negotiated protocol version."""
        return self._native.protocol_version

    @property
    def instructions(self) -> Optional[str]:
        """The server's instructions, if any."""
        return self._native.instructions

    @property
    def server_info(self) -> Optional[Dict[str, Any]]:
        """The server's ``serverInfo`` (name, version, …)."""
        return self._native.server_info

    async def request(
        self, method: str, params: Optional[Dict[str, Any]] = None, *, timeout: Optional[float] = None
    ) -> Dict[str, Any]:
        """Any request; returns the raw result. Errors: ``McpError`` / ``McpcoreError``."""
        return await self._native.request(method, params, timeout)

    async def list_tools(self, *, timeout: Optional[float] = None) -> List[Dict[str, Any]]:
        """Every tool (cursors followed)."""
        return (await self._native.list_all("tools", timeout))["tools"]

    async def list_prompts(self, *, timeout: Optional[float] = None) -> List[Dict[str, Any]]:
        """Every prompt (cursors followed)."""
        return (await self._native.list_all("prompts", timeout))["prompts"]

    async def list_resources(self, *, timeout: Optional[float] = None) -> List[Dict[str, Any]]:
        """Every resource (cursors followed)."""
        return (await self._native.list_all("resources", timeout))["resources"]

    async def list_resource_templates(
        self, *, timeout: Optional[float] = None
    ) -> List[Dict[str, Any]]:
        """Every resource template (cursors followed)."""
        return (await self._native.list_all("resource_templates", timeout))["resourceTemplates"]

    async def call_tool(
        self,
        name: str,
        arguments: Optional[Dict[str, Any]] = None,
        *,
        timeout: Optional[float] = None,
    ) -> Dict[str, Any]:
        """Call a tool; returns the ``CallToolResult`` (``isError`` results are returned, not raised)."""
        params = {"name": name, "arguments": arguments or {}}
        return await self._native.request("tools/call", params, timeout)

    async def get_prompt(
        self,
        name: str,
        arguments: Optional[Dict[str, str]] = None,
        *,
        timeout: Optional[float] = None,
    ) -> Dict[str, Any]:
        """Get a prompt; returns the ``GetPromptResult``."""
        params: Dict[str, Any] = {"name": name}
        if arguments:
            params["arguments"] = arguments
        return await self._native.request("prompts/get", params, timeout)

    async def read_resource(self, uri: str, *, timeout: Optional[float] = None) -> Dict[str, Any]:
        """Read a resource; returns the ``ReadResourceResult``."""
        return await self._native.request("resources/read", {"uri": uri}, timeout)

    async def close(self) -> None:
        """Close the connection (stdio: close stdin, wait, then terminate the child)."""
        await self._native.close()
