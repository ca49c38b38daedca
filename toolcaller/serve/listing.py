"""A registry's tools as an MCP `tools/list` listing, with their behaviour hints.

Each tool keeps its name (MCP allows dots), description and params schema as discovery shows
them (`inputSchema`); `title` and `outputSchema` come from its metadata where known (an MCP
server's listing puts them there). `annotations` are merged from, weakest first:

1. what the tool's kind says: an HTTP tool's method (GET, HEAD and OPTIONS read only; PUT and
   DELETE idempotent and destructive; POST and PATCH neither), and that it reaches beyond
   this machine (`openWorldHint`);
2. the tool's `idempotent` flag (the registry entry's `"idempotent": true`);
3. `metadata.annotations`: the source MCP server's own hints, or a registry entry's
   (`"metadata": {"annotations": {"readOnlyHint": true}}`), which win.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from toolcaller._types import JSONObject
from toolcaller.core.tool import Tool
from toolcaller.export import to_mcp_tools

__all__ = ["HINTS", "annotations_of", "to_listing"]

HINTS = ("title", "readOnlyHint", "destructiveHint", "idempotentHint", "openWorldHint")
"""The keys of MCP's `ToolAnnotations`."""

_METHOD_HINTS: dict[str, JSONObject] = {
    "GET": {"readOnlyHint": True, "idempotentHint": True, "destructiveHint": False},
    "HEAD": {"readOnlyHint": True, "idempotentHint": True, "destructiveHint": False},
    "OPTIONS": {"readOnlyHint": True, "idempotentHint": True, "destructiveHint": False},
    "PUT": {"readOnlyHint": False, "idempotentHint": True, "destructiveHint": True},
    "DELETE": {"readOnlyHint": False, "idempotentHint": True, "destructiveHint": True},
    "POST": {"readOnlyHint": False, "idempotentHint": False},
    "PATCH": {"readOnlyHint": False, "idempotentHint": False},
}


def to_listing(tools: Iterable[Tool]) -> list[JSONObject]:
    """Return the `tools` of a `tools/list` result (camelCase, as on the wire)."""
    items = list(tools)
    listing = to_mcp_tools(items)
    for entry, tool in zip(listing, items, strict=True):
        entry.pop("annotations", None)
        hints = annotations_of(tool)
        if hints:
            entry["annotations"] = hints
    return listing


def annotations_of(tool: Tool) -> JSONObject:
    """Return a tool's MCP annotations (see the module docstring for where each comes from)."""
    hints: JSONObject = {}
    if tool.kind == "http" and isinstance(tool.target, dict):
        method = str(tool.target.get("method") or "GET").upper()
        hints.update(_METHOD_HINTS.get(method, {}))
        hints["openWorldHint"] = True
    if tool.idempotent:
        hints["idempotentHint"] = True
    given = tool.metadata.get("annotations")
    if isinstance(given, dict):
        hints.update({k: v for k, v in given.items() if k in HINTS and _valid(k, v)})
    return hints


def _valid(key: str, value: Any) -> bool:
    return isinstance(value, str) if key == "title" else isinstance(value, bool)
