"""MCP Apps (io.modelcontextprotocol/ui): app resources and linked tools registered from Python,
read back by the Python client over Streamable HTTP in both eras; refusals of invalid
registrations and of non-app reads."""

from __future__ import annotations

import pytest

from mcpcore import APP_MIME_TYPE, Client, Context, McpcoreError, Server, ui_resource_uri

HTML = "<!DOCTYPE html><html><body>weather</body></html>"
UI = "io.modelcontextprotocol/ui"


def make_server() -> Server:
    server = Server("py-apps", "1")

    @server.app_resource(
        "ui://weather/dashboard",
        csp={"connectDomains": ["https://api.example"]},
        permissions=["clipboardWrite"],
        prefers_border=True,
    )
    def dashboard() -> str:
        """The weather dashboard."""
        return HTML

    @server.tool(ui="ui://weather/dashboard")
    def weather(city: str) -> str:
        """Current weather."""
        return f"sunny in {city}"

    @server.tool(ui="ui://weather/dashboard", ui_visibility=["app"])
    def refresh() -> str:
        return "refreshed"

    @server.resource("ui://raw/{kind}", mime_type="text/html")
    def raw(kind: str) -> str:
        return "<p>not an app</p>"

    @server.tool()
    def client_apps(ctx: Context) -> str:
        return str(UI in ctx.client_capabilities.get("extensions", {}))

    return server


@pytest.fixture
async def endpoint():
    handle = await make_server().serve_http("127.0.0.1", 0)
    try:
        yield handle.url
    finally:
        await handle.close()


@pytest.mark.parametrize("mode", ["legacy", "modern"])
async def test_app_resources_and_links_in_either_era(endpoint, mode):
    async with await Client.connect_http(endpoint, mode=mode, options={"apps": True}) as c:
        assert c.era == mode
        assert c.server_supports_apps
        assert c.server_capabilities["extensions"][UI] == {"mimeTypes": [APP_MIME_TYPE]}
        tools = {t["name"]: t for t in await c.list_tools()}
        assert ui_resource_uri(tools["weather"]) == "ui://weather/dashboard"
        assert tools["refresh"]["_meta"]["ui"]["visibility"] == ["app"]
        assert ui_resource_uri(tools["client_apps"]) is None
        listed = {r["uri"]: r for r in await c.list_resources()}
        assert listed["ui://weather/dashboard"]["mimeType"] == APP_MIME_TYPE
        assert listed["ui://weather/dashboard"]["description"] == "The weather dashboard."

        app = await c.read_app_resource(ui_resource_uri(tools["weather"]) or "")
        assert app.html == HTML
        assert app.mime_type == APP_MIME_TYPE
        assert app.meta == {
            "csp": {"connectDomains": ["https://api.example"]},
            "permissions": {"clipboardWrite": {}},
            "prefersBorder": True,
        }
        # The client advertised the extension (option "apps").
        assert (await c.call_tool("client_apps"))["content"][0]["text"] == "True"

        with pytest.raises(McpcoreError) as e:
            await c.read_app_resource("https://example/x")
        assert e.value.kind == "invalid_argument"
        with pytest.raises(McpcoreError) as e:
            await c.read_app_resource("ui://raw/page")
        assert "text/html;profile=mcp-app" in e.value.message


async def test_client_without_the_option_does_not_advertise(endpoint):
    async with await Client.connect_http(endpoint, mode="legacy") as c:
        assert (await c.call_tool("client_apps"))["content"][0]["text"] == "False"


async def test_invalid_registrations_are_refused():
    dangling = Server("dangling", "1")

    @dangling.tool(ui="ui://missing")
    def linked() -> str:
        return "x"

    with pytest.raises(ValueError, match="ui://missing"):
        await dangling.serve_http("127.0.0.1", 0)

    wrong_scheme = Server("wrong", "1")

    @wrong_scheme.app_resource("https://example/page")
    def page() -> str:
        return HTML

    with pytest.raises(ValueError, match="ui://"):
        await wrong_scheme.serve_http("127.0.0.1", 0)
