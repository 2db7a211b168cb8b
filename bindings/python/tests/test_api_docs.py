"""The API reference is rendered from docstrings (scripts/docs-python.sh, pdoc): every public
name of ``mcpcore`` and ``mcpcore.sync``, and every public method and property of their classes,
has one."""

from __future__ import annotations

import inspect
import types
from typing import Any, List

import mcpcore
import mcpcore.sync


def _public(mod: types.ModuleType) -> List[str]:
    names = getattr(mod, "__all__", None)
    return list(names) if names else [n for n in vars(mod) if not n.startswith("_")]


def _undocumented(mod: types.ModuleType) -> List[str]:
    missing: List[str] = []
    for name in _public(mod):
        obj = getattr(mod, name)
        if inspect.ismodule(obj) or not (inspect.isclass(obj) or callable(obj)):
            continue
        if getattr(obj, "__module__", "").split(".")[0] != "mcpcore":
            continue  # re-exported from the standard library or typing
        if not inspect.getdoc(obj):
            missing.append(f"{mod.__name__}.{name}")
        if inspect.isclass(obj):
            for attr, value in vars(obj).items():
                fn: Any = value
                if attr.startswith("_"):
                    continue
                if isinstance(fn, (staticmethod, classmethod)):
                    fn = fn.__func__
                if isinstance(fn, property):
                    fn = fn.fget
                if callable(fn) and not (getattr(fn, "__doc__", None) or "").strip():
                    missing.append(f"{mod.__name__}.{name}.{attr}")
    return missing


def test_every_public_name_has_a_docstring():
    assert _undocumented(mcpcore) + _undocumented(mcpcore.sync) == []


def test_the_check_sees_a_missing_docstring():
    mod = types.ModuleType("mcpcore.fake")

    class Documented:
        """Has one."""

        def method(self) -> None:
            pass

    Documented.__module__ = "mcpcore.fake"
    mod.Documented = Documented  # type: ignore[attr-defined]
    mod.__all__ = ["Documented"]  # type: ignore[attr-defined]
    assert _undocumented(mod) == ["mcpcore.fake.Documented.method"]
