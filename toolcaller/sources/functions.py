"""Function definitions written for models (OpenAI, Anthropic, Gemini, MCP, BFCL) as tools.

`import_functions(definitions, format="auto")` reads:

- OpenAI Chat tools `{"type": "function", "function": {"name", "description", "parameters"}}`,
  Responses function tools `{"type": "function", "name", "parameters", …}` and bare
  functions `{"name", "description", "parameters"}` (the legacy `functions`, BFCL's docs);
- Anthropic tools `{"name", "description", "input_schema"}`;
- Gemini `functionDeclarations` (`parameters` in its OpenAPI subset, or `parametersJsonSchema`);
- MCP `tools/list` results `{"tools": [{"name", "inputSchema", …}]}`.

A list, a request body or result holding `tools`, `functions` or `functionDeclarations`, SDK
objects (pydantic models) and a JSON or JSON Lines file (a `Path`) all work. Loose schemas are
made into JSON Schema (`toolcaller.sources._loose_schema`); each tool's
`metadata["imported"]` says which format it came in and lists every change made.

A definition may carry its implementation (`"python": "module:function"` or a callable,
`"script": {…}`, `"http": {…}`), or take it from `python=` (a module or `file.py` whose function
of the same name, dots and dashes as underscores, implements it), or get it later from
`ToolCaller.bind(name, fn)`. Until then its calls fail with EXECUTION_ERROR saying so.
"""

from __future__ import annotations

import dataclasses
import json
import os
import re
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Any, Literal

from toolcaller._types import JSONObject
from toolcaller.core.registry import Registry
from toolcaller.core.schema import check_schema
from toolcaller.core.tool import Tool
from toolcaller.errors import UsageError
from toolcaller.sources._loose_schema import normalize_schema

__all__ = ["FORMATS", "FunctionFormat", "bind_tool", "import_functions", "read_definitions"]

FunctionFormat = Literal["auto", "openai", "anthropic", "gemini", "mcp"]
FORMATS: tuple[str, ...] = ("auto", "openai", "anthropic", "gemini", "mcp")
_KINDS = ("python", "script", "http")
"""Implementations a definition may carry (an MCP tool needs a server: use a registry file)."""
CUSTOM_TOOL_SCHEMA: JSONObject = {
    "type": "object", "properties": {"input": {"type": "string"}}, "required": ["input"]}
"""An OpenAI custom tool takes free text: its tool gets it as `{"input": text}`."""
_CONTAINERS = ("tools", "functions", "functionDeclarations", "function_declarations")


def import_functions(definitions: Any, format: FunctionFormat = "auto", *,
                     python: str | None = None, base_dir: Path | None = None) -> list[Tool]:
    """Return one tool per function definition (see the module docstring).

    Args:
        definitions: definitions in any of the accepted shapes, or a `Path` to a JSON file.
        format: the format they are in; `auto` tells each definition's from its shape.
        python: a module (`package.module`) or file (`impl.py`, relative to `base_dir`) whose
            functions implement the definitions that carry no implementation.
        base_dir: the folder relative paths resolve against (a registry file's).

    Raises:
        UsageError: a definition cannot be read, or two have the same name.
    """
    if format not in FORMATS:
        raise UsageError(f"format must be one of {', '.join(FORMATS)}, got {format!r}")
    if isinstance(definitions, os.PathLike):
        definitions = read_definitions(Path(definitions))
    tools: list[Tool] = []
    seen: set[str] = set()
    for where, item in _definitions(definitions, "definitions"):
        made = _tool(where, item, format, python, base_dir)
        if made.name in seen:
            raise UsageError(f"{where}: a second definition is named {made.name!r}; "
                             "tool names must be unique")
        seen.add(made.name)
        tools.append(made)
    return tools


