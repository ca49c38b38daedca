"""A small MCP server for tests, built with the official SDK's MCPServer (FastMCP in SDK 1.x).

Run over stdio (default) or streamable HTTP (``--http PORT``). Its tools sleep, echo, fail,
return several contents, report its pid and environment, and count started, cancelled and
finished sleeps so that a test can check that a cancelled request was cancelled on the server.
"""

from __future__ import annotations

import argparse
import os
import sys
from typing import Any

import anyio
from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import ImageContent, TextContent, ToolAnnotations

server = MCPServer("slow")
counters = {"started": 0, "cancelled": 0, "finished": 0}


@server.tool(annotations=ToolAnnotations(idempotentHint=True, readOnlyHint=True), title="Sleep")
async def sleep(seconds: float) -> dict[str, Any]:
    """Sleep for `seconds` seconds, then say how long it slept."""
    counters["started"] += 1
    try:
        await anyio.sleep(seconds)
    except anyio.get_cancelled_exc_class():
        counters["cancelled"] += 1
        raise
    counters["finished"] += 1
    return {"slept": seconds}


@server.tool()
def stats() -> dict[str, int]:
    """Return how many sleeps started, were cancelled and finished."""
    return dict(counters)


@server.tool(structured_output=False)
def echo(text: str) -> str:
    """Return the text as one text content."""
    return text


@server.tool()
def fail(message: str) -> str:
    """Raise an error with this message (the result has isError true)."""
    raise ToolError(message)


@server.tool(structured_output=False)
def several() -> list[TextContent | ImageContent]:
    """Return two text contents and an image."""
    return [
        TextContent(type="text", text="one"),
        TextContent(type="text", text="two"),
        ImageContent(type="image", data="iVBORw0KGgo=", mime_type="image/png"),
    ]


@server.tool()
def pid() -> int:
    """Return the server's process id."""
    return os.getpid()


@server.tool()
def getenv(name: str) -> str | None:
    """Return an environment variable of the server process."""
    return os.environ.get(name)


@server.tool()
def crash() -> str:
    """Exit the server process at once, as a crash would."""
    sys.stdout.flush()
    os._exit(3)


def main() -> None:
    """Serve over stdio, or over streamable HTTP with ``--http PORT``."""
    parser = argparse.ArgumentParser()
    parser.add_argument("--http", type=int, default=None, metavar="PORT")
    args = parser.parse_args()
    if args.http is None:
        server.run()
    else:
        server.run("streamable-http", host="127.0.0.1", port=args.http)


if __name__ == "__main__":
    main()
