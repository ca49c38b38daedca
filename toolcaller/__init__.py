"""toolcaller: discover tools and call them the same way, whatever they are.

Python functions, scripts, HTTP endpoints and MCP servers answer one JSON request with one
JSON envelope: timeouts, retries, six standard error codes, parsed results, a timing history.
"""

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
