"""Registry files (SPEC §3): read, validate against the shipped JSON Schema, build tools."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

from toolcaller.core.checker import compile_checker
from toolcaller.core.portal import Portal
from toolcaller.core.registry import Source
from toolcaller.core.schema import check_schema, unresolved_ref
from toolcaller.core.templates import url_params
from toolcaller.core.tool import BUILTIN_KINDS, Tool
from toolcaller.errors import RegistryError

if TYPE_CHECKING:
    from toolcaller.sources.mcp import McpHub

__all__ = ["LoadedRegistry", "load_registry", "registry_schema", "tools_from_data"]

SCHEMA_PATH = Path(__file__).resolve().parent.parent / "schemas" / "registry.schema.json"
FULL_SCHEMA_CHECK_LIMIT = 1_000
"""Registries up to this many tools have every paramsSchema checked at load time; larger ones
are checked when a tool's validator is first built."""


@lru_cache(maxsize=1)
def registry_schema() -> dict[str, Any]:
    """Return the JSON Schema of registry files."""
    return json.loads(SCHEMA_PATH.read_text(encoding="utf-8"))  # type: ignore[no-any-return]


@dataclass(slots=True)
class LoadedRegistry:
    """What a registry file holds: its tools, its lazy sources (MCP servers), their hub."""

    tools: list[Tool]
    sources: list[Source] = field(default_factory=list)
    hub: McpHub | None = None
    """The sessions of the file's `mcpServers`: close it to stop their processes."""


def load_registry(path: str | Path, *, portal: Portal | None = None) -> LoadedRegistry:
    """Read a registry file and return its tools and sources (`RegistryError` if unusable).

    `portal` is the private loop MCP sessions live on (the caller's); a file with
    `mcpServers` needs one.
    """
    source = Path(path)
    data = _read(source)
    base_dir = source.resolve().parent
    tools = tools_from_data(data, str(source), base_dir)
    servers = data.get("mcpServers") or {}
    _check_mcp_servers(data.get("tools") or [], servers, source)
    if not servers:
        return LoadedRegistry(tools)
    from toolcaller.sources.mcp import mcp_sources

    entries = [e for e in data.get("tools") or [] if "mcp" in e]
    hub, sources = mcp_sources(servers, portal or Portal(), base_dir, entries=entries)
    return LoadedRegistry([t for t in tools if t.kind != "mcp"], sources, hub)


def _read(source: Path) -> Any:
    try:
        text = source.read_text(encoding="utf-8")
    except OSError as exc:
        raise RegistryError(f"{source}: cannot read the registry: {exc.strerror or exc}",
                            source=str(source)) from None
    except UnicodeDecodeError:
        raise RegistryError(f"{source}: the registry is not UTF-8 text",
                            source=str(source)) from None
    try:
        return json.loads(text, parse_constant=_refuse, parse_float=_finite_float)
    except json.JSONDecodeError as exc:
        raise RegistryError(
            f"{source}: not valid JSON at line {exc.lineno}, column {exc.colno}: {exc.msg}",
            source=str(source),
        ) from None
    except ValueError as exc:
        raise RegistryError(f"{source}: not valid JSON: {exc}", source=str(source)) from None
    except RecursionError:
        raise RegistryError(f"{source}: the JSON is nested too deeply", source=str(source),
                            ) from None


def _refuse(name: str) -> Any:
    raise ValueError(f"{name} is not a JSON value")


def _finite_float(text: str) -> float:
    value = float(text)
    if value in (float("inf"), float("-inf")):
        raise ValueError(f"{text} is too large for a number")
    return value


def tools_from_data(data: Any, source: str = "<registry>", base_dir: Path | None = None,
                    ) -> list[Tool]:
    """Validate registry data and return its tools; `RegistryError` on the first problem."""
    _validate(data, source)
    entries = data.get("tools") or []
    seen: dict[str, int] = {}
    tools = []
    check_all = len(entries) <= FULL_SCHEMA_CHECK_LIMIT
    for index, entry in enumerate(entries):
        name = entry["name"]
        if name in seen:
            raise RegistryError(
                f"{source}: /tools/{index}/name: the name {name!r} is already used by "
                f"/tools/{seen[name]}; tool names must be unique",
                source=source, pointer=f"/tools/{index}/name")
        seen[name] = index
        schema = entry.get("paramsSchema", {"type": "object"})
        if check_all and schema is not True and schema is not False:
            problem = _checked_schema(json.dumps(schema, sort_keys=True))
            if problem:
                raise RegistryError(f"{source}: /tools/{index}/paramsSchema: {problem}",
                                    source=source, pointer=f"/tools/{index}/paramsSchema")
        _check_options(entry.get("options"), source, index)
        tools.append(_tool(entry, schema, base_dir))
    return tools


