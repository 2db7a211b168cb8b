"""Changing a server while it serves: ``Registration`` and the ``add_*``/``remove_*``/
``enable_*``/``disable_*`` methods of :class:`mcpcore.Server`.

The server's Python registry (its ``_entries``) is the one source of truth: every change edits
it, so a later ``serve_*`` builds from the current state, and is also applied to every native
server that serves now (core's ``Server::add_json``, ``remove`` and ``set_enabled``, which
check the item as at build and announce ``notifications/*/list_changed``, coalesced). The
decorators (``@server.tool()``, …) register through :func:`put` too, so they keep working after
serving starts.
"""

from __future__ import annotations

import threading
from typing import (
    TYPE_CHECKING,
    Any,
    Callable,
    Dict,
    List,
    Optional,
    Protocol,
    Tuple,
)

from . import _native

if TYPE_CHECKING:
    from .server import _Entry

__all__ = ["Registration"]

#: The kinds that may change while serving, in the binding's spelling.
KINDS = ("tool", "prompt", "resource", "resource_template")

_KEY_FIELD = {
    "tool": "name",
    "prompt": "name",
    "resource": "uri",
    "resource_template": "uriTemplate",
}

# One lock for every server's registry: changes come from any thread (plain ``def`` handlers run
# in worker threads), and a native server is built and enrolled under it so none is missed.
# Re-entrant: a callable released by a change may itself change a server when collected.
_LOCK = threading.RLock()


class _Host(Protocol):
    """What the functions here need of a :class:`mcpcore.Server`."""

    _entries: List["_Entry"]
    _serving: List[_native.NativeServer]

    @property
    def tool(self) -> Callable[..., Callable[[Any], Any]]: ...

    @property
    def prompt(self) -> Callable[..., Callable[[Any], Any]]: ...

    @property
    def resource(self) -> Callable[..., Callable[[Any], Any]]: ...


def _key(entry: "_Entry") -> Optional[str]:
    field = _KEY_FIELD.get("tool" if entry.kind == "gate" else entry.kind)
    value = entry.definition.get(field) if field else None
    return value if isinstance(value, str) else None


def _invoke(entry: "_Entry") -> _native._Invoke:
    return entry.invoke if entry.is_async or entry.on_loop else entry.run_sync


def _index(host: _Host, kind: str, key: str) -> Optional[int]:
    for i, e in enumerate(host._entries):
        if e.kind == kind and _key(e) == key:
            return i
    return None


def _drop_gate(host: _Host, name: str) -> None:
    host._entries = [e for e in host._entries if not (e.kind == "gate" and _key(e) == name)]


def put(host: _Host, entry: "_Entry", gate: Optional["_Entry"] = None) -> None:
    """Register ``entry`` (and a tool's ``gate``): replace the item of its kind under the same
    key in place, else append it; when serving, add it to every serving native server first, so
    a refusal (``ValueError``) changes nothing."""
    with _LOCK:
        key = _key(entry)
        if entry.kind in KINDS and key is not None and host._serving:
            if gate is not None:
                # Core attaches a gate only at build (its dynamic door takes none).
                raise ValueError(f"tool {key!r}: a gate can only be given before serving starts")
            for native in list(host._serving):
                native.add(entry.kind, entry.definition, _invoke(entry))
        if entry.kind == "tool" and key is not None:
            _drop_gate(host, key)
        i = _index(host, entry.kind, key) if key is not None else None
        if i is None:
            host._entries.append(entry)
            i = len(host._entries) - 1
        else:
            host._entries[i] = entry
        if gate is not None:
            host._entries.insert(i + 1, gate)


def remove(host: _Host, kind: str, key: str) -> bool:
    """Remove the item of ``kind`` under ``key``; False when none was registered."""
    with _LOCK:
        i = _index(host, kind, key)
        found = i is not None
        if i is not None:
            del host._entries[i]
            if kind == "tool":
                _drop_gate(host, key)
        for native in list(host._serving):
            found = native.remove(kind, key) or found
        return found


def set_enabled(host: _Host, kind: str, key: str, on: bool) -> bool:
    """Enable or disable the item of ``kind`` under ``key``; False when none is registered."""
    with _LOCK:
        i = _index(host, kind, key)
        if i is not None:
            host._entries[i].enabled = on
        found = i is not None
        for native in list(host._serving):
            found = native.set_enabled(kind, key, on) or found
        return found


def serve(host: _Host, build: Callable[[], _native.NativeServer]) -> _native.NativeServer:
    """Build a native server from the registry and enroll it for later changes (atomically with
    respect to them); items disabled before serving start disabled."""
    with _LOCK:
        native = build()
        for e in host._entries:
            key = _key(e)
            if not e.enabled and e.kind in KINDS and key is not None:
                native.set_enabled(e.kind, key, False)
        host._serving.append(native)
        return native


def entries(host: _Host) -> List[Tuple[str, Dict[str, Any], _native._Invoke]]:
    """The registry as ``NativeServer`` takes it."""
    return [(e.kind, e.definition, _invoke(e)) for e in host._entries]


