"""The adapter protocol: what the engine asks of each tool kind.

An adapter runs one attempt of a tool of its kind: `await adapter.invoke(tool, params, ctx)`
returns the tool's output (a Python value, or a `TextOutput` the engine parses under `format:
json`) and raises only `toolcaller.errors.ToolCallError` subclasses, always `from exc`. The
engine ends an attempt at its limit by cancelling `invoke`: an adapter releases what it holds
on cancellation (kills the process group, drops the connection). Time the attempt spends
waiting for something that is not the tool's own work (a worker thread, a starting process or
server) is announced with `ctx.mark_waiting(what)` and ended with `ctx.mark_running()`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol, TypeVar, runtime_checkable

from toolcaller._types import JSONObject
from toolcaller.core.context import AttemptContext
from toolcaller.core.results import TextOutput
from toolcaller.core.tool import Tool

if TYPE_CHECKING:
    from pydantic import BaseModel

M = TypeVar("M", bound="BaseModel")

__all__ = ["Adapter", "AttemptContext", "TextOutput", "parse_entry"]


@runtime_checkable
class Adapter(Protocol):
    """Runs attempts of one tool kind."""

    kind: str
    """The tool kind it runs (`Tool.kind`), also its registry entry key (`"http": {...}`)."""

    async def invoke(self, tool: Tool, params: JSONObject, ctx: AttemptContext) -> object:
        """Run one attempt of `tool` with `params` on the running event loop."""
        ...

    async def aclose(self) -> None:
        """Release pooled resources (connections, sessions, worker processes)."""
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