def read_definitions(path: Path) -> Any:
    """Read a JSON file of definitions, or a JSON Lines file (one definition or list a line)."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise UsageError(f"{path}: cannot read the function definitions: {exc}") from None
    try:
        return json.loads(text)
    except json.JSONDecodeError as first:
        lines = [line for line in text.splitlines() if line.strip()]
        if len(lines) > 1:
            try:
                return [json.loads(line) for line in lines]
            except json.JSONDecodeError:
                pass
        raise UsageError(f"{path}: not valid JSON at line {first.lineno}, column "
                         f"{first.colno}: {first.msg}") from None


def bind_tool(registry: Registry, name: str, fn: Callable[..., Any]) -> Tool:
    """Return a copy of the tool `name` whose implementation is the Python callable `fn`."""
    if not callable(fn):
        raise UsageError(f"bind needs a callable for {name!r}, got {type(fn).__name__}")
    tool = registry.known(name)
    if tool is None:
        close = registry.suggest(name)
        tip = f"; did you mean {' or '.join(repr(c) for c in close)}?" if close else ""
        raise UsageError(f"no tool named {name!r} to bind{tip}")
    problem = check_schema(tool.params_schema)
    return dataclasses.replace(
        tool, kind="python", target=fn, base_dir=None, params_model=None,
        problem=None if problem is None else f"its paramsSchema cannot be used: {problem}")


def _plain(item: Any) -> Any:
    """SDK objects (pydantic models) as the JSON their API sends."""
    dump = getattr(item, "model_dump", None)
    if callable(dump) and not isinstance(item, Mapping):
        return dump(mode="json", by_alias=True, exclude_none=True)
    return item


def _definitions(data: Any, where: str) -> Iterator[tuple[str, Any]]:
    """Each definition with where it is, containers (lists, `tools`, …) opened."""
    data = _plain(data)
    if isinstance(data, list | tuple):
        for index, item in enumerate(data):
            yield from _definitions(item, f"{where}[{index}]")
        return
    if not isinstance(data, Mapping):
        raise UsageError(f"{where}: expected a function definition (an object) or a list of "
                         f"them, got {type(data).__name__}")
    if isinstance(data.get("result"), Mapping) and "tools" in data["result"]:
        yield from _definitions(data["result"], f"{where}.result")  # a JSON-RPC answer
        return
    if "name" not in data and "function" not in data:
        found = [key for key in _CONTAINERS if key in data]
        if found:
            for key in found:
                yield from _definitions(data[key], f"{where}.{key}")
            return
    yield where, data


def _tool(where: str, item: Mapping[str, Any], format: FunctionFormat, python: str | None,
          base_dir: Path | None) -> Tool:
    detected, fields = _read(where, item)
    if format != "auto" and detected.split("-")[0] != format and not (
            detected == "function" and format in ("openai", "gemini")):
        raise UsageError(f"{where}: expected a {format} function definition, this one is "
                         f"written as {detected}")
    name = fields.get("name")
    if not isinstance(name, str) or not re.fullmatch(r"[A-Za-z0-9_][A-Za-z0-9_.:/-]*", name):
        raise UsageError(f"{where}: a function definition needs a name (letters, digits, "
                         f"_ . : / -), got {name!r}")
    description = fields.get("description")
    schema, changes = normalize_schema(fields.get("schema"))
    problem = check_schema(schema) if isinstance(schema, dict | bool) else \
        f"parameters must be an object, got {type(schema).__name__}"
    metadata: JSONObject = dict(item.get("metadata") or {})
    metadata["imported"] = {"format": detected, **({"changes": changes} if changes else {})}
    metadata.update(fields.get("extra") or {})
    kind, target = _implementation(item, name, python)
    if problem is not None:
        problem = f"its paramsSchema cannot be used: {problem}"
    elif target is None:
        problem = (f"it has no implementation: bind one with caller.bind({name!r}, fn), or give "
                   "its definition a 'python' key")
    return Tool(name=name, description=description if isinstance(description, str) else "",
                params_schema=schema if isinstance(schema, dict | bool) else {"type": "object"},
                kind=kind, target=target, metadata=metadata,
                options=dict(item.get("options") or {}), base_dir=base_dir, problem=problem)


def _read(where: str, item: Mapping[str, Any]) -> tuple[str, dict[str, Any]]:
    """Tell a definition's format and return its name, description, schema and extras."""
    if item.get("type") == "function" and isinstance(item.get("function"), Mapping):
        fn = _plain(item["function"])
        return "openai-chat", {"name": fn.get("name"), "description": fn.get("description"),
                               "schema": fn.get("parameters")}
    if item.get("type") == "function":
        return "openai-responses", {"name": item.get("name"),
                                    "description": item.get("description"),
                                    "schema": item.get("parameters")}
    if item.get("type") not in ("custom", None):
        raise UsageError(f"{where}: not a function definition (a {item['type']!r} tool)")
    if item.get("type") == "custom" and "input_schema" not in item:  # OpenAI: free text in
        return "openai-custom", {"name": item.get("name"), "description": item.get("description"),
                                 "schema": CUSTOM_TOOL_SCHEMA}
    if "input_schema" in item:
        return "anthropic", {"name": item.get("name"), "description": item.get("description"),
                             "schema": item["input_schema"]}
    if "inputSchema" in item:
        extra = {key: item[key] for key in ("title", "annotations") if item.get(key)}
        if isinstance(item.get("outputSchema"), Mapping):
            extra["outputSchema"] = item["outputSchema"]
        return "mcp", {"name": item.get("name"), "description": item.get("description"),
                       "schema": item["inputSchema"], "extra": extra}
    for key in ("parametersJsonSchema", "parameters_json_schema"):
        if key in item:
            return "gemini", {"name": item.get("name"), "description": item.get("description"),
                              "schema": item[key]}
    if "name" not in item:
        raise UsageError(f"{where}: not a function definition (no 'name'; keys: "
                         f"{', '.join(sorted(map(str, item))) or 'none'})")
    return "function", {"name": item.get("name"), "description": item.get("description"),
                        "schema": item.get("parameters")}


def _implementation(item: Mapping[str, Any], name: str, python: str | None,
                    ) -> tuple[str, Any]:
    """The kind and target of a definition's implementation; `("python", None)` if none."""
    for kind in _KINDS:
        if kind in item:
            return kind, item[kind]
    if python:
        return "python", f"{python}:{re.sub(r'[^0-9A-Za-z_]', '_', name)}"
    return "python", None
