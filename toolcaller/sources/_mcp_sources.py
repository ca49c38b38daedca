"""The registry sources an `McpHub` makes: a whole server (`McpSource`), or one picked tool."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from toolcaller._types import JSONObject
from toolcaller.adapters.mcp import McpTarget
from toolcaller.core.tool import Tool
from toolcaller.errors import ExecutionError, RegistryError

if TYPE_CHECKING:
    from toolcaller.sources.mcp import McpHub

__all__ = ["McpEntrySource", "McpSource"]


class McpSource:
    """Every tool of one MCP server, named `server.tool` (a `Source` for the registry)."""

    def __init__(self, hub: McpHub, server: str) -> None:
        self.hub = hub
        self.server = server
        self.name = f"mcp:{server}"
        self.prefix = f"{server}."
        self.default_options: dict[str, Any] = dict(hub.config(server).get("options") or {})
        """The server entry's `options`: every tool's defaults, known before listing."""

    def list_tools(self) -> list[Tool]:
        """Return the server's tools, starting its session on first use; raise if it cannot."""
        return self.hub.list_server_tools(self.server)

    async def alist_tools(self) -> list[Tool]:
        """Async twin of `list_tools`, usable from any event loop."""
        return await self.hub.alist_server_tools(self.server)

    def cached_tools(self) -> list[Tool]:
        """Return the tools listed so far (none if the server was not listed); starts nothing."""
        return self.hub.cached_tools(self.server)

    def waiting_for(self) -> str | None:
        """Say what a listing now waits for (the server still starting), or None."""
        return _still_starting(self.hub, self.server)

    def __repr__(self) -> str:
        return f"McpSource({self.server!r})"


def _still_starting(hub: McpHub, server: str) -> str | None:
    seconds = hub.starting_for_s(server)
    if seconds is None:
        return None
    return (f"MCP server {server!r} is still starting ({seconds:.1f} s so far); the start goes "
            "on in the background and the next call uses it")


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
        self.default_options: dict[str, Any] = {
            **(hub.config(self.server).get("options") or {}), **(entry.get("options") or {})}
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

    def cached_tools(self) -> list[Tool]:
        """Return the picked tool if it is known without contacting the server."""
        if self._static is not None:
            return [self._static]
        listed = [t for t in self.hub.cached_tools(self.server) if t.target.tool == self.tool]
        return [self._build(listed[0])] if listed else []

    def waiting_for(self) -> str | None:
        """Say what a listing now waits for (the server still starting), or None."""
        return _still_starting(self.hub, self.server)

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
            options={**(self.hub.config(self.server).get("options") or {}),
                     **(entry.get("options") or {})},
            isolation=entry.get("isolation"),
            idempotent=entry.get("idempotent", listed.idempotent if listed else False),
            output=entry.get("output"),
            redact_result=entry.get("redactResult", bool(
                self.hub.config(self.server).get("redactResult"))),
            base_dir=self.hub.base_dir,
            problem=listed.problem if listed else None,
        )

    def __repr__(self) -> str:
        return f"McpEntrySource({self.prefix!r} -> {self.server}.{self.tool})"
