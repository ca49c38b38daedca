"""toolcaller: discover tools and call them the same way, whatever they are.

Python functions, scripts, HTTP endpoints and MCP servers answer one JSON request with one
JSON envelope: timeouts, retries, six standard error codes, parsed results, a timing history.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from toolcaller.caller import ToolCaller
    from toolcaller.core.history import History
    from toolcaller.core.registry import Registry
    from toolcaller.core.tool import Tool
    from toolcaller.envelope import Envelope, ErrorInfo, Options
    from toolcaller.errors import (
        ErrorCode,
        ExecutionError,
        RegistryError,
        ToolCallError,
        UsageError,
    )
    from toolcaller.sources.decorator import tool

__all__ = [
    "Envelope",
    "ErrorCode",
    "ErrorInfo",
    "ExecutionError",
    "History",
    "Options",
    "Registry",
    "RegistryError",
    "Tool",
    "ToolCallError",
    "ToolCaller",
    "UsageError",
    "tool",
]

__version__ = "0.1.0"

# Each public name is imported on first use, from its home module. `import toolcaller` then
# costs a few milliseconds instead of asyncio's and pydantic's imports (about 150 ms here),
# which a process-isolation worker, `toolcaller --help` and plugin discovery never need.
_HOMES = {
    "ToolCaller": "toolcaller.caller",
    "History": "toolcaller.core.history",
    "Registry": "toolcaller.core.registry",
    "Tool": "toolcaller.core.tool",
    "Envelope": "toolcaller.envelope",
    "ErrorInfo": "toolcaller.envelope",
    "Options": "toolcaller.envelope",
    "ErrorCode": "toolcaller.errors",
    "ExecutionError": "toolcaller.errors",
    "RegistryError": "toolcaller.errors",
    "ToolCallError": "toolcaller.errors",
    "UsageError": "toolcaller.errors",
    "tool": "toolcaller.sources.decorator",
}


def __getattr__(name: str) -> Any:
    """Import a public name from its home module on first use (see `_HOMES`)."""
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module 'toolcaller' has no attribute {name!r}")
    value = getattr(importlib.import_module(home), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
