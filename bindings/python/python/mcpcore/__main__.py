"""`python -m mcpcore`: the mcpcore command line (the same entry point as the `mcpcore` binary).

`python -m mcpcore call http://127.0.0.1:8000/mcp echo text=hi`, or with a stdio server after
`--`: `python -m mcpcore call echo text=hi -- python server.py`. `--help` lists the commands.
"""

from __future__ import annotations

import signal
import sys

from mcpcore import _native


def main() -> None:
    """Run the command line with this process's arguments and exit with its status."""
    # The command runs in native code: Ctrl-C must stop the process, not wait for Python.
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    sys.exit(_native.cli_main(["mcpcore", *sys.argv[1:]]))


if __name__ == "__main__":
    main()
