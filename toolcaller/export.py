"""Tool schemas for model APIs: OpenAI, Anthropic, Gemini function calling, MCP `tools/list`.

OpenAI and Anthropic accept tool names matching `^[a-zA-Z0-9_-]{1,64}$`, so `math.add` is
exported as `math_add`. The mapping is deterministic: a valid name is kept; any other character
becomes `_`; a name that would then clash with another tool's, or that is longer than 64
characters, gets `_` and 8 hex digits of its SHA-256. `tool_name_map(tools)` returns the same
mapping both ways, to turn a model's tool call back into a tool name. Schemas are passed
through as they are (copied), except the boolean schemas: `true` becomes `{"type": "object"}`
(any params) and `false` an object that takes no params.

`to_openai`, `to_anthropic`, `to_gemini` and `to_mcp` return a `ToolList` (a list of
definitions); with `strict=True` each schema that allows it is rewritten for strict mode
(`toolcaller.llm.strict`: `additionalProperties: false` on every object, every property
required, optional ones nullable) and flagged strict where the API has the flag, and
`ToolList.not_strict` says which tools could not be and why (they are exported as they are).
`to_openai_tools`, `to_anthropic_tools` and `to_mcp_tools` are the earlier, plain forms.
"""

from __future__ import annotations

import copy
import hashlib
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from toolcaller._types import JSONObject
from toolcaller.core.tool import Tool
from toolcaller.errors import UsageError
from toolcaller.llm.strict import strict_schema

__all__ = [
    "NameMap",
    "ToolList",
    "exported_name",
    "to_anthropic",
    "to_anthropic_tools",
    "to_gemini",
    "to_mcp",
    "to_mcp_tools",
    "to_openai",
    "to_openai_tools",
    "tool_name_map",
]

NAME_PATTERN = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")
"""Tool names OpenAI and Anthropic accept."""
MAX_NAME_CHARS = 64
_HASH_CHARS = 8

ToolLike = Tool | Mapping[str, Any]
"""A `Tool`, or a discovery entry `{"name", "description", "paramsSchema", "metadata"}`."""


@dataclass(frozen=True)
class NameMap:
    """Tool names and their exported names, both ways."""

    to_exported: dict[str, str] = field(default_factory=dict)
    """Tool name → exported name."""
    to_original: dict[str, str] = field(default_factory=dict)
    """Exported name → tool name."""

    def exported(self, name: str) -> str:
        """Return the exported name of a tool name (`KeyError` if it is not in the map)."""
        return self.to_exported[name]

    def original(self, exported: str) -> str:
        """Return the tool name behind an exported name (`KeyError` if unknown)."""
        return self.to_original[exported]


def exported_name(name: str) -> str:
    """Return a name valid for OpenAI and Anthropic, ignoring clashes with other tools."""
    if NAME_PATTERN.match(name):
        return name
    safe = re.sub(r"[^a-zA-Z0-9_-]", "_", name) or "_"
    if len(safe) > MAX_NAME_CHARS:
        return _hashed(safe, name)
    return safe


def tool_name_map(tools: Iterable[ToolLike]) -> NameMap:
    """Map every tool name to a unique exported name (see the module docstring)."""
    names = list(dict.fromkeys(_name(t) for t in tools))
    taken = {n for n in names if NAME_PATTERN.match(n)}  # valid names keep themselves
    wanted = {n: exported_name(n) for n in names}
    counts: dict[str, int] = {}
    for name in names:
        counts[wanted[name]] = counts.get(wanted[name], 0) + 1
    to_exported: dict[str, str] = {}
    for name in names:
        candidate = wanted[name]
        if candidate != name and (candidate in taken or counts[candidate] > 1):
            candidate = _hashed(candidate, name)
        to_exported[name] = candidate
    return NameMap(to_exported, {v: k for k, v in to_exported.items()})


def to_openai_tools(tools: Iterable[ToolLike]) -> list[JSONObject]:
    """Return OpenAI function-calling tools: `{"type": "function", "function": {...}}`."""
    items = list(tools)
    names = tool_name_map(items)
    return [
        {
            "type": "function",
            "function": {
                "name": names.exported(_name(t)),
                "description": _description(t),
                "parameters": _object_schema(_schema(t)),
            },
        }
        for t in items
    ]


def to_anthropic_tools(tools: Iterable[ToolLike]) -> list[JSONObject]:
    """Return Anthropic tool definitions: `{"name", "description", "input_schema"}`."""
    items = list(tools)
    names = tool_name_map(items)
    return [
        {
            "name": names.exported(_name(t)),
            "description": _description(t),
            "input_schema": _object_schema(_schema(t)),
        }
        for t in items
    ]


def to_mcp_tools(tools: Iterable[ToolLike]) -> list[JSONObject]:
    """Return an MCP `tools/list` listing: `{"name", "description", "inputSchema", …}`.

    MCP allows dotted names, so names are kept. `title`, `annotations` and `outputSchema`
    come from the tool's metadata (as the MCP source stores them); an idempotent tool without
    annotations gets `{"idempotentHint": true}`.
    """
    listing = []
    for tool in tools:
        metadata = _metadata(tool)
        entry: JSONObject = {"name": _name(tool)}
        if isinstance(metadata.get("title"), str):
            entry["title"] = metadata["title"]
        entry["description"] = _description(tool)
        entry["inputSchema"] = _object_schema(_schema(tool))
        if isinstance(metadata.get("outputSchema"), dict):
            entry["outputSchema"] = copy.deepcopy(metadata["outputSchema"])
        annotations = metadata.get("annotations")
        if isinstance(annotations, dict) and annotations:
            entry["annotations"] = copy.deepcopy(annotations)
        elif isinstance(tool, Tool) and tool.idempotent:
            entry["annotations"] = {"idempotentHint": True}
        listing.append(entry)
    return listing


