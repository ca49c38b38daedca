"""Opening one MCP session: the SDK (imported in a thread of its own), a transport, a `Client`.

The SDK takes about 0.5 s to import: `preload_sdk` starts that in a background thread once per
process, and `connect` awaits it, so that no import ever holds the event loop (and every
deadline on it). A stdio server gets `OWNER_ENV` in its environment, so that the process can
find and stop its servers when it is told to end (`toolcaller.sources._mcp_reaper`).
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import json
import logging
import os
import sys
import threading
from collections.abc import Callable
from contextlib import AsyncExitStack
from types import SimpleNamespace
from typing import IO, TYPE_CHECKING, Any

from toolcaller.errors import ExecutionError
from toolcaller.sources._mcp_config import ServerSpec

if TYPE_CHECKING:
    from mcp import Client

__all__ = ["OWNER_ENV", "LogSink", "connect", "preload_sdk"]

logger = logging.getLogger(__name__)

OWNER_ENV = "TOOLCALLER_MCP_OWNER"
"""Set to the owning process's pid in every stdio server's environment."""
DEFAULT_LOG_LEVEL = "info"
"""Server log messages at this level or above are kept with the call they arrive during."""

LogSink = Callable[[str, str], None]
"""Receives a server's log messages: `(level, text)`."""


async def connect(
    spec: ServerSpec,
    stack: AsyncExitStack,
    *,
    errlog: IO[str] | None,
    on_tools_changed: Callable[[], None],
    on_log: LogSink,
    log_level: str = DEFAULT_LOG_LEVEL,
) -> Client:
    """Open a transport and a `Client` session on `stack` (entered by the calling task).

    The server's log messages go to `on_log`; servers of protocol 2026-07-28 send them only
    when asked, at `log_level` or above.
    """
    try:
        # Awaited, not imported here: an import would hold the loop (and every deadline on it).
        sdk = await asyncio.wrap_future(preload_sdk())
    except ImportError as exc:
        raise ExecutionError(
            f"MCP server {spec.name!r} needs the 'mcp' extra: from a clone of toolcaller, "
            f"pip install '.[mcp]' ({exc})",
            permanent=True,
        ) from exc

    transport: Any
    if spec.transport == "stdio":
        env = {**spec.env, OWNER_ENV: str(os.getpid())}
        params = sdk.StdioServerParameters(
            command=spec.command, args=list(spec.args), env=env, cwd=spec.cwd
        )
        transport = sdk.stdio_client(params, errlog=errlog or sys.stderr)
    elif spec.transport == "sse":
        transport = sdk.sse_client(spec.url, headers=spec.headers)
    else:
        http = await stack.enter_async_context(
            sdk.httpx2.AsyncClient(
                headers=spec.headers, timeout=sdk.httpx2.Timeout(30.0, read=300.0)
            )
        )
        transport = sdk.streamable_http_client(spec.url, http_client=http)

    async def on_message(message: Any) -> None:
        if isinstance(message, sdk.ToolListChangedNotification):
            on_tools_changed()
        elif isinstance(message, Exception):
            logger.debug("MCP server %r: transport reported %r", spec.name, message)

    async def on_logged(params: Any) -> None:
        data = params.data
        text = data if isinstance(data, str) else json.dumps(data, default=str)
        on_log(str(params.level), f"{params.logger}: {text}" if params.logger else text)

    client: Client = sdk.Client(
        transport,
        client_info=sdk.Implementation(name="toolcaller", version=sdk.version),
        message_handler=on_message,
        logging_callback=on_logged,
        log_level=log_level,
        cache=None,
    )
    return await stack.enter_async_context(client)


_sdk_lock = threading.Lock()
_sdk: concurrent.futures.Future[SimpleNamespace] | None = None


def preload_sdk() -> concurrent.futures.Future[SimpleNamespace]:
    """Start importing the MCP SDK in a background thread, once per process; return its future.

    The future's result holds the SDK names `connect` uses; it raises `ImportError` without
    the `mcp` extra (a later call tries again).
    """
    global _sdk
    with _sdk_lock:
        failed = _sdk is not None and _sdk.done() and _sdk.exception() is not None
        if _sdk is None or failed:
            future: concurrent.futures.Future[SimpleNamespace] = concurrent.futures.Future()
            future.set_running_or_notify_cancel()  # so a cancelled waiter cannot cancel it
            threading.Thread(
                target=_import_sdk, args=(future,), name="toolcaller-mcp-import", daemon=True
            ).start()
            _sdk = future
        return _sdk


def _forget_unfinished_import() -> None:
    """In a forked child: the importing thread was not copied, so its future would never end."""
    global _sdk, _sdk_lock
    _sdk_lock = threading.Lock()
    if _sdk is not None and not _sdk.done():
        _sdk = None


os.register_at_fork(after_in_child=_forget_unfinished_import)


def _import_sdk(future: concurrent.futures.Future[SimpleNamespace]) -> None:
    try:
        import httpx2
        from mcp import Client
        from mcp.client.sse import sse_client
        from mcp.client.stdio import StdioServerParameters, stdio_client
        from mcp.client.streamable_http import streamable_http_client
        from mcp.types import Implementation, ToolListChangedNotification

        sdk = SimpleNamespace(
            Client=Client,
            Implementation=Implementation,
            ToolListChangedNotification=ToolListChangedNotification,
            StdioServerParameters=StdioServerParameters,
            stdio_client=stdio_client,
            sse_client=sse_client,
            streamable_http_client=streamable_http_client,
            httpx2=httpx2,
            version=_version(),
        )
    except BaseException as exc:  # noqa: BLE001 - handed to every session waiting for the SDK
        future.set_exception(exc)
    else:
        future.set_result(sdk)


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("toolcaller")
    except PackageNotFoundError:
        return "0"
