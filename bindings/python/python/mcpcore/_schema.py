"""JSON Schema (2020-12) for a function's parameters, from its type hints."""

from __future__ import annotations

import inspect
import json
import sys
import typing
from typing import Any, Callable, Dict, List, Optional, Tuple

_SIMPLE = {str: "string", int: "integer", float: "number", bool: "boolean", type(None): "null"}

if sys.version_info >= (3, 10):
    import types as _types

    _UNION_TYPES: Tuple[Any, ...] = (typing.Union, _types.UnionType)
else:  # pragma: no cover - 3.9
    _UNION_TYPES = (typing.Union,)


def type_schema(tp: Any) -> Dict[str, Any]:
    """The JSON Schema of one annotation (``{}`` for anything not mapped)."""
    if tp is inspect.Parameter.empty or tp is Any:
        return {}
    if tp in _SIMPLE:
        return {"type": _SIMPLE[tp]}
    origin = typing.get_origin(tp)
    args = typing.get_args(tp)
    if origin in _UNION_TYPES:
        non_null = [a for a in args if a is not type(None)]
        schemas = [type_schema(a) for a in non_null]
        if len(non_null) < len(args):
            schemas.append({"type": "null"})
        if all(set(s) == {"type"} and isinstance(s["type"], str) for s in schemas):
            return {"type": [s["type"] for s in schemas]}
        return {"anyOf": schemas}
    if origin is typing.Literal:
        values = list(args)
        out: Dict[str, Any] = {"enum": values}
        kinds = {_SIMPLE.get(type(v)) for v in values}
        if len(kinds) == 1 and None not in kinds:
            out["type"] = kinds.pop()
        return out
    if tp in (list, tuple, set, frozenset) or origin in (list, tuple, set, frozenset):
        out = {"type": "array"}
        if args and origin is not tuple:
            out["items"] = type_schema(args[0])
        elif args and origin is tuple and not (len(args) == 2 and args[1] is Ellipsis):
            out["prefixItems"] = [type_schema(a) for a in args]
            out["minItems"] = out["maxItems"] = len(args)
        elif args:
            out["items"] = type_schema(args[0])
        return out
    if tp is dict or origin is dict:
        out = {"type": "object"}
        if len(args) == 2:
            out["additionalProperties"] = type_schema(args[1])
        return out
    return {}


def _json_default(value: Any) -> Tuple[bool, Any]:
    try:
        json.dumps(value)
    except (TypeError, ValueError):
        return False, None
    return True, value


def function_schema(
    fn: Callable[..., Any], skip: Callable[[inspect.Parameter, Any], bool]
) -> Tuple[Dict[str, Any], List[str]]:
    """The input schema of ``fn`` and the names of its JSON parameters.

    Parameters for which ``skip(param, annotation)`` is true (the ``Context``) are left out.
    A parameter with a default is not required.
    """
    sig = inspect.signature(fn)
    try:
        hints = typing.get_type_hints(fn)
    except Exception:  # unresolvable forward references: fall back to the raw annotations
        hints = {}
    props: Dict[str, Any] = {}
    required: List[str] = []
    names: List[str] = []
    for p in sig.parameters.values():
        if p.kind in (inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.VAR_KEYWORD):
            continue
        ann = hints.get(p.name, p.annotation)
        if skip(p, ann):
            continue
        names.append(p.name)
        s = type_schema(ann)
        if p.default is inspect.Parameter.empty:
            required.append(p.name)
        else:
            ok, value = _json_default(p.default)
            if ok and value is not None:
                s = dict(s, default=value)
        props[p.name] = s
    schema: Dict[str, Any] = {"type": "object", "properties": props}
    if required:
        schema["required"] = required
    return schema, names


def first_paragraph(doc: Optional[str]) -> Optional[str]:
    """The first paragraph of a docstring, dedented and joined into one line."""
    if not doc:
        return None
    text = inspect.cleandoc(doc)
    para = text.split("\n\n", 1)[0]
    return " ".join(line.strip() for line in para.splitlines()).strip() or None