class Registration:
    """One registered tool, prompt, resource or resource template, as ``server.add_*`` returns
    it: enable, disable or remove it later, before or while serving.

    It refers to the server by ``kind`` and ``key``: after the item was replaced under the same
    key, it acts on the replacement.
    """

    __slots__ = ("_server", "kind", "key")

    def __init__(self, server: _Host, kind: str, key: str) -> None:
        self._server = server
        #: ``"tool"``, ``"prompt"``, ``"resource"`` or ``"resource_template"``.
        self.kind = kind
        #: The tool or prompt name, the resource URI or the URI template.
        self.key = key

    def enable(self) -> bool:
        """Enable it (back in its list, in its place); False when it is no longer registered."""
        return set_enabled(self._server, self.kind, self.key, True)

    def disable(self) -> bool:
        """Disable it: absent from its list, and calling or reading it is the unknown-item
        error; False when it is no longer registered."""
        return set_enabled(self._server, self.kind, self.key, False)

    def remove(self) -> bool:
        """Remove it (calls already running finish); False when it was no longer registered."""
        return remove(self._server, self.kind, self.key)

    def __repr__(self) -> str:
        return f"Registration({self.kind!r}, {self.key!r})"


class Dynamic:
    """The ``add_*``/``remove_*``/``enable_*``/``disable_*`` methods of
    :class:`mcpcore.Server` (a base class of it)."""

    def add_tool(
        self: _Host,
        fn: Callable[..., Any],
        name: Optional[str] = None,
        description: Optional[str] = None,
        **options: Any,
    ) -> Registration:
        """Register ``fn`` as a tool, before or while serving, and return its
        :class:`Registration`. The keywords are those of :meth:`Server.tool`; a taken name is
        replaced in place. While serving, clients are told (``notifications/tools/
        list_changed``); a server that started with no tools advertises none and raises
        ``ValueError``: build it with ``Server(..., options={"dynamic": True})``. A
        ``task_support`` tool added while serving needs tasks on at build (``Server(tasks=
        {...})``), and a ``gate`` can only be given before serving starts."""
        self.tool(name, description, **options)(fn)
        return Registration(self, "tool", name or fn.__name__)

    def add_prompt(
        self: _Host,
        fn: Callable[..., Any],
        name: Optional[str] = None,
        description: Optional[str] = None,
        **options: Any,
    ) -> Registration:
        """Register ``fn`` as a prompt (keywords as :meth:`Server.prompt`); as
        :meth:`add_tool`."""
        self.prompt(name, description, **options)(fn)
        return Registration(self, "prompt", name or fn.__name__)

    def add_resource(
        self: _Host,
        fn: Callable[..., Any],
        uri: str,
        name: Optional[str] = None,
        description: Optional[str] = None,
        **options: Any,
    ) -> Registration:
        """Register ``fn`` as the resource at ``uri`` (keywords as :meth:`Server.resource`); as
        :meth:`add_tool`. A URI with ``{…}`` is a template (:meth:`add_resource_template`)."""
        self.resource(uri, name, description, **options)(fn)
        return Registration(self, "resource_template" if "{" in uri else "resource", uri)

    def add_resource_template(
        self: _Host,
        fn: Callable[..., Any],
        uri_template: str,
        name: Optional[str] = None,
        description: Optional[str] = None,
        **options: Any,
    ) -> Registration:
        """Register ``fn`` as the resource template ``uri_template`` (RFC 6570, its variables
        the function's parameters); as :meth:`add_tool`."""
        if "{" not in uri_template:
            raise ValueError(f"{uri_template!r} is not a URI template (no {{variable}})")
        self.resource(uri_template, name, description, **options)(fn)
        return Registration(self, "resource_template", uri_template)

    def remove_tool(self: _Host, name: str) -> bool:
        """Remove the tool ``name`` (calls already running finish); False when none is
        registered."""
        return remove(self, "tool", name)

    def enable_tool(self: _Host, name: str) -> bool:
        """Enable the tool ``name``; False when none is registered."""
        return set_enabled(self, "tool", name, True)

    def disable_tool(self: _Host, name: str) -> bool:
        """Disable the tool ``name`` (hidden; calls get the unknown-tool error)."""
        return set_enabled(self, "tool", name, False)

    def remove_prompt(self: _Host, name: str) -> bool:
        """Remove the prompt ``name``; False when none is registered."""
        return remove(self, "prompt", name)

    def enable_prompt(self: _Host, name: str) -> bool:
        """Enable the prompt ``name``; False when none is registered."""
        return set_enabled(self, "prompt", name, True)

    def disable_prompt(self: _Host, name: str) -> bool:
        """Disable the prompt ``name``; False when none is registered."""
        return set_enabled(self, "prompt", name, False)

    def remove_resource(self: _Host, uri: str) -> bool:
        """Remove the resource ``uri``; False when none is registered."""
        return remove(self, "resource", uri)

    def enable_resource(self: _Host, uri: str) -> bool:
        """Enable the resource ``uri``; False when none is registered."""
        return set_enabled(self, "resource", uri, True)

    def disable_resource(self: _Host, uri: str) -> bool:
        """Disable the resource ``uri``; False when none is registered."""
        return set_enabled(self, "resource", uri, False)

    def remove_resource_template(self: _Host, uri_template: str) -> bool:
        """Remove the resource template ``uri_template``; False when none is registered."""
        return remove(self, "resource_template", uri_template)

    def enable_resource_template(self: _Host, uri_template: str) -> bool:
        """Enable the resource template ``uri_template``; False when none is registered."""
        return set_enabled(self, "resource_template", uri_template, True)

    def disable_resource_template(self: _Host, uri_template: str) -> bool:
        """Disable the resource template ``uri_template``; False when none is registered."""
        return set_enabled(self, "resource_template", uri_template, False)
