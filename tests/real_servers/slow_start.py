"""A slow-starting MCP server: sleeps, then becomes a real one (`exec`, same pid and pipes).

Usage: `python slow_start.py SECONDS COMMAND [ARGS…]`, e.g. `slow_start.py 3 mcp-server-time`.
"""

from __future__ import annotations

import os
import shutil
import sys
import time


def main() -> None:
    """Sleep, then replace this process by the server named on the command line."""
    seconds, command, *args = sys.argv[1:]
    time.sleep(float(seconds))
    program = shutil.which(command) or shutil.which(command, path=os.path.dirname(sys.executable))
    if program is None:
        sys.exit(f"slow_start: {command!r} not found")
    os.execv(program, [program, *args])


if __name__ == "__main__":
    main()
