"""The task test server: the conformance fixture's task tools (examples/python/
conformance_tasks.py) plus ``task_info`` (answers ``ctx.task_id``). Serves stdio when run."""

from __future__ import annotations

import pathlib
import sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[3] / "examples" / "python"))

import conformance_tasks  # noqa: E402

from mcpcore import Context, Server  # noqa: E402

# A short suggested poll interval keeps the waits of the tests short.
server = Server("tasks-app", "1.0.0", tasks={"pollIntervalMs": 20, "defaultTtlMs": 60000})
conformance_tasks.register(server)


@server.tool(name="task_info", description="The task id the handler sees.", task_support="optional")
def task_info(ctx: Context) -> str:
    return ctx.task_id or "no task"


if __name__ == "__main__":
    server.run_stdio()
