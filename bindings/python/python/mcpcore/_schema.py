"""JSON Schema (2020-12) for a function's parameters, from its type hints.

Structured types (``TypedDict``, dataclasses, pydantic models) become object schemas; the
``$defs`` of pydantic schemas are hoisted to the root so that their ``$ref``s resolve.
``Annotated`` metadata is kept: a pydantic ``Field(...)`` (or any pydantic metadata) goes through
pydantic's own ``TypeAdapter(...).json_schema()``; ``annotated_types`` constraints (``Ge``,
``MaxLen``, ``Interval``, …) and a plain ``str`` (the description) are mapped here, so they work
without pydantic. ``Enum`` and ``Literal`` become ``enum`` (with the ``type`` of their values).
"""

from __future__ import annotations

import dataclasses
import enum
import functools
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


def _is_typeddict(tp: Any) -> bool:
    return (
        isinstance(tp, type)
        and issubclass(tp, dict)
        and hasattr(tp, "__required_keys__")
        and hasattr(tp, "__total__")
    )


def _is_dataclass(tp: Any) -> bool:
    return isinstance(tp, type) and dataclasses.is_dataclass(tp)


def _is_pydantic(tp: Any) -> bool:
    return isinstance(tp, type) and callable(getattr(tp, "model_json_schema", None))


def is_structured(tp: Any) -> bool:
    """Whether ``tp`` is a ``TypedDict``, a dataclass or a pydantic model (an object schema)."""
    tp = _strip(tp)
    return _is_typeddict(tp) or _is_dataclass(tp) or _is_pydantic(tp)


def _hints(tp: Any) -> Dict[str, Any]:
    # include_extras: keep Annotated[...] and its metadata (descriptions, constraints).
    try:
        return typing.get_type_hints(tp, include_extras=True)
    except Exception:  # unresolvable forward references: the raw annotations
        return dict(getattr(tp, "__annotations__", {}))


def _strip(tp: Any) -> Any:
    """``Annotated[T, ...]`` as ``T`` (anything else unchanged)."""
    while typing.get_origin(tp) is typing.Annotated:
        tp = typing.get_args(tp)[0]
    return tp


def _is_enum(tp: Any) -> bool:
    return isinstance(tp, type) and issubclass(tp, enum.Enum)


def _enum_schema(values: List[Any]) -> Dict[str, Any]:
    """``{"enum": values}`` with the ``type`` when the values share one."""
    out: Dict[str, Any] = {"enum": values}
    kinds = {_SIMPLE.get(type(v)) for v in values}
    if len(kinds) == 1 and None not in kinds:
        out["type"] = kinds.pop()
    return out


#: annotated_types / pydantic metadata attributes and their JSON Schema keywords.
_BOUNDS = {
    "gt": "exclusiveMinimum",
    "ge": "minimum",
    "lt": "exclusiveMaximum",
    "le": "maximum",
    "multiple_of": "multipleOf",
    "pattern": "pattern",
}
_LENGTHS = {"string": ("minLength", "maxLength"), "array": ("minItems", "maxItems")}
_LENGTHS["object"] = ("minProperties", "maxProperties")


def _from_library(m: Any) -> bool:
    module = type(m).__module__.split(".")[0]
    return module in ("annotated_types", "pydantic", "pydantic_core")


def _apply_metadata(schema: Dict[str, Any], m: Any) -> None:
    """One ``Annotated`` metadata item into ``schema`` (unknown items are ignored)."""
    if isinstance(m, str):
        schema.setdefault("description", m)
        return
    if not _from_library(m):
        return
    for attr in ("title", "description", "examples"):
        v = getattr(m, attr, None)
        if v is not None and _json_default(v)[0]:
            schema[attr] = v
    for attr, key in _BOUNDS.items():
        v = getattr(m, attr, None)
        if isinstance(v, (int, float, str)) and not isinstance(v, bool):
            schema[key] = v
    kind = schema.get("type")
    lo_key, hi_key = (
        _LENGTHS.get(kind, _LENGTHS["string"]) if isinstance(kind, str) else _LENGTHS["string"]
    )
    for attr, key in (("min_length", lo_key), ("max_length", hi_key)):
        v = getattr(m, attr, None)
        if isinstance(v, int) and not isinstance(v, bool):
            schema[key] = v
    for inner in getattr(m, "metadata", None) or ():  # a pydantic FieldInfo's constraints
        _apply_metadata(schema, inner)


def _pydantic_schema(tp: Any, defs: Dict[str, Any]) -> Optional[Dict[str, Any]]:
    """pydantic's own schema of ``tp`` (``None`` when pydantic cannot make one)."""
    try:
        from pydantic import TypeAdapter

        schema: Dict[str, Any] = dict(TypeAdapter(tp).json_schema())
    except Exception:
        return None
    defs.update(schema.pop("$defs", {}))
    return schema


