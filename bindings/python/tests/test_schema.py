"""Input schemas from type hints, checked through a real tools/list."""

from __future__ import annotations

import importlib.util
import json
import pathlib
import sys

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


# ---- Annotated metadata, Enum/Literal, arguments a parameter's type refuses (schema_app.py) ----

SCHEMA_APP = [sys.executable, str(pathlib.Path(__file__).resolve().parent / "schema_app.py")]


def _text(result: dict) -> str:
    return result["content"][0]["text"]


@pytest.mark.parametrize("mode", ["legacy", "modern"])
async def test_annotated_metadata_is_kept(mode):
    pytest.importorskip("annotated_types")
    async with Client.connect_stdio(SCHEMA_APP, mode=mode) as c:
        tools = {t["name"]: t for t in await c.list_tools()}
        # annotated_types constraints and a str description, mapped without pydantic.
        assert tools["bounded"]["inputSchema"]["properties"] == {
            "name": {
                "type": "string",
                "description": "Who to greet",
                "minLength": 1,
                "maxLength": 8,
            },
            "times": {"type": "integer", "minimum": 1, "exclusiveMaximum": 5, "default": 1},
            "tags": {
                "type": "array",
                "items": {"type": "string"},
                "maxItems": 2,
                "description": "At most two tags",
                "default": [],
            },
            "step": {"type": "number", "multipleOf": 0.5, "exclusiveMinimum": 0, "default": 0.5},
        }
        prompts = {p["name"]: p for p in await c.list_prompts()}
        assert prompts["greet"]["arguments"] == [
            {"name": "name", "required": True, "description": "Who to greet"}
        ]
        # Core enforces the kept constraints.
        r = await c.call_tool("bounded", {"name": "", "times": 5})
        assert r["isError"] is True
        assert _text(r).startswith("Invalid arguments for tool bounded: ")
        assert "/name" in _text(r) and "/times" in _text(r)
        r = await c.call_tool("bounded", {"name": "Ada", "times": 2, "tags": ["a"], "step": 1.5})
        assert r.get("isError") is not True and _text(r) == "Adax2 ['a'] 1.5"


@pytest.mark.parametrize("mode", ["legacy", "modern"])
async def test_pydantic_field_metadata_is_kept(mode):
    pytest.importorskip("pydantic")
    async with Client.connect_stdio(SCHEMA_APP, mode=mode) as c:
        tools = {t["name"]: t for t in await c.list_tools()}
        schema = tools["fielded"]["inputSchema"]
        assert schema["required"] == ["count", "code"]
        assert schema["properties"] == {
            "count": {"type": "integer", "description": "How many", "minimum": 0, "maximum": 10},
            "code": {"type": "string", "pattern": "^[a-z]+$", "minLength": 2, "maxLength": 4},
            "ratio": {
                "type": "number",
                "description": "A fraction",
                "exclusiveMinimum": 0,
                "exclusiveMaximum": 1,
                "default": 0.5,
            },
        }
        place = tools["place"]["inputSchema"]
        assert place["properties"]["order"] == {"$ref": "#/$defs/Order", "description": "The order"}
        assert place["$defs"]["Order"]["properties"]["note"]["maxLength"] == 20
        for bad in ({"count": 11, "code": "ab"}, {"count": 1, "code": "AB"}, {"count": 1}):
            r = await c.call_tool("fielded", bad)
            assert r["isError"] is True, bad
            assert _text(r).startswith("Invalid arguments for tool fielded: ")
        r = await c.call_tool("fielded", {"count": 3, "code": "abc"})
        assert _text(r) == "3 abc 0.5"
        # A Field as the parameter's default: metadata, and the Field's default at call time.
        fd = tools["field_defaults"]["inputSchema"]
        assert fd["required"] == ["count"]
        assert fd["properties"] == {
            "count": {"type": "integer", "description": "How many", "minimum": 1},
            "label": {"type": "string", "default": "x", "maxLength": 3},
            "items": {"type": "array", "items": {"type": "integer"}},
        }
        assert _text(await c.call_tool("field_defaults", {"count": 2})) == "2 x []"
        r = await c.call_tool("field_defaults", {"count": 2, "label": "abcd"})
        assert r["isError"] is True and "/label" in _text(r)


@pytest.mark.parametrize("mode", ["legacy", "modern"])
async def test_enum_and_literal_become_enum(mode):
    async with Client.connect_stdio(SCHEMA_APP, mode=mode) as c:
        tools = {t["name"]: t for t in await c.list_tools()}
        assert tools["pick"]["inputSchema"]["properties"] == {
            "mode": {"enum": ["fast", "slow"], "type": "string"},
            "level": {"enum": [1, 2], "type": "integer"},
            "size": {"enum": [1, 2, 3], "type": "integer"},
            "color": {"enum": ["red", "blue"], "type": "string", "default": "red"},
        }
        r = await c.call_tool("pick", {"mode": "slow", "level": 2, "size": 3})
        assert _text(r) == "<Mode.SLOW: 'slow'> <Level.HIGH: 2> 3 <Color.RED: 'red'>"
        r = await c.call_tool("pick", {"mode": "slow", "level": 2, "size": 3, "color": "blue"})
        assert _text(r).endswith("<Color.BLUE: 'blue'>")
        r = await c.call_tool("pick", {"mode": "medium", "level": 2, "size": 3})
        assert r["isError"] is True and "/mode" in _text(r)


@pytest.mark.parametrize("mode", ["legacy", "modern"])
async def test_refused_by_the_parameter_type_is_invalid_arguments(mode):
    """Arguments the schema lets through but the parameter's type refuses answer core's
    isError "Invalid arguments for tool ..." result, not a -32603 error."""
    async with Client.connect_stdio(SCHEMA_APP, mode=mode) as c:
        # A dataclass does not take a key its schema does not forbid.
        r = await c.call_tool("norm1", {"p": {"x": 1, "y": -2, "z": 0}})
        assert r["isError"] is True
        assert _text(r).startswith("Invalid arguments for tool norm1: p: ")
        assert _text(await c.call_tool("norm1", {"p": {"x": 1, "y": -2}})) == "3"
        if importlib.util.find_spec("pydantic") is not None:
            r = await c.call_tool("place", {"order": {"qty": 0}})
            assert {k: r[k] for k in ("content", "isError")} == {
                "content": [
                    {
                        "type": "text",
                        "text": "Invalid arguments for tool place: "
                        "order.qty: Value error, qty must be positive",
                    }
                ],
                "isError": True,
            }
            assert _text(await c.call_tool("place", {"order": {"qty": 2}})) == "placed 2"


def test_annotated_lengths_follow_the_type():
    at = pytest.importorskip("annotated_types")
    from typing import Annotated, Dict, List

    from mcpcore._schema import type_schema

    assert type_schema(Annotated[Dict[str, int], at.MinLen(1)]) == {
        "type": "object",
        "additionalProperties": {"type": "integer"},
        "minProperties": 1,
    }
    assert type_schema(Annotated[List[int], at.Len(1, 3)]) == {
        "type": "array",
        "items": {"type": "integer"},
        "minItems": 1,
        "maxItems": 3,
    }
    # Metadata from elsewhere is ignored; nested Annotated in containers is kept.
    assert type_schema(Annotated[int, object()]) == {"type": "integer"}
    assert type_schema(List[Annotated[str, "a tag"]]) == {
        "type": "array",
        "items": {"type": "string", "description": "a tag"},
    }
