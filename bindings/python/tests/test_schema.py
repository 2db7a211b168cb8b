"""Input schemas from type hints, checked through a real tools/list."""

from __future__ import annotations

import json

import pytest

from mcpcore import Client, McpError


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


POINT = {
    "type": "object",
    "properties": {"x": {"type": "number"}, "y": {"type": "number"}},
    "required": ["x", "y"],
    "title": "Point",
}


@pytest.mark.parametrize("mode", ["legacy", "modern"])
async def test_typeddict_and_dataclass_schemas(app_argv, mode):
    async with await Client.connect_stdio(app_argv, mode=mode) as c:
        tools = {t["name"]: t for t in await c.list_tools()}
        assert tools["midpoint"]["inputSchema"] == {
            "type": "object",
            "properties": {"a": POINT, "b": POINT},
            "required": ["a", "b"],
        }
        assert tools["midpoint"]["outputSchema"] == POINT
        assert tools["box_area"]["inputSchema"] == {
            "type": "object",
            "properties": {
                "box": {
                    "type": "object",
                    "properties": {
                        "corner": POINT,
                        "size": {"type": "number"},
                        "tags": {"type": "array", "items": {"type": "string"}},
                        "color": {"type": "string", "default": "red"},
                    },
                    "required": ["corner", "size"],
                    "title": "Box",
                },
                "label": {
                    "anyOf": [
                        {
                            "type": "object",
                            "properties": {"text": {"type": "string"}},
                            "title": "Label",
                        },
                        {"type": "null"},
                    ]
                },
            },
            "required": ["box"],
        }
        assert tools["box_area"]["outputSchema"] == {
            "type": "object",
            "properties": {"area": {"type": "number"}, "color": {"type": "string"}},
            "required": ["area", "color"],
            "title": "Area",
        }
        assert "outputSchema" not in tools["echo"]

        r = await c.call_tool("midpoint", {"a": {"x": 0, "y": 0}, "b": {"x": 2, "y": 4}})
        assert r["structuredContent"] == {"x": 1, "y": 2}
        assert json.loads(r["content"][0]["text"]) == {"x": 1, "y": 2}
        r = await c.call_tool("box_area", {"box": {"corner": {"x": 0, "y": 0}, "size": 3}})
        assert r.get("isError") is not True
        assert r["structuredContent"] == {"area": 9, "color": "red"}
        # Core validates the arguments against the generated schema...
        r = await c.call_tool("box_area", {"box": {"corner": {"x": 0}, "size": 3}})
        assert r["isError"] is True
        # ...and the structured result against the output schema.
        with pytest.raises(McpError) as e:
            await c.call_tool("liar", {})
        assert e.value.code == -32603


@pytest.mark.parametrize("mode", ["legacy", "modern"])
async def test_pydantic_schemas(app_argv, mode):
    pytest.importorskip("pydantic")
    async with await Client.connect_stdio(app_argv, mode=mode) as c:
        tools = {t["name"]: t for t in await c.list_tools()}
        t = tools["order_total"]
        schema = t["inputSchema"]
        assert schema["required"] == ["order"]
        assert schema["properties"]["order"]["properties"]["items"]["items"] == {
            "$ref": "#/$defs/Item"
        }
        assert schema["$defs"]["Item"]["properties"]["name"] == {
            "title": "Name",
            "type": "string",
        }
        assert t["outputSchema"]["properties"]["count"]["type"] == "integer"
        assert set(t["outputSchema"]["required"]) == {"total", "count"}
        r = await c.call_tool(
            "order_total", {"order": {"items": [{"name": "a", "price": 1.5}, {"name": "b"}]}}
        )
        assert r.get("isError") is not True
        assert r["structuredContent"] == {"total": 1.5, "count": 2}
        r = await c.call_tool("order_total", {"order": {"items": [{"price": 1}]}})
        assert r["isError"] is True  # core checks the $ref'd required name
