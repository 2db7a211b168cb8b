"""Input schemas from type hints, checked through a real tools/list."""

from __future__ import annotations


from mcpcore import Client


async def test_schemas_from_type_hints(app_argv):
    async with await Client.connect_stdio(app_argv, mode="legacy") as c:
        tools = {t["name"]: t for t in await c.list_tools()}
    echo = tools["echo"]
    assert echo["description"] == "Echo the text."
    assert echo["inputSchema"] == {
        "type": "object",
        "properties": {"text": {"type": "string"}},
        "required": ["text"],
    }
    assert tools["add"]["description"] == "Add two numbers"
    # The Context parameter is not part of the schema.
    assert tools["add"]["inputSchema"] == {
        "type": "object",
        "properties": {"a": {"type": "number"}, "b": {"type": "number"}},
        "required": ["a", "b"],
    }
    assert tools["typed"]["inputSchema"] == {
        "type": "object",
        "properties": {
            "name": {"type": "string"},
            "count": {"type": "integer"},
            "ratio": {"type": "number"},
            "flag": {"type": "boolean"},
            "tags": {"type": "array", "items": {"type": "string"}},
            "scores": {"type": "object", "additionalProperties": {"type": "integer"}},
            "mode": {"enum": ["fast", "slow"], "type": "string"},
            "note": {"type": ["string", "null"]},
            "limit": {"type": "integer", "default": 10},
        },
        "required": ["name", "count", "ratio", "flag", "tags", "scores", "mode"],
    }
    assert tools["where"]["inputSchema"] == {"type": "object", "properties": {}}


async def test_typed_arguments_arrive(app_argv):
    args = {
        "name": "n",
        "count": 2,
        "ratio": 0.5,
        "flag": True,
        "tags": ["a"],
        "scores": {"x": 1},
        "mode": "fast",
    }
    async with await Client.connect_stdio(app_argv, mode="modern") as c:
        r = await c.call_tool("typed", args)
        assert r["content"][0]["text"] == "n:2:0.5:True:['a']:{'x': 1}:fast:None:10"
        bad = await c.call_tool("typed", dict(args, mode="medium"))
        assert bad["isError"] is True


def test_explicit_input_schema_wins():
    from mcpcore import Server

    s = Server("x", "1")
    schema = {"type": "object", "properties": {"q": {"type": "string", "minLength": 1}}}

    @s.tool(input_schema=schema)
    def search(q):  # noqa: ANN001 - no hints on purpose
        return q

    assert s._entries[0].definition["inputSchema"] == schema