def _check_options(options: Any, source: str, index: int) -> None:
    """Check a tool's default options now, so a bad one is the registry's error, not a call's."""
    if not options:
        return
    from toolcaller.core.options import resolve_options
    from toolcaller.errors import InvalidParamsError

    try:
        resolve_options({}, options, where=f"/tools/{index}/options")
    except InvalidParamsError as exc:
        first = ((exc.details or {}).get("violations") or [{}])[0]
        pointer = str(first.get("pointer", f"/tools/{index}/options")).replace("//", "/")
        problem = first.get("message", exc.message)
        raise RegistryError(f"{source}: {pointer}: {problem}", source=source,
                            pointer=pointer) from None


@lru_cache(maxsize=4096)
def _checked_schema(schema_json: str) -> str | None:
    schema = json.loads(schema_json)
    if _lite_check()(schema) and _patterns_compile(schema):
        # jsonschema (slow to import) only runs to explain a schema that fails
        return unresolved_ref(schema)
    return check_schema(schema)


@lru_cache(maxsize=1)
def _lite_check() -> Any:
    lite = json.loads((SCHEMA_PATH.parent / "params-lite.schema.json").read_text("utf-8"))
    return compile_checker(lite) or (lambda _: False)


def _patterns_compile(schema: Any, depth: int = 0) -> bool:
    """Say whether every `pattern` and `patternProperties` key is a regex Python accepts."""
    if depth > 64:
        return False
    if isinstance(schema, list):
        return all(_patterns_compile(s, depth + 1) for s in schema)
    if not isinstance(schema, dict):
        return True
    patterns = [schema["pattern"]] if isinstance(schema.get("pattern"), str) else []
    if isinstance(schema.get("patternProperties"), dict):
        patterns += list(schema["patternProperties"])
    try:
        for pattern in patterns:
            re.compile(pattern)
    except re.error:
        return False
    return all(_patterns_compile(v, depth + 1) for k, v in schema.items()
               if k not in ("enum", "const", "default", "examples") and isinstance(v, dict | list))


def _tool(entry: dict[str, Any], schema: Any, base_dir: Path | None) -> Tool:
    kind = "python"
    for kind in BUILTIN_KINDS:  # the schema guarantees exactly one kind key
        if kind in entry:
            break
    if kind == "http":
        schema = _require_url_params(schema, entry["http"].get("url", ""))
    return Tool(
        name=entry["name"],
        description=entry["description"],
        params_schema=schema,
        kind=kind,
        target=entry[kind],
        metadata=entry.get("metadata", {}),
        options=entry.get("options", {}),
        isolation=entry.get("isolation"),
        idempotent=entry.get("idempotent", False),
        base_dir=base_dir,
    )


_checker: Any = None


def _validate(data: Any, source: str) -> None:
    global _checker
    if _checker is None:
        _checker = compile_checker(registry_schema()) or (lambda _: False)
    if _checker(data):
        return
    from jsonschema import Draft202012Validator
    from jsonschema.exceptions import best_match

    error = best_match(Draft202012Validator(registry_schema()).iter_errors(data))
    if error is None:
        return
    pointer = "".join("/" + str(p).replace("~", "~0").replace("/", "~1")
                      for p in error.absolute_path)
    message = _explain(error)
    raise RegistryError(f"{source}: {pointer or '/'}: {message}", source=source, pointer=pointer)


def _explain(error: Any) -> str:
    if error.validator == "oneOf" and isinstance(error.instance, dict):
        kinds = [k for k in BUILTIN_KINDS if k in error.instance]
        if "command" in error.schema.get("properties", {}):
            return "an MCP server needs exactly one of 'command' (stdio) or 'url' (HTTP)"
        if not kinds:
            return f"a tool needs one implementation: one of {', '.join(BUILTIN_KINDS)}"
        return f"a tool has exactly one implementation, this one has {', '.join(kinds)}"
    if error.validator == "additionalProperties":
        return str(error.message).replace("Additional properties are not allowed",
                                          "unknown key(s) not allowed")
    return str(error.message)


def _require_url_params(schema: Any, url: str) -> Any:
    """Mark `{name}` URL template params required, so a missing one fails before any attempt."""
    names = url_params(url)
    if not names or not isinstance(schema, dict) or schema.get("type", "object") != "object":
        return schema
    required = list(schema.get("required", []))
    missing = [n for n in names if n not in required]
    return {**schema, "required": required + missing} if missing else schema


def _check_mcp_servers(entries: list[Any], servers: dict[str, Any], source: Path) -> None:
    for index, entry in enumerate(entries):
        if "mcp" in entry and entry["mcp"]["server"] not in servers:
            known = ", ".join(sorted(servers)) or "none"
            raise RegistryError(
                f"{source}: /tools/{index}/mcp/server: no MCP server named "
                f"{entry['mcp']['server']!r} in mcpServers (known: {known})",
                source=str(source), pointer=f"/tools/{index}/mcp/server")
