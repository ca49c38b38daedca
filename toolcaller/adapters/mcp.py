"""MCP tools: one `tools/call` per attempt on the server's shared session, results mapped.

Failures map to codes as follows (the engine retries only what is retryable):

| what came back                                 | code            | retried              |
|------------------------------------------------|-----------------|----------------------|
| a result with `isError: true`                  | EXECUTION_ERROR | no (*)               |
| JSON-RPC -32602, invalid arguments             | INVALID_PARAMS  | no                   |
| JSON-RPC -32602 "Unknown tool", -32601, -32600 | EXECUTION_ERROR | no                   |
| JSON-RPC -32603 and server-defined codes       | EXECUTION_ERROR | yes                  |
| connection lost (-32000, a closed stream)      | EXECUTION_ERROR | yes (new session)    |
| the request's read timeout (-32001)            | TIMEOUT         | yes                  |
| a server that cannot start                     | EXECUTION_ERROR | yes, unless no command |
| `isError` from `toolcaller serve`              | the served code | no (served retries)  |

(*) MCP servers report tool failures in the result so that a model can correct its input
(bad arguments, unknown ids): another identical attempt would fail the same way. A server
entry or tool entry with `"retryToolErrors": true` makes them retryable (a fetch server whose
upstream is flaky).
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, Protocol

from toolcaller._types import JSONObject
from toolcaller.adapters.base import AttemptContext, TextOutput
from toolcaller.core.tool import Tool
from toolcaller.errors import (
    ExecutionError,
    InvalidParamsError,
    ParseError,
    RetryExhaustedError,
    ToolCallError,
    ToolTimeoutError,
)

__all__ = ["McpAdapter", "McpSessions", "McpTarget"]

READ_TIMEOUT_GUARD_S = 1.0
"""The SDK's own read timeout is set this much after the attempt's: the engine's cancellation
normally comes first (and cancels the request on the server); the guard only catches a request
that is not cancelled."""

_MESSAGE_CHARS = 1_000
# What `toolcaller serve` puts in a result's `_meta` (toolcaller.serve.answer): the served
# call's error (its code kept), and the key a non-object result is wrapped under.
_SERVED_ERROR = "toolcaller/error"
_SERVED_WRAPPED = "toolcaller/wrapped"
_SERVED_CODES: dict[str, type[ToolCallError]] = {
    "TIMEOUT": ToolTimeoutError,
    "RETRY_EXHAUSTED": RetryExhaustedError,
    "INVALID_PARAMS": InvalidParamsError,
    "EXECUTION_ERROR": ExecutionError,
    "PARSE_ERROR": ParseError,
}

# JSON-RPC error codes (mcp.types), kept here so that importing the core needs no mcp.
_CONNECTION_CLOSED = -32000
_REQUEST_TIMEOUT = -32001
_PARSE_ERROR = -32700
_INVALID_REQUEST = -32600
_METHOD_NOT_FOUND = -32601
_INVALID_PARAMS = -32602


class McpSessions(Protocol):
    """What the adapter needs from an MCP hub (`toolcaller.sources.mcp.McpHub`)."""

    def secrets(self, server: str) -> set[str]:
        """Return values to mask for this server (its resolved `${VAR}`s)."""
        ...

    def is_started(self, server: str) -> bool:
        """Say whether the server's session is up (no start to wait for)."""
        ...

    async def astart(self, server: str) -> None:
        """Start the server's session if needed, from any event loop (the start is shielded)."""
        ...

    async def acall(
        self, server: str, tool: str, arguments: JSONObject, *, timeout_s: float | None = None
    ) -> Any:
        """Call a tool from any event loop; return the SDK's `CallToolResult`."""
        ...


@dataclass(frozen=True, slots=True)
class McpTarget:
    """What an `mcp` tool runs: one tool of one server, reached through the server's hub."""

    server: str
    tool: str
    sessions: McpSessions = field(repr=False, compare=False)
    retry_tool_errors: bool = False
    """Retry failures the server reports in its result (`isError`): for flaky upstreams."""


class McpAdapter:
    """Runs attempts of `mcp` tools on their servers' sessions (`McpTarget.sessions`)."""

    kind = "mcp"

    async def invoke(self, tool: Tool, params: JSONObject, ctx: AttemptContext) -> object:
        """Call the tool once; map the result to a value, `TextOutput` or contract error."""
        target = _target(tool)
        hub, server = target.sessions, target.server
        ctx.secrets.update(hub.secrets(server))
        with _translate_errors(tool.name, server, target.tool):
            if not hub.is_started(server):  # starting a server is not the tool's time
                ctx.mark_waiting(f"MCP server {server!r} to start")
                await hub.astart(server)
                ctx.secrets.update(hub.secrets(server))
                ctx.mark_running()
            result = await hub.acall(
                server, target.tool, params, timeout_s=ctx.remaining_s() + READ_TIMEOUT_GUARD_S
            )
        return _output(result, tool, target, ctx)

    async def aclose(self) -> None:
        """Release nothing: the hubs belong to the sources that made the tools."""


def _target(tool: Tool) -> McpTarget:
    if isinstance(tool.target, McpTarget):
        return tool.target
    raise ExecutionError(
        f"tool {tool.name!r}: an mcp tool needs a server to run on (got {tool.target!r}); "
        "load it from a registry file with mcpServers",
        permanent=True,
    )


