"""MCP servers as tool sources: one long-lived session per server, kept on the private loop.

`McpHub` owns the sessions of a registry's `mcpServers` (stdio or streamable HTTP, the shape
Claude Desktop, Cursor and VS Code use). Each session lives inside one long-lived task on the
caller's portal loop, because anyio task groups must be entered and left by the same task;
requests from any loop are handed to that loop with `Portal.arun`.
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
from toolcaller.sources._mcp_config import ServerSpec, parse_server_config
from toolcaller.sources._mcp_session import ServerSession, preload_sdk

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
        self, server: str, tool: str, arguments: JSONObject, *, timeout_s: float | None = None
    ) -> CallToolResult:
        """Call one tool of a server from any event loop; SDK exceptions pass through.

        A lost connection (`MCPError` -32000, a closed stream) retires the session, so the
        next call starts a new one. Cancelling the awaiting task cancels the request on the
        server (the SDK sends `notifications/cancelled`) and leaves the session usable.
        """
        return await self.loop.arun(self._get(server).call(tool, arguments, timeout_s))

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
        target = McpTarget(server, listed.name, self,
                           bool(self._servers[server].config.get("retryToolErrors")))
        return Tool(
            name=f"{server}.{listed.name}",
            description=listed.description or title or "",
            params_schema=listed.input_schema,
            kind="mcp",
            target=target,
            metadata=metadata,
            idempotent=annotations.get("idempotentHint") is True,
            base_dir=self.base_dir,
        )


class McpSource:
    """Every tool of one MCP server, named `server.tool` (a `Source` for the registry)."""

    def __init__(self, hub: McpHub, server: str) -> None:
        self.hub = hub
        self.server = server
        self.name = f"mcp:{server}"
        self.prefix = f"{server}."

    def list_tools(self) -> list[Tool]:
        """Return the server's tools, starting its session on first use; raise if it cannot."""
        return self.hub.list_server_tools(self.server)

    async def alist_tools(self) -> list[Tool]:
        """Async twin of `list_tools`, usable from any event loop."""
        return await self.hub.alist_server_tools(self.server)

    def __repr__(self) -> str:
        return f"McpSource({self.server!r})"


class McpEntrySource:
    """One registry entry that picks a single MCP tool under its own name.

    The entry's `description`, `paramsSchema`, `metadata` and `options` win; what it leaves
    out comes from the server's listing. An entry that gives `paramsSchema` is served without
    contacting the server (the session starts at the first call); one that does not starts the
    session at first discovery or lookup, like a whole-server source.
    """

    def __init__(self, hub: McpHub, entry: Mapping[str, Any]) -> None:
        spec = entry.get("mcp")
        if not isinstance(spec, Mapping) or not spec.get("server") or not spec.get("tool"):
            raise RegistryError(
                f"tool {entry.get('name')!r}: 'mcp' needs 'server' and 'tool'", pointer="/mcp"
            )
        self.hub = hub
        self.entry = dict(entry)
        self.server = str(spec["server"])
        self.tool = str(spec["tool"])
        self.name = f"mcp:{self.server}/{self.tool}"
        self.prefix = str(entry["name"])
        self._static = self._build(None) if "paramsSchema" in entry else None

    def list_tools(self) -> list[Tool]:
        """Return the one picked tool (asking the server only for what the entry lacks)."""
        if self._static is not None:
            return [self._static]
        return [self._pick(self.hub.list_server_tools(self.server))]

    async def alist_tools(self) -> list[Tool]:
        """Async twin of `list_tools`, usable from any event loop."""
        if self._static is not None:
            return [self._static]
        return [self._pick(await self.hub.alist_server_tools(self.server))]

    def _pick(self, tools: list[Tool]) -> Tool:
        for tool in tools:
            if tool.target.tool == self.tool:
                return self._build(tool)
        names = ", ".join(repr(t.target.tool) for t in tools) or "none"
        raise ExecutionError(
            f"MCP server {self.server!r} has no tool {self.tool!r} (it has: {names})",
            permanent=True,
        )

    def _build(self, listed: Tool | None) -> Tool:
        entry = self.entry
        metadata: JSONObject = dict(listed.metadata) if listed else {"tags": ["mcp", self.server]}
        metadata.update(entry.get("metadata") or {})
        spec = entry["mcp"]
        retry = spec.get("retryToolErrors", listed.target.retry_tool_errors if listed else
                         bool(self.hub.config(self.server).get("retryToolErrors")))
        target = McpTarget(self.server, self.tool, self.hub, bool(retry))
        return Tool(
            name=self.prefix,
            description=entry.get("description") or (listed.description if listed else ""),
            params_schema=entry.get("paramsSchema", listed.params_schema if listed else {}),
            kind="mcp",
            target=target,
            metadata=metadata,
            options=dict(entry.get("options") or {}),
            isolation=entry.get("isolation"),
            idempotent=entry.get("idempotent", listed.idempotent if listed else False),
            base_dir=self.hub.base_dir,
        )

    def __repr__(self) -> str:
        return f"McpEntrySource({self.prefix!r} -> {self.server}.{self.tool})"


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
