"""A small MCP stdio server whose tools misbehave, for the reliability tests (official SDK).

Tools: add, hang (awaits forever), block (time.sleep in the server's loop), crash
(os._exit), sigkill, system_exit, custom_base, nan, big (n MB of text), garbage (binary bytes
on the protocol stream), close_stdout, getenv, leak (an error whose message holds a secret).
"""

from __future__ import annotations

import os
import signal
import sys
import time
from typing import Any

import anyio
from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError

server = MCPServer("faulty")


class CustomBaseError(BaseException):
    """A BaseException of its own."""


@server.tool()
def add(a: float, b: float) -> dict[str, float]:
    """Add two numbers."""
    return {"sum": a + b}


@server.tool()
async def hang() -> str:
    """Wait forever."""
    await anyio.sleep_forever()
    return "never"


@server.tool()
def block(seconds: float) -> str:
    """Block the server (a sync sleep)."""
    time.sleep(seconds)
    return "blocked"


@server.tool()
def crash() -> str:
    """End the server process at once."""
    os._exit(3)


@server.tool()
def sigkill() -> str:
    """Kill the server process with SIGKILL."""
    os.kill(os.getpid(), signal.SIGKILL)
    return "unreachable"


@server.tool()
def system_exit() -> str:
    """Raise SystemExit inside the server."""
    sys.exit(2)


@server.tool()
def custom_base() -> str:
    """Raise a BaseException subclass inside the server."""
    raise CustomBaseError("custom")


@server.tool()
def nan() -> dict[str, Any]:
    """Return NaN (not JSON)."""
    return {"value": float("nan")}


@server.tool(structured_output=False)
def big(mb: float) -> str:
    """Return `mb` megabytes of text."""
    return "x" * int(mb * 1024 * 1024)


@server.tool()
def garbage() -> str:
    """Write binary garbage on stdout, the protocol stream."""
    os.write(1, b"\xff\xfe\x00garbage\n{not json}\n" + bytes(range(256)) + b"\n")
    return "wrote garbage"


@server.tool()
def close_stdout() -> str:
    """Close stdout, the protocol stream."""
    os.close(1)
    return "closed"


@server.tool()
def getenv(name: str) -> str | None:
    """Return an environment variable of the server."""
    return os.environ.get(name)


@server.tool()
def leak(text: str) -> str:
    """Fail with a message that holds the text and the server's secret env value."""
    print(f"stderr: token={os.environ.get('FAULTY_TOKEN')}", file=sys.stderr)
    raise ToolError(f"auth failed for {text} with {os.environ.get('FAULTY_TOKEN')}")


if __name__ == "__main__":
    server.run()
