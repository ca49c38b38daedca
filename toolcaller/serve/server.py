"""The MCP server of a registry: `tools/list` and `tools/call` handlers on the SDK's `Server`.

Every call goes through `ToolCaller.acall`: validation, timeout, retries, deadline, redaction
and the history, as for any other call. JSON-RPC errors are kept for protocol problems: an
unknown tool (-32602, with close names suggested) or a malformed request (the SDK answers
those itself); a tool that fails answers `isError` (see `toolcaller.serve.answer`).

Cancelling the handler (the client's `notifications/cancelled`, or the client gone) cancels
the `acall` task: the engine stops the current attempt, kills a script's process group or
an isolated worker, skips the remaining retries and records the call as cancelled.
"""

from __future__ import annotations

import asyncio
import logging
from typing import TYPE_CHECKING, Any

from toolcaller._types import JSONObject
from toolcaller.core.registry import Predicate, compile_filter
from toolcaller.core.tool import Tool
from toolcaller.errors import ErrorCode
from toolcaller.serve.answer import to_call_result
from toolcaller.serve.listing import to_listing
from toolcaller.serve.progress import ProgressBridge

if TYPE_CHECKING:
    from mcp.server import Server

    from toolcaller.caller import ToolCaller

__all__ = ["SERVER_NAME", "ServedRegistry", "build_server"]

SERVER_NAME = "toolcaller"
_INVALID_PARAMS = -32602
log = logging.getLogger("toolcaller.serve")


class ServedRegistry:
    """Answers MCP requests for the tools of one caller (those matching `filter`, if given).

    Args:
        caller: the caller whose registry is served and whose engine runs every call.
        filter: discovery's filter language (`tag:math -slow`); tools outside it are unknown.
    """

    def __init__(self, caller: ToolCaller, *, filter: str | None = None) -> None:
        self.caller = caller
        self.filter = filter if filter and filter.strip() else None
        self._matches: Predicate | None = compile_filter(self.filter) if self.filter else None
        self._told: set[str] = set()

    async def list_tools(self, ctx: Any, params: Any) -> JSONObject:
        """Answer `tools/list`: every served tool (a broken source is logged, not listed)."""
        registry = self.caller.registry
        if registry.sources:  # listing may start an MCP server: not on the loop
            tools, problems = await asyncio.to_thread(registry.search, self.filter)
        else:
            tools, problems = registry.search(self.filter)
        for problem in problems:
            text = str(problem.to_dict())
            if text not in self._told:  # once per problem, not at every listing
                self._told.add(text)
                log.warning("a source of tools has a problem: %s", text)
        # The 2026-07-28 wire wants a cache hint on listings; older ones drop these keys.
        return {"tools": to_listing(tools), "ttlMs": 0, "cacheScope": "private",
                "resultType": "complete"}

    async def call_tool(self, ctx: Any, params: Any) -> JSONObject:
        """Answer `tools/call` with the envelope of one engine call (see the module doc)."""
        name, arguments = params.name, params.arguments
        if self._matches is not None and not await self._served(name):
            raise _unknown_tool(f"Unknown tool: {name!r} (not among the tools served with "
                                f"the filter {self.filter!r})")
        bridge = ProgressBridge(ctx.session.report_progress) if _wants_progress(ctx) else None
        try:
            envelope = await self.caller.acall(
                name, {} if arguments is None else arguments,
                tool_call_id=None if ctx.request_id is None else f"mcp-{ctx.request_id}",
                on_event=None if bridge is None else bridge.on_event)
        except asyncio.CancelledError:
            if bridge is not None:
                bridge.cancel()
            raise
        if bridge is not None:
            await bridge.flush()
        if envelope.code is ErrorCode.TOOL_NOT_FOUND and envelope.error is not None:
            raise _unknown_tool(f"Unknown tool: {envelope.error.message}")
        return to_call_result(envelope)

    async def _served(self, name: str) -> bool:
        registry = self.caller.registry
        tool: Tool | None = registry.known(name)
        if tool is None and registry.needs_listing(name):
            try:
                tool = await asyncio.to_thread(registry.get, name)
            except Exception:  # noqa: BLE001 - the source's failure is the call's to report
                return True
        return tool is None or (self._matches is not None and self._matches(tool))


def build_server(caller: ToolCaller, *, filter: str | None = None,
                 name: str = SERVER_NAME) -> Server[Any]:
    """Return the SDK's low-level `Server` answering for a caller's tools (needs `mcp`)."""
    from mcp.server import Server

    import toolcaller  # its __version__ names the server

    served = ServedRegistry(caller, filter=filter)
    # The handlers return wire dicts: the runner takes any `HandlerResult` (a model or a dict)
    # and validates it for the session's protocol version, though the types name the models.
    handlers: dict[str, Any] = {"on_list_tools": served.list_tools,
                                "on_call_tool": served.call_tool}
    return Server(
        name, version=toolcaller.__version__,
        instructions="Tools served by toolcaller: each call has a timeout, retries and a "
                     "deadline; a failure's text starts with its code (TIMEOUT, "
                     "RETRY_EXHAUSTED, INVALID_PARAMS, EXECUTION_ERROR, PARSE_ERROR).",
        **handlers)


def _wants_progress(ctx: Any) -> bool:
    meta = ctx.meta
    return bool(meta) and meta.get("progress_token") is not None


def _unknown_tool(message: str) -> Exception:
    from mcp.shared.exceptions import MCPError

    return MCPError(code=_INVALID_PARAMS, message=message)