def _output(result: Any, tool: Tool, target: McpTarget, ctx: AttemptContext) -> object:
    """Map a `CallToolResult`: `isError` raises; json prefers structured content."""
    contents = [c.model_dump(by_alias=True, exclude_none=True, mode="json") for c in result.content]
    served = result.meta if isinstance(result.meta, dict) else {}
    if result.is_error and isinstance(served.get(_SERVED_ERROR), dict):
        raise _served_error(served[_SERVED_ERROR], tool.name)
    if result.is_error:
        text = _text_of(contents) or "the tool reported an error and gave no text"
        raise ExecutionError(
            f"tool {tool.name!r} failed: {text}",
            details={"content": contents},
            permanent=not target.retry_tool_errors,
        )
    if ctx.format == "raw":
        return contents
    structured = result.structured_content
    if structured is not None:
        wrapper = served.get(_SERVED_WRAPPED)
        if isinstance(wrapper, str) and isinstance(structured, dict) and wrapper in structured:
            return structured[wrapper]
        return structured
    if len(contents) == 1 and contents[0].get("type") == "text":
        return TextOutput(contents[0].get("text", ""), media_type="text/plain")
    return contents


def _served_error(error: dict[str, Any], tool_name: str) -> ToolCallError:
    """The failure of a call served by `toolcaller serve`, with the served call's own code.

    Not retried here: the serving engine already applied its retry policy.
    """
    kind = _SERVED_CODES.get(str(error.get("code")), ExecutionError)
    message = str(error.get("message") or f"tool {tool_name!r} failed")
    failure = kind(message, details=error.get("details"))
    failure.retryable = False
    return failure


def _text_of(contents: list[JSONObject]) -> str:
    text = "\n".join(c["text"] for c in contents if c.get("type") == "text" and c.get("text"))
    return text if len(text) <= _MESSAGE_CHARS else text[:_MESSAGE_CHARS] + "…"


def _error_map() -> dict[type[BaseException], type[ToolCallError]]:
    """Low-level exceptions by type (the SDK's `MCPError` is mapped by code instead)."""
    import anyio
    import pydantic

    return {
        TimeoutError: ToolTimeoutError,
        anyio.ClosedResourceError: ExecutionError,
        anyio.BrokenResourceError: ExecutionError,
        anyio.EndOfStream: ExecutionError,
        OSError: ExecutionError,
        pydantic.ValidationError: ExecutionError,  # a malformed result from the server
    }


def _catchable() -> tuple[type[BaseException], ...]:
    """What `_translate_errors` maps; evaluated only when an exception is on its way."""
    try:
        from mcp.shared.exceptions import MCPError
    except ImportError:  # without the extra no session exists, so no MCPError either
        return (ExceptionGroup, *_error_map())
    return (MCPError, ExceptionGroup, *_error_map())


@contextmanager
def _translate_errors(tool_name: str, server: str, mcp_tool: str) -> Iterator[None]:
    try:
        yield
    except (ToolCallError, asyncio.CancelledError):
        raise  # a cancellation must not evaluate _catchable(): it may wait for the SDK import
    except _catchable() as exc:
        inner = _unwrap(exc)
        if hasattr(inner, "error") and isinstance(getattr(inner, "code", None), int):
            raise _from_mcp_error(inner, tool_name, server, mcp_tool) from exc
        where = f"tool {tool_name!r}: MCP server {server!r}: {_describe(inner)}"
        target = _most_specific(type(inner), _error_map()) or ExecutionError
        if target is ExecutionError:
            # A result the SDK cannot read (pydantic) will not read better next time.
            permanent = type(inner).__name__ == "ValidationError"
            raise ExecutionError(where, permanent=permanent) from exc
        raise target(where) from exc


def _from_mcp_error(exc: Any, tool_name: str, server: str, mcp_tool: str) -> ToolCallError:
    code, message = exc.code, str(exc.message)
    details: JSONObject = {"server": server, "tool": mcp_tool, "mcpCode": code}
    if exc.data is not None:
        details["data"] = exc.data
    where = f"tool {tool_name!r}: MCP server {server!r}"
    if code == _CONNECTION_CLOSED:
        return ExecutionError(
            f"{where}: the connection was lost ({message}); a new session starts on the "
            "next attempt",
            details=details,
        )
    if code == _REQUEST_TIMEOUT:
        return ToolTimeoutError(f"{where}: no answer in time ({message})", details=details)
    if code == _INVALID_PARAMS and "unknown tool" in message.lower():
        return ExecutionError(
            f"{where} has no tool {mcp_tool!r} (any more): {message}; discover again",
            details=details,
            permanent=True,
        )
    if code == _INVALID_PARAMS:
        return InvalidParamsError(f"{where} rejected the params: {message}", details=details)
    permanent = code in (_PARSE_ERROR, _INVALID_REQUEST, _METHOD_NOT_FOUND)
    return ExecutionError(
        f"{where} answered with error {code}: {message}", details=details, permanent=permanent
    )


def _unwrap(exc: BaseException) -> BaseException:
    """Look inside anyio's single-member exception groups."""
    while isinstance(exc, BaseExceptionGroup) and len(exc.exceptions) == 1:
        exc = exc.exceptions[0]
    return exc


def _most_specific(
    kind: type[BaseException], table: dict[type[BaseException], type[ToolCallError]]
) -> type[ToolCallError] | None:
    # A subclass may match several keys (anyio.EndOfStream is not an OSError, but a
    # ConnectionResetError is): the key deepest in the MRO wins.
    for base in kind.__mro__:
        if base in table:
            return table[base]
    return None


def _describe(exc: BaseException) -> str:
    text = " ".join(str(exc).split())
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__
