"""Batch rows in other processes: what travels to the workers, and the worker's side.

A `ToolCaller` holds threads and locks and cannot be pickled, so a `CallerSource` travels
instead (a registry file, the demo flag, or portable tools) and each worker process rebuilds a
caller from it once, cached by `CallerSource.key`; `run_row` is the picklable function an
executor runs. Rows that ran elsewhere come back as envelope dicts and join the local history
through `record_remote`.
"""

from __future__ import annotations

import dataclasses
import hashlib
import pickle
import threading
from dataclasses import field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from toolcaller.core.history import CallRecord
from toolcaller.core.redact import redact_params, secret_names_in_schema
from toolcaller.core.tool import Tool
from toolcaller.envelope import CallMetadata, Envelope
from toolcaller.errors import ExecutionError, ToolCallError, UsageError

if TYPE_CHECKING:
    from toolcaller.caller import ToolCaller

__all__ = ["CallerSource", "record_remote", "run_row", "source_for"]


@dataclasses.dataclass(frozen=True, slots=True)
class CallerSource:
    """What a worker process rebuilds a `ToolCaller` from: a registry file, the demo, or tools."""

    registry: str | None = None
    """Path of a registry file (`ToolCaller.from_file`)."""
    demo: bool = False
    """Use the embedded demo registry (`ToolCaller()`)."""
    tools: tuple[Tool, ...] = ()
    """Portable tools: no cache, python targets as `"module:function"` strings."""
    from_functions: frozenset[str] = frozenset()
    """Names of tools made from functions: rebuilt with `@tool`'s rules (type coercion)."""
    key: str = ""
    """Identifies the source: workers keep one caller per key."""

    caller_class: Any = field(default=None, compare=False)
    """The class to build (the sending caller's own, pickled by reference)."""

    def build(self) -> ToolCaller:
        """Build the caller this source describes."""
        made: Any = self.caller_class
        if made is None:
            raise UsageError("a CallerSource needs its caller_class (use source_for)")
        if self.registry is not None:
            return made.from_file(self.registry)  # type: ignore[no-any-return]
        if self.demo:
            return made()  # type: ignore[no-any-return]
        return made(tools=[_rebuilt(t) if t.name in self.from_functions else t  # type: ignore[no-any-return]
                           for t in self.tools])


def source_for(caller: ToolCaller, tool_name: str,
               source: str | Path | CallerSource | None = None) -> CallerSource:
    """Return what workers need to run `tool_name` (see the module docstring).

    Raises:
        UsageError: the tool cannot travel (a lambda, a nested function, an MCP tool without
            `source=`).
    """
    if isinstance(source, CallerSource):
        return source if source.caller_class is not None else dataclasses.replace(
            source, caller_class=type(caller))
    if source == "demo":
        return CallerSource(demo=True, key="demo", caller_class=type(caller))
    if source is not None:
        path = str(Path(source).resolve())
        return CallerSource(registry=path, key=f"file:{path}", caller_class=type(caller))
    tool = caller.registry.get(tool_name)
    if tool is None:  # every row gets TOOL_NOT_FOUND from an empty caller
        return CallerSource(key="empty", caller_class=type(caller))
    portable, from_function = _portable(tool)
    made = CallerSource(tools=(portable,), caller_class=type(caller),
                        from_functions=frozenset({tool.name} if from_function else ()))
    try:
        blob = pickle.dumps((made.tools, made.from_functions))
    except Exception as exc:
        raise UsageError(f"tool {tool_name!r} cannot be sent to worker processes: {exc}; "
                         "use a ThreadPoolExecutor, or pass source='tools.json'") from exc
    return dataclasses.replace(made, key="tools:" + hashlib.sha256(blob).hexdigest())


def _portable(tool: Tool) -> tuple[Tool, bool]:
    if tool.kind == "mcp":
        raise UsageError(f"tool {tool.name!r} lives on an MCP server, which workers must start "
                         "themselves: pass source='tools.json' (the registry that names it)")
    if tool.kind != "python" or not callable(tool.target):
        return dataclasses.replace(tool), False
    fn = tool.target
    module = getattr(fn, "__module__", None)
    qualname = getattr(fn, "__qualname__", "")
    if not module or not qualname or "<" in qualname:
        raise UsageError(
            f"tool {tool.name!r} runs {qualname or fn!r}, which worker processes cannot import "
            "(a lambda or a nested function): define it at module level, or use a "
            "ThreadPoolExecutor")
    return dataclasses.replace(tool, target=f"{module}:{qualname}", params_model=None), True


def _rebuilt(tool: Tool) -> Tool:
    """Re-import a function tool in a worker and build it again with `@tool`'s rules."""
    from toolcaller.adapters.python_code import load_callable
    from toolcaller.sources.decorator import from_function

    assert isinstance(tool.target, str)

    try:
        fn = load_callable(tool.target)
    except ExecutionError:
        return tool  # each call reports the import error
    if isinstance(fn, Tool):  # the module attribute is the decorated tool
        fn = fn.target
    try:
        made = from_function(fn, name=tool.name, description=tool.description,
                             metadata=tool.metadata, options=tool.options,
                             isolation=tool.isolation, idempotent=tool.idempotent)
    except UsageError:
        return dataclasses.replace(tool, target=fn)
    return dataclasses.replace(made, params_schema=tool.params_schema)


_WORKER_CALLERS: dict[str, ToolCaller] = {}
_WORKER_LOCK = threading.Lock()


def run_row(source: CallerSource, tool_name: str, params: Any,
             options: dict[str, Any]) -> dict[str, Any]:
    """Run one row in a worker process, with the caller rebuilt from `source` (cached)."""
    caller = _WORKER_CALLERS.get(source.key)
    if caller is None:
        with _WORKER_LOCK:
            caller = _WORKER_CALLERS.get(source.key)
            if caller is None:
                caller = _WORKER_CALLERS[source.key] = source.build()
    return caller.call(tool_name, params, None, **options).to_dict()


def record_remote(caller: ToolCaller, tool_name: str, row: Any,
                  outcome: Envelope | ToolCallError) -> Envelope:
    """Add a row that ran elsewhere (or could not run) to the caller's history; its envelope."""
    if not isinstance(outcome, Envelope):
        return caller.record_failure(tool_name, row, outcome)
    meta = outcome.metadata
    if not isinstance(meta, CallMetadata):
        return outcome
    tool = caller.registry.known(tool_name)
    keys = secret_names_in_schema(tool.params_schema) if tool is not None else frozenset()
    error = outcome.error
    caller.history.add(CallRecord(
        meta.call_id or "", meta.tool_name, meta.timestamp.timestamp(), meta.duration,
        outcome.success, error.code.value if error else None, error.message if error else None,
        redact_params(row, keys) if isinstance(row, dict) else None, None, list(meta.trail),
    ))
    return outcome