class ToolList(list[JSONObject]):
    """Tool definitions for a model API (a plain list to JSON and SDKs), and what was not strict."""

    def __init__(self, items: Iterable[JSONObject] = (), not_strict: dict[str, str] | None = None,
                 ) -> None:
        super().__init__(items)
        self.not_strict: dict[str, str] = dict(not_strict or {})
        """Tool name → why its schema could not be made strict (exported as it is)."""


def to_openai(tools: Iterable[ToolLike], *, strict: bool = False,
              api: Literal["chat", "responses"] = "chat") -> ToolList:
    """Return OpenAI function tools for Chat Completions (`api="chat"`) or the Responses API.

    Chat: `{"type": "function", "function": {"name", "description", "parameters"}}`;
    Responses: `{"type": "function", "name", "description", "parameters", "strict"}`. With
    `strict=True`, schemas are made strict where they allow it (see the module docstring).
    """
    if api not in ("chat", "responses"):
        raise UsageError(f"api must be 'chat' or 'responses', got {api!r}")
    items, listed = list(tools), ToolList()
    names = tool_name_map(items)
    for tool in items:
        parameters, is_strict = _exported_schema(tool, strict, listed)
        function: JSONObject = {"name": names.exported(_name(tool)),
                                "description": _description(tool), "parameters": parameters}
        if api == "responses":
            listed.append({"type": "function", **function, "strict": is_strict})
        else:
            listed.append({"type": "function",
                           "function": {**function, "strict": is_strict} if strict else function})
    return listed


def to_anthropic(tools: Iterable[ToolLike], *, strict: bool = False) -> ToolList:
    """Return Anthropic tools `{"name", "description", "input_schema"}` (+ `strict`)."""
    items, listed = list(tools), ToolList()
    names = tool_name_map(items)
    for tool in items:
        schema, is_strict = _exported_schema(tool, strict, listed)
        entry: JSONObject = {"name": names.exported(_name(tool)),
                             "description": _description(tool), "input_schema": schema}
        listed.append({**entry, "strict": is_strict} if strict else entry)
    return listed


def to_gemini(tools: Iterable[ToolLike], *, strict: bool = False) -> ToolList:
    """Return Gemini function declarations `{"name", "description", "parametersJsonSchema"}`.

    Pass them as `tools=[{"functionDeclarations": to_gemini(tools)}]`. Gemini has no strict
    flag; `strict=True` still writes the schemas in the strict form (every property listed
    and required, optional ones nullable).
    """
    items, listed = list(tools), ToolList()
    names = tool_name_map(items)
    for tool in items:
        schema, _ = _exported_schema(tool, strict, listed)
        listed.append({"name": names.exported(_name(tool)), "description": _description(tool),
                       "parametersJsonSchema": schema})
    return listed


def to_mcp(tools: Iterable[ToolLike], *, strict: bool = False) -> ToolList:
    """Return an MCP `tools/list` listing (see `to_mcp_tools`), strict schemas if asked."""
    items, listed = list(tools), ToolList()
    for tool, entry in zip(items, to_mcp_tools(items), strict=True):
        entry["inputSchema"], _ = _exported_schema(tool, strict, listed)
        listed.append(entry)
    return listed


def _exported_schema(tool: ToolLike, strict: bool, listed: ToolList) -> tuple[JSONObject, bool]:
    """The schema to export and whether it is strict; a refusal is noted in `listed`."""
    schema = _object_schema(_schema(tool))
    if not strict:
        return schema, False
    made, why = strict_schema(schema)
    if made is None:
        listed.not_strict[_name(tool)] = why or "unknown reason"
        return schema, False
    return made, True


def _hashed(safe: str, original: str) -> str:
    digest = hashlib.sha256(original.encode("utf-8")).hexdigest()[:_HASH_CHARS]
    return f"{safe[: MAX_NAME_CHARS - _HASH_CHARS - 1]}_{digest}"


def _name(tool: ToolLike) -> str:
    return tool.name if isinstance(tool, Tool) else str(tool["name"])


def _description(tool: ToolLike) -> str:
    text = tool.description if isinstance(tool, Tool) else tool.get("description")
    return text if isinstance(text, str) else ""


def _schema(tool: ToolLike) -> Any:
    return tool.params_schema if isinstance(tool, Tool) else tool.get("paramsSchema", True)


def _metadata(tool: ToolLike) -> Mapping[str, Any]:
    metadata = tool.metadata if isinstance(tool, Tool) else tool.get("metadata")
    return metadata if isinstance(metadata, Mapping) else {}


def _object_schema(schema: Any) -> JSONObject:
    """Copy a params schema; the boolean schemas become object schemas with the same sense."""
    if schema is True or schema is None:
        return {"type": "object"}
    if schema is False:
        return {"type": "object", "properties": {}, "additionalProperties": False}
    return copy.deepcopy(dict(schema))
