"""Adapters run one attempt of a tool of one kind and map that kind's failures to error codes.

Each kind's adapter registers itself in the entry-point group `toolcaller.adapters` (name: the
kind, value: `"module:Class"`), the built-in ones included (see pyproject.toml): a new kind is
one module plus one entry point, with no list to edit here or in the caller.
"""

from __future__ import annotations

import importlib
from functools import lru_cache
from typing import TYPE_CHECKING, Any

from toolcaller.errors import ExecutionError

if TYPE_CHECKING:
    from toolcaller.adapters.base import Adapter, AttemptContext, TextOutput

__all__ = ["GROUP", "Adapter", "AttemptContext", "TextOutput", "adapter_kinds", "make_adapter"]

# The protocol's names load on first use: a process-isolation worker imports this package
# (for `python_code`) and must not pay for asyncio and pydantic (see `toolcaller.__init__`).
_LAZY = {"Adapter", "AttemptContext", "TextOutput"}

GROUP = "toolcaller.adapters"
_BUILTIN = {
    "python": "toolcaller.adapters.python:PythonAdapter",
    "script": "toolcaller.adapters.script:ScriptAdapter",
    "http": "toolcaller.adapters.http:HttpAdapter",
    "mcp": "toolcaller.adapters.mcp:McpAdapter",
}
"""The package's own entry points, used when it runs from a source tree that was not installed
(no metadata to read): the same four lines pyproject.toml declares."""


def __getattr__(name: str) -> Any:
    """Import the adapter protocol's names on first use."""
    if name not in _LAZY:
        raise AttributeError(f"module 'toolcaller.adapters' has no attribute {name!r}")
    value = getattr(importlib.import_module("toolcaller.adapters.base"), name)
    globals()[name] = value
    return value


@lru_cache(maxsize=1)
def _entry_points() -> dict[str, str]:
    from importlib.metadata import entry_points

    found = {point.name: point.value for point in entry_points(group=GROUP)}
    return found or dict(_BUILTIN)


def adapter_kinds() -> list[str]:
    """Return the tool kinds an installed adapter runs."""
    return sorted(_entry_points())


def make_adapter(kind: str) -> Adapter:
    """Build the adapter registered for `kind`; a permanent `ExecutionError` if there is none."""
    target = _entry_points().get(kind)
    if target is None:
        known = ", ".join(adapter_kinds())
        raise ExecutionError(f"no adapter runs tools of kind {kind!r} (installed: {known})",
                             permanent=True)
    from toolcaller.adapters.base import Adapter
    from toolcaller.adapters.python_code import load_callable

    made = load_callable(target)()
    if not isinstance(made, Adapter):
        raise ExecutionError(f"the adapter {target!r} of kind {kind!r} lacks invoke/aclose",
                             permanent=True)
    return made
