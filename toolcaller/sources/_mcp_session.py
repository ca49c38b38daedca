"""One MCP server's session, held open by one long-lived task on the private loop.

anyio task groups (inside the SDK's `Client`) must be entered and left by the same task, so
each session is opened and closed by an owner task that waits for a stop signal; requests run
as other tasks on the same loop. A lost connection retires the session and the next request
starts a new one; a failed start is remembered for a few seconds so discovery does not hammer it.
The SDK (about 0.5 s to import) is imported in a thread of its own, never on the loop.
"""

from __future__ import annotations

import asyncio
import logging
import os
import re
import tempfile
import time
from collections.abc import Awaitable, Callable, Iterable, Mapping
from contextlib import AsyncExitStack
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any, TypeVar

from toolcaller._types import JSONObject
from toolcaller.errors import ExecutionError
from toolcaller.sources._mcp_config import ServerSpec, parse_server_config
from toolcaller.sources._mcp_connect import DEFAULT_LOG_LEVEL, LogSink, connect

if TYPE_CHECKING:
    from mcp import Client
    from mcp.types import CallToolResult
    from mcp.types import Tool as McpTool

__all__ = ["Progress", "ServerSession"]

Progress = Callable[[float, "float | None", "str | None"], None]
"""Receives a call's progress notifications: `(progress, total, message)`."""

logger = logging.getLogger(__name__)
_T = TypeVar("_T")
_CONNECTION_CLOSED = -32000  # mcp.types.CONNECTION_CLOSED, kept here so the core needs no mcp
_STDERR_TAIL_BYTES = 600


class ServerSession:
    """One configured server: its session, its cached tool listing and its last start failure.

    Everything but the `listed` and `secrets` attributes is touched only on the private loop.
    """

    def __init__(
        self,
        name: str,
        config: JSONObject,
        *,
        base_dir: Path | None,
        environ: Callable[[], Mapping[str, str]],
        start_timeout_s: float,
        retry_start_after_s: float,
    ) -> None:
        self.name = name
        self.config = config
        self.base_dir = base_dir
        self.start_timeout_s = start_timeout_s
        self.retry_start_after_s = retry_start_after_s
        self._environ = environ
        self.listed: list[McpTool] | None = None
        """The server's tools as last listed (`None`: not listed, or the server changed them)."""
        self.secrets: frozenset[str] = frozenset()
        self._client: Client | None = None
        self._stop: asyncio.Event | None = None
        self._starting: asyncio.Task[Client] | None = None
        self._failure: tuple[float, ExecutionError] | None = None
        self._owners: set[asyncio.Task[None]] = set()
        self._errlog: IO[str] | None = None
        self._start_began: float | None = None
        self._log_sinks: set[LogSink] = set()

    def starting_for_s(self) -> float | None:
        """Seconds the server has been starting, or None when no start runs."""
        began = self._start_began
        return None if began is None else time.monotonic() - began

    @property
    def is_up(self) -> bool:
        """Say whether a live session exists (no start to wait for)."""
        return self._client is not None

    async def session(self) -> Client:
        """Return the live session, starting one (once, shared by concurrent callers)."""
        if self._client is not None:
            return self._client
        if self._starting is None:
            if self._failure is not None:
                failed_at, error = self._failure
                if time.monotonic() - failed_at < self.retry_start_after_s:
                    raise ExecutionError(error.message, permanent=not error.retryable)
            self._start_began = time.monotonic()
            self._starting = asyncio.create_task(self._start(), name=f"mcp-start:{self.name}")
            self._starting.add_done_callback(_retrieve)
        # Shielded: a caller that gives up (a timeout) does not abort a start others await.
        return await asyncio.shield(self._starting)

    async def list_tools(self) -> list[McpTool]:
        """Fetch and cache the server's tools (all pages)."""
        client = await self.session()
        listed: list[McpTool] = []
        cursor: str | None = None
        for _ in range(100):  # a server whose cursor never ends cannot hang discovery
            page = await self._guard(client, client.list_tools(cursor=cursor))
            listed.extend(page.tools)
            cursor = page.next_cursor
            if cursor is None:
                break
        self.listed = listed
        return listed

    async def call(
        self, tool: str, arguments: JSONObject, timeout_s: float | None, *,
        on_progress: Progress | None = None, on_log: LogSink | None = None,
    ) -> CallToolResult:
        """Call a tool on the live session; its progress and the server's log go to the sinks.

        A log message has no request id: it goes to every call of the server in flight.
        """
        client = await self.session()

        async def progress(progress: float, total: float | None, message: str | None) -> None:
            if on_progress is not None:
                on_progress(progress, total, message)

        if on_log is not None:
            self._log_sinks.add(on_log)
        try:
            return await self._guard(client, client.call_tool(
                tool, arguments, read_timeout_seconds=timeout_s,
                progress_callback=progress if on_progress is not None else None))
        finally:
            self._log_sinks.discard(on_log)

    def _on_log(self, level: str, text: str) -> None:
        for sink in list(self._log_sinks):
            sink(level, text)

    async def _guard(self, client: Client, request: Awaitable[_T]) -> _T:
        """Await a request; a lost connection retires the session so the next use restarts it."""
        try:
            return await request
        except Exception as exc:
            if _is_connection_lost(exc):
                logger.info("MCP server %r: connection lost (%s); will restart", self.name, exc)
                self._retire(client)
            raise

    async def _start(self) -> Client:
        try:
            spec = parse_server_config(
                self.name, self.config, base_dir=self.base_dir, environ=self._environ()
            )
            self.secrets = spec.secrets
            self._close_errlog()
            self._errlog = _new_errlog() if spec.transport == "stdio" else None
            ready: asyncio.Future[Client] = asyncio.get_running_loop().create_future()
            stop = asyncio.Event()
            owner = asyncio.create_task(self._own(spec, ready, stop), name=f"mcp:{self.name}")
            self._owners.add(owner)
            owner.add_done_callback(self._owners.discard)
            try:
                async with asyncio.timeout(self.start_timeout_s):
                    client = await asyncio.shield(ready)
            except BaseException:
                stop.set()
                owner.cancel()
                await asyncio.gather(owner, return_exceptions=True)
                raise
            self._client, self._stop, self._failure = client, stop, None
            return client
        except asyncio.CancelledError:
            raise  # the loop is closing: nothing failed
        except BaseException as exc:
            error = self._start_error(exc)
            self._failure = (time.monotonic(), error)
            raise error from exc
        finally:
            self._starting = None
            self._start_began = None

    async def _own(
        self, spec: ServerSpec, ready: asyncio.Future[Client], stop: asyncio.Event
    ) -> None:
        """Hold one session open, from connect to `stop`, inside this one task."""
        client: Client | None = None
        try:
            async with AsyncExitStack() as stack:
                client = await connect(
                    spec, stack, errlog=self._errlog, on_tools_changed=self._forget_tools,
                    on_log=self._on_log,
                    log_level=str(self.config.get("logLevel", DEFAULT_LOG_LEVEL)),
                )
                ready.set_result(client)
                await stop.wait()
        except BaseException as exc:
            if not ready.done():
                if isinstance(exc, asyncio.CancelledError):
                    ready.cancel()
                else:
                    ready.set_exception(exc)
            elif not isinstance(exc, asyncio.CancelledError):
                logger.warning("MCP server %r: session ended with %r", self.name, exc)
            if isinstance(exc, asyncio.CancelledError | KeyboardInterrupt | SystemExit):
                raise
        finally:
            if client is not None and self._client is client:
                self._client = None

    def _forget_tools(self) -> None:
        self.listed = None

    def _retire(self, client: Client) -> None:
        if self._client is client:
            self._client = None
            if self._stop is not None:
                self._stop.set()

    def _start_error(self, exc: BaseException) -> ExecutionError:
        if isinstance(exc, ExecutionError):
            return exc
        if isinstance(exc, TimeoutError):
            why = f"did not answer the handshake within {self.start_timeout_s:g} s"
        else:
            why = _describe(exc)
        tail = _stderr_tail(self._errlog, self.secrets)
        message = f"MCP server {self.name!r} could not start: {why}"
        return ExecutionError(message + (f"; its stderr ends with: {tail}" if tail else ""))

    async def aclose(self) -> None:
        """Stop the session (and its process) and wait until it is gone."""
        if self._starting is not None:  # let a start finish, then stop what it started
            await asyncio.gather(self._starting, return_exceptions=True)
        self._client = None
        if self._stop is not None:
            self._stop.set()
        await asyncio.gather(*self._owners, return_exceptions=True)
        self._close_errlog()

    @property
    def is_idle(self) -> bool:
        """Say whether nothing runs: no session, no start, no process shutting down."""
        return self._client is None and self._starting is None and not self._owners

    def close_idle(self) -> None:
        """Release what an idle session still holds (the stderr file of a failed start)."""
        if self.is_idle:
            self._close_errlog()

    def _close_errlog(self) -> None:
        if self._errlog is not None:
            self._errlog.close()
            self._errlog = None


