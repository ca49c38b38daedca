"""Serving a caller from Python (`serve`, `aserve`) and the client configuration that starts it."""

from __future__ import annotations

import asyncio
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from toolcaller._types import JSONObject
from toolcaller.errors import UsageError
from toolcaller.serve.http import HOST, HttpEndpoint, run_http
from toolcaller.serve.server import SERVER_NAME, build_server
from toolcaller.serve.stdio import claimed_stdio, run_stdio

if TYPE_CHECKING:
    from toolcaller.caller import ToolCaller

__all__ = ["Transport", "aserve", "mcp_servers_config", "serve", "stdio_config"]

Transport = Literal["stdio", "http"]


def serve(caller: ToolCaller, *, transport: Transport = "stdio", filter: str | None = None,
          host: str = HOST, port: int = 0, token: str | None = None,
          on_ready: Callable[[HttpEndpoint], None] | None = None) -> None:
    """Serve a caller's tools as an MCP server; block until it stops.

    stdio (what an `mcpServers` entry starts) stops when the client closes stdin; while it
    runs, stdout carries only protocol messages (see `toolcaller.serve.stdio`). HTTP serves
    `http://host:port/mcp` behind a bearer token (fresh unless `token` is given) and stops on
    SIGINT or SIGTERM; `on_ready` is told the endpoint once it accepts connections.
    Calls go through the caller's engine; the caller stays open (close it yourself).
    """
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        asyncio.run(aserve(caller, transport=transport, filter=filter, host=host, port=port,
                           token=token, on_ready=on_ready))
        return
    raise UsageError("serve() blocks and an event loop is running here: await aserve()")


async def aserve(caller: ToolCaller, *, transport: Transport = "stdio",
                 filter: str | None = None, host: str = HOST, port: int = 0,
                 token: str | None = None,
                 on_ready: Callable[[HttpEndpoint], None] | None = None) -> None:
    """Serve a caller's tools as an MCP server from async code (see `serve`)."""
    server = make_server(caller, filter=filter)
    if transport == "stdio":
        with claimed_stdio() as wire:
            await run_stdio(server, wire)
    elif transport == "http":
        await run_http(server, host=host, port=port, token=token, on_ready=on_ready)
    else:
        raise UsageError(f"unknown transport {transport!r}: use 'stdio' or 'http'")


def make_server(caller: ToolCaller, *, filter: str | None = None) -> Any:
    """Return the SDK server of a caller, or say how to install the SDK."""
    try:
        return build_server(caller, filter=filter)
    except ImportError as exc:
        raise UsageError("serving needs the MCP SDK, the 'mcp' extra: from a clone of "
                         f"toolcaller, pip install '.[mcp]' ({exc})") from None


def stdio_config(*, registry: str | Path | None = None, filter: str | None = None,
                 plugins: bool = False) -> JSONObject:
    """Return the `mcpServers` entry that starts `toolcaller serve` over stdio.

    The command is this Python (`-m toolcaller`), so the entry works in a virtualenv that is
    not on the client's PATH; `PYTHONPATH`, when set, is passed on in `env` (MCP clients
    start servers with a minimal environment).
    """
    args = ["-m", "toolcaller", "serve"]
    if registry is not None:
        args += ["--registry", str(Path(registry).resolve())]
    if filter:
        args += ["--filter", filter]
    if plugins:
        args.append("--plugins")
    entry: JSONObject = {"command": sys.executable, "args": args}
    if os.environ.get("PYTHONPATH"):
        entry["env"] = {"PYTHONPATH": os.environ["PYTHONPATH"]}
    return entry


def mcp_servers_config(entry: JSONObject, name: str = SERVER_NAME) -> JSONObject:
    """Return `{"mcpServers": {name: entry}}`, as client configuration files hold it."""
    return {"mcpServers": {name: entry}}
