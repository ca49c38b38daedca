"""The adapter protocol: what the engine asks of each tool kind, and what an attempt returns."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal, Protocol, TypeVar, runtime_checkable

from toolcaller._types import JSONObject
from toolcaller.core.tool import Tool

if TYPE_CHECKING:
    from pydantic import BaseModel

M = TypeVar("M", bound="BaseModel")

__all__ = ["Adapter", "AttemptContext", "TextOutput", "parse_entry"]


@dataclass(slots=True)
class TextOutput:
    """Output that is text on the wire (stdout, an HTTP body, MCP text content).

    With `format: json` the engine parses it as JSON (PARSE_ERROR if it does not parse);
    with `format: raw` it is returned untouched (`bytes` travel base64-encoded in JSON).
    """

    data: str | bytes
    media_type: str | None = None


@dataclass(slots=True)
class AttemptContext:
    """What one attempt may know: its time budget, the wanted format, and the call's secrets."""

    timeout_s: float
    """Seconds this attempt may take (the per-attempt timeout, cut to the deadline's remainder)."""
    format: Literal["json", "raw"] = "json"
    attempt: int = 1
    call_id: str = ""
    secrets: set[str] = field(default_factory=set)
    """Values to mask in every message; adapters add the secrets they resolve (`${VAR}` values,
    authorization headers) so that errors and history never show them."""
    straggler: Any = None
    """Set by an adapter whose attempt goes on after cancellation (a sync tool in a thread):
    something with `wait(timeout_s) -> bool` and `running`, so the engine can say so and wait
    for it before a retry."""


@runtime_checkable
class Adapter(Protocol):
    """Runs attempts of one tool kind.

    An attempt returns a Python value (returned as the result after JSON conversion) or a
    `TextOutput`, and raises only `toolcaller.errors.ToolCallError` subclasses, always
    `from exc`. On timeout the engine cancels `arun`; an adapter releases what it holds on
    cancellation (kills the process group, closes the request). `run` is the sync twin used by
    `ToolCaller.call` when `supports_sync(tool)` is true; it enforces `ctx.timeout_s` itself and
    raises `ToolTimeoutError`.
    """

    kind: str

    def supports_sync(self, tool: Tool) -> bool:
        """Say whether `run` can serve this tool without an event loop."""
        ...

    def run(self, tool: Tool, params: JSONObject, ctx: AttemptContext) -> object:
        """Run one attempt in the calling thread's control (sync twin of `arun`)."""
        ...

    async def arun(self, tool: Tool, params: JSONObject, ctx: AttemptContext) -> object:
        """Run one attempt on the running event loop."""
        ...

    async def aclose(self) -> None:
        """Release pooled resources (connections, sessions, worker processes)."""
        ...

    def close(self) -> None:
        """Release what can be released without an event loop."""
        ...


def parse_entry(model: type[M], tool: Tool, key: str) -> M:
    """Validate a tool's kind-specific registry object; a bad one is a permanent failure."""
    from pydantic import ValidationError

    from toolcaller.errors import ExecutionError

    try:
        return model.model_validate(tool.target)
    except ValidationError as exc:
        raise ExecutionError(
            f"tool {tool.name!r} has an invalid `{key}` entry: {exc.error_count()} problem(s)",
            details=[{"loc": list(e["loc"]), "msg": e["msg"]} for e in exc.errors()],
            permanent=True,
        ) from exc
