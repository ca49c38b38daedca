"""Registry files (SPEC §3): read, validate against the shipped JSON Schema, build tools.

A file holds `tools`, `mcpServers` (every tool of a server, or entries picking single tools)
and `openapi` (every operation of a document, `toolcaller.sources.openapi.OpenApiSource`).
Servers and documents are lazy sources: nothing starts or is read until a discovery or a call
needs it, unless the file is loaded with `connect="background"`, which starts every server and
reads every document in the background as the file loads, without waiting for them.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from toolcaller.core.pointer import to_pointer
from toolcaller.core.portal import Portal
from toolcaller.core.registry import Source
from toolcaller.core.schema import check_schema
from toolcaller.core.templates import url_params
from toolcaller.core.tool import BUILTIN_KINDS, Tool
from toolcaller.errors import RegistryError

if TYPE_CHECKING:
    from toolcaller.sources.mcp import McpHub

__all__ = ["Connect", "LoadedRegistry", "load_registry", "registry_schema", "tools_from_data"]

Connect = Literal["lazy", "background"]
"""When MCP servers start and OpenAPI documents are read: at first need, or as the file loads."""

SCHEMA_PATH = Path(__file__).resolve().parent.parent / "schemas" / "registry.schema.json"


@lru_cache(maxsize=1)
def registry_schema() -> dict[str, Any]:
    """Return the JSON Schema of registry files."""
    return json.loads(SCHEMA_PATH.read_text(encoding="utf-8"))  # type: ignore[no-any-return]


@dataclass(slots=True)
class LoadedRegistry:
    """What a registry file holds: its tools, its lazy sources (MCP servers, OpenAPI documents)."""

    tools: list[Tool]
    sources: list[Source] = field(default_factory=list)
    hub: McpHub | None = None
    """The sessions of the file's `mcpServers`: close it to stop their processes."""


def load_registry(path: str | Path, *, portal: Portal | None = None,
                  connect: Connect = "lazy") -> LoadedRegistry:
    """Read a registry file and return its tools and sources (`RegistryError` if unusable).

    `portal` is the private loop MCP sessions live on (the caller's); a file with
    `mcpServers` needs one. `connect="background"` starts every MCP server and reads every
    OpenAPI document now, in the background (see the module docstring).
    """
    source = Path(path)
    data = _read(source)
    base_dir = source.resolve().parent
    tools = tools_from_data(data, str(source), base_dir)
    if data.get("functions"):
        tools += _function_tools(data["functions"], source, base_dir, {t.name for t in tools})
    servers = data.get("mcpServers") or {}
    _check_mcp_servers(data.get("tools") or [], servers, source)
    loaded = LoadedRegistry(tools)
    if servers:
        from toolcaller.sources.mcp import mcp_sources

        entries = [e for e in data.get("tools") or [] if "mcp" in e]
        hub, sources = mcp_sources(servers, portal or Portal(), base_dir, entries=entries)
        loaded = LoadedRegistry([t for t in tools if t.kind != "mcp"], sources, hub)
    if data.get("openapi"):
        from toolcaller.sources.openapi import OpenApiSource

        loaded.sources += [OpenApiSource(key, settings, base_dir)
                           for key, settings in data["openapi"].items()]
    if connect == "background":
        if loaded.hub is not None:
            loaded.hub.start_all()
        for lazy in loaded.sources:
            start = getattr(lazy, "start_background", None)
            if start is not None:
                start()
    return loaded


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
    """Validate registry data and return its tools; `RegistryError` on the first problem.

    A paramsSchema that cannot be used does not refuse the file, whatever its size: its tool
    is made with `problem` set (discovery lists it, its calls fail), and the others work.
    """
    _validate(data, source)
    entries = data.get("tools") or []
    seen: dict[str, int] = {}
    tools = []
    for index, entry in enumerate(entries):
        name = entry["name"]
        if name in seen:
            raise RegistryError(
                f"{source}: /tools/{index}/name: the name {name!r} is already used by "
                f"/tools/{seen[name]}; tool names must be unique",
                source=source, pointer=f"/tools/{index}/name")
        seen[name] = index
        schema = entry.get("paramsSchema", {"type": "object"})
        _check_options(entry.get("options"), source, f"/tools/{index}/options")
        made = _tool(entry, schema, base_dir)
        problem = check_schema(made.params_schema)
        if problem is not None:
            made.problem = f"its paramsSchema cannot be used: {problem}"
        tools.append(made)
    for key in ("mcpServers", "openapi"):
        for name, settings in (data.get(key) or {}).items():
            _check_options(settings.get("options"), source, f"/{key}/{name}/options")
    return tools


