"""`toolcaller serve`: a registry as an MCP server, over stdio (default) or HTTP.

stdio claims stdout before the registry loads (a module that prints on import cannot corrupt
the stream) and stops when the client closes stdin or sends SIGTERM; HTTP prints its address
and a fresh token on stderr and stops on Ctrl-C or SIGTERM. Either way the caller is closed
last, so that no worker, script or MCP server process outlives the server.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import signal
import sys
import threading
import time
from collections.abc import Coroutine
from typing import TYPE_CHECKING, Any

from toolcaller.errors import UsageError
from toolcaller.serve.http import HttpEndpoint, run_http
from toolcaller.serve.runner import make_server, mcp_servers_config, stdio_config
from toolcaller.serve.stdio import Wire, claimed_stdio, run_stdio

if TYPE_CHECKING:
    from toolcaller.caller import ToolCaller

__all__ = ["run_command"]

EXIT_OK, EXIT_USAGE, EXIT_INTERRUPTED = 0, 2, 130
IDLE_THREAD_GRACE_S = 0.5
"""How long idle worker threads get to end before the server exits without them."""


def run_command(*, registry: str | None, plugins: bool, transport: str, port: int,
                filter: str | None, print_config: bool) -> int:
    """Run `toolcaller serve` with its command-line options; return the exit status."""
    logging.basicConfig(stream=sys.stderr, level=logging.WARNING,
                        format="toolcaller serve: %(levelname)s %(name)s: %(message)s")
    if print_config and transport == "stdio":
        entry = stdio_config(registry=registry, filter=filter, plugins=plugins)
        print(json.dumps(mcp_servers_config(entry), indent=2))
        return EXIT_OK
    try:
        if transport == "stdio":
            with claimed_stdio() as wire:
                status = _serve_stdio(wire, registry, plugins, filter)
        else:
            status = _serve_http(registry, plugins, filter, port, print_config)
    except UsageError as exc:
        print(f"toolcaller: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except KeyboardInterrupt:
        status = EXIT_INTERRUPTED
    return _leave(status)


def _leave(status: int) -> int:
    """Return the status, or exit at once if a sync tool still runs in a worker thread.

    A thread cannot be stopped, and Python waits for worker threads at exit: a server whose
    client left would linger until the tool returned (the client then kills it). Everything
    else is cleaned up by now (the caller is closed).
    """
    lingering = [t for t in threading.enumerate()
                 if t is not threading.main_thread() and not t.daemon and t.is_alive()]
    deadline = time.monotonic() + IDLE_THREAD_GRACE_S
    for thread in lingering:  # idle pool threads are on their way out: let them go
        thread.join(max(deadline - time.monotonic(), 0.0))
    lingering = [t for t in lingering if t.is_alive()]
    if not lingering:
        return status
    print(f"toolcaller serve: {len(lingering)} sync tool(s) still running in worker threads "
          "(threads cannot be stopped): exiting without waiting for them", file=sys.stderr)
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(status)


def _serve_stdio(wire: Wire, registry: str | None, plugins: bool, filter: str | None) -> int:
    caller = _caller(registry, plugins)
    try:
        server = make_server(caller, filter=filter)
        print("toolcaller serve: MCP on stdio (stdin closed or SIGTERM stops it)",
              file=sys.stderr, flush=True)
        asyncio.run(_until_terminated(run_stdio(server, wire)))
    finally:
        caller.close()
    return EXIT_OK


def _serve_http(registry: str | None, plugins: bool, filter: str | None, port: int,
                print_config: bool) -> int:
    caller = _caller(registry, plugins)

    def announce(endpoint: HttpEndpoint) -> None:
        print(f"toolcaller serve: MCP at {endpoint.url}\n  header: Authorization: Bearer "
              f"{endpoint.token}\n  (Ctrl-C or SIGTERM stops it)", file=sys.stderr, flush=True)
        if print_config:
            print(json.dumps(mcp_servers_config(endpoint.mcp_config()), indent=2), flush=True)

    try:
        server = make_server(caller, filter=filter)
        try:
            asyncio.run(run_http(server, port=port, on_ready=announce))
        except OSError as exc:  # the port is taken, say
            raise UsageError(f"cannot listen on 127.0.0.1:{port}: {exc.strerror}") from None
    finally:
        caller.close()
    return EXIT_OK


async def _until_terminated(work: Coroutine[Any, Any, None]) -> None:
    """Run `work`; SIGTERM cancels it, as the end of stdin would stop it."""
    task = asyncio.ensure_future(work)
    loop = asyncio.get_running_loop()
    with contextlib.suppress(NotImplementedError, RuntimeError):
        loop.add_signal_handler(signal.SIGTERM, task.cancel)
    with contextlib.suppress(asyncio.CancelledError):
        await task


def _caller(registry: str | None, plugins: bool) -> ToolCaller:
    from toolcaller.caller import ToolCaller

    caller = ToolCaller.from_file(registry) if registry else ToolCaller()
    if plugins:
        for problem in caller.add_plugins():
            print(f"toolcaller: warning: {problem}", file=sys.stderr)
    return caller
