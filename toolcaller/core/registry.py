"""The catalogue: tools by name, lazy sources (MCP servers), filtering and name suggestions.

Filter syntax (discovery's `options.filter`): space-separated terms, all of which must hold;
matching ignores case.

- `math`          the term appears in the name, the description or a tag;
- `tag:math`      a tag equals `math`;
- `name:math.*`   the name matches a glob (`*`, `?`, `[...]`);
- `-slow`         the term must NOT match (works with `tag:` and `name:` too);
- `"two words"`   a quoted phrase is one term.

A lazy source (an MCP server that must start, an OpenAPI document that must be read) is only
listed when the filter can match one of its names: `name:time.*` lists the `time` server alone.
"""

from __future__ import annotations

import difflib
import fnmatch
import re
import shlex
import threading
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

from toolcaller.core.tool import Tool
from toolcaller.errors import UsageError

__all__ = ["Problem", "Registry", "Source", "SourceProblem", "ToolProblem", "compile_filter",
           "may_match_prefix"]


@dataclass(frozen=True, slots=True)
class SourceProblem:
    """A source that could not list its tools (e.g. an MCP server that did not start)."""

    source: str
    """The source's name, e.g. `mcp:time`."""
    prefix: str
    """Tool names starting with this prefix belong to the broken source (e.g. `time.`)."""
    message: str

    def to_dict(self) -> dict[str, str]:
        """Return the discovery `problems` entry: `{"source", "prefix", "message"}`."""
        return {"source": self.source, "prefix": self.prefix, "message": self.message}


@dataclass(frozen=True, slots=True)
class ToolProblem:
    """A listed tool that cannot be called (`Tool.problem`, e.g. a `$ref` to nowhere)."""

    tool: str
    """The tool's name."""
    message: str

    def to_dict(self) -> dict[str, str]:
        """Return the discovery `problems` entry: `{"tool", "message"}`."""
        return {"tool": self.tool, "message": self.message}


Problem = SourceProblem | ToolProblem
"""What discovery reports next to the tools: a source that failed, or a tool that cannot run."""


@runtime_checkable
class Source(Protocol):
    """A lazy provider of tools whose list is only known at run time (an MCP server)."""

    name: str
    """Shown in problems, e.g. `mcp:time`."""
    prefix: str
    """Every tool of this source has a name starting with this prefix (e.g. `time.`)."""

    def list_tools(self) -> list[Tool]:
        """Return the source's tools (cached after the first success); raise on failure."""
        ...


Predicate = Callable[[Tool], bool]