def _check_options(options: Any, source: str, where: str) -> None:
    """Check default options now, so that a bad one is the registry's error, not a call's."""
    if not options:
        return
    from toolcaller.core.options import resolve_options
    from toolcaller.errors import InvalidParamsError

    try:
        resolve_options({}, options, where=where)
    except InvalidParamsError as exc:
        first = ((exc.details or {}).get("violations") or [{}])[0]
        pointer = str(first.get("pointer", where)).replace("//", "/")
        problem = first.get("message", exc.message)
        raise RegistryError(f"{source}: {pointer}: {problem}", source=source,
                            pointer=pointer) from None


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
        output=entry.get("output"),
        redact_result=entry.get("redactResult", False),
        base_dir=base_dir,
    )


@lru_cache(maxsize=1)
def _registry_validator() -> Any:
    import jsonschema_rs

    return jsonschema_rs.validator_for(registry_schema(), offline=True)


def _validate(data: Any, source: str) -> None:
    try:
        if _registry_validator().is_valid(data):
            return
    except ValueError:
        pass  # too deep for jsonschema-rs to convert: jsonschema explains, or let it through
    from jsonschema import Draft202012Validator
    from jsonschema.exceptions import best_match

    # jsonschema (Python `re`) may accept what ECMA regexes refuse, e.g. a name ending in
    # a newline: jsonschema-rs's verdict stands, jsonschema only picks the clearest error.
    error = best_match(Draft202012Validator(registry_schema()).iter_errors(data))
    if error is None:
        try:
            first = next(iter(_registry_validator().iter_errors(data)), None)
        except ValueError:
            return
        if first is None:
            return
        pointer = to_pointer(first.instance_path)
        raise RegistryError(f"{source}: {pointer or '/'}: {first.message}", source=source,
                            pointer=pointer)
    if error.validator == "oneOf" and list(error.absolute_path)[:1] == ["functions"]:
        # one entry or a list of them: the branch that got furthest says what is wrong
        error = max(error.context or [error], key=lambda e: len(e.absolute_path))
    pointer = to_pointer(error.absolute_path)
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


def _function_tools(specs: Any, source: Path, base_dir: Path, taken: set[str]) -> list[Tool]:
    """The tools of the registry's `functions` files (`toolcaller.sources.functions`)."""
    from toolcaller.errors import UsageError
    from toolcaller.sources.functions import import_functions, read_definitions

    tools: list[Tool] = []
    for index, spec in enumerate(specs if isinstance(specs, list) else [specs]):
        pointer = f"/functions/{index}" if isinstance(specs, list) else "/functions"
        try:
            made = import_functions(read_definitions(base_dir / spec["file"]),
                                    spec.get("format", "auto"), python=spec.get("python"),
                                    base_dir=base_dir)
        except UsageError as exc:
            raise RegistryError(f"{source}: {pointer}: {exc}", source=str(source),
                                pointer=pointer) from None
        for tool in made:
            if tool.name in taken:
                raise RegistryError(f"{source}: {pointer}: the function {tool.name!r} has the "
                                    "name of another tool; tool names must be unique",
                                    source=str(source), pointer=pointer)
            taken.add(tool.name)
        tools += made
    return tools


def _check_mcp_servers(entries: list[Any], servers: dict[str, Any], source: Path) -> None:
    for index, entry in enumerate(entries):
        if "mcp" in entry and entry["mcp"]["server"] not in servers:
            known = ", ".join(sorted(servers)) or "none"
            raise RegistryError(
                f"{source}: /tools/{index}/mcp/server: no MCP server named "
                f"{entry['mcp']['server']!r} in mcpServers (known: {known})",
                source=str(source), pointer=f"/tools/{index}/mcp/server")
