"""Tasks (the 2025-11-25 experimental tasks and the 2026-07-28 ``io.modelcontextprotocol/tasks``
extension, SEP-2663) as the client sees them. Core speaks the protocol; this is the Python shape
of what it read."""

from __future__ import annotations

from typing import Any, Dict, Optional

__all__ = ["Task", "TERMINAL_STATUSES"]

#: The statuses a task never leaves.
TERMINAL_STATUSES = frozenset({"completed", "failed", "cancelled"})


class Task:
    """One task as the server described it (``raw`` is the object as sent, either era)."""

    __slots__ = ("raw",)

    def __init__(self, raw: Dict[str, Any]) -> None:
        self.raw = raw

    @property
    def task_id(self) -> str:
        """The task identifier (``taskId``)."""
        return str(self.raw["taskId"])

    @property
    def status(self) -> str:
        """``working``, ``input_required``, ``completed``, ``failed`` or ``cancelled``."""
        return str(self.raw["status"])

    @property
    def terminal(self) -> bool:
        """True once the task ended (completed, failed or cancelled)."""
        return self.status in TERMINAL_STATUSES

    @property
    def status_message(self) -> Optional[str]:
        """A human-readable note on the status, when the server sent one."""
        v = self.raw.get("statusMessage")
        return v if isinstance(v, str) else None

    @property
    def poll_interval_ms(self) -> Optional[int]:
        """The polling interval the server suggests (modern ``pollIntervalMs``, legacy
        ``pollInterval``)."""
        v = self.raw.get("pollIntervalMs", self.raw.get("pollInterval"))
        return v if isinstance(v, int) else None

    @property
    def ttl_ms(self) -> Optional[int]:
        """How long the server keeps the task after creation (``ttlMs`` / legacy ``ttl``)."""
        v = self.raw.get("ttlMs", self.raw.get("ttl"))
        return v if isinstance(v, int) else None

    @property
    def input_requests(self) -> Optional[Dict[str, Any]]:
        """Modern ``input_required``: what the task waits for, keyed (answer with
        ``Client.update_task``)."""
        v = self.raw.get("inputRequests")
        return v if isinstance(v, dict) else None

    @property
    def result(self) -> Optional[Dict[str, Any]]:
        """Modern ``completed``: the ``CallToolResult`` of the call."""
        v = self.raw.get("result")
        return v if isinstance(v, dict) else None

    @property
    def error(self) -> Optional[Dict[str, Any]]:
        """Modern ``failed``: the JSON-RPC error the call ended in."""
        v = self.raw.get("error")
        return v if isinstance(v, dict) else None

    def __repr__(self) -> str:
        return f"Task({self.task_id!r}, status={self.status!r})"
