"""`Tool`: one callable thing, whatever its kind, with its schema and defaults."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from toolcaller._types import JSONObject, Schema

__all__ = ["BUILTIN_KINDS", "Tool"]

BUILTIN_KINDS = ("python", "script", "http", "mcp")
"""The kinds of tool the package's own adapters run (plugins may add others)."""


@dataclass(eq=False, slots=True, weakref_slot=True)
class Tool:
    """A tool: its public description plus what an adapter needs to run it."""

    name: str
    """Unique name, e.g. `math.add`; dots group tools."""
    description: str
    """One or more sentences saying what the tool does."""
    params_schema: Schema
    """JSON Schema of the params object (2020-12 unless `$schema` says otherwise)."""
    kind: str
    """Which adapter runs it: `python`, `script`, `http`, `mcp`, or a plugin's kind."""
    target: Any
    """Kind-specific: a callable or `"module:function"` (python), the entry's object (`script`,
    `http`), an MCP target (`mcp`): whatever the kind's adapter reads."""
    metadata: JSONObject = field(default_factory=dict)
    """Free metadata; `metadata["tags"]` is a list of strings used by discovery;
    `metadata["sequential"] = True` says the tool must not run beside other calls of one model
    response (`ToolCaller.run_tool_calls` runs it alone)."""
    options: JSONObject = field(default_factory=dict)
    """Default options for calls of this tool (camelCase keys, as in a request)."""
    isolation: Literal["thread", "process"] | None = None
    """How a sync Python tool runs: a worker thread (default) or a killable child process."""
    idempotent: bool = False
    """Safe to run again while an earlier attempt may still be running (MCP's idempotentHint)."""
    output: Literal["json", "text"] | None = None
    """What the tool's output is, when its entry says so (`"output"`): `json` is parsed (and
    PARSE_ERROR when it is not JSON), `text` is a string; `None`, what its adapter says."""
    redact_result: bool = False
    """Mask secrets in the result too (results are not redacted by default: SECURITY.md)."""
    base_dir: Path | None = None
    """Folder of the registry file the tool came from: relative paths resolve against it."""
    params_model: Any = field(default=None, repr=False)
    """A pydantic model that turns validated JSON params into the function's own types
    (datetimes, enums, models); `@tool` sets it when the annotations need it."""
    permanent_errors: tuple[type[BaseException], ...] | None = field(default=None, repr=False)
    """Exceptions of a Python tool that are not retried; `None`: programming errors
    (`toolcaller.adapters.python.PROGRAMMING_ERRORS`). `()` retries every failure."""
    problem: str | None = None
    """Why this tool cannot be called (e.g. its paramsSchema has a `$ref` to nowhere), or None.
    Discovery lists it among `problems`; every call fails with EXECUTION_ERROR saying it."""
    _search: tuple[str, frozenset[str]] | None = field(default=None, init=False, repr=False)

    @property
    def tags(self) -> list[str]:
        """The tool's tags (`metadata["tags"]`)."""
        tags = self.metadata.get("tags", [])
        return [t for t in tags if isinstance(t, str)] if isinstance(tags, list) else []

    @property
    def search_keys(self) -> tuple[str, frozenset[str]]:
        """Lowercase name+description+tags text and lowercase tag set, computed once."""
        keys = self._search
        if keys is None:
            tags = self.tags
            text = "\n".join([self.name, self.description, *tags]).lower()
            keys = self._search = (text, frozenset(t.lower() for t in tags))
        return keys

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        """Call the underlying function directly (a decorated function stays usable as is)."""
        if not callable(self.target):
            raise TypeError(
                f"tool {self.name!r} is a {self.kind} tool: call it through a ToolCaller"
            )
        return self.target(*args, **kwargs)

    def info(self) -> dict[str, Any]:
        """Return the discovery entry: name, description, paramsSchema, metadata."""
        return {
            "name": self.name,
            "description": self.description,
            "paramsSchema": self.params_schema,
            "metadata": self.metadata,
        }