def _annotated_schema(tp: Any, defs: Dict[str, Any]) -> Dict[str, Any]:
    base, *_ = typing.get_args(tp)
    metadata = getattr(tp, "__metadata__", ())
    if any(type(m).__module__.startswith("pydantic") for m in metadata):
        whole = _pydantic_schema(tp, defs)
        if whole is not None:
            return whole
    schema = dict(type_schema(base, defs))
    for m in metadata:
        _apply_metadata(schema, m)
    return schema


def _object_schema(
    props: Dict[str, Any], required: List[str], title: Optional[str]
) -> Dict[str, Any]:
    out: Dict[str, Any] = {"type": "object", "properties": props}
    if required:
        out["required"] = required
    if title:
        out["title"] = title
    return out


def type_schema(tp: Any, defs: Optional[Dict[str, Any]] = None) -> Dict[str, Any]:
    """The JSON Schema of one annotation (``{}`` for anything not mapped).

    ``defs`` collects the ``$defs`` that the schema refers to (pydantic models); without it
    they are kept inside the returned schema.
    """
    if tp is inspect.Parameter.empty or tp is Any:
        return {}
    if defs is None:
        inner: Dict[str, Any] = {}
        whole = type_schema(tp, inner)
        return dict(whole, **{"$defs": inner}) if inner else whole
    if typing.get_origin(tp) is typing.Annotated:
        return _annotated_schema(tp, defs)
    if _is_enum(tp):
        values = [m.value for m in tp]
        return _enum_schema(values) if _json_default(values)[0] else {}
    if _is_pydantic(tp):
        schema: Dict[str, Any] = dict(tp.model_json_schema())
        defs.update(schema.pop("$defs", {}))
        return schema
    if _is_typeddict(tp):
        hints = _hints(tp)
        req = set(tp.__required_keys__)
        props = {k: type_schema(v, defs) for k, v in hints.items()}
        return _object_schema(props, [k for k in hints if k in req], tp.__name__)
    if _is_dataclass(tp):
        hints = _hints(tp)
        props = {}
        required = []
        for f in dataclasses.fields(tp):
            fs = type_schema(hints.get(f.name, f.type), defs)
            if f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING:
                required.append(f.name)
            elif f.default is not dataclasses.MISSING:
                ok, value = _json_default(f.default)
                if ok and value is not None:
                    fs = dict(fs, default=value)
            props[f.name] = fs
        return _object_schema(props, required, tp.__name__)
    if tp in _SIMPLE:
        return {"type": _SIMPLE[tp]}
    origin = typing.get_origin(tp)
    args = typing.get_args(tp)
    if origin in _UNION_TYPES:
        non_null = [a for a in args if a is not type(None)]
        schemas = [type_schema(a, defs) for a in non_null]
        if len(non_null) < len(args):
            schemas.append({"type": "null"})
        if all(set(s) == {"type"} and isinstance(s["type"], str) for s in schemas):
            return {"type": [s["type"] for s in schemas]}
        return {"anyOf": schemas}
    if origin is typing.Literal:
        return _enum_schema([v.value if isinstance(v, enum.Enum) else v for v in args])
    out: Dict[str, Any]
    if tp in (list, tuple, set, frozenset) or origin in (list, tuple, set, frozenset):
        out = {"type": "array"}
        if args and origin is not tuple:
            out["items"] = type_schema(args[0], defs)
        elif args and origin is tuple and not (len(args) == 2 and args[1] is Ellipsis):
            out["prefixItems"] = [type_schema(a, defs) for a in args]
            out["minItems"] = out["maxItems"] = len(args)
        elif args:
            out["items"] = type_schema(args[0], defs)
        return out
    if tp is dict or origin is dict:
        out = {"type": "object"}
        if len(args) == 2:
            out["additionalProperties"] = type_schema(args[1], defs)
        return out
    return {}


