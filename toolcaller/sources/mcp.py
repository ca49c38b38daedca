"""MCP servers as tool sources: one long-lived session per server, kept on the private loop.

`McpHub` owns the sessions of a registry's `mcpServers` (stdio or streamable HTTP, the shape
Claude Desktop, Cursor and VS Code use). Each session lives inside one long-lived task on the
caller's portal loop, because anyio task groups must be entered and left by the same task;
requests from any loop are handed to that loop with `Portal.arun`.

Beside `command`/`args`/`env`/`cwd` (or `url`/`headers`), a server entry may give `"options"`
(default options of its tools, e.g. `{"timeout": 30000}` for a slow server), `"tools"` (the
names to keep), `"disabled"`, `"retryToolErrors"`, `"redactResult"` and `"logLevel"`. A tool
that the server runs only as a task (`execution.taskSupport: "required"`) is listed with a
`problem` (discovery flags it, calls fail saying why): toolcaller does not run MCP tasks.
SIGTERM and SIGHUP stop a process's stdio servers (`_mcp_reaper`).
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from toolcaller._types import JSONObject
from toolcaller.adapters.mcp import McpTarget
from toolcaller.core.portal import Portal
from toolcaller.core.registry import Source
from toolcaller.core.tool import Tool
from toolcaller.errors import ExecutionError, RegistryError
from toolcaller.sources import _mcp_reaper
from toolcaller.sources._mcp_config import ServerSpec, parse_server_config
from toolcaller.sources._mcp_connect import LogSink, preload_sdk
from toolcaller.sources._mcp_session import Progress, ServerSession
from toolcaller.sources._mcp_sources import McpEntrySource, McpSource

if TYPE_CHECKING:
    from mcp.types import CallToolResult
    from mcp.types import Tool as McpTool

__all__ = [
    "McpEntrySource",
    "McpHub",
    "McpSource",
    "ServerSpec",
    "mcp_sources",
    "parse_server_config",
]

DEFAULT_START_TIMEOUT_S = 20.0
DEFAULT_RETRY_START_AFTER_S = 5.0
TASK_ONLY = ("the server runs it only as an MCP task (execution.taskSupport 'required'), and "
             "toolcaller does not run MCP tasks: the server refuses a plain call (-32601)")


def _seen(future: Any) -> None:
    """Read a background start's outcome, so that a failure is not reported as unread."""
    if not future.cancelled():
        future.exception()