class Registry:
    """Tools by name plus lazy sources; safe to read from many threads."""

    def __init__(self, tools: Iterable[Tool] = (), sources: Iterable[Source] = ()) -> None:
        self._tools: dict[str, Tool] = {}
        self._sources: list[Source] = list(sources)
        self._found: dict[str, Tool] = {}
        """Tools already found through a source: later look-ups skip the listing."""
        self._troubled: dict[str, Tool] = {}
        """The added tools that have a `problem`, so that discovery need not scan them all."""
        self._lock = threading.Lock()
        for tool in tools:
            self.add(tool)

    def add(self, tool: Tool, *, replace: bool = False) -> None:
        """Add a tool; a second tool with the same name is a `UsageError` unless `replace`."""
        with self._lock:
            if not replace and tool.name in self._tools:
                raise UsageError(
                    f"two tools are named {tool.name!r}; rename one or pass replace=True"
                )
            self._tools[tool.name] = tool
            self._troubled.pop(tool.name, None)
            if tool.problem is not None:
                self._troubled[tool.name] = tool

    def add_source(self, source: Source) -> None:
        """Add a lazy source of tools."""
        with self._lock:
            self._sources.append(source)

    def remove(self, name: str) -> None:
        """Remove a tool by name (no error if absent)."""
        with self._lock:
            self._tools.pop(name, None)
            self._found.pop(name, None)
            self._troubled.pop(name, None)

    @property
    def sources(self) -> list[Source]:
        """The lazy sources, in the order they were added."""
        return list(self._sources)

    def needs_listing(self, name: Any) -> bool:
        """Say whether finding `name` may list a lazy source (start a server, say)."""
        return (bool(self._sources) and isinstance(name, str) and name not in self._tools
                and name not in self._found)

    def known(self, name: str) -> Tool | None:
        """Return the tool with this name if it is known without listing any source."""
        return self._tools.get(name) or self._found.get(name)

    def get(self, name: str) -> Tool | None:
        """Return the tool with this name, listing a lazy source if its prefix matches."""
        tool = self._tools.get(name) or self._found.get(name)
        if tool is not None or not self._sources:
            return tool
        for source in self._sources:
            if _owns(source, name):
                for candidate in source.list_tools():  # may raise: the caller reports it
                    if candidate.name == name:
                        self._found[name] = candidate
                        return candidate
        return None

    def static_tools(self) -> list[Tool]:
        """Return the tools added directly (no source is listed)."""
        return list(self._tools.values())

    def default_options(self, name: str) -> dict[str, Any]:
        """Return the default options a tool named `name` will have, found without listing.

        A source whose tools share default options (an MCP server entry's `options`) says so
        with a `default_options` attribute: the deadline of a call that must list it first.
        """
        tool = self.known(name)
        if tool is not None:
            return tool.options
        for source in self._sources:
            defaults = getattr(source, "default_options", None)
            if _owns(source, name) and isinstance(defaults, dict):
                return defaults
        return {}

    def waiting_for(self, name: str) -> str | None:
        """Say what looking `name` up waits for now (a server still starting), or None."""
        for source in self._sources:
            describe = getattr(source, "waiting_for", None)
            if _owns(source, name) and describe is not None:
                waiting = describe()
                if waiting:
                    return str(waiting)
        return None

    def all_tools(self, filter_text: str | None = None) -> tuple[list[Tool], list[Problem]]:
        """Return every tool, sources included, and the problems.

        Problems are the sources that failed, then the tools that cannot be called. With a
        filter, sources none of whose names it can match are not listed (nor started).
        """
        tools = list(self._tools.values())
        problems: list[Problem] = []
        troubled = list(self._troubled.values())
        for source in self._sources:
            if filter_text and not may_match_prefix(filter_text, source.prefix):
                continue
            try:
                listed = source.list_tools()
            except Exception as exc:  # noqa: BLE001 - one broken source must not break discovery
                problems.append(SourceProblem(source.name, source.prefix, str(exc)))
                continue
            tools.extend(listed)
            troubled.extend(t for t in listed if t.problem is not None)
        return tools, problems + [ToolProblem(t.name, t.problem or "") for t in troubled]

    def search(self, filter_text: str | None) -> tuple[list[Tool], list[Problem]]:
        """Return the tools matching a filter (see the module docstring) and the problems.

        Problems are every failed source, and the matching tools that cannot be called.
        """
        tools, problems = self.all_tools(filter_text)
        if not filter_text or not filter_text.strip():
            return tools, problems
        predicate = compile_filter(filter_text)
        matched = [t for t in tools if predicate(t)]
        if not any(isinstance(p, ToolProblem) for p in problems):
            return matched, problems
        names = {t.name for t in matched if t.problem is not None}
        return matched, [p for p in problems
                         if not isinstance(p, ToolProblem) or p.tool in names]

    def suggest(self, name: str, limit: int = 3) -> list[str]:
        """Return up to `limit` known names close to `name`, listed sources' tools included.

        A source not listed yet is not listed for this (nothing is started).
        """
        names = list(self._tools)
        for source in self._sources:
            cached = getattr(source, "cached_tools", None)
            if cached is not None:
                names.extend(t.name for t in cached() if t.name not in self._tools)
        lowered = name.lower()
        close = difflib.get_close_matches(name, names, n=limit, cutoff=0.6)
        if len(close) < limit and lowered:
            close += [n for n in names if lowered in n.lower() and n not in close]
        return close[:limit]

    def __len__(self) -> int:
        return len(self._tools)

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and self.get(name) is not None


def _owns(source: Source, name: str) -> bool:
    # A prefix ending in "." owns a namespace; any other names exactly one tool.
    prefix = source.prefix
    return name == prefix or (prefix.endswith(".") and name.startswith(prefix))


def may_match_prefix(filter_text: str, prefix: str) -> bool:
    """Say whether a filter can match a tool whose name starts with `prefix` (or is `prefix`).

    Only `name:GLOB` terms can rule a source out: a glob whose fixed start (up to its first
    wildcard) and the prefix disagree matches none of its names.
    """
    prefix = prefix.lower()
    for term in _terms(filter_text):
        if term.startswith("-") or not term.lower().startswith("name:"):
            continue
        glob = term[5:].lower()
        if not glob:
            continue
        if not prefix.endswith("."):  # a source of one tool: its name is known
            if not fnmatch.fnmatchcase(prefix, glob):
                return False
            continue
        fixed = re.split(r"[*?\[]", glob, maxsplit=1)[0]
        if not (fixed.startswith(prefix) or prefix.startswith(fixed)):
            return False
    return True


def _terms(filter_text: str) -> list[str]:
    try:
        return shlex.split(filter_text)
    except ValueError:  # an unbalanced quote (typing in progress): drop the quotes
        return filter_text.replace('"', " ").replace("'", " ").split()


def compile_filter(filter_text: str) -> Predicate:
    """Compile a filter expression into a predicate over tools."""
    terms = _terms(filter_text)
    checks = [_compile_term(term) for term in terms if term not in ("", "-")]
    if len(checks) == 1:  # the common case while typing: no loop at all
        return checks[0]

    def predicate(tool: Tool) -> bool:
        for check in checks:  # noqa: SIM110 - a plain loop: all() makes a generator per tool
            if not check(tool):
                return False
        return True

    return predicate


def _compile_term(term: str) -> Predicate:
    negate = term.startswith("-") and len(term) > 1
    body = term[1:] if negate else term
    field, _, value = body.partition(":")
    value = value.lower()
    check: Predicate
    if field == "tag" and value:
        check = lambda tool: value in tool.search_keys[1]  # noqa: E731
    elif field == "name" and value:
        pattern = re.compile(fnmatch.translate(value))
        check = lambda tool: pattern.match(tool.name.lower()) is not None  # noqa: E731
    else:
        needle = body.lower()
        check = lambda tool: needle in tool.search_keys[0]  # noqa: E731
    if negate:
        return lambda tool: not check(tool)
    return check