def _json_default(value: Any) -> Tuple[bool, Any]:
    if isinstance(value, enum.Enum):
        value = value.value
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
        hints = typing.get_type_hints(fn, include_extras=True)
    except Exception:  # unresolvable forward references: fall back to the raw annotations
        hints = {}
    props: Dict[str, Any] = {}
    required: List[str] = []
    names: List[str] = []
    defs: Dict[str, Any] = {}
    for p in sig.parameters.values():
        if p.kind in (inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.VAR_KEYWORD):
            continue
        ann = hints.get(p.name, p.annotation)
        if skip(p, ann):
            continue
        names.append(p.name)
        if _is_field_info(p.default):
            # ``count: int = Field(ge=0, description=...)`` (FastMCP's spelling): the Field is
            # metadata, and the parameter is required unless the Field has a default.
            base = Any if ann is inspect.Parameter.empty else ann
            s = type_schema(typing.Annotated[base, p.default], defs)
            if p.default.is_required():
                required.append(p.name)
        elif p.default is inspect.Parameter.empty:
            s = type_schema(ann, defs)
            required.append(p.name)
        else:
            s = type_schema(ann, defs)
            ok, value = _json_default(p.default)
            if ok and value is not None:
                s = dict(s, default=value)
        props[p.name] = s
    schema: Dict[str, Any] = {"type": "object", "properties": props}
    if required:
        schema["required"] = required
    if defs:
        schema["$defs"] = defs
    return schema, names


def _is_field_info(value: Any) -> bool:
    return type(value).__name__ == "FieldInfo" and type(value).__module__.startswith("pydantic")


def field_defaults(fn: Callable[..., Any]) -> Dict[str, Callable[[], Any]]:
    """The parameters whose default is a pydantic ``Field(...)``: what to pass when the
    argument is missing (the Field's default; Python's would be the ``FieldInfo`` itself)."""
    out: Dict[str, Callable[[], Any]] = {}
    for p in inspect.signature(fn).parameters.values():
        fi = p.default
        if _is_field_info(fi) and not fi.is_required():
            out[p.name] = functools.partial(fi.get_default, call_default_factory=True)
    return out


def output_schema(fn: Callable[..., Any]) -> Optional[Dict[str, Any]]:
    """The output schema of ``fn`` when its return annotation is a structured type."""
    ret = _hints(fn).get("return", inspect.Parameter.empty)
    return type_schema(ret) if is_structured(ret) else None


def param_types(fn: Callable[..., Any], names: List[str]) -> Dict[str, Any]:
    """The parameters of ``fn`` whose JSON argument becomes an instance (see :func:`coerce`)."""
    hints = _hints(fn)
    return {n: hints[n] for n in names if n in hints and _needs_coercion(hints[n])}


def _needs_coercion(tp: Any) -> bool:
    tp = _strip(tp)
    if _is_dataclass(tp) or _is_pydantic(tp) or _is_enum(tp):
        return True
    if typing.get_origin(tp) in _UNION_TYPES:
        return any(_needs_coercion(a) for a in typing.get_args(tp))
    return False


def coerce(tp: Any, value: Any) -> Any:
    """A JSON argument as ``tp``: a dataclass or pydantic model is built from its dict, an
    ``Enum`` member found by its value. Raises ``ValueError``/``TypeError`` (pydantic's
    ``ValidationError`` is a ``ValueError``) for a value the type refuses."""
    tp = _strip(tp)
    if value is None:
        return None
    if _is_enum(tp):
        return tp(value)
    if _is_pydantic(tp):
        return tp.model_validate(value)
    if _is_dataclass(tp) and isinstance(value, dict):
        hints = _hints(tp)
        return tp(**{k: coerce(hints.get(k), v) for k, v in value.items()})
    if typing.get_origin(tp) in _UNION_TYPES:
        options = [a for a in typing.get_args(tp) if a is not type(None)]
        if len(options) == 1:
            return coerce(options[0], value)
    return value


def describe_failure(param: str, e: BaseException) -> str:
    """Why ``coerce`` refused the argument ``param``, as core words schema failures: one
    ``location: message`` per problem (pydantic's errors, without their documentation links),
    at most 5, joined by ``; ``."""
    errors = getattr(e, "errors", None)
    items: Any = None
    if callable(errors):
        try:
            items = errors(include_url=False)
        except Exception:
            items = None
    if isinstance(items, list) and items:
        parts = []
        for item in items[:5]:
            loc = ".".join(str(p) for p in (param, *item.get("loc", ())))
            parts.append(f"{loc}: {item.get('msg', 'invalid value')}")
        return "; ".join(parts)
    return f"{param}: {e}"


def to_json(value: Any) -> Any:
    """A dataclass or pydantic instance as its JSON dict; anything else unchanged."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return dataclasses.asdict(value)
    dump = getattr(value, "model_dump", None)
    if callable(dump) and not isinstance(value, type):
        return dump(mode="json")
    return value


def first_paragraph(doc: Optional[str]) -> Optional[str]:
    """The first paragraph of a docstring, dedented and joined into one line."""
    if not doc:
        return None
    text = inspect.cleandoc(doc)
    para = text.split("\n\n", 1)[0]
    return " ".join(line.strip() for line in para.splitlines()).strip() or None
