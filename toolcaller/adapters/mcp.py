"""MCP tools: one `tools/call` per attempt on the server's shared session, results mapped.

Results (SPEC rule 7), with `format: json`:

- `structuredContent` is the result (JSON data the tool promised);
- a tool that declares an `outputSchema` but sends text: the text promises JSON (parsed,
  PARSE_ERROR when it is not JSON);
- one text block of a tool without an output schema is text by nature: a JSON string (a
  `git status`, a fetched page), never a PARSE_ERROR;
- anything else is the list of content blocks as the server sent them (`text`, `image` with
  base64 `data` and `mimeType`, `resource`, `resource_link`…).

With `format: raw` the result is always that list of content blocks. The server's progress
notifications and log messages during the call are kept with the attempt
(`AttemptContext.report_progress` / `report_log`: `Attempt.notes`, `on_event` listeners).

A server that is still starting is not the tool's time (`mark_waiting`): only the call's
deadline bounds the wait, and when it comes first the attempt ends TIMEOUT saying the server
is still starting and for how long; the start goes on in the background for the next call.

Failures map to codes as follows (the engine retries only what is retryable):

| what came back                                 | code            | retried              |
|------------------------------------------------|-----------------|----------------------|
| a result with `isError: true`                  | EXECUTION_ERROR | no (*)               |
| JSON-RPC -32602, invalid arguments (raised, or | INVALID_PARAMS  | no                   |
|   an isError text `MCP error -32602: …`)       |                 |                      |
| -32602 "Unknown tool" / "Tool … not found",    | EXECUTION_ERROR | no                   |
|   -32601 (a task-only tool), -32600            |                 |                      |
| JSON-RPC -32603 and server-defined codes       | EXECUTION_ERROR | yes                  |
| connection lost (-32000, a closed stream)      | EXECUTION_ERROR | yes (new session)    |
| the request's read timeout (-32001)            | TIMEOUT         | yes                  |
| the server still starting at the deadline      | TIMEOUT         | yes                  |
| a server that cannot start                     | EXECUTION_ERROR | yes, unless no command |
| `isError` from `toolcaller serve`              | the served code | no (served retries)  |

(*) MCP servers report tool failures in the result so that a model can correct its input
(bad arguments, unknown ids): another identical attempt would fail the same way. A server
entry or tool entry with `"retryToolErrors": true` makes them retryable (a fetch server whose
upstream is flaky).
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Callable, Iterator
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

START_MARGIN_S = 0.05
"""A start still running this close to the deadline ends the attempt with the adapter's own
message (the server is still starting), a little before the engine's deadline would."""
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

    def starting_for_s(self, server: str) -> float | None:
        """Seconds the server has been starting, or None when it is not starting."""
        ...

    async def astart(self, server: str) -> None:
        """Start the server's session if needed, from any event loop (the start is shielded)."""
        ...

    async def acall(
        self, server: str, tool: str, arguments: JSONObject, *, timeout_s: float | None = None,
        on_progress: Callable[[float, float | None, str | None], None] | None = None,
        on_log: Callable[[str, str], None] | None = None,
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
                await _started(hub, server, ctx)
                ctx.secrets.update(hub.secrets(server))
                ctx.mark_running()
            result = await hub.acall(
                server, target.tool, params, timeout_s=ctx.remaining_s() + READ_TIMEOUT_GUARD_S,
                on_progress=ctx.report_progress,
                on_log=lambda level, text: ctx.report_log(text, level),
            )
        return _output(result, tool, target, ctx)

    async def aclose(self) -> None:
        """Release nothing: the hubs belong to the sources that made the tools."""


async def _started(hub: McpSessions, server: str, ctx: AttemptContext) -> None:
    """Wait for the server's start until just before the deadline; say how it stands then."""
    start = asyncio.ensure_future(hub.astart(server))
    room_s = ctx.remaining_s() - START_MARGIN_S
    done, _ = await asyncio.wait((start,), timeout=max(room_s, 0.0))
    if start in done:
        start.result()
        return
    start.cancel()  # our wait only: the start is shielded and goes on for the next call
    seconds = hub.starting_for_s(server)
    so_far = f" ({seconds:.1f} s so far)" if seconds is not None else ""
    raise ToolTimeoutError(
        f"MCP server {server!r} is still starting{so_far}: the call's deadline of "
        f"{ctx.call.options.deadline:g} ms came first; the start goes on in the background "
        "and the next call uses it (a longer 'deadline' waits for it)",
        details={"server": server, "startingForS": round(seconds, 3) if seconds else None},
    )


def _target(tool: Tool) -> McpTarget:
    if isinstance(tool.target, McpTarget):
        return tool.target
    raise ExecutionError(
        f"tool {tool.name!r}: an mcp tool needs a server to run on (got {tool.target!r}); "
        "load it from a registry file with mcpServers",
        permanent=True,
    )


def _output(result: Any, tool: Tool, target: McpTarget, ctx: AttemptContext) -> object:
    """Map a `CallToolResult` by the module docstring's rules; `isError` raises."""
    contents = [c.model_dump(by_alias=True, exclude_none=True, mode="json") for c in result.content]
    served = result.meta if isinstance(result.meta, dict) else {}
    if result.is_error and isinstance(served.get(_SERVED_ERROR), dict):
        raise _served_error(served[_SERVED_ERROR], tool.name)
    if result.is_error:
        raise _tool_error(contents, tool, target)
    if ctx.format == "raw":
        return contents
    structured = result.structured_content
    if structured is not None:
        wrapper = served.get(_SERVED_WRAPPED)
        if isinstance(wrapper, str) and isinstance(structured, dict) and wrapper in structured:
            return structured[wrapper]
        return structured
    if len(contents) == 1 and contents[0].get("type") == "text":
        promised = "outputSchema" in tool.metadata
        return TextOutput(contents[0].get("text", ""), media_type="text/plain",
                          promises_json=promised)
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


# An isError text of a server built on the TypeScript SDK that wraps a JSON-RPC error.
_WRAPPED_ERROR = re.compile(r"^MCP error (-?\d+): ")


def _tool_error(contents: list[JSONObject], tool: Tool, target: McpTarget) -> ToolCallError:
    text = _text_of(contents) or "the tool reported an error and gave no text"
    details: JSONObject = {"content": contents}
    wrapped = _WRAPPED_ERROR.match(text)
    code = int(wrapped.group(1)) if wrapped else None
    if code == _INVALID_PARAMS and not _unknown_tool(text):
        details["mcpCode"] = code
        return InvalidParamsError(f"tool {tool.name!r}: the server rejected the params: {text}",
                                  details=details)
    if code is not None and (code in (_METHOD_NOT_FOUND, _INVALID_REQUEST)
                             or _unknown_tool(text)):
        details["mcpCode"] = code
        hint = (" (a task-only tool: toolcaller does not run MCP tasks)" if "task" in text
                else "; discover again" if _unknown_tool(text) else "")
        return ExecutionError(f"tool {tool.name!r} failed: {text}{hint}", details=details,
                              permanent=True)
    return ExecutionError(f"tool {tool.name!r} failed: {text}", details=details,
                          permanent=not target.retry_tool_errors)


def _unknown_tool(text: str) -> bool:
    lowered = text.lower()
    return "unknown tool" in lowered or ("tool" in lowered and "not found" in lowered)


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