class McpHub:
    """Opens, reuses and closes the sessions of configured MCP servers.

    Args:
        servers: the registry's `mcpServers` object: `{"name": {"command", "args", "env",
            "cwd"}}` (stdio) or `{"name": {"url", "headers"}}` (streamable HTTP).
        loop: the private loop every session lives on (the caller's `Portal`).
        base_dir: folder of the registry file; relative `cwd` and commands resolve against it,
            and a stdio server runs there unless its entry gives `cwd`.
        environ: where `${VAR}` values come from (default: `os.environ` at start time).
        start_timeout_s: how long a server may take to start and answer the handshake.
        retry_start_after_s: a server that failed to start is not tried again before this.
    """

    def __init__(
        self,
        servers: Mapping[str, Mapping[str, Any]],
        *,
        loop: Portal,
        base_dir: Path | None = None,
        environ: Mapping[str, str] | None = None,
        start_timeout_s: float = DEFAULT_START_TIMEOUT_S,
        retry_start_after_s: float = DEFAULT_RETRY_START_AFTER_S,
    ) -> None:
        self.loop = loop
        self.base_dir = base_dir
        self.start_timeout_s = start_timeout_s
        self.retry_start_after_s = retry_start_after_s
        self._environ = environ
        for name, config in servers.items():
            if not isinstance(config, Mapping) or not ("command" in config or "url" in config):
                raise RegistryError(
                    f"MCP server {name!r} needs a 'command' (stdio) or a 'url' (HTTP)",
                    pointer=f"/mcpServers/{name}",
                )
        self._servers = {
            name: ServerSession(
                name,
                dict(cfg),
                base_dir=base_dir,
                environ=self._environ_now,
                start_timeout_s=start_timeout_s,
                retry_start_after_s=retry_start_after_s,
            )
            for name, cfg in servers.items()
        }
        self._tools: dict[str, tuple[list[McpTool], list[Tool]]] = {}
        if any(not srv.config.get("disabled") for srv in self._servers.values()):
            preload_sdk()  # in a thread: the first call then finds the SDK (about 0.5 s) ready
        if any("command" in srv.config for srv in self._servers.values()):
            _mcp_reaper.install()

    @property
    def server_names(self) -> list[str]:
        """The configured server names."""
        return list(self._servers)

    def sources(self, *, exclude: Iterable[str] = ()) -> list[McpSource]:
        """Return one source per enabled server (its tools, named `server.tool`), minus `exclude`.

        A server entry with `"disabled": true` gets no source and is never started.
        """
        skip = set(exclude)
        return [
            McpSource(self, name)
            for name, srv in self._servers.items()
            if name not in skip and not srv.config.get("disabled")
        ]

    def entry_source(self, entry: Mapping[str, Any]) -> McpEntrySource:
        """Return a source for one registry entry `{"name", "mcp": {"server", "tool"}, …}`."""
        return McpEntrySource(self, entry)

    def secrets(self, server: str) -> set[str]:
        """Return the `${VAR}` values resolved for a server (to mask in messages)."""
        srv = self._servers.get(server)
        return set(srv.secrets) if srv is not None else set()

    def list_server_tools(self, server: str) -> list[Tool]:
        """List a server's tools from sync code, starting its session if needed (cached)."""
        srv = self._get(server)
        listed = srv.listed
        if listed is None:
            if self.loop.in_loop_thread():
                raise ExecutionError(
                    f"MCP server {server!r} is not listed yet and cannot be started from the "
                    "private loop's own thread: await alist_server_tools() instead",
                    permanent=True,
                )
            listed = self.loop.run(srv.list_tools())
        return self._as_tools(server, listed)

    async def alist_server_tools(self, server: str) -> list[Tool]:
        """List a server's tools from any event loop, starting its session if needed (cached)."""
        srv = self._get(server)
        listed = srv.listed
        if listed is None:
            listed = await self.loop.arun(srv.list_tools())
        return self._as_tools(server, listed)

    def start_all(self) -> None:
        """Start every enabled server and list its tools, in the background (no waiting)."""
        for srv in self._servers.values():
            if not srv.config.get("disabled"):
                self.loop.submit(srv.list_tools()).add_done_callback(_seen)

    def starting_for_s(self, server: str) -> float | None:
        """Seconds the server has been starting, or None when it is not starting."""
        srv = self._servers.get(server)
        return srv.starting_for_s() if srv is not None else None

    def cached_tools(self, server: str) -> list[Tool]:
        """Return the server's tools if it was listed, else nothing (starts nothing)."""
        srv = self._servers.get(server)
        listed = srv.listed if srv is not None else None
        return self._as_tools(server, listed) if listed is not None else []

    def config(self, server: str) -> Mapping[str, Any]:
        """Return a server's entry in `mcpServers` (empty if there is none)."""
        srv = self._servers.get(server)
        return srv.config if srv is not None else {}

    def is_started(self, server: str) -> bool:
        """Say whether the server's session is up."""
        srv = self._servers.get(server)
        return srv is not None and srv.is_up

    async def astart(self, server: str) -> None:
        """Start the server's session if needed, from any event loop (the start is shielded)."""
        await self.loop.arun(self._get(server).session())

    async def acall(
        self, server: str, tool: str, arguments: JSONObject, *, timeout_s: float | None = None,
        on_progress: Progress | None = None, on_log: LogSink | None = None,
    ) -> CallToolResult:
        """Call one tool of a server from any event loop; SDK exceptions pass through.

        A lost connection (`MCPError` -32000, a closed stream) retires the session, so the
        next call starts a new one. Cancelling the awaiting task cancels the request on the
        server (the SDK sends `notifications/cancelled`) and leaves the session usable. The
        server's progress notifications for this call, and its log messages while it runs, go
        to `on_progress(progress, total, message)` and `on_log(level, text)`.
        """
        return await self.loop.arun(self._get(server).call(
            tool, arguments, timeout_s, on_progress=on_progress, on_log=on_log))

    async def aclose(self) -> None:
        """Close every session and stop every server process."""
        await self.loop.arun(self._aclose())

    def close(self) -> None:
        """Close every session and stop every server process (from sync code)."""
        if all(srv.is_idle for srv in self._servers.values()):
            for srv in self._servers.values():  # nothing runs: no need to start the loop
                srv.close_idle()
            return
        if self.loop.in_loop_thread():
            raise RuntimeError("McpHub.close() called on the private loop: await aclose()")
        self.loop.run(self._aclose())

    async def _aclose(self) -> None:
        await asyncio.gather(*(srv.aclose() for srv in self._servers.values()))

    def _get(self, server: str) -> ServerSession:
        srv = self._servers.get(server)
        if srv is None:
            known = ", ".join(repr(n) for n in self._servers) or "none"
            raise ExecutionError(
                f"no MCP server named {server!r} in mcpServers (configured: {known})",
                permanent=True,
            )
        if srv.config.get("disabled"):
            raise ExecutionError(
                f"MCP server {server!r} is disabled in mcpServers", permanent=True
            )
        return srv

    def _environ_now(self) -> Mapping[str, str]:
        return os.environ if self._environ is None else self._environ

    def _as_tools(self, server: str, listed: list[McpTool]) -> list[Tool]:
        """Turn a server's listing into `Tool`s (built once per listing)."""
        cached = self._tools.get(server)
        if cached is None or cached[0] is not listed:
            wanted = self._servers[server].config.get("tools")
            chosen = [t for t in listed if wanted is None or t.name in wanted]
            cached = self._tools[server] = (listed, [self._to_tool(server, t) for t in chosen])
        return list(cached[1])

    def _to_tool(self, server: str, listed: McpTool) -> Tool:
        annotations = (
            listed.annotations.model_dump(by_alias=True, exclude_none=True, mode="json")
            if listed.annotations is not None
            else {}
        )
        metadata: JSONObject = {"tags": ["mcp", server]}
        title = listed.title or annotations.get("title")
        if title:
            metadata["title"] = title
        if annotations:
            metadata["annotations"] = annotations
        if listed.output_schema is not None:
            metadata["outputSchema"] = listed.output_schema
        task_support = listed.execution.task_support if listed.execution is not None else None
        if task_support is not None:
            metadata["execution"] = {"taskSupport": task_support}
        config = self._servers[server].config
        target = McpTarget(server, listed.name, self, bool(config.get("retryToolErrors")))
        return Tool(
            name=f"{server}.{listed.name}",
            description=listed.description or title or "",
            params_schema=listed.input_schema,
            kind="mcp",
            target=target,
            metadata=metadata,
            options=dict(config.get("options") or {}),
            idempotent=annotations.get("idempotentHint") is True,
            redact_result=bool(config.get("redactResult")),
            base_dir=self.base_dir,
            problem=TASK_ONLY if task_support == "required" else None,
        )


def mcp_sources(
    servers: Mapping[str, Mapping[str, Any]],
    portal: Portal,
    base_dir: Path | None = None,
    *,
    entries: Iterable[Mapping[str, Any]] = (),
) -> tuple[McpHub, list[Source]]:
    """Make a registry file's `mcpServers` into a hub and its sources.

    `entries` are registry entries with an `mcp` key: each becomes a source of its one tool
    (served without contacting the server when it gives `paramsSchema`). A server that any
    entry picks a tool from is not listed whole; every other server is, as `server.tool`
    (SPEC §3). Nothing is started here: a server starts at its first discovery or call.
    """
    hub = McpHub(servers, loop=portal, base_dir=base_dir)
    picked = [hub.entry_source(e) for e in entries if isinstance(e.get("mcp"), Mapping)]
    sources: list[Source] = [*picked, *hub.sources(exclude={s.server for s in picked})]
    return hub, sources