def _retrieve(task: asyncio.Task[Any]) -> None:
    """Mark a background task's exception as seen (its awaiters may all have given up)."""
    if not task.cancelled():
        task.exception()


def _is_connection_lost(exc: BaseException) -> bool:
    import anyio

    if getattr(exc, "code", None) == _CONNECTION_CLOSED and type(exc).__name__ == "MCPError":
        return True
    return isinstance(
        exc, anyio.ClosedResourceError | anyio.BrokenResourceError | anyio.EndOfStream | OSError
    )


def _describe(exc: BaseException) -> str:
    """Say what went wrong in one line, looking inside anyio's exception groups."""
    while isinstance(exc, BaseExceptionGroup) and len(exc.exceptions) == 1:
        exc = exc.exceptions[0]
    if getattr(exc, "code", None) == _CONNECTION_CLOSED:
        return "the server closed the connection during the handshake"
    text = re.sub(r"\s+", " ", str(exc)).strip()
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


def _new_errlog() -> IO[str]:
    """A file for a stdio server's stderr: kept apart from the protocol, read on failure."""
    return tempfile.TemporaryFile(mode="w+", encoding="utf-8", errors="replace")


def _stderr_tail(errlog: IO[str] | None, secrets: Iterable[str]) -> str:
    """Return the end of a server's stderr on one line, secrets masked."""
    if errlog is None or errlog.closed:
        return ""
    try:
        fd = errlog.fileno()
        size = os.fstat(fd).st_size
        # pread leaves the shared file offset alone: the server keeps appending where it was.
        data = os.pread(fd, _STDERR_TAIL_BYTES, max(0, size - _STDERR_TAIL_BYTES))
    except OSError:
        return ""
    text = data.decode("utf-8", errors="replace")
    for secret in secrets:
        text = text.replace(secret, "***")
    text = " | ".join(line.strip() for line in text.strip().splitlines() if line.strip())
    return ("…" + text) if size > _STDERR_TAIL_BYTES else text
